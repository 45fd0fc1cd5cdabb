/**
 * Runs a parsed /api/query (query-spec.ts) against the store, sub-query by sub-query, as
 * OpenTSDB's TsdbQuery does:
 *
 *   resolve the metric and the filters' tag names to UIDs (literals too) →
 *   plan the row-key regex the store evaluates (row-key-filter.ts) →
 *   scan every salt bucket of the hour-aligned scan window concurrently (scanner.ts) →
 *   resolve each series' tag names, apply the post-scan filters →
 *   group by the group-by tags' value UIDs → downsample, rate, aggregate, trim (pipeline.ts)
 *   → output series with tags (equal in every member) and aggregateTags (the others).
 *
 * Unknown names: an unknown metric or tag key fails the query (TSDB_NO_SUCH_NAME, the
 * route answers 404); an unknown literal tag value matches nothing (OpenTSDB's
 * tsd.query.skip_unresolved_tagvs, on by default here).
 */
import { compareBytes, fromHex, toHex } from '../../core/api/bytes.js';
import type { RowFilter } from '../../core/api/store.js';
import { TsdbError } from '../errors.js';
import { annotationsInCells, globalAnnotations } from '../meta/annotations.js';
import type { Annotation } from '../meta/annotations.js';
import { rowKeyWithBaseTime } from '../schema/row-key.js';
import type { Tsdb } from '../tsdb.js';
import type { DownsampleSpec } from './downsample-spec.js';
import type { OutputSeries } from './format-json.js';
import { SeriesPreparer, scanWindow } from './pipeline.js';
import type { PipelineSpec } from './pipeline.js';
import type { MetricSubQuery, SubQuery, TsQuery } from './query-spec.js';
import { rateOf, subQueryEcho } from './query-spec.js';
import { tsuidKeyRegex } from './row-key-filter.js';
import { everySeriesMatches, matchingSeries, seriesPlan } from './series-plan.js';
import type { SeriesPlan } from './series-plan-types.js';
import { rowDownsampleOf, summaryUseOf } from './point-append.js';
import { checkDeadline, scanSeries } from './scanner.js';
import type { SeriesNames } from '../catalog/series-names.js';
import type { QueryDeadline, ScannedSeries, ScanStats } from './scanner.js';
import type { Points, SeriesData } from './series.js';
import { matchAllTagFilters } from './tag-filter.js';
import type { TagFilter } from './tag-filter.js';

export interface QueryLimits {
  readonly maxSeries: number;
  readonly maxPoints: number;
  /** Stop with 413 after this many ms (0 or absent: no limit). */
  readonly timeoutMs?: number;
}

export interface QueryRun {
  readonly series: OutputSeries[];
  readonly stats: ScanStats;
  /** Rows deleted (a delete query). */
  readonly rowsDeleted: number;
}

/** Executes every sub-query in order; results in sub-query order, then group order. */
export async function executeQuery(tsdb: Tsdb, q: TsQuery, limits: QueryLimits, signal?: AbortSignal): Promise<QueryRun> {
  const stats: ScanStats = { rows: 0, cells: 0, points: 0, buckets: 0, summaries: 0 };
  const out: OutputSeries[] = [];
  const globals = q.globalAnnotations ? await globalAnnotationsOf(tsdb, q) : undefined;
  let rowsDeleted = 0;
  const timeoutMs = limits.timeoutMs ?? 0;
  const deadline: QueryDeadline | undefined = timeoutMs > 0 ? { at: performance.now() + timeoutMs, timeoutMs } : undefined;
  for (const sub of q.queries) {
    const found = await findSeries(tsdb, q, sub, limits, stats, signal, deadline);
    signal?.throwIfAborted();
    for (const o of await aggregateSub(q, sub, found, signal, deadline)) {
      out.push(globals === undefined ? o : { ...o, globalAnnotations: globals });
    }
    if (q.delete) rowsDeleted += await deleteRows(tsdb, found.series);
  }
  return { series: out, stats, rowsDeleted };
}

