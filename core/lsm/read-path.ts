/**
 * Gets and scans over the engine: merge a region's memstores and files (skipping files by
 * row range, bloom filter and time range), and turn each row's entries into visible cells
 * (row-reader.ts). Reads see a snapshot: the read point when they start.
 *
 * A scan pins one region's sources (memstores, and files so they are not deleted) while it
 * walks that region, and computes each batch synchronously, then yields; it re-seeks after
 * the last row of the previous batch, so writes in between cannot disturb it. Rows that no
 * filter can select are skipped by seeking (fuzzy-key hints, row ranges).
 */
import type { Row } from '../api/store.js';
import type { NormalizedReadOptions, NormalizedScanSpec } from '../api/validate.js';
import { compileReadFilter, fuzzyNextKey, intersectPrefixRange, prefixOfFilter } from '../api/filters.js';
import type { CompiledFilter } from '../api/filters.js';
import type { FuzzyRule, RowFilter } from '../api/store.js';
import { compareBytes, toHex } from '../api/bytes.js';
import { StoreError, throwIfAborted } from '../api/errors.js';
import type { InternalIterator } from '../iter/internal-iterator.js';
import { MergingIterator } from '../iter/merging-iterator.js';
import type { Engine } from './engine.js';
import type { FileMeta } from './file-meta.js';
import { compareInternalKeys, compareKeyRow, rowEndKey, rowOf as rowOfKey, rowStartKey } from './internal-key.js';
import type { Region, TableState } from './region.js';
import type { RowReadContext } from './row-reader.js';
import { readRow } from './row-reader.js';
import type { Memstore } from './memstore.js';
import type { SstReader } from '../sst/sst-reader.js';
import { RangeDeleteIterator, applicable } from './range-deletes.js';
import type { RangeBound } from './range-deletes.js';

const NO_DELS: readonly RangeBound[] = [];

/** Sources of one region pinned for a read. */
interface Pinned {
  readonly region: Region;
  readonly memstores: Memstore[];
  readonly files: FileMeta[];
  /** files[i]'s reader, held (acquired) until unpinRegion. */
  readonly readers: SstReader[];
  /** Range tombstones the read applies (range-deletes.ts); usually none. */
  readonly dels: readonly RangeBound[];
}

/**
 * Pins a region's sources for a read: synchronously when every file's reader is open (the
 * common case; a get then awaits nothing), else once the missing readers have opened.
 * Only files that may hold rows in [first, last] (inclusive; `last` empty: unbounded) are
 * pinned: the first read after a start opens the files it needs, not every file of the
 * region.
 */
function pinRegion(engine: Engine, r: Region, timeStart: number, first: Uint8Array, last: Uint8Array, snapshot: number): Pinned | Promise<Pinned> {
  const memstores = [r.active, ...r.immutables];
  const dels = r.table.rangeDeletes.length === 0 ? NO_DELS : applicable(r.table.rangeDeletes, snapshot, r.start, r.end);
  // A file whose newest cell is older than the read's time range cannot change the answer
  // (row-reader.ts: its puts are all out of range and its markers only cover older cells).
  const files = r.files.filter((f) => !(f.maxTs < timeStart) && compareKeyRow(f.largest, first) >= 0 &&
    (last.length === 0 || compareKeyRow(f.smallest, last) <= 0));
  for (const f of files) engine.versions.pin(f.number);
  const readers: SstReader[] = [];
  // Open readers are taken synchronously; only files not open yet wait for their open.
  for (const f of files) {
    const reader = engine.readers.tryAcquire(f.number);
    if (reader === undefined) return pinRest(engine, r, memstores, files, readers, dels);
    readers.push(reader);
  }
  return { region: r, memstores, files, readers, dels };
}

