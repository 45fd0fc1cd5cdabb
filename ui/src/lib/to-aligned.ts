/**
 * The columnar /api/query answer → what uPlot draws. The server already aligns every
 * series on one ascending time axis (null where a series has no point), so the data is
 * handed over as it is: `[timestamps, ...series.values]` — the same arrays, no copy, no
 * reshaping. This module only names the series (label, axis, sub-query); countPoints is
 * kept off the path to the first paint (the panel calls it after drawing).
 * Pure.
 */
import type { SubQuery } from './dashboard-state.js';

export interface ColumnarSeries {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly aggregateTags: readonly string[];
  /** Position of the sub-query in the request (present with showQuery). */
  readonly index?: number;
  readonly values: ArrayLike<number | null>;
}

export interface ColumnarResult {
  /** Epoch ms (the UI always asks with msResolution). */
  readonly timestamps: ArrayLike<number>;
  readonly series: readonly ColumnarSeries[];
}

/** uPlot's AlignedData: x values first, then one column per series. */
export type AlignedColumns = readonly ArrayLike<number | null>[];

export interface ChartSeries {
  readonly label: string;
  readonly axis: 'y' | 'y2';
  /** Index into the panel's queries. */
  readonly queryIndex: number;
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface PanelData {
  readonly data: AlignedColumns;
  readonly series: readonly ChartSeries[];
}

export function isColumnarResult(x: unknown): x is ColumnarResult {
  const r = x as { timestamps?: unknown; series?: unknown } | null;
  return typeof r === 'object' && r !== null && Array.isArray(r.series) && r.timestamps !== undefined && typeof (r.timestamps as { length?: unknown }).length === 'number';
}

export function seriesLabel(metric: string, tags: Readonly<Record<string, string>>): string {
  const keys = Object.keys(tags).sort();
  return keys.length === 0 ? metric : `${metric}{${keys.map((k) => `${k}=${tags[k]}`).join(',')}}`;
}

/**
 * Names the result's series. `sent[i]` is the panel query behind request position i
 * (query-request.ts sentQueryIndexes); series without an index belong to the first.
 */
export function toPanelData(result: ColumnarResult, queries: readonly SubQuery[], sent: readonly number[]): PanelData {
  const labels = result.series.map((s) => seriesLabel(s.metric, s.tags));
  const seen = new Map<string, number>();
  for (const l of labels) seen.set(l, (seen.get(l) ?? 0) + 1);
  const series: ChartSeries[] = result.series.map((s, i) => {
    const queryIndex = sent[s.index ?? 0] ?? 0;
    const q = queries[queryIndex];
    const base = labels[i]!;
    const label = (seen.get(base) ?? 0) > 1 && q !== undefined ? `${q.aggregator}:${base}` : base;
    return { label, axis: q?.axis ?? 'y', queryIndex, metric: s.metric, tags: s.tags };
  });
  return { data: [result.timestamps, ...result.series.map((s) => s.values)], series };
}

/** Non-null values over all series columns (data[1..]). */
export function countPoints(data: AlignedColumns): number {
  let points = 0;
  for (let c = 1; c < data.length; c++) {
    const v = data[c]!;
    for (let i = 0; i < v.length; i++) if (v[i] !== null) points++;
  }
  return points;
}
