/**
 * The in-memory reference Store: the oracle for contract and randomized model tests, so it
 * is written to be simple and obviously correct rather than fast.
 *
 * Layout: per table, a sorted array of rows (binary search by unsigned key); each row a map
 * family → qualifier (latin1 string) → versions, newest timestamp first. Everything is
 * applied eagerly at write time:
 * - a put with a timestamp equal to an existing version's REPLACES it (later write wins);
 * - after a put, versions beyond the family's maxVersions (the oldest) are dropped at once,
 *   so a later delete of a newer version never brings them back;
 * - deletes remove the versions they cover from the data that exists (Bigtable semantics),
 *   so a later put with an older timestamp is visible.
 *
 * Read rule, per cell: take the live versions (not expired by TTL), newest first, truncated
 * to the family's maxVersions; return the first `maxVersions` (read option, default 1) of
 * those that pass the read's time range and cell filters. So reads return at most
 * min(requested, family maxVersions) versions, and a time range never reaches past the
 * family's newest maxVersions. Expired versions are always the oldest (TTL counts from the
 * timestamp), so expiry and truncation commute.
 *
 * NB: because surplus versions are dropped at write time here, deleting one of a cell's
 * newest maxVersions versions never exposes an older one. An LSM that drops surplus
 * versions only at compaction (like HBase), or Bigtable with its asynchronous GC, would
 * show the older version until then. The contract leaves that case open and the contract
 * suite avoids it; randomized comparisons against this store must avoid it too (no
 * deleteVersion / partial `upTo` delete on a cell that has had more than maxVersions
 * versions).
 *
 * TTL: a version is invisible when `clock() - timestamp > ttlMs` (visible at exactly
 * ttlMs old; future timestamps are visible). Expired versions stay in memory, invisible.
 *
 * Concurrency: single-threaded; every operation validates first and then reads and writes
 * with no `await` in between, which is what makes mutate/increment/checkAndPut atomic.
 * Scans take each batch synchronously from the live array and resume by key, so writes
 * between batches never break an iteration. Returned rows are deep copies.
 */
import { compareBytes, decodeInt64, encodeInt64, equalBytes, toHex } from '../api/bytes.js';
import { StoreError, throwIfAborted } from '../api/errors.js';
import { compileReadFilter, intersectPrefixRange, prefixOfFilter } from '../api/filters.js';
import type { CompiledFilter } from '../api/filters.js';
import type {
  Capabilities,
  CellRef,
  GetOptions,
  KeyRange,
  Mutation,
  RegionInfo,
  Row,
  RowFilterKind,
  RowMutation,
  ScanSpec,
  Store,
  StoreStats,
  Table,
  TableSpec,
  WriteOptions,
} from '../api/store.js';
import {
  DEFAULT_MAX_KEY_BYTES,
  DEFAULT_MAX_VALUE_BYTES,
  normalizeGetOptions,
  normalizeScanSpec,
  validatedScan,
  validateCellRef,
  validateKeyRange,
  validateKey,
  validateKeys,
  validateRowMutations,
  validateSetFamilyTransform,
  validateTableName,
  validateTableSpec,
  validateWriteOptions,
} from '../api/validate.js';
import { scanEachRange } from '../api/scan-ranges.js';
import type { NormalizedReadOptions, NormalizedScanSpec } from '../api/validate.js';
import { TableState, rowBytes, copySpec } from './memory-table-state.js';
import type { MemRow } from './memory-table-state.js';

/** Options of openMemoryStore. */
export interface MemoryStoreOptions {
  /**
   * The server clock in integer ms since the epoch: timestamps of puts without one, and
   * "now" for TTL. Default Date.now. Tests pass a fake clock to control TTL.
   */
  readonly clock?: () => number;
}

const ALL_FILTERS: readonly RowFilterKind[] = ['keyRegex', 'fuzzyKey', 'prefix', 'qualifierRange', 'timeRange', 'and'];

