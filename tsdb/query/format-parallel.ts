/**
 * A big /api/query answer formatted on several threads: the output series are cut into
 * consecutive parts of about equal points, the decode workers (decode-pool.ts) format all
 * parts but the first (format-json.ts formatSeriesListBytes, their points packed into two
 * transferred buffers: PackedSeries) while
 * this thread formats the first, and the parts are joined inside the brackets: byte for
 * byte the answer formatQueryResultsBytes writes alone. A day of 5-minute points of 100
 * series (28,800 values, 880 KB) took 10-12 ms to format on one thread.
 */
import type { DecodePool } from './decode-pool.js';
import { formatQueryResultsBytes, formatSeriesListBytes, summaryJson } from './format-json.js';
import type { FormatOptions, OutputSeries } from './format-json.js';
import { packSeries } from './packed-series.js';

/** Answers of fewer points are formatted on this thread alone (a part's messages cost ~0.1-0.3 ms). */
export const PARALLEL_FORMAT_MIN_POINTS = 20_000;

/**
 * The whole answer as formatQueryResultsBytes writes it, on the pool's threads too when it
 * is big. `poolOf` is asked only then (a pool starts its threads on first use).
 */
export async function formatQueryResultsParallel(series: readonly OutputSeries[], opts: FormatOptions, summary: unknown,
  poolOf: () => DecodePool | undefined): Promise<Buffer> {
  let total = 0;
  for (const s of series) total += s.points.count;
  const pool = total < PARALLEL_FORMAT_MIN_POINTS || series.length < 2 ? undefined : poolOf();
  if (pool === undefined) return formatQueryResultsBytes(series, opts, summary);
  const parts = splitByPoints(series, Math.min(pool.threads + 1, series.length), total);
  const remote = Promise.all(parts.slice(1).map((part, i) => pool.format(i, packSeries(part), opts)));
  remote.catch(() => undefined); // awaited below; handled even if this thread's part throws first
  const head = formatSeriesListBytes(parts[0]!, opts);
  return joinParts([head, ...(await remote)], summary === undefined ? undefined : summaryJson(summary));
}

/**
 * `n` consecutive non-empty parts of `series`, part j ending once the points so far reach
 * (j + 1) / n of `total`. REQUIRES 1 <= n <= series.length.
 */
export function splitByPoints(series: readonly OutputSeries[], n: number, total: number): OutputSeries[][] {
  const parts: OutputSeries[][] = [];
  let at = 0;
  let sum = 0;
  for (let j = 0; j < n; j++) {
    const part: OutputSeries[] = [];
    const goal = (total * (j + 1)) / n;
    // Leave at least one series for each part after this one.
    const last = series.length - (n - 1 - j);
    while (at < last && (part.length === 0 || sum < goal || j === n - 1)) {
      sum += series[at]!.points.count;
      part.push(series[at++]!);
    }
    parts.push(part);
  }
  return parts;
}

/** `[part,part,…(,summary)]`. */
function joinParts(parts: readonly Uint8Array[], summary: string | undefined): Buffer {
  const tail = summary === undefined ? undefined : Buffer.from(`,${summary}`, 'utf8');
  let n = 2 + parts.length - 1 + (tail?.length ?? 0);
  for (const p of parts) n += p.length;
  const out = Buffer.allocUnsafe(n);
  let o = 0;
  out[o++] = 0x5b; // [
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[o++] = 0x2c; // ,
    out.set(parts[i]!, o);
    o += parts[i]!.length;
  }
  if (tail !== undefined) {
    out.set(tail, o);
    o += tail.length;
  }
  out[o++] = 0x5d; // ]
  return out;
}