interface Found {
  readonly data: SeriesData;
  readonly rowKeys: readonly Uint8Array[];
  /** Tag value UIDs in hex by tagk UID hex (for grouping). */
  readonly tagvHex: ReadonlyMap<string, string>;
  readonly annotations: Annotation[];
  /** Points already through the per-series pipeline (decoded by a worker). */
  readonly prepared?: Points;
  /** data holds downsampled buckets (the scan downsampled row by row). */
  readonly downsampled?: boolean;
}

async function findSeries(tsdb: Tsdb, q: TsQuery, sub: SubQuery, limits: QueryLimits, stats: ScanStats, signal?: AbortSignal, deadline?: QueryDeadline): Promise<{ series: Found[]; groupBy: readonly Uint8Array[] }> {
  const win = scanWindow(q.startMs, q.endMs, sub.downsample);
  let metricUid: Uint8Array;
  let filter: RowFilter | undefined;
  let postScan: readonly TagFilter[] = [];
  let groupBy: readonly Uint8Array[] = [];
  let metricName: string;
  /** The exact rows to read, when the series index narrows the query to a few (queryExactMaxRows). */
  let keys: Uint8Array[] | undefined;
  /** The row filter as a test of a TSUID (RowKeyFilterPlan.seriesTest). */
  let rowTest: ((tsuid: Uint8Array) => boolean) | undefined;
  const exactMax = q.delete ? 0 : tsdb.config.queryExactMaxRows;
  /** The part of the window within the metric's retention: older points are not read, dropped or not. */
  let readWin = win;
  /** False when the whole window is past the metric's retention. */
  const retained = (metric: string): boolean => {
    const from = tsdb.retainedFrom(metric);
    if (from > win.startMs) readWin = { startMs: from, endMs: win.endMs };
    return readWin.startMs <= win.endMs - 1;
  };
  let seriesPlanOf: SeriesPlan | undefined;
  if (sub.kind === 'metric') {
    metricName = sub.metric;
    const p = (seriesPlanOf = await seriesPlan(tsdb, sub));
    if (!retained(metricName)) return { series: [], groupBy: [] };
    metricUid = p.metricUid;
    const plan = p.rows;
    if (plan === undefined) return { series: [], groupBy: [] };
    if (plan.keyRegex !== undefined) filter = { kind: 'keyRegex', pattern: plan.keyRegex };
    postScan = plan.postScan;
    groupBy = plan.groupBy;
    rowTest = plan.seriesTest;
    if (plan.seriesRegex !== undefined && exactMax > 0) {
      // A few hundred gets beat scanning every bucket past every series of the metric,
      // and lose to the scans once most of the metric's rows are wanted.
      const hours = baseHours(readWin, exactMax);
      const most = Math.floor(exactMax / hours.length);
      if (most >= 1) {
        const tsuids = await matchingSeries(tsdb, p, most + 1, signal);
        if (tsuids.length <= most) keys = rowKeysOf(tsdb, tsuids, tsuids.length === 1 || sub.aggregator === 'none' ? hoursOfLoneSeries(hours, q.endMs, sub.downsample) : hours);
      }
    }
  } else {
    const tsuids = sub.tsuids.map((h) => {
      if (!/^([0-9A-Fa-f]{2})+$/.test(h) || h.length / 2 <= tsdb.widths.metric) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid TSUID: ${h}`);
      return fromHex(h);
    });
    metricUid = tsuids[0]!.subarray(0, tsdb.widths.metric);
    if (tsuids.some((t) => compareBytes(t.subarray(0, tsdb.widths.metric), metricUid) !== 0)) {
      throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'All TSUIDs of a sub query must share one metric');
    }
    const name = await tsdb.metrics.getName(metricUid);
    if (name === undefined) throw new TsdbError('TSDB_NO_SUCH_NAME', `No such unique ID for 'metrics': '${toHex(metricUid).toUpperCase()}'`);
    metricName = name;
    if (!retained(metricName)) return { series: [], groupBy: [] };
    filter = { kind: 'keyRegex', pattern: tsuidKeyRegex(tsdb.widths, tsuids) };
    const hours = baseHours(readWin, exactMax);
    if (tsuids.length * hours.length <= exactMax) {
      const unique = [...new Map(tsuids.map((t) => [toHex(t), t])).values()].sort(compareBytes);
      keys = rowKeysOf(tsdb, unique, unique.length === 1 || sub.aggregator === 'none' ? hoursOfLoneSeries(hours, q.endMs, sub.downsample) : hours);
    }
  }
  if (keys !== undefined) filter = undefined;
  /**
   * Set when the row filter was dropped because the series index showed every series of
   * the metric matching it: the scanned series are tested instead (one test per series,
   * not a key regex per row), which also drops a series written since that does not match.
   */
  let seriesCheck: ((tsuid: Uint8Array) => boolean) | undefined;
  if (filter !== undefined && !q.delete && seriesPlanOf !== undefined && rowTest !== undefined && (await everySeriesMatches(tsdb, seriesPlanOf, signal))) {
    filter = undefined;
    seriesCheck = rowTest;
  }
  const rowDownsample = q.delete ? undefined : rowDownsampleOf(sub.downsample);
  // Rows that hour summaries answer cost less to read here than to pack for a worker.
  const pool = q.delete || keys !== undefined || summaryUseOf(rowDownsample) !== undefined ? undefined : tsdb.queryDecodePool();
  const parallel = pool !== undefined && (await expectedRows(tsdb, sub, metricUid, win, tsdb.config.queryParallelMinRows)) >= tsdb.config.queryParallelMinRows;
  const session = parallel ? pool.session({ startMs: readWin.startMs, endMs: win.endMs - 1, maxPoints: limits.maxPoints, spec: pipelineSpecOf(q, sub) }) : undefined;
  let scanned: ScannedSeries[];
  try {
    // Every field named (undefined where unused): spreading optional fields cost ~1 µs a query.
    scanned = await scanSeries(tsdb, {
      metricUid, startMs: readWin.startMs, endMs: win.endMs - 1, filter, signal, deadline, maxSeries: limits.maxSeries, maxPoints: limits.maxPoints,
      annotations: q.noAnnotations ? undefined : (cells: Parameters<typeof annotationsInCells>[0]) => annotationsInCells(cells, q.startMs, q.endMs),
      rowKeys: q.delete ? true : undefined,
      keys,
      downsample: rowDownsample,
      decode: session === undefined ? undefined : { session, workerOf: (salt: number, buckets: number) => pool!.workerOf(salt, buckets) },
    }, stats);
  } catch (err) {
    session?.cancel();
    throw err;
  }
  const series: Found[] = [];
  for (const s of scanned) {
    if (seriesCheck !== undefined && !seriesCheck(s.tsuid)) continue;
    const named = tsdb.catalog.names.names(s.tsuid);
    const f = describe(metricName, s, named instanceof Promise ? await named : named);
    if (f === undefined || !matchAllTagFilters(postScan, f.data.tags)) continue;
    series.push(f);
  }
  return { series, groupBy };
}

/**
 * The base times (s) of the hour rows a scan window covers, in order; at most `most` + 1
 * (enough to tell that there are more than `most`).
 */
function baseHours(win: { startMs: number; endMs: number }, most: number): number[] {
  const first = Math.floor(win.startMs / 3_600_000) * 3600;
  const last = Math.floor((win.endMs - 1) / 3_600_000) * 3600;
  const out: number[] = [];
  for (let h = first; h <= last && out.length <= most; h += 3600) out.push(h);
  return out;
}

/**
 * The hours of a scan window that can change the answer of a series aggregated alone (the
 * sub-query's only series, or aggregator none). The window runs past the query's last
 * bucket into the next hour, as TsdbQuery's scan does, so that a series without a point at
 * a step can be interpolated from its next point; a series on its own is never
 * interpolated, and its answer ends with the bucket holding the query's end (the query's
 * end itself without downsampling). Calendar buckets keep the whole window.
 */
function hoursOfLoneSeries(hours: readonly number[], endMs: number, ds: DownsampleSpec | undefined): readonly number[] {
  if (ds?.calendar === true) return hours;
  const iv = ds === undefined || ds.all ? 0 : ds.intervalMs;
  const usedUntilMs = iv > 0 ? endMs - (endMs % iv) + iv : endMs + 1;
  // The first hour (it holds the window's start, never after the query's end) always stays.
  return hours.filter((h) => h * 1000 < usedUntilMs);
}

/** The row keys of these series (TSUIDs) in these hours, in (series, hour) order. */
function rowKeysOf(tsdb: Tsdb, tsuids: readonly Uint8Array[], hours: readonly number[]): Uint8Array[] {
  const keys: Uint8Array[] = [];
  for (const t of tsuids) {
    const template = tsdb.catalog.templateOf(t);
    for (const h of hours) keys.push(rowKeyWithBaseTime(tsdb.widths, template, h));
  }
  return keys;
}

/** The scanned series with its names (series-names.ts: resolved once per TSUID); undefined when a UID has no name. */
function describe(metric: string, s: ScannedSeries, names: SeriesNames | undefined): Found | undefined {
  if (names === undefined) return undefined;
  const data: SeriesData = { metric, tags: names.tags, tsuid: names.tsuid, count: s.prepared === undefined ? s.count : 0, ts: s.ts, values: s.values, isInt: s.isInt, exact: s.exact };
  return { data, tagvHex: names.tagvHex, annotations: s.annotations ?? [], rowKeys: s.rowKeys ?? [], ...(s.prepared === undefined ? {} : { prepared: s.prepared }), ...(s.downsampled === true ? { downsampled: true } : {}) };
}

/** Groups (by the group-by tags' value UIDs) and runs each group through the pipeline. */
async function aggregateSub(q: TsQuery, sub: SubQuery, found: { series: Found[]; groupBy: readonly Uint8Array[] }, signal?: AbortSignal, deadline?: QueryDeadline): Promise<OutputSeries[]> {
  if (found.series.length === 0) return [];
  const preparer = new SeriesPreparer(pipelineSpecOf(q, sub));
  const groups = new Map<string, Found[]>();
  if (sub.aggregator === 'none') {
    found.series.forEach((f, i) => groups.set(String(i).padStart(12, '0'), [f]));
  } else {
    const groupBy = found.groupBy.map((k) => toHex(k));
    for (const f of found.series) {
      let key = '';
      let complete = true;
      for (const k of groupBy) {
        const v = f.tagvHex.get(k);
        if (v === undefined) complete = false;
        else key += v;
      }
      if (!complete) continue;
      const g = groups.get(key);
      if (g === undefined) groups.set(key, [f]);
      else g.push(f);
    }
  }
  const out: OutputSeries[] = [];
  for (const key of [...groups.keys()].sort()) {
    signal?.throwIfAborted();
    checkDeadline(deadline);
    const members = groups.get(key)!;
    const [points] = preparer.combine(members.map((m) => m.prepared ?? (m.downsampled === true ? preparer.prepareDownsampled(m.data) : preparer.prepare(m.data))));
    if (points === undefined) continue;
    const { tags, aggregateTags } = computeTags(members.map((m) => m.data.tags));
    const annotations = members.length === 1 ? members[0]!.annotations : members.flatMap((m) => m.annotations);
    out.push({
      metric: members[0]!.data.metric,
      tags,
      aggregateTags,
      // Named fields, not a spread: copying the pipeline's object costs microseconds a series.
      points: { count: points.count, ts: points.ts, values: points.values, isInt: points.isInt, exact: points.exact, nanAsNull: points.nanAsNull === true },
      ...(q.showQuery ? { query: subQueryEcho(sub) } : {}),
      ...(q.showTSUIDs ? { tsuids: members.map((m) => m.data.tsuid!) } : {}),
      ...(annotations.length > 0 ? { annotations } : {}),
    });
  }
  return out;
}

/**
 * A delete query removes the whole hour rows it read of every matched series, as OpenTSDB
 * does (so points of those hours outside [start, end] go too), in one durable mutation.
 */
async function deleteRows(tsdb: Tsdb, series: readonly Found[]): Promise<number> {
  const rows = series.flatMap((f) => f.rowKeys.map((key) => ({ key, mutations: [{ type: 'deleteRow' as const }] })));
  if (rows.length === 0) return 0;
  try {
    await tsdb.data.mutate(rows, { durability: 'sync' });
  } finally {
    // A failed delete may have removed some rows too.
    await tsdb.rowsDeleted(series.flatMap((f) => (f.data.tsuid === undefined ? [] : [fromHex(f.data.tsuid)])));
  }
  return rows.length;
}

/** The pipeline spec of a sub-query (pipeline.ts): its window, downsampling, rate, aggregator. */
function pipelineSpecOf(q: TsQuery, sub: SubQuery): PipelineSpec {
  const win = scanWindow(q.startMs, q.endMs, sub.downsample);
  const rate = rateOf(sub);
  return {
    startMs: q.startMs, endMs: q.endMs, aggregator: sub.aggregator, scanStartMs: win.startMs, scanEndMs: win.endMs,
    ...(sub.downsample === undefined ? {} : { downsample: sub.downsample }),
    ...(rate === undefined ? {} : { rate }),
  };
}

/**
 * Rows a sub-query will read, at most: its series (from the series index, counted up to
 * what the decision needs; tag filters not applied) × the hours of its window.
 */
async function expectedRows(tsdb: Tsdb, sub: SubQuery, metricUid: Uint8Array, win: { startMs: number; endMs: number }, enough: number): Promise<number> {
  const hours = Math.max(1, Math.ceil((win.endMs - win.startMs) / 3_600_000));
  if (sub.kind !== 'metric') return sub.tsuids.length * hours;
  return (await tsdb.catalog.seriesCount(metricUid, Math.max(1, Math.ceil(enough / hours)))) * hours;
}

function keysInOrder(t: Readonly<Record<string, string>>): boolean {
  let prev = '';
  for (const k in t) {
    if (k < prev) return false;
    prev = k;
  }
  return true;
}

/** SpanGroup#computeTags: tags equal in every series that has the key; aggregateTags the rest. */
export function computeTags(all: readonly Readonly<Record<string, string>>[]): { tags: Record<string, string>; aggregateTags: string[] } {
  if (all.length === 1) {
    // One series: all its tags, in key order (series-names.ts keeps them so: passed on as they are).
    const t = all[0]!;
    if (keysInOrder(t)) return { tags: t, aggregateTags: [] };
    const tags: Record<string, string> = {};
    for (const k of Object.keys(t).sort()) tags[k] = t[k]!;
    return { tags, aggregateTags: [] };
  }
  // Per key: its one value so far, or null once two differ.
  const values = new Map<string, string | null>();
  for (const t of all) {
    for (const k in t) {
      const v = t[k]!;
      const seen = values.get(k);
      if (seen === undefined) values.set(k, v);
      else if (seen !== null && seen !== v) values.set(k, null);
    }
  }
  const tags: Record<string, string> = {};
  const aggregateTags: string[] = [];
  for (const k of [...values.keys()].sort()) {
    const v = values.get(k)!;
    if (v !== null) tags[k] = v;
    else aggregateTags.push(k);
  }
  return { tags, aggregateTags };
}

function globalAnnotationsOf(tsdb: Tsdb, q: TsQuery): Promise<Annotation[]> {
  return globalAnnotations(tsdb, q.startMs, q.endMs);
}
