/**
 * Reads the points of ONE series (exact metric and tags) between two times by getting
 * its hour rows directly — the series' salt and key are known, so no scan is needed.
 * Used by /api/query/last-style lookups, tools and tests; the query engine scans instead.
 */
import type { PointBlock } from '../codec/point-block.js';
import { MAX_BASE_TIME_S, encodeSeriesKey, patchBaseTime } from '../schema/row-key.js';
import { DATA_FAMILY } from '../tables.js';
import type { Tsdb } from '../tsdb.js';
import { mergeRowCells } from './row-merge.js';

export interface SeriesPoint {
  /** Milliseconds since the epoch. */
  readonly ts: number;
  readonly value: number | bigint;
  readonly isInt: boolean;
}

/** Rows fetched per get(). */
const HOURS_PER_GET = 256;

/**
 * The points of `metric{tags}` with startMs ≤ ts ≤ endMs, ascending; [] when a name is
 * unknown (nothing can have been written under it).
 */
export async function readSeries(tsdb: Tsdb, metric: string, tags: Readonly<Record<string, string>>, startMs: number, endMs: number): Promise<SeriesPoint[]> {
  const metricId = await tsdb.metrics.getId(metric);
  if (metricId === undefined) return [];
  const pairs: Uint8Array[] = [];
  for (const [k, v] of Object.entries(tags)) {
    const kid = await tsdb.tagks.getId(k);
    const vid = await tsdb.tagvs.getId(v);
    if (kid === undefined || vid === undefined) return [];
    const pair = new Uint8Array(kid.length + vid.length);
    pair.set(kid);
    pair.set(vid, kid.length);
    pairs.push(pair);
  }
  const template = encodeSeriesKey(tsdb.widths, metricId, pairs);
  const baseOffset = tsdb.widths.saltWidth + tsdb.widths.metric;
  const firstHour = Math.floor(startMs / 3_600_000) * 3600;
  const lastHour = Math.min(Math.floor(endMs / 3_600_000) * 3600, MAX_BASE_TIME_S);
  const out: SeriesPoint[] = [];
  let block: PointBlock | undefined;
  for (let h = firstHour; h <= lastHour; h += 3600 * HOURS_PER_GET) {
    const keys: Uint8Array[] = [];
    for (let b = h; b <= lastHour && b < h + 3600 * HOURS_PER_GET; b += 3600) keys.push(patchBaseTime(template, baseOffset, b));
    const rows = await tsdb.data.get(keys, { families: [DATA_FAMILY] });
    for (let i = 0; i < keys.length; i++) {
      const row = rows[i];
      if (row === undefined) continue;
      block = mergeRowCells(row.cells, block);
      const base = (h + i * 3600) * 1000;
      for (let j = 0; j < block.count; j++) {
        const ts = base + block.offsetsMs[j]!;
        if (ts < startMs || ts > endMs) continue;
        const big = block.bigInts?.[j];
        const isInt = block.isInt[j] === 1;
        out.push({ ts, value: isInt && big !== undefined && big !== 0n ? big : block.values[j]!, isInt });
      }
    }
  }
  return out;
}
