/**
 * The columnar query response (beyond OpenTSDB): one shared, ascending time axis and one
 * value column per output series aligned to it (null where a series has no point) —
 * exactly uPlot's AlignedData once the UI puts `timestamps` first. Served as JSON
 * (`?format=columnar`) or msgpack (`Accept: application/x-msgpack`).
 *
 *   { "timestamps": [t0, t1, …],                 // s, or ms with msResolution
 *     "series": [{ "metric", "tags", "aggregateTags", "index"?, "values": [v|null, …] }] }
 */
import type { OutputSeries } from './format-json.js';

export interface ColumnarSeries {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly aggregateTags: readonly string[];
  /** The sub-query's index (as showQuery's query.index), so a client maps series to queries. */
  readonly index?: number;
  readonly values: Array<number | null>;
}

export interface ColumnarResult {
  readonly timestamps: number[];
  readonly series: ColumnarSeries[];
}

export function toColumnar(series: readonly OutputSeries[], msResolution: boolean): ColumnarResult {
  let total = 0;
  for (const s of series) total += s.points.count;
  const all = new Float64Array(total);
  let at = 0;
  for (const s of series) {
    all.set(s.points.ts.subarray(0, s.points.count), at);
    at += s.points.count;
  }
  all.sort();
  const axis: number[] = [];
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) axis.push(all[i]!);
  const out: ColumnarSeries[] = series.map((s) => {
    const values = new Array<number | null>(axis.length).fill(null);
    const p = s.points;
    let j = 0;
    for (let i = 0; i < p.count; i++) {
      while (axis[j]! < p.ts[i]!) j++;
      const v = p.values[i]!;
      values[j] = Number.isNaN(v) ? null : v;
    }
    const index = (s.query as { index?: unknown } | undefined)?.index;
    return {
      metric: s.metric,
      tags: s.tags,
      aggregateTags: s.aggregateTags,
      ...(typeof index === 'number' ? { index } : {}),
      values,
    };
  });
  return { timestamps: msResolution ? axis : axis.map((t) => Math.floor(t / 1000)), series: out };
}
