/**
 * The Store on Cloud Bigtable (or its emulator): tables map to Bigtable tables under a
 * prefix, specs live in the meta table (schema.ts), every Table call goes over the raw
 * data API (bigtable-table.ts). Nothing here knows about time series: split points come
 * with the TableSpec.
 *
 * Durability: Bigtable acknowledges a write once it is replicated within its cluster, so
 * 'sync' and 'buffered' writes are both durable on resolve (bufferedWindowMs 0).
 */
import { utf8, fromUtf8 } from '../../../core/api/bytes.js';
import { StoreError } from '../../../core/api/errors.js';
import type { Capabilities, RowFilterKind, Store, StoreStats, Table, TableSpec } from '../../../core/api/store.js';
import {
  DEFAULT_MAX_KEY_BYTES, DEFAULT_MAX_VALUE_BYTES, validateSetFamilyTransform, validateTableName, validateTableSpec,
} from '../../../core/api/validate.js';
import { Connection } from './client.js';
import type { ConnectionOptions } from './client.js';
import { checkOpen, closedError } from './context.js';
import type { StoreContext, TableState, WriteLimits } from './context.js';
import { GRPC, grpcCode, storeErrorOf } from './errors.js';
import { BigtableTable } from './bigtable-table.js';
import { TableCounters } from './region-stats.js';
import { DEFAULT_RETRY } from './retry.js';
import type { RetryPolicy } from './retry.js';
import { RowMerger } from './rows.js';
import {
  bigtableTableOf, copySpec, META_FAMILY, META_SPEC_QUALIFIER, metaTableId, specFromJson, specToJson, tableIdOf,
  validatePrefix,
} from './schema.js';
import { re2OfExact, patternBytes } from './regex.js';
import { familyPattern } from './filters.js';
import { guarded } from './table-read.js';
import { BIGTABLE_MAX_TIMESTAMP } from './timestamps.js';

export interface BigtableStoreOptions extends ConnectionOptions {
  /** Prepended to every table id, so several stores share an instance (default ''). */
  readonly tablePrefix?: string | undefined;
  /** Server clock in ms (default Date.now): timestamps of puts without one, and TTL. */
  readonly clock?: (() => number) | undefined;
  /**
   * Whether family TTLs also become GC rules (maxAge; default true). Off only where the
   * clock is not real time (tests on a fake clock): Bigtable collects by its own clock.
   */
  readonly ttlGarbageCollection?: boolean | undefined;
  /** Whether the server serves reversed ReadRows (default: true unless on an emulator). */
  readonly reverseScan?: boolean | undefined;
  readonly retry?: Partial<RetryPolicy> | undefined;
  readonly limits?: Partial<WriteLimits> | undefined;
  /** A connection to use instead of one made from these options (tests inject faults). */
  readonly connection?: Connection | undefined;
}

const FILTERS: ReadonlySet<RowFilterKind> = new Set<RowFilterKind>(['keyRegex', 'fuzzyKey', 'prefix', 'qualifierRange', 'timeRange', 'and']);

/** The capabilities of a Bigtable store opened with these options. */
export function bigtableCapabilities(opts: { readonly reverseScan?: boolean | undefined; readonly endpoint?: string | undefined } = {}): Capabilities {
  const emulator = opts.endpoint !== undefined || (process.env.BIGTABLE_EMULATOR_HOST ?? '').trim() !== '';
  return {
    backend: 'bigtable',
    filters: FILTERS,
    reverseScan: opts.reverseScan ?? !emulator,
    singleWriter: false,
    scanRangesInOneCall: true,
    durableSync: true,
    bufferedWindowMs: 0,
    autoSplit: true,
    maxKeyBytes: DEFAULT_MAX_KEY_BYTES,
    maxValueBytes: DEFAULT_MAX_VALUE_BYTES,
    maxTimestamp: BIGTABLE_MAX_TIMESTAMP,
  };
}

const DEFAULT_LIMITS: WriteLimits = { maxMutationsPerRequest: 100_000, maxRequestBytes: 32 * 1024 * 1024, parallelRequests: 4 };