/** The memory store's capabilities, known before opening one (for test gating). */
export const MEMORY_STORE_CAPABILITIES: Capabilities = Object.freeze({
  backend: 'memory',
  filters: new Set<RowFilterKind>(ALL_FILTERS),
  reverseScan: true,
  singleWriter: true,
  durableSync: false,
  bufferedWindowMs: 0,
  autoSplit: false,
  maxKeyBytes: DEFAULT_MAX_KEY_BYTES,
  maxValueBytes: DEFAULT_MAX_VALUE_BYTES,
});

/** Opens an empty in-memory store. Nothing survives close(). */
export async function openMemoryStore(opts: MemoryStoreOptions = {}): Promise<Store> {
  return new MemoryStore(opts.clock ?? Date.now);
}

class MemoryStore implements Store {
  readonly capabilities: Capabilities = MEMORY_STORE_CAPABILITIES;
  readonly clock: () => number;
  closed = false;
  private readonly tables = new Map<string, TableState>();

  constructor(clock: () => number) {
    this.clock = clock;
  }

  checkOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'memory store is closed');
  }

  /** The clock as an integer timestamp. */
  now(): number {
    return Math.floor(this.clock());
  }

  async createTable(spec: TableSpec, opts?: { readonly ifNotExists?: boolean }): Promise<Table> {
    this.checkOpen();
    validateTableSpec(spec, this.capabilities);
    const existing = this.tables.get(spec.name);
    if (existing !== undefined) {
      if (opts?.ifNotExists === true) return new MemoryTable(this, existing);
      throw new StoreError('STORE_TABLE_EXISTS', `table ${spec.name} already exists`);
    }
    const state = new TableState(copySpec(spec));
    this.tables.set(spec.name, state);
    return new MemoryTable(this, state);
  }

  async openTable(name: string): Promise<Table> {
    this.checkOpen();
    validateTableName(name);
    return new MemoryTable(this, this.state(name));
  }

  async listTables(): Promise<string[]> {
    this.checkOpen();
    return [...this.tables.keys()].sort();
  }

  async dropTable(name: string): Promise<void> {
    this.checkOpen();
    validateTableName(name);
    this.state(name).dropped = true;
    this.tables.delete(name);
  }

  /** No row transforms here: rejects with STORE_NOT_SUPPORTED once the arguments are checked. */
  async setFamilyTransform(table: string, family: string, transform: string | undefined): Promise<Table> {
    this.checkOpen();
    validateSetFamilyTransform(table, family, transform, this.capabilities);
    throw new Error('BUG: the memory store has row transforms');
  }

  async stats(): Promise<StoreStats> {
    this.checkOpen();
    let regions = 0;
    let bytes = 0;
    for (const t of this.tables.values()) {
      regions += t.counters.length;
      for (const row of t.rows) bytes += rowBytes(row);
    }
    return {
      backend: this.capabilities.backend,
      tables: this.tables.size,
      regions,
      memstoreBytes: bytes,
      files: 0,
      fileBytes: 0,
      flushesInProgress: 0,
      flushesDone: 0,
      compactionsInProgress: 0,
      compactionsDone: 0,
      splitsDone: 0,
      blockCache: { hits: 0, misses: 0, sizeBytes: 0, capacityBytes: 0 },
      stalledWriters: 0,
      walBytes: 0,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private state(name: string): TableState {
    const state = this.tables.get(name);
    if (state === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${name} does not exist`);
    return state;
  }
}

class MemoryTable implements Table {
  readonly name: string;
  readonly spec: TableSpec;
  private readonly store: MemoryStore;
  private readonly state: TableState;

  constructor(store: MemoryStore, state: TableState) {
    this.store = store;
    this.state = state;
    this.name = state.spec.name;
    this.spec = state.spec;
  }

  async get(keys: readonly Uint8Array[], opts?: GetOptions): Promise<(Row | undefined)[]> {
    this.check();
    validateKeys(keys, this.store.capabilities);
    const ro = normalizeGetOptions(this.spec, opts, this.store.capabilities);
    throwIfAborted(ro.signal);
    const filter = compileReadFilter(ro);
    const now = this.store.now();
    return keys.map((key) => {
      const counters = this.state.regionOf(key);
      counters.readRequests++;
      const row = this.state.find(key);
      if (row === undefined || !filter.rowMatches(key)) return undefined;
      const out = this.state.materialize(row, filter, ro.maxVersions, now);
      if (out !== undefined) counters.rowsRead++;
      return out;
    });
  }

  async mutate(rows: readonly RowMutation[], opts?: WriteOptions): Promise<void> {
    this.check();
    validateWriteOptions(opts);
    validateRowMutations(this.spec, rows, this.store.capabilities);
    throwIfAborted(opts?.signal);
    const now = this.store.now();
    for (const r of rows) this.state.applyRow(r.key, r.mutations, now);
  }

  scan(spec?: ScanSpec): AsyncIterable<readonly Row[]> {
    return validatedScan(() => {
      this.check();
      return normalizeScanSpec(this.spec, spec, this.store.capabilities);
    }, (s) => scanEachRange(s, (r) => this.runScan(r)));
  }

  private async *runScan(spec: NormalizedScanSpec): AsyncGenerator<readonly Row[]> {
    const filter = compileReadFilter(spec);
    let range: { start: Uint8Array; end: Uint8Array } | undefined = { start: spec.start, end: spec.end };
    const prefix = prefixOfFilter(spec.filter);
    if (prefix !== undefined) range = intersectPrefixRange(range, prefix);
    let remaining = spec.limit;
    let cursor: Uint8Array | undefined; // the last key examined; the next batch resumes past it
    let first = true;
    while (remaining > 0) {
      this.check();
      throwIfAborted(spec.signal);
      if (range === undefined) return;
      if (first) {
        this.countScanRequest(range.start, range.end);
        first = false;
      }
      const now = this.store.now();
      const rows = this.state.rows;
      const batch: Row[] = [];
      let exhausted = true;
      if (!spec.reverse) {
        let i = cursor === undefined ? this.state.lowerBound(range.start) : this.upperBound(cursor);
        for (; i < rows.length; i++) {
          const row = rows[i]!;
          if (range.end.length > 0 && compareBytes(row.key, range.end) >= 0) break;
          if (batch.length === spec.batchRows || batch.length === remaining) {
            exhausted = false;
            break;
          }
          cursor = row.key;
          this.take(row, filter, spec, now, batch);
        }
      } else {
        let i = cursor !== undefined ? this.state.lowerBound(cursor) - 1
          : range.end.length === 0 ? rows.length - 1 : this.state.lowerBound(range.end) - 1;
        for (; i >= 0; i--) {
          const row = rows[i]!;
          if (compareBytes(row.key, range.start) < 0) break;
          if (batch.length === spec.batchRows || batch.length === remaining) {
            exhausted = false;
            break;
          }
          cursor = row.key;
          this.take(row, filter, spec, now, batch);
        }
      }
      remaining -= batch.length;
      if (batch.length > 0) yield batch;
      if (exhausted) return;
    }
  }

  private take(row: MemRow, filter: CompiledFilter, spec: NormalizedReadOptions, now: number, out: Row[]): void {
    if (!filter.rowMatches(row.key)) return;
    const r = this.state.materialize(row, filter, spec.maxVersions, now);
    if (r === undefined) return;
    this.state.regionOf(row.key).rowsRead++;
    out.push(r);
  }

  /** Index of the first row with key > `key`. */
  private upperBound(key: Uint8Array): number {
    const i = this.state.lowerBound(key);
    const row = this.state.rows[i];
    return row !== undefined && compareBytes(row.key, key) === 0 ? i + 1 : i;
  }

  /** One read request on every region the scan range overlaps. */
  private countScanRequest(start: Uint8Array, end: Uint8Array): void {
    const { splits, counters } = this.state;
    for (let r = 0; r < counters.length; r++) {
      const rStart = r === 0 ? undefined : splits[r - 1]!;
      const rEnd = r === splits.length ? undefined : splits[r]!;
      const beforeEnd = end.length === 0 || rStart === undefined || compareBytes(rStart, end) < 0;
      const afterStart = rEnd === undefined || compareBytes(start, rEnd) < 0;
      if (beforeEnd && afterStart) counters[r]!.readRequests++;
    }
  }

  async increment(key: Uint8Array, cell: CellRef, delta: bigint, opts?: WriteOptions): Promise<bigint> {
    this.check();
    validateWriteOptions(opts);
    validateKey(key, this.store.capabilities);
    validateCellRef(this.spec, cell);
    if (typeof delta !== 'bigint') throw new TypeError(`increment delta must be a bigint, got ${typeof delta}`);
    throwIfAborted(opts?.signal);
    const now = this.store.now();
    const current = this.state.newest(key, cell, now);
    if (current !== undefined && current.value.length !== 8) {
      throw new StoreError('STORE_INVALID_ARGUMENT',
        `table ${this.name}, row 0x${toHex(key)}: cell ${cell.family}:0x${toHex(cell.qualifier)} holds ${current.value.length} bytes, not an 8-byte counter`);
    }
    const next = BigInt.asIntN(64, (current === undefined ? 0n : decodeInt64(current.value)) + delta);
    // NB: never older than the current version, so the new value is the newest even when
    // the counter carries a future timestamp; an equal timestamp replaces it.
    const timestamp = Math.max(now, current?.timestamp ?? 0);
    this.state.regionOf(key).readRequests++;
    this.state.applyRow(key, [{ type: 'put', family: cell.family, qualifier: cell.qualifier, value: encodeInt64(next), timestamp }], now);
    return next;
  }

  async checkAndPut(
    key: Uint8Array,
    check: CellRef,
    expected: Uint8Array | undefined,
    mutations: readonly Mutation[],
    opts?: WriteOptions,
  ): Promise<boolean> {
    this.check();
    validateWriteOptions(opts);
    validateCellRef(this.spec, check);
    if (expected !== undefined && !(expected instanceof Uint8Array)) {
      throw new TypeError('checkAndPut expected value must be a Uint8Array or undefined');
    }
    validateRowMutations(this.spec, [{ key, mutations }], this.store.capabilities);
    throwIfAborted(opts?.signal);
    const now = this.store.now();
    this.state.regionOf(key).readRequests++;
    const current = this.state.newest(key, check, now);
    const matches = expected === undefined ? current === undefined
      : current !== undefined && equalBytes(current.value, expected);
    if (!matches) return false;
    this.state.applyRow(key, mutations, now);
    return true;
  }

  async regions(): Promise<RegionInfo[]> {
    this.check();
    const { splits, counters, rows } = this.state;
    const empty = new Uint8Array(0);
    const sizes = new Array<number>(counters.length).fill(0);
    let r = 0;
    for (const row of rows) {
      while (r < splits.length && compareBytes(row.key, splits[r]!) >= 0) r++;
      sizes[r]! += rowBytes(row);
    }
    return counters.map((c, i) => {
      const start = i === 0 ? empty : splits[i - 1]!.slice();
      return {
        id: `${this.name},${toHex(start)}`,
        start,
        end: i === splits.length ? empty : splits[i]!.slice(),
        stats: { ...c, sizeBytes: sizes[i]!, memstoreBytes: sizes[i]!, files: 0 },
      };
    });
  }

  async deleteRange(range: KeyRange, opts?: { readonly signal?: AbortSignal }): Promise<void> {
    this.check();
    validateKeyRange(range, this.store.capabilities);
    throwIfAborted(opts?.signal);
    const from = this.state.lowerBound(range.start);
    const to = range.end.length === 0 ? this.state.rows.length : this.state.lowerBound(range.end);
    if (to > from) this.state.rows.splice(from, to - from);
  }

  async flush(): Promise<void> {
    this.check();
  }

  async compact(): Promise<void> {
    this.check();
  }

  private check(): void {
    this.store.checkOpen();
    if (this.state.dropped) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${this.name} was dropped`);
  }
}
