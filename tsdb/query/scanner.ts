/**
 * The read side of the planner: one scan per salt bucket over
 * `[salt][metric][base(start)]` … `[salt][metric][base(end) + 1 h)` (tsdb/SCHEMA.md "Row
 * key"), all buckets at once, with the tag filter pushed down to the store as row-filter
 * data (key regex / fuzzy key), and each row decoded straight into the growing typed
 * arrays of its series. Rows of one series are found in one bucket and come in base-time
 * order, so a series' points arrive sorted and its arrays only grow.
 *
 * Limits: a scan that would hold more than `maxSeries` series or `maxPoints` points stops
 * with TSDB_TOO_LARGE (OpenTSDB answers such queries with 413), and so does one still
 * running at its deadline (tsd.query.timeout); an aborted signal (the client went away)
 * stops every bucket's scan. A long scan yields to the event loop every few milliseconds,
 * so writes, other queries and timers are served while it runs.
 */
import { toHex } from '../../core/api/bytes.js';
import type { Cell, RowFilter } from '../../core/api/store.js';
import type { Annotation } from '../meta/annotations.js';
import type { PointBlock } from '../codec/point-block.js';
import { TsdbError } from '../errors.js';
import { mergeRowCells } from '../read/row-merge.js';
import { baseTimeOfKey, metricScanRange } from '../schema/row-key.js';
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
  /** Keep each series' row keys (for deletes). */
  readonly rowKeys?: boolean;
}

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
  /** The tag pairs' UID bytes, in key order: [tagk, tagv] views of tsuid. */
  readonly tags: Array<[Uint8Array, Uint8Array]>;
  count: number;
  ts: Float64Array;
  values: Float64Array;
  isInt: Uint8Array;
  /** Exact int64 values, present once an integer beyond ±2^53 was read (0 elsewhere). */
  exact?: BigInt64Array;
  /** Annotations found in the series' rows (only with ScanRequest.annotations). */
  annotations?: Annotation[];
  /** The row keys read (only with ScanRequest.rowKeys). */
  rowKeys?: Uint8Array[];
}

export interface ScanStats {
  rows: number;
  cells: number;
  points: number;
  buckets: number;
}

/** Scans every salt bucket of the metric concurrently; series in TSUID order. */
export async function scanSeries(tsdb: Tsdb, req: ScanRequest, stats?: ScanStats): Promise<ScannedSeries[]> {
  const w = tsdb.widths;
  const buckets = w.saltWidth === 0 ? 1 : w.saltBuckets;
  const bySeries = new Map<string, ScannedSeries>();
  const maxSeries = req.maxSeries ?? Infinity;
  const maxPoints = req.maxPoints ?? Infinity;
  let points = 0;
  const startSec = Math.floor(req.startMs / 1000);
  const endSec = Math.floor(req.endMs / 1000);
  const head = w.saltWidth + w.metric + 4;
  let lastYield = performance.now();
  const scanBucket = async (salt: number): Promise<void> => {
    const { start, end } = metricScanRange(w, salt, req.metricUid, startSec, endSec);
    let block: PointBlock | undefined;
    for await (const rows of tsdb.data.scan({
      start, end, families: [DATA_FAMILY], batchRows: 256,
      ...(req.filter === undefined ? {} : { filter: req.filter }),
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    })) {
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        lastYield = performance.now();
        req.signal?.throwIfAborted();
      }
      checkDeadline(req.deadline);
      for (const row of rows) {
        if (stats !== undefined) {
          stats.rows++;
          stats.cells += row.cells.length;
        }
        block = mergeRowCells(row.cells, block);
        const notes = req.annotations?.(row.cells);
        if (block.count === 0 && (notes === undefined || notes.length === 0)) continue;
        const key = row.key;
        const id = seriesId(key, w.saltWidth, w.saltWidth + w.metric, head);
        let s = bySeries.get(id);
        if (s === undefined) {
          if (bySeries.size >= maxSeries) throw tooLarge(`more than ${maxSeries} series`);
          s = newSeries(key, w.saltWidth, w.metric, head, w.tagk + w.tagv, w.tagk);
          bySeries.set(id, s);
        }
        if (notes !== undefined && notes.length > 0) (s.annotations ??= []).push(...notes);
        if (req.rowKeys === true) (s.rowKeys ??= []).push(key);
        points += appendRow(s, block, baseTimeOfKey(w, key) * 1000, req.startMs, req.endMs);
        if (points > maxPoints) throw tooLarge(`more than ${maxPoints} data points`);
      }
    }
  };
  await Promise.all(Array.from({ length: buckets }, (_, salt) => scanBucket(salt)));
  if (stats !== undefined) {
    stats.points += points;
    stats.buckets += buckets;
  }
  return [...bySeries.values()].sort((a, b) => compareIds(a.tsuid, b.tsuid));
}

/** Appends the block's points inside [startMs, endMs]; returns how many. */
function appendRow(s: ScannedSeries, b: PointBlock, baseMs: number, startMs: number, endMs: number): number {
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

function grow(s: ScannedSeries, cap: number): void {
  const ts = new Float64Array(cap);
  ts.set(s.ts.subarray(0, s.count));
  const values = new Float64Array(cap);
  values.set(s.values.subarray(0, s.count));
  const isInt = new Uint8Array(cap);
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

const EMPTY_F64 = new Float64Array(0);
const EMPTY_U8 = new Uint8Array(0);

function newSeries(key: Uint8Array, saltWidth: number, metricWidth: number, head: number, pairLen: number, tagkWidth: number): ScannedSeries {
  const tsuid = new Uint8Array(metricWidth + key.length - head);
  tsuid.set(key.subarray(saltWidth, saltWidth + metricWidth), 0);
  tsuid.set(key.subarray(head), metricWidth);
  const tags: Array<[Uint8Array, Uint8Array]> = [];
  for (let o = metricWidth; o < tsuid.length; o += pairLen) tags.push([tsuid.subarray(o, o + tagkWidth), tsuid.subarray(o + tagkWidth, o + pairLen)]);
  return { tsuid, tags, count: 0, ts: EMPTY_F64, values: EMPTY_F64, isInt: EMPTY_U8 };
}

/** The series part of a row key (metric and tags) as a map key. */
function seriesId(key: Uint8Array, from: number, metricEnd: number, head: number): string {
  let s = '';
  for (let i = from; i < metricEnd; i++) s += String.fromCharCode(key[i]!);
  for (let i = head; i < key.length; i++) s += String.fromCharCode(key[i]!);
  return s;
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