/** Opens the store: connects and makes sure the meta table exists. */
export async function openBigtableStore(opts: BigtableStoreOptions): Promise<Store> {
  const prefix = opts.tablePrefix ?? '';
  validatePrefix(prefix);
  const conn = opts.connection ?? new Connection(opts);
  const store = new BigtableStore(conn, opts, prefix);
  try {
    await store.ensureMetaTable();
  } catch (err) {
    await conn.close();
    throw storeErrorOf(`open of instance ${conn.instanceName}`, err);
  }
  return store;
}

class BigtableStore implements Store, StoreContext {
  readonly capabilities: Capabilities;
  readonly caps: Capabilities;
  readonly clock: () => number;
  readonly realClock: boolean;
  readonly retry: RetryPolicy;
  readonly limits: WriteLimits;
  closed = false;
  private readonly ttlGc: boolean;
  private readonly metaId: string;
  private readonly tables = new Map<string, TableState>();

  constructor(readonly conn: Connection, opts: BigtableStoreOptions, private readonly prefix: string) {
    this.capabilities = bigtableCapabilities(opts);
    this.caps = this.capabilities;
    this.clock = opts.clock ?? Date.now;
    this.realClock = opts.clock === undefined;
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.ttlGc = opts.ttlGarbageCollection ?? true;
    this.metaId = metaTableId(prefix);
  }

  async ensureMetaTable(): Promise<void> {
    try {
      await this.conn.createTable(this.metaId, { columnFamilies: { [META_FAMILY]: { gcRule: { maxNumVersions: 1 } } } }, []);
    } catch (err) {
      if (grpcCode(err) !== GRPC.ALREADY_EXISTS) throw err;
    }
  }

  async createTable(spec: TableSpec, opts?: { readonly ifNotExists?: boolean }): Promise<Table> {
    checkOpen(this);
    validateTableSpec(spec, this.caps);
    const existing = await this.readSpec(spec.name);
    if (existing !== undefined) return this.existing(existing, opts);
    const own = copySpec(spec);
    const tableId = tableIdOf(this.prefix, spec.name);
    try {
      await this.conn.createTable(tableId, bigtableTableOf(own, this.ttlGc), own.splitPoints ?? []);
    } catch (err) {
      // Another process creating it too, or a table left by a create that died before
      // its meta row: the meta row below decides who created it.
      if (grpcCode(err) !== GRPC.ALREADY_EXISTS) throw this.mapped(`create of table ${spec.name}`, err);
    }
    const won = await this.writeSpecIfAbsent(own);
    if (!won) {
      const other = await this.readSpec(spec.name);
      if (other === undefined) throw new StoreError('STORE_UNAVAILABLE', `bigtable: table ${spec.name} was created and dropped concurrently`, { retryable: true });
      return this.existing(other, opts);
    }
    return new BigtableTable(this, this.stateOf(own));
  }

  private existing(spec: TableSpec, opts?: { readonly ifNotExists?: boolean }): Table {
    if (opts?.ifNotExists !== true) throw new StoreError('STORE_TABLE_EXISTS', `bigtable: table ${spec.name} exists`);
    return new BigtableTable(this, this.stateOf(spec));
  }

  async openTable(name: string): Promise<Table> {
    checkOpen(this);
    validateTableName(name);
    const spec = await this.readSpec(name);
    if (spec === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `bigtable: no table ${name}`);
    return new BigtableTable(this, this.stateOf(spec));
  }

  async listTables(): Promise<string[]> {
    checkOpen(this);
    const names: string[] = [];
    await guarded(this, 'list of tables', () => {
      names.length = 0;
      const merger = new RowMerger((row) => names.push(fromUtf8(row.key)));
      return this.conn.readRows({ tableName: this.conn.tablePath(this.metaId), filter: { stripValueTransformer: true } }, (r) => merger.push(r));
    });
    return names.sort();
  }