/** pinRegion from the first file whose reader is not open yet on. */
async function pinRest(engine: Engine, r: Region, memstores: Memstore[], files: FileMeta[], readers: SstReader[], dels: readonly RangeBound[]): Promise<Pinned> {
  try {
    for (let i = readers.length; i < files.length; i++) readers.push(engine.readers.tryAcquire(files[i]!.number) ?? (await engine.readers.acquire(files[i]!.number)));
  } catch (err) {
    for (let i = 0; i < readers.length; i++) engine.readers.release(files[i]!.number);
    for (const f of files) engine.versions.unpin(f.number);
    throw err;
  }
  return { region: r, memstores, files, readers, dels };
}

function unpinRegion(engine: Engine, p: Pinned): void {
  for (const f of p.files) {
    engine.readers.release(f.number);
    engine.versions.unpin(f.number);
  }
}

/**
 * A merged iterator over the pinned sources; with `row`, only files that may hold it; with
 * `range` (rows [start, end), end empty: unbounded), only files whose key range meets it —
 * a forward scan then never reads a file of other rows (nor fails on its damaged blocks).
 */
function iteratorFor(p: Pinned, row?: Uint8Array, range?: { readonly start: Uint8Array; readonly end: Uint8Array }): InternalIterator {
  const children: InternalIterator[] = [];
  for (const m of p.memstores) if (!m.empty) children.push(m.iterator());
  const { files, readers } = p;
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    if (row !== undefined) {
      if (compareKeyRow(f.smallest, row) > 0 || compareKeyRow(f.largest, row) < 0) continue;
      if (!readers[i]!.mayContain(row)) continue;
    } else if (range !== undefined) {
      if (compareKeyRow(f.largest, range.start) < 0) continue;
      if (range.end.length > 0 && compareKeyRow(f.smallest, range.end) >= 0) continue;
    }
    children.push(readers[i]!.iterator());
  }
  const merged = children.length === 1 ? children[0]! : new MergingIterator(children, compareInternalKeys);
  return p.dels.length === 0 ? merged : new RangeDeleteIterator(merged, p.dels);
}

function readContext(engine: Engine, t: TableState, opts: NormalizedReadOptions, filter: CompiledFilter, snapshotSeq: number): RowReadContext {
  return {
    snapshotSeq,
    nowMs: engine.clock(),
    families: t.families,
    familyFilter: undefined,
    cellMatches: filter.hasCellFilter ? (f, q, ts) => filter.cellMatches(f, q, ts) : undefined,
    maxVersions: opts.maxVersions,
    borrowValues: opts.borrowValues,
  };
}

/** Reads rows by key at the read point (or at `snapshotSeq`: read-modify-writes read the latest). */
export async function getRows(
  engine: Engine, t: TableState, keys: readonly Uint8Array[], opts: NormalizedReadOptions, snapshotSeq?: number,
): Promise<(Row | undefined)[]> {
  throwIfAborted(opts.signal);
  const filter = compileReadFilter(opts);
  const snapshot = snapshotSeq ?? engine.seqs.visibleSeq;
  const ctx = readContext(engine, t, opts, filter, snapshot);
  const timeStart = opts.timeRange?.start ?? 0;
  const out: (Row | undefined)[] = new Array(keys.length);
  // Group keys by region so each region is pinned once.
  const byRegion = new Map<Region, number[]>();
  if (keys.length === 1) byRegion.set(t.regionFor(keys[0]!), [0]);
  else {
    for (let i = 0; i < keys.length; i++) {
      const r = t.regionFor(keys[i]!);
      let list = byRegion.get(r);
      if (list === undefined) byRegion.set(r, (list = []));
      list.push(i);
    }
  }
  // The first region is pinned at once; later ones after awaits, so a compaction in between
  // must not resolve away versions this snapshot sees: hold it (SeqTracker.oldestSnapshot).
  const held = byRegion.size > 1;
  if (held) engine.seqs.holdSnapshot(snapshot);
  try {
    for (const [region, idxs] of byRegion) {
      let first = keys[idxs[0]!]!;
      let last = first;
      for (const i of idxs) {
        if (compareBytes(keys[i]!, first) < 0) first = keys[i]!;
        if (compareBytes(keys[i]!, last) > 0) last = keys[i]!;
      }
      const pinned = pinRegion(engine, region, timeStart, first, last, snapshot);
      const p = pinned instanceof Promise ? await pinned : pinned;
      try {
        region.counters.readRequests++;
        for (const i of idxs) {
          const key = keys[i]!;
          if (filter.hasRowFilter && !filter.rowMatches(key)) {
            out[i] = undefined;
            continue;
          }
          const it = iteratorFor(p, key);
          try {
            it.seek(rowStartKey(key));
            if (it.valid && compareKeyRow(it.key(), key) === 0) {
              const row = readRow(it, ctx);
              out[i] = row.cells.length > 0 ? row : undefined;
              if (row.cells.length > 0) region.counters.rowsRead++;
            } else out[i] = undefined;
            const err = it.error();
            if (err !== undefined) throw err;
          } finally {
            it.close();
          }
        }
      } finally {
        unpinRegion(engine, p);
      }
    }
  } finally {
    if (held) engine.seqs.releaseSnapshot(snapshot);
  }
  return out;
}

