/**
 * Range deletes (Table.deleteRange): "every row in [start, end) as it stands now" recorded
 * as one range tombstone in the manifest instead of one marker per row or cell (RocksDB's
 * DeleteRange, HBase/Bigtable's DropRowRange). A tombstone carries the sequence number it
 * was given: it covers the entries of its rows with seq <= its seq, which are every entry
 * written before it, wherever they are (memstores, files, the WAL replayed after a crash).
 *
 *  - Reads with a snapshot at or after the tombstone skip the entries it covers
 *    (RangeDeleteIterator over the region's merged sources; read-path.ts).
 *  - Files entirely inside a tombstone's rows and older than it are dropped from their
 *    regions whole (no read, no rewrite) once no read holds an older snapshot.
 *  - Compactions drop the covered entries of the files they rewrite (jobs.ts) once the
 *    tombstone is older than every held snapshot.
 *  - A tombstone leaves the manifest once no region can hold an entry it covers: every
 *    region meeting its rows has flushed past it and either has no file meeting its rows
 *    with entries as old, or rewrote all its files in a major compaction that applied it.
 */
import { compareBytes } from '../api/bytes.js';
import type { InternalIterator } from '../iter/internal-iterator.js';
import type { FileMeta } from './file-meta.js';
import { compareKeyRow, seqOf } from './internal-key.js';

/** The rows [start, end) (end empty: to the end of the table) and the tombstone's seq. */
export interface RangeBound {
  readonly start: Uint8Array;
  /** Exclusive; empty = unbounded. */
  readonly end: Uint8Array;
  readonly seq: number;
}

/** A table's tombstone, as the engine and the manifest keep it. */
export interface RangeDelete extends RangeBound {
  /** Regions that rewrote all their files with the tombstone applied (major compactions). */
  readonly cleared: number[];
}

/** True when rows [aStart, aEnd) and [bStart, bEnd) meet (empty ends: unbounded). */
export function rangesMeet(aStart: Uint8Array, aEnd: Uint8Array, bStart: Uint8Array, bEnd: Uint8Array): boolean {
  if (aEnd.length > 0 && compareBytes(aEnd, bStart) <= 0) return false;
  if (bEnd.length > 0 && compareBytes(bEnd, aStart) <= 0) return false;
  return true;
}

/** True when the file's rows and the tombstone's meet. */
export function fileMeets(f: FileMeta, d: RangeBound): boolean {
  if (compareKeyRow(f.largest, d.start) < 0) return false;
  return d.end.length === 0 || compareKeyRow(f.smallest, d.end) < 0;
}

/** True when every row of the file lies in the tombstone's rows and every entry is older. */
export function fileCovered(f: FileMeta, d: RangeBound): boolean {
  if (f.maxSeq > d.seq) return false;
  if (compareKeyRow(f.smallest, d.start) < 0) return false;
  return d.end.length === 0 || compareKeyRow(f.largest, d.end) < 0;
}

/** The tombstones visible at `snapshot` that meet rows [start, end). */
export function applicable(dels: readonly RangeBound[], snapshot: number, start: Uint8Array, end: Uint8Array): RangeBound[] {
  const out: RangeBound[] = [];
  for (const d of dels) if (d.seq <= snapshot && rangesMeet(d.start, d.end, start, end)) out.push(d);
  return out;
}

/** True when the entry with internal key `key` is covered by one of `dels`. */
export function covered(dels: readonly RangeBound[], key: Uint8Array): boolean {
  for (let i = 0; i < dels.length; i++) {
    const d = dels[i]!;
    if (compareKeyRow(key, d.start) < 0) continue;
    if (d.end.length > 0 && compareKeyRow(key, d.end) >= 0) continue;
    if (seqOf(key) <= d.seq) return true;
  }
  return false;
}

/**
 * An iterator over `inner` without the entries `dels` cover (it steps over them: until a
 * compaction drops them, a read passing through a deleted range still reads it).
 */
export class RangeDeleteIterator implements InternalIterator {
  private readonly inner: InternalIterator;
  private readonly dels: readonly RangeBound[];

  constructor(inner: InternalIterator, dels: readonly RangeBound[]) {
    this.inner = inner;
    this.dels = dels;
  }

  get valid(): boolean {
    return this.inner.valid;
  }

  seekToFirst(): void {
    this.inner.seekToFirst();
    this.skipForward();
  }

  seekToLast(): void {
    this.inner.seekToLast();
    this.skipBackward();
  }

  seek(target: Uint8Array): void {
    this.inner.seek(target);
    this.skipForward();
  }

  seekForPrev(target: Uint8Array): void {
    this.inner.seekForPrev(target);
    this.skipBackward();
  }

  next(): void {
    this.inner.next();
    this.skipForward();
  }

  prev(): void {
    this.inner.prev();
    this.skipBackward();
  }

  key(): Uint8Array {
    return this.inner.key();
  }

  value(): Uint8Array {
    return this.inner.value();
  }

  error(): Error | undefined {
    return this.inner.error();
  }

  close(): void {
    this.inner.close();
  }

  private skipForward(): void {
    // Entries newer than a tombstone may lie anywhere in its rows: step over covered ones.
    const it = this.inner;
    while (it.valid && covered(this.dels, it.key())) it.next();
  }

  private skipBackward(): void {
    const it = this.inner;
    while (it.valid && covered(this.dels, it.key())) it.prev();
  }
}
