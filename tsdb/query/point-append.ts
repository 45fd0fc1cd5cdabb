/**
 * Growing a series' typed arrays row by row as a scan decodes it (scanner.ts on the main
 * thread, decode-worker.ts in a worker): rows of one series come in base-hour order.
 */
import type { Cell } from '../../core/api/store.js';
import { hourBlockSummary } from '../codec/hour-codec.js';
import type { HourSummary } from '../codec/hour-codec.js';
import type { PointBlock } from '../codec/point-block.js';
import { isHourCellQualifier } from '../schema/qualifier.js';
import type { Aggregator } from './aggregators.js';
import { getAggregator, isAggregator } from './aggregators.js';
import type { DownsampleSpec } from './downsample.js';
import { pointBytes } from './series.js';
import type { Points } from './series.js';

/** Appends the block's points inside [startMs, endMs]; returns how many. */
export function appendRow(s: Points, b: PointBlock, baseMs: number, startMs: number, endMs: number): number {
  const need = s.count + b.count;
  if (need > s.ts.length) grow(s, capacityFor(need, baseMs, startMs, endMs, s.ts.length));
  if (b.bigInts !== undefined && s.exact === undefined) s.exact = new BigInt64Array(s.ts.length);
  let n = 0;
  for (let i = 0; i < b.count; i++) {
    const t = baseMs + b.offsetsMs[i]!;
    if (t < startMs || t > endMs) continue;
    const j = s.count++;
    s.ts[j] = t;
    s.values[j] = b.values[i]!;
    s.isInt[j] = b.isInt[i]!;
    if (s.exact !== undefined) s.exact[j] = b.bigInts?.[i] ?? 0n;
    n++;
  }
  return n;
}

const HOUR_MS = 3_600_000;

/**
 * True when a fixed downsample interval of `intervalMs` never lets a bucket span two hour
 * rows (it divides an hour, and buckets are epoch-aligned): then a row's buckets are final
 * when the row is read, and appendRowBuckets may downsample row by row.
 */
export function bucketsStayInRows(intervalMs: number): boolean {
  return Number.isInteger(intervalMs) && intervalMs > 0 && HOUR_MS % intervalMs === 0;
}

/** How to downsample row by row (appendRowBuckets). */
export interface RowDownsample {
  readonly intervalMs: number;
  readonly fn: Aggregator;
}

/**
 * The downsampling a scan may do row by row: a fixed interval that divides an hour, without
 * a fill policy (a fill emits buckets between rows and across the window, so it stays with
 * downsample.ts), with a valid function; undefined otherwise.
 */
export function rowDownsampleOf(ds: DownsampleSpec | undefined): RowDownsample | undefined {
  if (ds === undefined || ds.all || ds.calendar || ds.fill !== 'none' || !bucketsStayInRows(ds.intervalMs) || !isAggregator(ds.fn)) return undefined;
  const fn = getAggregator(ds.fn);
  return fn.name === 'none' ? undefined : { intervalMs: ds.intervalMs, fn };
}

/**
 * Downsamples the block's points inside [startMs, endMs] straight into the series (one
 * point per non-empty bucket, `fn.runDouble` over the bucket's values in time order, as
 * downsample.ts does without a fill policy), instead of appending every point for
 * downsample() to read again. REQUIRES bucketsStayInRows(intervalMs), baseMs a whole hour
 * (a row's base time), rows of the series in base-hour order. Returns the raw points read
 * (for the point limit).
 */
export function appendRowBuckets(s: Points, b: PointBlock, baseMs: number, startMs: number, endMs: number, intervalMs: number, fn: Aggregator): number {
  const off = b.offsetsMs;
  let lo = 0;
  let hi = b.count;
  while (lo < hi && baseMs + off[lo]! < startMs) lo++;
  while (hi > lo && baseMs + off[hi - 1]! > endMs) hi--;
  if (hi === lo) return 0;
  const need = s.count + Math.min(hi - lo, Math.ceil(HOUR_MS / intervalMs));
  if (need > s.ts.length) grow(s, capacityFor(need, baseMs, startMs, endMs, s.ts.length));
  let k = s.count;
  let i = lo;
  while (i < hi) {
    // The hour's base is a multiple of the interval (it divides an hour): the bucket follows
    // from the point's offset in the hour, an int32 remainder instead of a double one.
    const o = off[i]!;
    const bOff = o - (o % intervalMs);
    const bucket = baseMs + bOff;
    // The bucket's points are i..j-1: j is the first point at or past the bucket's end
    // (offsets ascend). Galloping, then bisecting, finds it in O(log) of the bucket's
    // points (360 for an hour bucket of a 10 s series), and in one step for a bucket of one.
    const endOff = bOff + intervalMs;
    let j = i + 1;
    let probe = j;
    let stride = 1;
    while (probe < hi && off[probe]! < endOff) {
      j = probe + 1;
      probe = j + stride;
      stride *= 2;
    }
    let top = probe < hi ? probe : hi;
    while (j < top) {
      const mid = (j + top) >>> 1;
      if (off[mid]! < endOff) j = mid + 1;
      else top = mid;
    }
    s.ts[k] = bucket;
    s.values[k] = fn.runDouble(b.values, i, j);
    s.isInt[k] = 0;
    k++;
    i = j;
  }
  s.count = k;
  return hi - lo;
}

