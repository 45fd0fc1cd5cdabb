/**
 * The read side of the planner: one scan per salt bucket over
 * `[salt][metric][base(start)]` … `[salt][metric][base(end) + 1 h)` (tsdb/SCHEMA.md "Row
 * key"), all buckets at once (one scan of every bucket's range where the store serves
 * several ranges in one request, capabilities.scanRangesInOneCall), with the tag filter
 * pushed down to the store as row-filter data (key regex / fuzzy key), and each row
 * decoded straight into the growing typed arrays of its series. Rows of one series are
 * found in one bucket and come in base-time order, so a series' points arrive sorted and
 * its arrays only grow.
 *
 * Limits: a scan that would hold more than `maxSeries` series or `maxPoints` points stops
 * with TSDB_TOO_LARGE (OpenTSDB answers such queries with 413), and so does one still
 * running at its deadline (tsd.query.timeout); an aborted signal (the client went away)
 * stops every bucket's scan. A long scan yields to the event loop every few milliseconds,
 * so writes, other queries and timers are served while it runs.
 */
import { latin1, toHex } from '../../core/api/bytes.js';
import type { Cell, Row, RowFilter } from '../../core/api/store.js';
import { hasAnnotationCell } from '../meta/annotations.js';
import type { Annotation } from '../meta/annotations.js';
import { pointCapacity } from '../codec/point-block.js';
import type { PointBlock } from '../codec/point-block.js';
import { TsdbError } from '../errors.js';
import { mergeRowCells } from './row-merge.js';
import type { DecodeSession } from './decode-pool.js';
import type { Aggregator } from './aggregators.js';
import { appendHourSummary, appendRow, appendRowBuckets, bucketsStayInRows, rowSummary, summaryUseOf } from './point-append.js';
import type { Points } from './series.js';
import { baseTimeOfKey, metricScanRange } from '../schema/row-key.js';
import { readSalt } from '../schema/salt.js';
import type { SchemaWidths } from '../schema/widths.js';
import { DATA_FAMILY } from '../tables.js';
import type { Tsdb } from '../tsdb.js';

export interface ScanRequest {
  readonly metricUid: Uint8Array;
  /** Points with startMs ≤ ts ≤ endMs are kept (whole hour rows are read). */
  readonly startMs: number;
  readonly endMs: number;
  readonly filter?: RowFilter;
  readonly signal?: AbortSignal;
  readonly maxSeries?: number;
  readonly maxPoints?: number;
  /** The query's deadline (performance.now() ms) and the timeout it came from. */
  readonly deadline?: QueryDeadline;
  /** Collects the annotations of each row (cells that are not data points) per series. */
  readonly annotations?: (cells: readonly Cell[]) => Annotation[];
  /** Keep each series' row keys (for deletes; not with `decode`). */
  readonly rowKeys?: boolean;
  /**
   * Read exactly these rows (batched gets, found through the series index) instead of
   * scanning every salt bucket; `filter` is then not applied (the keys already match it).
   */
  readonly keys?: readonly Uint8Array[];
  /**
   * Downsample each row as it is read (point-append.ts appendRowBuckets; only for an
   * interval where bucketsStayInRows): the series then hold their buckets, not their
   * points, and are marked `downsampled`. Not for the rows sent to workers.
   */
  readonly downsample?: { readonly intervalMs: number; readonly fn: Aggregator };
  /** Decode the buckets `workerOf` gives to a worker (≥ 0) there (decode-pool.ts). */
  readonly decode?: { readonly session: DecodeSession; workerOf(salt: number, buckets: number): number };
}

/**
 * Decode space shared by every scan's rows: a row is decoded and copied out in one
 * synchronous step (onRow), so no two rows ever need it at once. A block grown past this
 * many points (a millisecond-dense hour) is not kept.
 */
const SCRATCH_MAX_POINTS = 1 << 16;

const DATA_FAMILIES: readonly string[] = [DATA_FAMILY];
let scratch: PointBlock | undefined;

export interface QueryDeadline {
  readonly at: number;
  readonly timeoutMs: number;
}

