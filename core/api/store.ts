/**
 * The storage seam. Everything above core/ (the time-series layer, the server, tools)
 * reaches storage only through these types. Implemented by the embedded LSM engine
 * (core/embedded), the in-memory reference store (core/memory, the test oracle), and
 * Cloud Bigtable (backends/bigtable; HBase would fit the same way, docs/SCALING.md).
 *
 * Data model (HBase / Bigtable): a store holds named tables; a table holds rows ordered by
 * unsigned bytewise key; a row holds cells addressed by (family, qualifier, timestamp):
 *
 *     (table, row key, family:qualifier, timestamp) -> value
 *
 * - Families are declared when the table is created. Each keeps up to `maxVersions`
 *   versions of a cell (default 1) and may expire cells `ttlMs` after their timestamp.
 * - Timestamps are integer milliseconds in [0, 2^53). A put without a timestamp gets the
 *   server's clock at the time of the write. Two puts to the same cell with the same
 *   timestamp: the later write wins.
 * - Deletes apply to the data that exists when the delete is written (Bigtable semantics):
 *   a later put with an older timestamp is visible again.
 *
 * Atomicity: every mutation for one row in one call is applied atomically, and a reader
 * sees either none or all of it. Nothing is atomic across rows. A reader sees every
 * mutation whose promise has resolved. Keys, qualifiers and values passed in are copied or
 * not retained; callers may reuse their buffers after the call returns.
 *
 * Returned buffers (row keys, qualifiers, values) are owned by the caller: they are never
 * changed by the store afterwards, but may be views into larger buffers (copy them with
 * `slice()` before keeping many small ones around for long). The one exception: values
 * read with `borrowValues` (ReadOptionsBase), which the caller only borrows.
 */

/** Family names: 1-64 chars of [A-Za-z0-9_.-], so string order equals byte order. */
export const FAMILY_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** Table names: 1-128 chars of [A-Za-z0-9_.-]. */
export const TABLE_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
/** The largest timestamp a cell may carry (2^53 - 1 ms). */
export const MAX_TIMESTAMP = Number.MAX_SAFE_INTEGER;

export interface Store {
  /** What this backend supports; fixed for the life of the store. */
  readonly capabilities: Capabilities;

  /**
   * Creates a table. Rejects with STORE_TABLE_EXISTS when it exists, unless
   * `ifNotExists` is set, in which case the existing table is returned unchanged.
   */
  createTable(spec: TableSpec, opts?: { readonly ifNotExists?: boolean }): Promise<Table>;

  /** Opens an existing table. Rejects with STORE_TABLE_NOT_FOUND when it does not exist. */
  openTable(name: string): Promise<Table>;

  /** Names of all tables, sorted. */
  listTables(): Promise<string[]>;

  /** Deletes a table and all its data. Rejects with STORE_TABLE_NOT_FOUND when absent. */
  dropTable(name: string): Promise<void>;

  /**
   * Names the row transform (core/api/row-transform.ts) of an existing family, or removes
   * it (undefined): HBase's modifyColumnFamily for that one attribute. Flushes and
   * compactions planned after it resolves apply it, and the table's spec shows it, across
   * restarts; cells already on disk are transformed when a compaction next rewrites them.
   * Resolves to the table. Rejects with STORE_TABLE_NOT_FOUND, STORE_FAMILY_NOT_FOUND,
   * STORE_INVALID_ARGUMENT (a bad name), and STORE_NOT_SUPPORTED on a store without
   * `capabilities.rowTransforms`.
   */
  setFamilyTransform(table: string, family: string, transform: string | undefined): Promise<Table>;

  /** Engine-wide statistics (memory, background work, caches). Cheap; safe to poll. */
  stats(): Promise<StoreStats>;

  /**
   * Makes every acknowledged write durable, stops background work and releases files.
   * Idempotent. After close every call rejects with STORE_CLOSED.
   */
  close(): Promise<void>;
}

