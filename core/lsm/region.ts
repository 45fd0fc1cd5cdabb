/**
 * A region: the rows of one table in [start, end), served by its own memstores and SSTs
 * (HBase's region, Bigtable's tablet). Writes go to the active memstore; a flush turns it
 * immutable and writes it to a file; compactions merge the region's files; a split hands
 * the region's files and memstores to two children, shared: each reads only its own range
 * of them (a shared memstore is queued in both and flushed once, scheduler.ts). What runs
 * for a region (flushes, compactions, splits) is the scheduler's (scheduler.ts RegionJobs).
 *
 * Invariants: `files` is newest first; every entry with seq <= flushedSeq is in `files`;
 * `immutables` are oldest first and all hold lower sequence numbers than `active`.
 */
import { compareBytes } from '../api/bytes.js';
import type { FileMeta } from './file-meta.js';
import type { RangeDelete } from './range-deletes.js';
import { Memstore } from './memstore.js';
import type { FamilyRule } from './row-reader.js';
import type { RegionCounters, TableSpec } from '../api/store.js';
import { effectiveTtlMs } from '../api/validate.js';



export class TableState {
  readonly id: number;
  /** Replaced whole by setFamilyTransform, never changed in place. */
  spec: TableSpec;
  readonly families: ReadonlyMap<string, FamilyRule>;
  /** Sorted by start; contiguous; the first starts and the last ends at the empty key. */
  regions: Region[] = [];
  dropped = false;
  /** Range tombstones in force (lsm/range-deletes.ts), oldest first. */
  rangeDeletes: RangeDelete[] = [];
  /**
   * Files numbered below this were planned before a family's current transform was named
   * (setFamilyTransform): written without it. The scheduler rewrites them at a bounded
   * rate (transform-migration.ts) and clears this once none is left; undefined: none.
   */
  transformFrom: number | undefined;

  constructor(id: number, spec: TableSpec) {
    this.id = id;
    this.spec = spec;
    this.families = new Map(
      spec.families.map((f) => [f.name, { maxVersions: f.maxVersions ?? 1, ttlMs: effectiveTtlMs(spec, f) }]),
    );
  }

  get name(): string {
    return this.spec.name;
  }

  /**
   * Names (undefined: removes) family `family`'s row transform; the caller saves the
   * manifest. `nextFile`: the number the next job's output gets (jobs planned from now on
   * apply the transform), so the files numbered below it are the ones written without it.
   */
  setFamilyTransform(family: string, transform: string | undefined, nextFile: number): void {
    const old = this.spec.families.find((f) => f.name === family)?.transform;
    this.spec = {
      ...this.spec,
      families: this.spec.families.map(({ transform: old, ...f }) => {
        const name = f.name === family ? transform : old;
        return name === undefined ? f : { ...f, transform: name };
      }),
    };
    if (transform !== undefined && transform !== old) this.transformFrom = nextFile;
    else if (!this.spec.families.some((f) => f.transform !== undefined)) this.transformFrom = undefined;
  }

  /** The region holding `row`. */
  regionFor(row: Uint8Array): Region {
    return this.regions[this.regionIndexFor(row)]!;
  }

  /** Index in `regions` of the region holding `row`. */
  regionIndexFor(row: Uint8Array): number {
    const rs = this.regions;
    let lo = 0;
    let hi = rs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (compareBytes(rs[mid]!.start, row) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * The rows in region order (a stable counting sort by region index: rows of one region
   * keep their order, so two mutations of one row stay in theirs), with each row's region
   * index. `rows` itself when they already are.
   */
  groupByRegion<R extends { readonly key: Uint8Array }>(rows: readonly R[]): { rows: readonly R[]; regionIndex: Int32Array } {
    const n = rows.length;
    const idx = new Int32Array(n);
    if (this.regions.length === 1) return { rows, regionIndex: idx };
    let sorted = true;
    for (let i = 0; i < n; i++) {
      idx[i] = this.regionIndexFor(rows[i]!.key);
      if (i > 0 && idx[i]! < idx[i - 1]!) sorted = false;
    }
    if (sorted) return { rows, regionIndex: idx };
    const at = new Int32Array(this.regions.length + 1);
    for (let i = 0; i < n; i++) at[idx[i]! + 1]!++;
    for (let r = 1; r < at.length; r++) at[r]! += at[r - 1]!;
    const out = new Array<R>(n);
    const outIdx = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const k = at[idx[i]!]!++;
      out[k] = rows[i]!;
      outIdx[k] = idx[i]!;
    }
    return { rows: out, regionIndex: outIdx };
  }

  /** The region holding the largest row < `end` (empty end: the last region). */
  regionBefore(end: Uint8Array): Region {
    const rs = this.regions;
    if (end.length === 0) return rs[rs.length - 1]!;
    let lo = 0;
    let hi = rs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (compareBytes(rs[mid]!.start, end) < 0) lo = mid;
      else hi = mid - 1;
    }
    return rs[lo]!;
  }
}

export class Region {
  readonly id: number;
  readonly table: TableState;
  readonly start: Uint8Array;
  readonly end: Uint8Array;
  active: Memstore;
  immutables: Memstore[] = [];
  files: FileMeta[];
  flushedSeq: number;
  /** Set when the region was replaced by a split or its table dropped. */
  retired = false;
  readonly createdAtMs: number;
  readonly counters: RegionCounters = { cellsWritten: 0, rowsRead: 0, readRequests: 0, writeRequests: 0 };

  constructor(
    id: number, table: TableState, start: Uint8Array, end: Uint8Array,
    files: FileMeta[], flushedSeq: number, nowMs: number,
  ) {
    this.id = id;
    this.table = table;
    this.start = start;
    this.end = end;
    this.files = files;
    this.flushedSeq = flushedSeq;
    this.active = new Memstore(nowMs);
    this.createdAtMs = nowMs;
  }

  contains(row: Uint8Array): boolean {
    return compareBytes(row, this.start) >= 0 && (this.end.length === 0 || compareBytes(row, this.end) < 0);
  }

  /** Bytes of the region's memstores; one shared with other regions counts its share. */
  memstoreBytes(): number {
    let n = this.active.sizeBytes;
    for (const m of this.immutables) n += m.sizeBytes / m.shares;
    return n;
  }

  /** Smallest sequence number not yet in a file, or Infinity. */
  minUnflushedSeq(): number {
    let s = this.active.minSeq;
    for (const m of this.immutables) if (m.minSeq < s) s = m.minSeq;
    return s;
  }
}
