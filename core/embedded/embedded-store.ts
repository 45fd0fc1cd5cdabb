/**
 * The embedded Store: the Store/Table seam over the LSM engine (core/lsm/engine.ts).
 * Public methods validate and normalize (core/api/validate.ts) before the engine sees
 * anything, so a bad call changes nothing.
 */
import type {
  Capabilities, CellRef, GetOptions, KeyRange, Mutation, RegionInfo, Row, RowFilterKind, RowMutation, ScanSpec,
  Store, StoreStats, Table, TableSpec, WriteOptions,
} from '../api/store.js';
import { StoreError, throwIfAborted } from '../api/errors.js';
import { decodeInt64, encodeInt64, equalBytes, toHex } from '../api/bytes.js';
import {
  normalizeGetOptions, normalizeScanSpec, validateCellRef, validateKey, validateKeys, validateRowMutations,
  validateKeyRange, validateSetFamilyTransform, validateTableName, validateTableSpec, validateWriteOptions, validatedScan,
} from '../api/validate.js';
import { scanEachRange } from '../api/scan-ranges.js';
import type { FileSystem } from '../fs/fs.js';
import { Engine } from '../lsm/engine.js';
import type { EngineOptions } from '../lsm/options.js';
import { DEFAULT_ENGINE_OPTIONS } from '../lsm/options.js';
import { getRows, scanRows } from '../lsm/read-path.js';
import type { TableState } from '../lsm/region.js';

export type EmbeddedOptions = EngineOptions;

const ALL_FILTERS: ReadonlySet<RowFilterKind> = new Set<RowFilterKind>([
  'keyRegex', 'fuzzyKey', 'prefix', 'qualifierRange', 'timeRange', 'and',
]);

/** What an embedded store opened with these options supports (known before opening). */
export function embeddedCapabilities(o: Partial<EmbeddedOptions>, realFs = o.fs === undefined): Capabilities {
  return {
    backend: 'embedded',
    filters: ALL_FILTERS,
    reverseScan: true,
    singleWriter: true,
    durableSync: realFs,
    bufferedWindowMs: o.bufferedWindowMs ?? DEFAULT_ENGINE_OPTIONS.bufferedWindowMs,
    autoSplit: o.autoSplit ?? DEFAULT_ENGINE_OPTIONS.autoSplit,
    maxKeyBytes: o.maxKeyBytes ?? DEFAULT_ENGINE_OPTIONS.maxKeyBytes,
    maxValueBytes: o.maxValueBytes ?? DEFAULT_ENGINE_OPTIONS.maxValueBytes,
    rowTransforms: true,
  };
}

async function nodeFs(): Promise<FileSystem> {
  const { NodeFileSystem } = await import('../fs/node-fs.js');
  return new NodeFileSystem();
}

/** Opens (creating if needed) the store in `opts.dir`, recovering from its WAL. */
export async function openEmbeddedStore(opts: EmbeddedOptions): Promise<Store & EmbeddedStoreExtras> {
  const engine = await Engine.open(opts, nodeFs);
  return new EmbeddedStore(engine, opts.fs === undefined);
}

/** Engine-specific operations beyond the Store seam (tests, tools, the operator view). */
export interface EmbeddedStoreExtras {
  readonly engine: Engine;
  /** Waits until background flushes and compactions are idle. */
  idle(): Promise<void>;
}

class EmbeddedStore implements Store, EmbeddedStoreExtras {
  readonly capabilities: Capabilities;
  readonly engine: Engine;
  private readonly handles = new Map<string, EmbeddedTable>();

  constructor(engine: Engine, realFs: boolean) {
    this.engine = engine;
    this.capabilities = embeddedCapabilities(engine.opts, realFs);
  }

  private handle(t: TableState): EmbeddedTable {
    let h = this.handles.get(t.name);
    if (h === undefined || h.state !== t) {
      h = new EmbeddedTable(this, t);
      this.handles.set(t.name, h);
    }
    return h;
  }

  async createTable(spec: TableSpec, opts?: { readonly ifNotExists?: boolean }): Promise<Table> {
    this.engine.checkOpen();
    validateTableSpec(spec, this.capabilities);
    const existing = this.engine.tables.get(spec.name);
    if (existing !== undefined) {
      if (opts?.ifNotExists === true) return this.handle(existing);
      throw new StoreError('STORE_TABLE_EXISTS', `table ${spec.name} already exists`);
    }
    return this.handle(await this.engine.createTable(spec));
  }