export interface Table {
  readonly name: string;
  /** The table's families and options as created (and as setFamilyTransform changed them). */
  readonly spec: TableSpec;

  /**
   * Reads rows by key. The result has one entry per key, in the same order; absent rows
   * (or rows with no cell left after the options' filters) are `undefined`.
   */
  get(keys: readonly Uint8Array[], opts?: GetOptions): Promise<(Row | undefined)[]>;

  /**
   * Applies each RowMutation atomically. Resolves when every row is applied with the
   * requested durability. Rejects with STORE_FAMILY_NOT_FOUND or STORE_INVALID_ARGUMENT
   * before applying anything when any mutation is malformed; with STORE_PARTIAL_WRITE
   * (`failedKeys` lists the rows not applied) when a backend applied only some rows.
   */
  mutate(rows: readonly RowMutation[], opts?: WriteOptions): Promise<void>;

  /**
   * Rows in [spec.start, spec.end) in key order (descending when `reverse`), in batches.
   * Filters must be of a kind in `capabilities.filters`, otherwise the scan rejects with
   * STORE_NOT_SUPPORTED. Breaking out of the loop releases resources. The scan sees a
   * consistent snapshot of each row; rows written after the scan started may or may not
   * appear. An aborted signal ends the iteration with STORE_ABORTED.
   */
  scan(spec?: ScanSpec): AsyncIterable<readonly Row[]>;

  /**
   * Atomically adds `delta` to the 8-byte big-endian signed counter in `cell` (absent
   * counts as 0) and returns the new value. Rejects with STORE_INVALID_ARGUMENT when the
   * existing value is not 8 bytes long. Wraps around at 64 bits like HBase.
   */
  increment(key: Uint8Array, cell: CellRef, delta: bigint, opts?: WriteOptions): Promise<bigint>;

  /**
   * Atomically: if the newest version of `check` equals `expected` (or the cell is absent
   * when `expected` is undefined), applies `mutations` to row `key` and resolves true;
   * otherwise changes nothing and resolves false.
   */
  checkAndPut(
    key: Uint8Array,
    check: CellRef,
    expected: Uint8Array | undefined,
    mutations: readonly Mutation[],
    opts?: WriteOptions,
  ): Promise<boolean>;

  /**
   * The key ranges the table is split into, in key order, covering the whole key space
   * (the first starts at the empty key, the last ends at the empty key = end of table),
   * with per-region statistics. A planner fans scans out over these.
   */
  regions(): Promise<RegionInfo[]>;

  /**
   * Deletes every row in [range.start, range.end) (an empty end: to the end of the table)
   * as it stands when the call is made: cells written after it resolves are kept, as with
   * every delete. Resolves once the delete is durable; reads started after see none of
   * those rows. Its cost does not grow with the cells deleted where the backend can help
   * it (embedded: one range tombstone, files inside the range dropped whole, the rest at
   * compaction; Bigtable: DropRowRange for a prefix range). Rejects with
   * STORE_INVALID_ARGUMENT when start is not before a non-empty end.
   */
  deleteRange(range: KeyRange, opts?: { readonly signal?: AbortSignal }): Promise<void>;

  /** Writes every in-memory cell of the table to durable files. A no-op where meaningless. */
  flush(): Promise<void>;

  /**
   * Compacts the table's files. `major` rewrites everything into one file per region and
   * drops tombstones, shadowed versions and expired cells. A no-op where meaningless.
   */
  compact(opts?: { readonly major?: boolean }): Promise<void>;

}

export interface TableSpec {
  readonly name: string;
  /** At least one family. */
  readonly families: readonly FamilySpec[];
  /**
   * Initial region boundaries: n split points give n + 1 regions. Sorted, distinct,
   * non-empty keys. The time-series layer pre-splits on its salt buckets.
   */
  readonly splitPoints?: readonly Uint8Array[];
  /** Default TTL for every family that sets none (HBase's per-table TTL). */
  readonly ttlMs?: number;
}