/** Throws TSDB_TOO_LARGE once the deadline has passed. */
export function checkDeadline(d: QueryDeadline | undefined): void {
  if (d !== undefined && performance.now() > d.at) throw tooLarge(`ran longer than ${d.timeoutMs} ms (tsd.query.timeout)`);
}

/** Longest stretch of scanning without letting the event loop run, in ms. */
const YIELD_EVERY_MS = 10;

/** One series as scanned: its TSUID (no salt, no base time) and its points. */
export interface ScannedSeries {
  readonly tsuid: Uint8Array;
  count: number;
  ts: Float64Array;
  values: Float64Array;
  isInt: Uint8Array;
  /** Exact int64 values, present once an integer beyond ±2^53 was read (0 elsewhere). */
  exact?: BigInt64Array;
  /** Annotations found in the series' rows (only with ScanRequest.annotations). */
  annotations?: Annotation[];
  /** Its points are already downsampled buckets (ScanRequest.downsample). */
  downsampled?: boolean;
  /** The row keys read (only with ScanRequest.rowKeys). */
  rowKeys?: Uint8Array[];
  /**
   * Decoded by a worker (ScanRequest.decode): its points already through the per-series
   * pipeline (window, downsample, rate); `count` is then the points read, and ts/values/isInt
   * are empty.
   */
  prepared?: Points;
}

export interface ScanStats {
  rows: number;
  cells: number;
  points: number;
  buckets: number;
  /** Hour rows answered from their hour cell's summary, without decoding (point-append.ts). */
  summaries: number;
}

/**
 * Scans every salt bucket of the metric concurrently; series in TSUID order. With
 * `req.decode`, the rows of the buckets it gives to workers are sent there (decode-pool.ts)
 * and their series come back prepared (ScannedSeries.prepared).
 */