/** Rules of the first fuzzy filter in the tree (top level or inside `and`), for seek hints. */
function fuzzyRulesOf(f: RowFilter | undefined): readonly FuzzyRule[] | undefined {
  if (f === undefined) return undefined;
  if (f.kind === 'fuzzyKey') return f.rules;
  if (f.kind === 'and') {
    for (const c of f.filters) {
      const r = fuzzyRulesOf(c);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

/** Entries examined before a batch yields to the event loop even if not full. */
const MAX_ROWS_EXAMINED_PER_BATCH = 20_000;
const MAX_BATCH_BYTES = 8 << 20;

function rowBytes(cells: Row['cells']): number {
  let n = 0;
  for (const c of cells) n += c.qualifier.length + c.value.length + 48;
  return n;
}

/**
 * A scan at the read point when its iteration starts. It pins each region only when it
 * reaches it, so a scan over several regions holds its snapshot until it ends (done,
 * broken out of, failed), and compactions in between keep what it sees
 * (SeqTracker.oldestSnapshot); one abandoned without return() lets go when collected.
 */
export function scanRows(engine: Engine, t: TableState, s: NormalizedScanSpec): AsyncGenerator<readonly Row[]> {
  const hold: SnapshotHold = { seqs: engine.seqs, seq: -1 };
  const gen: AsyncGenerator<readonly Row[]> = scanAt(engine, t, s, hold, () => abandonedScans.register(gen, hold));
  return gen;
}

interface SnapshotHold {
  readonly seqs: Engine['seqs'];
  /** The held snapshot, or -1 (none: a one-region scan, or released). */
  seq: number;
}

function releaseHold(hold: SnapshotHold): void {
  if (hold.seq < 0) return;
  hold.seqs.releaseSnapshot(hold.seq);
  hold.seq = -1;
}

const abandonedScans = new FinalizationRegistry<SnapshotHold>(releaseHold);

/** True when rows [start, end) lie in more than one of the table's regions now. */
function spansRegions(t: TableState, start: Uint8Array, end: Uint8Array, reverse: boolean): boolean {
  if (reverse) {
    const r = t.regionBefore(end);
    return r.start.length > 0 && (start.length === 0 || compareBytes(start, r.start) < 0);
  }
  const r = t.regionFor(start);
  return r.end.length > 0 && (end.length === 0 || compareBytes(end, r.end) > 0);
}

async function* scanAt(engine: Engine, t: TableState, s: NormalizedScanSpec, hold: SnapshotHold, onHold: () => void): AsyncGenerator<readonly Row[]> {
  const snapshot = engine.seqs.visibleSeq;
  const filter = compileReadFilter(s);
  const fuzzy = s.reverse ? undefined : fuzzyRulesOf(s.filter);
  const timeStart = s.timeRange?.start ?? 0;
  let remaining = s.limit;
  let start = s.start;
  let end = s.end;
  const prefix = prefixOfFilter(s.filter);
  if (prefix !== undefined) {
    const range = intersectPrefixRange({ start, end }, prefix);
    if (range === undefined) return;
    start = range.start;
    end = range.end;
  }

  if (spansRegions(t, start, end, s.reverse)) {
    hold.seq = engine.seqs.holdSnapshot(snapshot);
    onHold();
  }
  try {
    if (!s.reverse) {
      // `cursor`: the next row to consider (inclusive).
      let cursor = start;
      while (remaining > 0) {
        engine.checkOpen();
        const region = t.regionFor(cursor);
        const regionEnd = region.end;
        const limitEnd = end.length === 0 ? regionEnd : regionEnd.length === 0 || compareBytes(end, regionEnd) < 0 ? end : regionEnd;
        const pinned = pinRegion(engine, region, timeStart, cursor, limitEnd, snapshot);
        const p = pinned instanceof Promise ? await pinned : pinned;
        let seekTo: Uint8Array | undefined = rowStartKey(cursor);
        try {
          while (remaining > 0 && seekTo !== undefined) {
            throwIfAborted(s.signal);
            engine.checkOpen();
            const ctx = readContext(engine, t, s, filter, snapshot);
            const batch: Row[] = [];
            let bytes = 0;
            let examined = 0;
            const it = iteratorFor(p, undefined, { start: cursor, end: limitEnd });
            try {
              it.seek(seekTo);
              seekTo = undefined;
              while (it.valid) {
                const k = it.key();
                if (limitEnd.length > 0 && compareKeyRow(k, limitEnd) >= 0) break;
                if (filter.hasRowFilter) {
                  const row = k.slice(2, 2 + ((k[0]! << 8) | k[1]!));
                  if (!filter.rowMatches(row)) {
                    if (fuzzy !== undefined) {
                      const next = fuzzyNextKey(fuzzy, row);
                      if (next === undefined) break;
                      it.seek(rowStartKey(next));
                    } else it.seek(rowEndKey(row));
                    if (++examined >= MAX_ROWS_EXAMINED_PER_BATCH) {
                      seekTo = it.valid ? rowStartKey(rowOfKey(it.key())) : undefined;
                      break;
                    }
                    continue;
                  }
                }
                const row = readRow(it, ctx);
                examined++;
                if (row.cells.length > 0) {
                  batch.push(row);
                  bytes += rowBytes(row.cells);
                  if (--remaining === 0) break;
                }
                if (batch.length >= s.batchRows || bytes >= MAX_BATCH_BYTES || examined >= MAX_ROWS_EXAMINED_PER_BATCH) {
                  seekTo = it.valid ? rowStartKey(rowOfKey(it.key())) : undefined;
                  break;
                }
              }
              const err = it.error();
              if (err !== undefined) throw err;
            } finally {
              it.close();
            }
            region.counters.readRequests++;
            region.counters.rowsRead += batch.length;
            if (batch.length > 0) yield batch;
            else if (seekTo !== undefined) await new Promise((r) => setImmediate(r));
          }
        } finally {
          unpinRegion(engine, p);
        }
        if (remaining <= 0 || regionEnd.length === 0 || (end.length > 0 && compareBytes(end, regionEnd) <= 0)) return;
        cursor = regionEnd;
      }
      return;
    }

    // Reverse: `cursor` is the exclusive upper row bound still to scan (empty = end of table).
    let cursor = end;
    while (remaining > 0) {
      engine.checkOpen();
      const region = t.regionBefore(cursor);
      const lowBound = start.length > 0 && compareBytes(start, region.start) > 0 ? start : region.start;
      const pinned = pinRegion(engine, region, timeStart, lowBound, cursor, snapshot);
      const p = pinned instanceof Promise ? await pinned : pinned;
      let upper: Uint8Array | undefined = cursor; // exclusive row bound for this batch
      try {
        while (remaining > 0 && upper !== undefined) {
          throwIfAborted(s.signal);
          engine.checkOpen();
          const ctx = readContext(engine, t, s, filter, snapshot);
          const batch: Row[] = [];
          let bytes = 0;
          let examined = 0;
          const it = iteratorFor(p);
          try {
            if (upper.length === 0 || (region.end.length > 0 && compareBytes(upper, region.end) > 0)) {
              if (region.end.length === 0) it.seekToLast();
              else it.seekForPrev(rowStartKey(region.end));
            } else it.seekForPrev(rowStartKey(upper));
            upper = undefined;
            let prevRow: Uint8Array | undefined;
            const rowEntries = new ReversedRowIterator();
            while (it.valid) {
              const k = it.key();
              const row = k.slice(2, 2 + ((k[0]! << 8) | k[1]!));
              if (compareBytes(row, lowBound) < 0) break;
              if (prevRow !== undefined && compareBytes(row, prevRow) >= 0) {
                // Only a damaged file (read without checksums) can make the iterator step forward.
                throw new StoreError('STORE_CORRUPTION', `reverse scan of table ${t.name}: row ${toHex(row)} does not precede ${toHex(prevRow)}`);
              }
              prevRow = row;
              // Step back over the row's entries (it ends at the previous row's last entry,
              // where the next round starts), then read them in forward order.
              const want = !filter.hasRowFilter || filter.rowMatches(row);
              rowEntries.reset();
              while (it.valid && compareKeyRow(it.key(), row) === 0) {
                if (want) rowEntries.push(it.key().slice(), it.value());
                it.prev();
              }
              if (it.error() !== undefined) break; // reported just below
              if (want) {
                rowEntries.seekToFirst();
                const r = readRow(rowEntries, ctx);
                if (r.cells.length > 0) {
                  batch.push(r);
                  bytes += rowBytes(r.cells);
                  remaining--;
                }
              }
              examined++;
              if (remaining <= 0) break;
              if (batch.length >= s.batchRows || bytes >= MAX_BATCH_BYTES || examined >= MAX_ROWS_EXAMINED_PER_BATCH) {
                upper = row;
                break;
              }
            }
            const err = it.error();
            if (err !== undefined) throw err;
          } finally {
            it.close();
          }
          region.counters.readRequests++;
          region.counters.rowsRead += batch.length;
          if (batch.length > 0) yield batch;
          else if (upper !== undefined) await new Promise((r) => setImmediate(r));
        }
      } finally {
        unpinRegion(engine, p);
      }
      if (remaining <= 0 || region.start.length === 0 || (start.length > 0 && compareBytes(start, region.start) >= 0)) return;
      cursor = region.start;
    }
  } finally {
    releaseHold(hold);
  }
}

/**
 * The entries of one row, collected newest-last while a reverse scan steps back, replayed
 * in forward order for the row reader. Only what readRow uses is implemented.
 */
class ReversedRowIterator implements InternalIterator {
  private keys: Uint8Array[] = [];
  private values: Uint8Array[] = [];
  private i = 0;

  reset(): void {
    this.keys = [];
    this.values = [];
  }

  push(key: Uint8Array, value: Uint8Array): void {
    this.keys.push(key);
    this.values.push(value);
  }

  get valid(): boolean {
    return this.i >= 0;
  }

  seekToFirst(): void {
    this.i = this.keys.length - 1;
  }

  next(): void {
    this.i--;
  }

  key(): Uint8Array {
    return this.keys[this.i]!;
  }

  value(): Uint8Array {
    return this.values[this.i]!;
  }

  error(): Error | undefined {
    return undefined;
  }

  close(): void {}

  seekToLast(): void {
    throw new Error('BUG: ReversedRowIterator only iterates forward from the first entry');
  }

  seek(): void {
    this.seekToLast();
  }

  seekForPrev(): void {
    this.seekToLast();
  }

  prev(): void {
    this.seekToLast();
  }
}