export interface FamilySpec {
  readonly name: string;
  /** Versions kept per cell; default 1. Older versions are dropped by compaction. */
  readonly maxVersions?: number;
  /** Cells older than this (by cell timestamp, against the server clock) are invisible and
   * dropped by compaction. Default: keep forever. */
  readonly ttlMs?: number;
  /**
   * The name of a row transform (core/api/row-transform.ts) that a store with
   * `capabilities.rowTransforms` applies to this family's cells during flushes and
   * compactions, when the name is registered in the process; otherwise cells are kept as
   * they are. Same pattern as family names. Other backends keep the name and ignore it.
   */
  readonly transform?: string;
}

export interface CellRef {
  readonly family: string;
  readonly qualifier: Uint8Array;
}

export interface Cell {
  readonly family: string;
  readonly qualifier: Uint8Array;
  readonly timestamp: number;
  readonly value: Uint8Array;
}

/** Cells are sorted by family, then qualifier (bytes), then timestamp descending. */
export interface Row {
  readonly key: Uint8Array;
  readonly cells: readonly Cell[];
}

export type Mutation =
  /** Writes one version; `timestamp` defaults to the server clock. */
  | { readonly type: 'put'; readonly family: string; readonly qualifier: Uint8Array;
      readonly value: Uint8Array; readonly timestamp?: number }
  /** Deletes every version of the cell with timestamp <= upTo (default: all). */
  | { readonly type: 'deleteCell'; readonly family: string; readonly qualifier: Uint8Array;
      readonly upTo?: number }
  /** Deletes the one version of the cell with exactly this timestamp. */
  | { readonly type: 'deleteVersion'; readonly family: string; readonly qualifier: Uint8Array;
      readonly timestamp: number }
  /** Deletes every cell of the family with timestamp <= upTo (default: all). */
  | { readonly type: 'deleteFamily'; readonly family: string; readonly upTo?: number }
  /** Deletes every cell of the row with timestamp <= upTo (default: all). */
  | { readonly type: 'deleteRow'; readonly upTo?: number };

export interface RowMutation {
  readonly key: Uint8Array;
  readonly mutations: readonly Mutation[];
}

/** Cell timestamps in [start, end); either bound may be omitted. */
export interface TimeRange {
  readonly start?: number;
  readonly end?: number;
}

/**
 * Filters are data, so a backend can evaluate them server-side (or ship them to a remote
 * server). Row filters select rows by key; cell filters select cells. A row whose cells are
 * all filtered out is not returned.
 */
export type RowFilter =
  /** Row key, read as latin1 (one char per byte), must match the whole pattern. The pattern
   * uses the subset of JavaScript regex syntax that RE2 shares (no lookaround, no
   * backreferences); it is compiled with the `s` flag so `.` matches every byte. */
  | { readonly kind: 'keyRegex'; readonly pattern: string }
  /** Row key matches any of the templates: for each i < template.length, where mask[i] is 1
   * the key byte must equal template[i]; where it is 0 any byte matches. Keys shorter than
   * the template do not match; longer keys may (the template constrains a prefix). */
  | { readonly kind: 'fuzzyKey'; readonly rules: readonly FuzzyRule[] }
  /** Row key starts with the prefix. */
  | { readonly kind: 'prefix'; readonly prefix: Uint8Array }
  /** Cells of `family` (or of every family when omitted) with qualifier in [start, end). */
  | { readonly kind: 'qualifierRange'; readonly family?: string;
      readonly start?: Uint8Array; readonly end?: Uint8Array }
  /** Cells with timestamp in the range. */
  | { readonly kind: 'timeRange'; readonly range: TimeRange }
  /** All of the filters. */
  | { readonly kind: 'and'; readonly filters: readonly RowFilter[] };

export type RowFilterKind = RowFilter['kind'];

export interface FuzzyRule {
  readonly template: Uint8Array;
  /** Same length as template: 1 = fixed byte, 0 = any byte. */
  readonly mask: Uint8Array;
}