  async openTable(name: string): Promise<Table> {
    this.engine.checkOpen();
    validateTableName(name);
    const t = this.engine.tables.get(name);
    if (t === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${name} does not exist`);
    return this.handle(t);
  }

  async listTables(): Promise<string[]> {
    this.engine.checkOpen();
    return [...this.engine.tables.keys()].sort();
  }

  async dropTable(name: string): Promise<void> {
    this.engine.checkOpen();
    validateTableName(name);
    await this.engine.dropTable(name);
    this.handles.delete(name);
  }

  async setFamilyTransform(table: string, family: string, transform: string | undefined): Promise<Table> {
    this.engine.checkOpen();
    validateSetFamilyTransform(table, family, transform, this.capabilities);
    const t = this.engine.tables.get(table);
    if (t === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${table} does not exist`);
    if (!t.families.has(family)) throw new StoreError('STORE_FAMILY_NOT_FOUND', `table ${table} has no family ${JSON.stringify(family)}`);
    t.setFamilyTransform(family, transform, this.engine.versions.peekFileNumber());
    await this.engine.versions.saveManifest();
    this.engine.scheduler.migrateTransforms();
    return this.handle(t);
  }

  async stats(): Promise<StoreStats> {
    this.engine.checkOpen();
    const e = this.engine;
    const c = e.counters;
    let regions = 0;
    for (const t of e.tables.values()) regions += t.regions.length;
    const cache = e.blockCache.stats();
    return {
      backend: 'embedded',
      tables: e.tables.size,
      regions,
      memstoreBytes: e.memstoreBytes(),
      files: e.versions.fileCount(),
      fileBytes: e.versions.fileBytes(),
      flushesInProgress: c.flushesInProgress,
      flushesDone: c.flushesDone,
      compactionsInProgress: c.compactionsInProgress,
      compactionsDone: c.compactionsDone,
      splitsDone: c.splitsDone,
      blockCache: { hits: cache.hits, misses: cache.misses, sizeBytes: cache.sizeBytes, capacityBytes: cache.capacityBytes },
      stalledWriters: c.stalledWriters,
      walBytes: e.walBytes(),
      recoveryDroppedBytes: c.recoveryDroppedBytes,
      walDamage: c.recoveryDamage,
      walReplay: { ...c.walReplay, ms: Math.round(c.walReplay.ms * 10) / 10 },
      backgroundErrors: c.backgroundErrors,
      ...(c.lastBackgroundError !== undefined ? { lastBackgroundError: c.lastBackgroundError } : {}),
      ...(e.failure !== undefined ? { writeFailure: e.failure.message } : {}),
      damagedFiles: e.readers.damage.files,
      transformBacklog: e.scheduler.transformBacklog(),
    };
  }