export async function scanSeries(tsdb: Tsdb, req: ScanRequest, stats?: ScanStats): Promise<ScannedSeries[]> {
  const w = tsdb.widths;
  const buckets = w.saltWidth === 0 ? 1 : w.saltBuckets;
  const bySeries = new Map<string, ScannedSeries>();
  const list: ScannedSeries[] = [];
  const indexOf = new Map<ScannedSeries, number>();
  const maxSeries = req.maxSeries ?? Infinity;
  const maxPoints = req.maxPoints ?? Infinity;
  let points = 0;
  const startSec = Math.floor(req.startMs / 1000);
  const endSec = Math.floor(req.endMs / 1000);
  const head = w.saltWidth + w.metric + 4;
  let lastYield = performance.now();
  /** Where each series sits in its bucket's `seen` list (SeriesCursor). */
  const slotOf = new Map<ScannedSeries, number>();
  const seriesOf = (key: Uint8Array, cur: SeriesCursor): ScannedSeries => {
    // Every row of this scan has the metric `req.metricUid`, and the salt follows from the
    // metric and tags: the tag pairs alone name the series. A bucket's rows come hour by
    // hour, each hour's series in the same order, so the series after the last row's is
    // almost always the one (a byte comparison instead of a string key and a map lookup).
    const seen = cur.seen;
    const i = cur.next;
    if (i < seen.length && sameTags(key, head, seen[i]!.tsuid, w.metric)) {
      cur.next = i + 1;
      return seen[i]!;
    }
    if (i > 0 && sameTags(key, head, seen[i - 1]!.tsuid, w.metric)) return seen[i - 1]!; // exact gets: a series' hours in a row
    if (i !== 1 && seen.length > 0 && sameTags(key, head, seen[0]!.tsuid, w.metric)) {
      cur.next = 1; // the next hour begins
      return seen[0]!;
    }
    const id = latin1(key.subarray(head));
    let s = bySeries.get(id);
    if (s === undefined) {
      if (bySeries.size >= maxSeries) throw tooLarge(`more than ${maxSeries} series`);
      s = newSeries(w, key, head);
      bySeries.set(id, s);
      indexOf.set(s, list.length);
      list.push(s);
    }
    let slot = slotOf.get(s);
    if (slot === undefined || seen[slot] !== s) {
      slot = seen.length;
      seen.push(s);
      slotOf.set(s, slot);
    }
    cur.next = slot + 1;
    return s;
  };
  const decode = req.decode;
  const ds = req.downsample;
  if (ds !== undefined && !bucketsStayInRows(ds.intervalMs)) throw new RangeError(`rows cannot be downsampled one by one at ${ds.intervalMs} ms`);
  const summaryUse = summaryUseOf(ds);
  const remote = new Set<ScannedSeries>();
  const annotate = req.annotations;
  /**
   * One row read: decoded here, or sent to `worker` (≥ 0) to be decoded there. Its values
   * are borrowed (ReadOptionsBase.borrowValues): decoded or copied here, never kept.
   */
  const onRow = (row: Row, worker: number, cur: SeriesCursor): void => {
    const cells = row.cells;
    if (stats !== undefined) {
      stats.rows++;
      stats.cells += cells.length;
    }
    const key = row.key;
    const notes = annotate !== undefined && hasAnnotationCell(cells) ? annotate(cells) : undefined;
    const noted = notes !== undefined && notes.length > 0;
    if (worker >= 0) {
      const s = seriesOf(key, cur);
      if (noted) (s.annotations ??= []).push(...notes);
      remote.add(s);
      decode!.session.add(worker, indexOf.get(s)!, baseTimeOfKey(w, key) * 1000, cells);
      return;
    }
    if (summaryUse !== undefined) {
      // An hour bucket of a whole hour cell with a summary: its bucket without decoding.
      const baseMs = baseTimeOfKey(w, key) * 1000;
      const sm = rowSummary(cells, baseMs, req.startMs, req.endMs);
      if (sm !== undefined) {
        const s = seriesOf(key, cur);
        if (req.rowKeys === true) (s.rowKeys ??= []).push(key);
        s.downsampled = true;
        points += appendHourSummary(s, sm, baseMs, req.startMs, req.endMs, summaryUse);
        if (stats !== undefined) stats.summaries++;
        if (points > maxPoints) throw tooLarge(`more than ${maxPoints} data points`);
        return;
      }
    }
    const block = mergeRowCells(cells, scratch);
    // Kept for the next row and the next scan unless it grew past an ordinary hour's size.
    scratch = pointCapacity(block) <= SCRATCH_MAX_POINTS ? block : undefined;
    if (block.count === 0 && !noted) return;
    const s = seriesOf(key, cur);
    if (noted) (s.annotations ??= []).push(...notes);
    if (req.rowKeys === true) (s.rowKeys ??= []).push(key);
    if (ds !== undefined) {
      s.downsampled = true;
      points += appendRowBuckets(s, block, baseTimeOfKey(w, key) * 1000, req.startMs, req.endMs, ds.intervalMs, ds.fn);
    } else {
      points += appendRow(s, block, baseTimeOfKey(w, key) * 1000, req.startMs, req.endMs);
    }
    if (points > maxPoints) throw tooLarge(`more than ${maxPoints} data points`);
  };
  const scanBucket = async (salt: number): Promise<void> => {
    const { start, end } = metricScanRange(w, salt, req.metricUid, startSec, endSec);
    const worker = decode === undefined ? -1 : decode.workerOf(salt, buckets);
    const spec = { start, end, families: [DATA_FAMILY], borrowValues: true, ...(req.filter === undefined ? {} : { filter: req.filter }) };
    const cur: SeriesCursor = { seen: [], next: 0 };
    for await (const rows of tsdb.data.scan({
      ...spec, batchRows: 256,
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    })) {
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        lastYield = performance.now();
        req.signal?.throwIfAborted();
      }
      checkDeadline(req.deadline);
      for (const row of rows) onRow(row, worker, cur);
    }
  };
  /**
   * Every bucket in one scan of one range per bucket (ScanSpec.ranges), where the store
   * serves that in one request (Bigtable: one ReadRows instead of one per bucket). Rows
   * come bucket after bucket, each bucket's in key order as from its own scan.
   */
  const scanBucketsAtOnce = async (): Promise<void> => {
    const ranges = Array.from({ length: buckets }, (_, salt) => metricScanRange(w, salt, req.metricUid, startSec, endSec));
    let cur: SeriesCursor = { seen: [], next: 0 };
    let salt = -1;
    for await (const rows of tsdb.data.scan({
      ranges, families: DATA_FAMILIES, borrowValues: true, batchRows: 256, filter: req.filter, signal: req.signal,
    })) {
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        lastYield = performance.now();
        req.signal?.throwIfAborted();
      }
      checkDeadline(req.deadline);
      for (const row of rows) {
        const s = w.saltWidth === 0 ? 0 : readSalt(row.key, w);
        if (s !== salt) {
          salt = s;
          cur = { seen: [], next: 0 };
        }
        onRow(row, -1, cur);
      }
    }
  };
  if (req.keys !== undefined) {
    // Keys in (series, time) order: each series' rows arrive sorted, as from a bucket scan.
    const rows = await tsdb.data.get(req.keys, { families: DATA_FAMILIES, borrowValues: true, signal: req.signal });
    checkDeadline(req.deadline);
    const cur: SeriesCursor = { seen: [], next: 0 };
    for (const row of rows) if (row !== undefined) onRow(row, -1, cur);
  } else if (decode === undefined && buckets > 1 && tsdb.store.capabilities.scanRangesInOneCall === true) {
    await scanBucketsAtOnce();
    if (stats !== undefined) stats.buckets += buckets;
  } else if (decode === undefined) {
    await Promise.all(Array.from({ length: buckets }, (_, salt) => scanBucket(salt)));
    if (stats !== undefined) stats.buckets += buckets;
  } else {
    // The workers' buckets first, their rows sent as they come, so the workers decode
    // while this thread goes on to decode its own buckets (scanned all at once, a worker
    // would get its rows only after this thread had decoded its share).
    const salts = Array.from({ length: buckets }, (_, salt) => salt);
    await Promise.all(salts.filter((salt) => decode.workerOf(salt, buckets) >= 0).map(scanBucket));
    decode.session.send();
    await Promise.all(salts.filter((salt) => decode.workerOf(salt, buckets) < 0).map(scanBucket));
    if (stats !== undefined) stats.buckets += buckets;
  }
  let out = list;
  if (decode !== undefined) {
    const done = await decode.session.finish();
    for (const r of done) {
      const s = list[r.index]!;
      s.count = r.raw;
      s.prepared = r.points;
      points += r.raw;
    }
    if (points > maxPoints) throw tooLarge(`more than ${maxPoints} data points`);
    // A series of a worker's bucket whose rows held no point and no annotation is not one.
    out = list.filter((s) => !remote.has(s) || s.prepared !== undefined || (s.annotations?.length ?? 0) > 0);
  }
  if (stats !== undefined) stats.points += points;
  return out.sort((a, b) => compareIds(a.tsuid, b.tsuid));
}