export interface ReadOptionsBase {
  /** Only these families (default: all). */
  readonly families?: readonly string[];
  /** Only cells with timestamp in the range. */
  readonly timeRange?: TimeRange;
  /** Versions per cell to return, newest first (default 1). */
  readonly maxVersions?: number;
  readonly filter?: RowFilter;
  readonly signal?: AbortSignal;
  /**
   * Lets the store return cell values that are views of its own buffers instead of copies
   * (a scan of large values then copies nothing; such a view may be of shared memory, a
   * SharedArrayBuffer, where a copy never is). Such a value is read-only and lives
   * briefly: in a scan, until the iteration asks for the next batch (or ends); from a get,
   * until the caller's next call into the store. Read or copy what you need at once; never
   * keep or change it. Row keys and qualifiers stay the caller's as always. A backend
   * without such buffers ignores the flag. Default false.
   */
  readonly borrowValues?: boolean;
}

export type GetOptions = ReadOptionsBase;

export interface ScanSpec extends ReadOptionsBase {
  /** Inclusive lower bound; empty or absent = start of the table. */
  readonly start?: Uint8Array;
  /** Exclusive upper bound; empty or absent = end of the table. */
  readonly end?: Uint8Array;
  /**
   * Instead of start/end (not with them): the rows of any of these ranges, in key order
   * across them (descending when `reverse`), `limit` counted over all. Sorted and not
   * overlapping (each start ≥ the end before it), each start ≤ its end; an empty end (the
   * table's end) only in the last; an empty range reads nothing, and so does an empty list.
   * Every store serves them; where `capabilities.scanRangesInOneCall` they cost one request.
   */
  readonly ranges?: readonly KeyRange[];
  /** Rows in descending key order (same [start, end) range). Needs `capabilities.reverseScan`. */
  readonly reverse?: boolean;
  /** At most this many rows in all. */
  readonly limit?: number;
  /** A hint for rows per batch; backends may return smaller batches. Default 1000. */
  readonly batchRows?: number;
}

export type Durability = 'sync' | 'buffered';

export interface WriteOptions {
  /**
   * 'sync' (default): resolves once the write is on stable storage (survives power loss).
   * 'buffered': resolves once the write is applied and in the OS or a bounded write buffer;
   * it becomes durable within the backend's documented window (see capabilities).
   * Order, on every backend: once a 'sync' write resolved, every write that resolved
   * before it was made is durable too (embedded: one log, written in order, a new log
   * segment only after the previous one is synced; Bigtable: every write is durable when
   * it resolves). A chain of buffered writes ended by one 'sync' write is therefore
   * durable whole once that write resolves: one fsync instead of one per write.
   */
  readonly durability?: Durability;
  readonly signal?: AbortSignal;
}

export interface Capabilities {
  /** A short backend name, e.g. 'memory', 'embedded', 'bigtable'. */
  readonly backend: string;
  /** Filter kinds evaluated by the backend; a planner applies the rest itself. */
  readonly filters: ReadonlySet<RowFilterKind>;
  readonly reverseScan: boolean;
  /**
   * True when no other process writes this store while it is open (the embedded engine
   * locks its directory; the memory store lives in one process): a layer above may then
   * keep what it wrote, and what it derived from it, without reading the store again.
   * False for a shared store (Bigtable), where other servers write the same tables.
   */
  readonly singleWriter: boolean;
  /**
   * True when a scan of several `ranges` (ScanSpec) is one request to the backend (Bigtable:
   * one ReadRows with a RowSet), so one such scan beats a scan per range, each paying a
   * round trip; false or absent where the store walks the ranges in turn, so concurrent
   * scans per range cost no more.
   */
  readonly scanRangesInOneCall?: boolean;
  /** True when a resolved mutate() with durability 'sync' has reached stable storage. */
  readonly durableSync: boolean;
  /** Upper bound in ms before a 'buffered' write is durable; 0 when every write is synced. */
  readonly bufferedWindowMs: number;
  /** True when regions split by themselves as they grow. */
  readonly autoSplit: boolean;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  /**
   * The largest cell timestamp (ms) the backend stores, when below MAX_TIMESTAMP (Bigtable
   * stops at the end of year 9999). Timestamps and `upTo` above it are rejected with
   * STORE_INVALID_ARGUMENT, before anything is applied.
   */
  readonly maxTimestamp?: number;
  /** True when flushes and compactions apply the families' row transforms (core/api/row-transform.ts). */
  readonly rowTransforms?: boolean;
}