/** What an hour bucket takes from a cell's summary (appendHourSummary). */
export type SummaryUse = 'sum' | 'avg' | 'count';

/**
 * How appendRowBuckets' one bucket of a whole hour row can be read from the hour cell's
 * summary (hour-codec.ts HourSummary) instead of its points: for hour buckets of a
 * function whose double path is the sum, the average or the count (sum, zimsum, pfsum,
 * avg, count); undefined otherwise.
 */
export function summaryUseOf(ds: RowDownsample | undefined): SummaryUse | undefined {
  if (ds === undefined || ds.intervalMs !== HOUR_MS) return undefined;
  const run = ds.fn.runDouble;
  if (run === getAggregator('sum').runDouble) return 'sum';
  if (run === getAggregator('avg').runDouble) return 'avg';
  if (run === getAggregator('count').runDouble) return 'count';
  return undefined;
}

/**
 * The summary that answers a row's hour bucket, or undefined when the row must be decoded:
 * its one cell is an hour cell with a summary, and the whole hour [baseMs, baseMs + 1 h)
 * is inside [startMs, endMs] (the scanner on the main thread and decode workers alike).
 */
export function rowSummary(cells: readonly Cell[], baseMs: number, startMs: number, endMs: number): HourSummary | undefined {
  if (cells.length !== 1 || baseMs < startMs || baseMs + HOUR_MS - 1 > endMs) return undefined;
  const c = cells[0]!;
  const q = c.qualifier;
  return isHourCellQualifier(q) ? hourBlockSummary(c.value) : undefined;
}

/**
 * appendRowBuckets for a row whose only data cell is an hour cell with summary `sm`, when
 * the whole hour [baseMs, baseMs + 1 h) is inside [startMs, endMs]: its one bucket, the
 * same double that `fn.runDouble` over the decoded points gives (the summary's sum is
 * added as sumD adds: NaN skipped, time order, from 0). Returns the points it stands for.
 */
export function appendHourSummary(s: Points, sm: HourSummary, baseMs: number, startMs: number, endMs: number, use: SummaryUse): number {
  if (s.count + 1 > s.ts.length) grow(s, capacityFor(s.count + 1, baseMs, startMs, endMs, s.ts.length));
  const n = sm.nonNaN;
  const k = s.count++;
  s.ts[k] = baseMs;
  s.values[k] = use === 'count' ? n : n === 0 ? NaN : use === 'avg' ? sm.sum / n : sm.sum;
  s.isInt[k] = 0;
  return sm.count;
}

/**
 * The new capacity of a series' arrays once `need` points do not fit: rows come in
 * base-hour order, so the points seen per hour so far project the series' total over the
 * window (one allocation for a regular series, instead of a doubling chain whose copies
 * and fresh pages cost more than the decoding); at least double, never below `need`.
 */
function capacityFor(need: number, baseMs: number, startMs: number, endMs: number, cap: number): number {
  const first = Math.floor(startMs / HOUR_MS);
  const hoursSeen = Math.max(1, Math.floor(baseMs / HOUR_MS) - first + 1);
  const hoursTotal = Math.max(hoursSeen, Math.floor(endMs / HOUR_MS) - first + 1);
  const projected = Math.ceil((need / hoursSeen) * hoursTotal);
  return Math.max(need, cap * 2, projected);
}

function grow(s: Points, cap: number): void {
  // One buffer for the three arrays: a fresh ArrayBuffer costs more than its bytes.
  const [buf, at] = pointBytes(cap);
  const ts = new Float64Array(buf, at, cap);
  ts.set(s.ts.subarray(0, s.count));
  const values = new Float64Array(buf, at + cap * 8, cap);
  values.set(s.values.subarray(0, s.count));
  const isInt = new Uint8Array(buf, at + cap * 16, cap);
  isInt.set(s.isInt.subarray(0, s.count));
  s.ts = ts;
  s.values = values;
  s.isInt = isInt;
  if (s.exact !== undefined) {
    const exact = new BigInt64Array(cap);
    exact.set(s.exact.subarray(0, s.count));
    s.exact = exact;
  }
}
