/**
 * The newest point of one series (/api/query/last). With a back-scan of N hours it reads
 * the rows of the current hour and the N before it, as OpenTSDB does. Without one
 * (OpenTSDB then needs its meta table), Horae scans the series' salt bucket in reverse
 * with a fuzzy-key filter that fixes every byte but the base time, so the newest row of
 * the series is found however old it is.
 */
import type { RowFilter } from '../../core/api/store.js';
import { mergeRowCells } from '../read/row-merge.js';
import { saltBucket, writeSalt } from '../schema/salt.js';
import { MAX_BASE_TIME_S, baseTimeOfKey, patchBaseTime } from '../schema/row-key.js';
import { DATA_FAMILY } from '../tables.js';
import type { Tsdb } from '../tsdb.js';

export interface LastPoint {
  /** Epoch ms. */
  readonly ts: number;
  readonly value: number;
  readonly isInt: boolean;
}

/** The row-key template of a TSUID: salt filled in, base time 0. */
export function seriesKeyOfTsuid(tsdb: Tsdb, tsuid: Uint8Array): Uint8Array {
  const w = tsdb.widths;
  const key = new Uint8Array(w.saltWidth + tsuid.length + 4);
  key.set(tsuid.subarray(0, w.metric), w.saltWidth);
  key.set(tsuid.subarray(w.metric), w.saltWidth + w.metric + 4);
  if (w.saltWidth > 0) writeSalt(key, saltBucket(tsuid.subarray(0, w.metric), tsuid.subarray(w.metric), w.saltBuckets), w.saltWidth);
  return key;
}

export async function lastPoint(tsdb: Tsdb, tsuid: Uint8Array, backScanHours: number, nowMs: number): Promise<LastPoint | undefined> {
  const w = tsdb.widths;
  const template = seriesKeyOfTsuid(tsdb, tsuid);
  const baseOffset = w.saltWidth + w.metric;
  const nowHour = Math.min(Math.floor(nowMs / 3_600_000) * 3600, MAX_BASE_TIME_S);
  if (backScanHours > 0) {
    const keys: Uint8Array[] = [];
    for (let h = 0; h <= backScanHours && nowHour - h * 3600 >= 0; h++) keys.push(patchBaseTime(template, baseOffset, nowHour - h * 3600));
    const rows = await tsdb.data.get(keys, { families: [DATA_FAMILY] });
    for (let i = 0; i < rows.length; i++) {
      const p = newest(rows[i]?.cells, baseTimeOfKey(w, keys[i]!));
      if (p !== undefined) return p;
    }
    return undefined;
  }
  const mask = new Uint8Array(template.length).fill(1);
  mask.fill(0, baseOffset, baseOffset + 4);
  const filter: RowFilter = {
    kind: 'and',
    filters: [{ kind: 'fuzzyKey', rules: [{ template, mask }] }, { kind: 'keyRegex', pattern: `.{${template.length}}` }],
  };
  const start = template.subarray(0, baseOffset);
  // One past the current hour's prefix: [salt][metric][nowHour + 1 h) (or the end of the metric).
  const stop = nowHour + 3600 > MAX_BASE_TIME_S ? undefined : patchBaseTime(template, baseOffset, nowHour + 3600).subarray(0, baseOffset + 4);
  for await (const rows of tsdb.data.scan({ start: start.slice(), ...(stop === undefined ? {} : { end: stop.slice() }), reverse: true, filter, families: [DATA_FAMILY], batchRows: 16 })) {
    for (const row of rows) {
      const p = newest(row.cells, baseTimeOfKey(w, row.key));
      if (p !== undefined) return p;
    }
  }
  return undefined;
}

function newest(cells: Parameters<typeof mergeRowCells>[0] | undefined, baseSec: number): LastPoint | undefined {
  if (cells === undefined) return undefined;
  const b = mergeRowCells(cells);
  if (b.count === 0) return undefined;
  const i = b.count - 1;
  return { ts: baseSec * 1000 + b.offsetsMs[i]!, value: b.values[i]!, isInt: b.isInt[i] === 1 };
}