export interface KeyRange {
  /** Inclusive; empty = start of the table. */
  readonly start: Uint8Array;
  /** Exclusive; empty = end of the table. */
  readonly end: Uint8Array;
}

export interface RegionInfo extends KeyRange {
  readonly id: string;
  readonly stats: RegionStats;
}

export interface RegionStats {
  /** Bytes in files plus memstore (approximate). */
  readonly sizeBytes: number;
  readonly memstoreBytes: number;
  readonly files: number;
  /** Cells written since the region opened (or was created by a split). */
  readonly cellsWritten: number;
  /** Rows returned by gets and scans since the region opened. */
  readonly rowsRead: number;
  readonly readRequests: number;
  readonly writeRequests: number;
  /** True while a flush of the region's memstore runs. Absent where there are no flushes. */
  readonly flushing?: boolean;
  /** True while a compaction of the region's files runs. Absent where there are none. */
  readonly compacting?: boolean;
}

/** A region's request counters as a store keeps them (the counted fields of RegionStats, mutable). */
export type RegionCounters = { -readonly [K in 'cellsWritten' | 'rowsRead' | 'readRequests' | 'writeRequests']: RegionStats[K] };

export interface StoreStats {
  readonly backend: string;
  readonly tables: number;
  readonly regions: number;
  readonly memstoreBytes: number;
  readonly files: number;
  readonly fileBytes: number;
  readonly flushesInProgress: number;
  readonly flushesDone: number;
  readonly compactionsInProgress: number;
  readonly compactionsDone: number;
  readonly splitsDone: number;
  readonly blockCache: { readonly hits: number; readonly misses: number; readonly sizeBytes: number; readonly capacityBytes: number };
  /** Writers currently held back because flushes fell behind. */
  readonly stalledWriters: number;
  readonly walBytes: number;
  /** Remote stores: calls made to the service since the store opened, by method (Bigtable's data API). */
  readonly rpcs?: Readonly<Record<string, number>>;
  /** Bytes of damaged WAL records skipped at the last open (data acknowledged but lost). */
  readonly recoveryDroppedBytes?: number;
  /** Where those records were: each damaged WAL record the last open skipped, by file name. */
  readonly walDamage?: readonly DamagedFile[];
  /**
   * The write-ahead log replayed at open (after a crash: what was not flushed; after a
   * clean stop: nothing): log files and bytes read, records (write batches) read, cells
   * applied to memory, and the time it took.
   */
  readonly walReplay?: { readonly files: number; readonly bytes: number; readonly records: number; readonly entries: number; readonly ms: number };
  /** Failed background operations (flush, compaction, manifest, file removal) since open. */
  readonly backgroundErrors?: number;
  readonly lastBackgroundError?: string;
  /** Set when the store stopped accepting writes after an I/O failure (reopen to recover). */
  readonly writeFailure?: string;
  /**
   * Store files a read or a compaction found damaged since open, each once (backends that
   * verify what they read; nothing reads every file at open: a full check is an offline
   * tool's job, `horae fsck`).
   */
  readonly damagedFiles?: readonly DamagedFile[];
  /**
   * Stores with row transforms: files written before their table's transform was named
   * (`setFamilyTransform`), still to be rewritten through it in the background, and their
   * bytes (0 and 0 once the migration is done).
   */
  readonly transformBacklog?: { readonly files: number; readonly bytes: number };
}

/** A damaged store file: its name, the offset of the damage when known, what failed. */
export interface DamagedFile {
  readonly file: string;
  readonly offset: number | undefined;
  readonly message: string;
}