  idle(): Promise<void> {
    return this.engine.idle();
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

class EmbeddedTable implements Table {
  readonly state: TableState;
  private readonly store: EmbeddedStore;

  constructor(store: EmbeddedStore, state: TableState) {
    this.store = store;
    this.state = state;
  }

  get name(): string {
    return this.state.name;
  }

  get spec(): TableSpec {
    return this.state.spec;
  }

  private get engine(): Engine {
    return this.store.engine;
  }

  private check(): void {
    this.engine.checkOpen();
    if (this.state.dropped) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${this.name} was dropped`);
  }

  get(keys: readonly Uint8Array[], opts?: GetOptions): Promise<(Row | undefined)[]> {
    // Not async: getRows' promise is handed on as it is (an async wrapper cost two more
    // microtask turns a get); a bad argument still rejects rather than throws.
    try {
      this.check();
      validateKeys(keys, this.store.capabilities);
      const o = normalizeGetOptions(this.spec, opts, this.store.capabilities);
      return getRows(this.engine, this.state, keys, o);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async mutate(rows: readonly RowMutation[], opts?: WriteOptions): Promise<void> {
    this.check();
    validateWriteOptions(opts);
    validateRowMutations(this.spec, rows, this.store.capabilities);
    throwIfAborted(opts?.signal);
    await this.engine.write(this.state, rows, opts);
  }

  scan(spec?: ScanSpec): AsyncIterable<readonly Row[]> {
    return validatedScan(() => {
      this.check();
      return normalizeScanSpec(this.spec, spec, this.store.capabilities);
    }, (s) => scanEachRange(s, (r) => scanRows(this.engine, this.state, r)));
  }

  /** Reads the newest version of one cell at the latest sequence number (under a row lock). */
  private async readLatest(key: Uint8Array, cell: CellRef): Promise<{ value: Uint8Array; timestamp: number } | undefined> {
    const o = normalizeGetOptions(this.spec, { filter: { kind: 'qualifierRange', family: cell.family, start: cell.qualifier, end: successorQualifier(cell.qualifier) } }, this.store.capabilities);
    const [row] = await getRows(this.engine, this.state, [key], o, this.engine.lastSeq);
    const c = row?.cells.find((x) => x.family === cell.family && equalBytes(x.qualifier, cell.qualifier));
    return c === undefined ? undefined : { value: c.value, timestamp: c.timestamp };
  }

  async increment(key: Uint8Array, cell: CellRef, delta: bigint, opts?: WriteOptions): Promise<bigint> {
    this.check();
    validateKey(key, this.store.capabilities);
    validateCellRef(this.spec, cell);
    if (typeof delta !== 'bigint') throw new TypeError(`increment delta must be a bigint, got ${typeof delta}`);
    validateWriteOptions(opts);
    throwIfAborted(opts?.signal);
    return this.engine.locks.with(this.state.id, key, async () => {
      const cur = await this.readLatest(key, cell);
      if (cur !== undefined && cur.value.length !== 8) {
        throw new StoreError('STORE_INVALID_ARGUMENT', `table ${this.name}, row ${toHex(key)}: cell ${cell.family}:${toHex(cell.qualifier)} holds ${cur.value.length} bytes, not an 8-byte counter`);
      }
      const next = BigInt.asIntN(64, (cur === undefined ? 0n : decodeInt64(cur.value)) + delta);
      const timestamp = Math.max(this.engine.clock(), cur?.timestamp ?? 0);
      await this.engine.write(this.state, [{ key, mutations: [{ type: 'put', family: cell.family, qualifier: cell.qualifier, value: encodeInt64(next), timestamp }] }], opts, key);
      return next;
    });
  }

  async checkAndPut(key: Uint8Array, check: CellRef, expected: Uint8Array | undefined, mutations: readonly Mutation[], opts?: WriteOptions): Promise<boolean> {
    this.check();
    validateKey(key, this.store.capabilities);
    validateCellRef(this.spec, check);
    if (expected !== undefined && !(expected instanceof Uint8Array)) throw new TypeError('checkAndPut expected value must be a Uint8Array or undefined');
    const rows: RowMutation[] = [{ key, mutations }];
    validateRowMutations(this.spec, rows, this.store.capabilities);
    validateWriteOptions(opts);
    throwIfAborted(opts?.signal);
    return this.engine.locks.with(this.state.id, key, async () => {
      const cur = await this.readLatest(key, check);
      const matches = expected === undefined ? cur === undefined : cur !== undefined && equalBytes(cur.value, expected);
      if (!matches) return false;
      await this.engine.write(this.state, rows, opts, key);
      return true;
    });
  }

  async regions(): Promise<RegionInfo[]> {
    this.check();
    return this.state.regions.map((r) => ({
      id: String(r.id),
      start: r.start.slice(),
      end: r.end.slice(),
      stats: {
        sizeBytes: Math.round(this.engine.versions.regionSizeBytes(r)),
        memstoreBytes: r.memstoreBytes(),
        files: r.files.length,
        cellsWritten: r.counters.cellsWritten,
        rowsRead: r.counters.rowsRead,
        readRequests: r.counters.readRequests,
        writeRequests: r.counters.writeRequests,
        flushing: this.engine.scheduler.jobsOf(r).flushing,
        compacting: this.engine.scheduler.jobsOf(r).compacting,
      },
    }));
  }

  async deleteRange(range: KeyRange, opts?: { readonly signal?: AbortSignal }): Promise<void> {
    this.check();
    validateKeyRange(range, this.store.capabilities);
    throwIfAborted(opts?.signal);
    await this.engine.deleteRange(this.state, range.start, range.end);
  }

  async flush(): Promise<void> {
    this.check();
    await this.engine.flushAll(this.state);
  }

  async compact(opts?: { readonly major?: boolean }): Promise<void> {
    this.check();
    await this.engine.compactAll(this.state, opts?.major ?? false);
  }
}

/** The smallest qualifier greater than q (q + 0x00): the end of a one-qualifier range. */
function successorQualifier(q: Uint8Array): Uint8Array {
  const out = new Uint8Array(q.length + 1);
  out.set(q);
  return out;
}