  async dropTable(name: string): Promise<void> {
    checkOpen(this);
    validateTableName(name);
    const spec = await this.readSpec(name);
    if (spec === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `bigtable: no table ${name}`);
    try {
      await this.conn.deleteTable(tableIdOf(this.prefix, name));
    } catch (err) {
      if (grpcCode(err) !== GRPC.NOT_FOUND) throw this.mapped(`drop of table ${name}`, err);
    }
    await guarded(this, `drop of table ${name}`, () => new Promise<void>((resolve, reject) => {
      this.conn.mutateRows({ tableName: this.conn.tablePath(this.metaId), entries: [{ rowKey: Buffer.from(utf8(name)), mutations: [{ deleteFromRow: {} }] }] },
        (resp) => {
          const st = resp.entries?.[0]?.status;
          if (st && (st.code ?? 0) !== 0) reject(Object.assign(new Error(st.message ?? ''), { code: st.code }));
        }).then(resolve, reject);
    }));
    this.tables.delete(name);
  }

  /** No row transforms here: rejects with STORE_NOT_SUPPORTED once the arguments are checked. */
  async setFamilyTransform(table: string, family: string, transform: string | undefined): Promise<Table> {
    checkOpen(this);
    validateSetFamilyTransform(table, family, transform, this.caps);
    throw new Error('BUG: the Bigtable store has row transforms');
  }

  async stats(): Promise<StoreStats> {
    checkOpen(this);
    const names = await this.listTables();
    let regions = 0;
    for (const n of names) {
      const t = this.tables.get(n);
      regions += Math.max(t?.lastRegionCount ?? 0, (t?.spec.splitPoints?.length ?? 0) + 1);
    }
    return {
      backend: 'bigtable', tables: names.length, regions, memstoreBytes: 0, files: 0, fileBytes: 0,
      flushesInProgress: 0, flushesDone: 0, compactionsInProgress: 0, compactionsDone: 0, splitsDone: 0,
      blockCache: { hits: 0, misses: 0, sizeBytes: 0, capacityBytes: 0 }, stalledWriters: 0, walBytes: 0,
      rpcs: { ...this.conn.calls },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.conn.close();
  }

  /** The shared state of a table, made at first use (or again after a drop). */
  private stateOf(spec: TableSpec): TableState {
    const known = this.tables.get(spec.name);
    if (known !== undefined) return known;
    const tableId = tableIdOf(this.prefix, spec.name);
    const state: TableState = {
      spec, tableId, tableName: this.conn.tablePath(tableId), counters: new TableCounters(spec.splitPoints ?? []),
      incrementQueues: new Map(), lastRegionCount: 0,
    };
    this.tables.set(spec.name, state);
    return state;
  }

  private async readSpec(name: string): Promise<TableSpec | undefined> {
    let text: string | undefined;
    await guarded(this, `read of table spec ${name}`, () => {
      const merger = new RowMerger((row) => {
        const c = row.cells.find((x) => fromUtf8(x.qualifier) === META_SPEC_QUALIFIER);
        if (c !== undefined) text = fromUtf8(c.value);
      });
      return this.conn.readRows({ tableName: this.conn.tablePath(this.metaId), rows: { rowKeys: [Buffer.from(utf8(name))] } }, (r) => merger.push(r));
    });
    if (text === undefined) {
      this.tables.delete(name);
      return undefined;
    }
    return this.tables.get(name)?.spec ?? specFromJson(text);
  }

  /** Writes the meta row unless one exists; true when this call wrote it. */
  private async writeSpecIfAbsent(spec: TableSpec): Promise<boolean> {
    try {
      const matched = await this.conn.checkAndMutateRow({
        tableName: this.conn.tablePath(this.metaId),
        rowKey: Buffer.from(utf8(spec.name)),
        predicateFilter: { chain: { filters: [
          { familyNameRegexFilter: familyPattern(META_FAMILY) },
          { columnQualifierRegexFilter: patternBytes(re2OfExact(utf8(META_SPEC_QUALIFIER))) },
        ] } },
        falseMutations: [{ setCell: {
          familyName: META_FAMILY, columnQualifier: Buffer.from(META_SPEC_QUALIFIER), timestampMicros: '0', value: Buffer.from(specToJson(spec)),
        } }],
      });
      return !matched;
    } catch (err) {
      throw this.mapped(`create of table ${spec.name}`, err);
    }
  }

  private mapped(what: string, err: unknown): StoreError {
    return this.closed ? closedError() : storeErrorOf(what, err);
  }
}