/**
 * The series of one bucket (or of the exact gets) in the order their rows came, and where
 * the next row's series is expected (scanSeries' seriesOf).
 */
interface SeriesCursor {
  readonly seen: ScannedSeries[];
  next: number;
}

/** True when key[head..] (a row's tag pairs) equals tsuid[metricWidth..]. */
function sameTags(key: Uint8Array, head: number, tsuid: Uint8Array, metricWidth: number): boolean {
  const n = key.length - head;
  if (tsuid.length - metricWidth !== n) return false;
  for (let i = n - 1; i >= 0; i--) if (key[head + i] !== tsuid[metricWidth + i]) return false;
  return true;
}

const EMPTY_F64 = new Float64Array(0);
const EMPTY_U8 = new Uint8Array(0);

function newSeries(w: SchemaWidths, key: Uint8Array, head: number): ScannedSeries {
  const tsuid = new Uint8Array(w.metric + key.length - head);
  tsuid.set(key.subarray(w.saltWidth, w.saltWidth + w.metric), 0);
  tsuid.set(key.subarray(head), w.metric);
  return { tsuid, count: 0, ts: EMPTY_F64, values: EMPTY_F64, isInt: EMPTY_U8 };
}

function compareIds(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function tooLarge(what: string): TsdbError {
  return new TsdbError('TSDB_TOO_LARGE', `Query exceeded a limit: ${what}`);
}

/** Upper-case hex of a TSUID, as OpenTSDB prints it. */
export function tsuidHex(tsuid: Uint8Array): string {
  return toHex(tsuid).toUpperCase();
}
