/**
 * The data table's row transform (core/api/row-transform.ts), registered as `tsdb.hour`:
 * on a store that applies row transforms (the embedded engine), a row's data-point cells
 * leave the memstore as ONE compressed hour cell, and a compaction folds a row's
 * compressed cells into one (tsdb/SCHEMA.md "Suffixed hour cells"). No read-back, no delete
 * markers, no second write. It also drops rows past their retention
 * (tsdb/SCHEMA.md "Retention") and gives the store each row's time (its base hour), so
 * files of expired hours are dropped whole.
 *
 * The output cell: qualifier `0c` + the job's tag (the largest sequence number of the cells
 * it replaces, unique in the row, larger for later writes) as a u64; timestamp the newest
 * replaced cell's; value the merged points (row-merge.ts: the last write wins). Other cells
 * of the row (annotations, unknown qualifiers) are returned as they are.
 */
import type { RowTransform, RowTransformFactory, TransformCell } from '../../core/api/row-transform.js';
import { registerRowTransform } from '../../core/api/row-transform.js';
import type { Cell } from '../../core/api/store.js';
import { encodeHourBlock } from '../codec/hour-codec.js';
import { newPointBlock, pointCapacity } from '../codec/point-block.js';
import { isDataPointCell, mergeRowCells } from '../query/row-merge.js';
import { hourCellQualifier, isHourCellQualifier } from '../schema/qualifier.js';
import { DATA_FAMILY, DATA_TRANSFORM } from '../tables.js';
import type { RetentionRules } from './retention.js';
import { retentionOf } from './retention.js';

export const HOUR_TRANSFORM = DATA_TRANSFORM;

export interface HourTransformOptions {
  readonly saltWidth: number;
  readonly metricWidth: number;
  readonly retention: RetentionRules;
  /** Compress data cells (horae.compaction.enable); false: only retention applies. */
  readonly compress: boolean;
}

const HOUR_MS = 3_600_000;

/** The base hour of a data row key, in ms. */
function rowTimeOf(o: HourTransformOptions, row: Uint8Array): number | undefined {
  const at = o.saltWidth + o.metricWidth;
  if (row.length < at + 4) return undefined;
  return (((row[at]! << 24) | (row[at + 1]! << 16) | (row[at + 2]! << 8) | row[at + 3]!) >>> 0) * 1000;
}

/** True when every point of the row's hour is past its metric's retention at nowMs. */
export function rowExpired(o: HourTransformOptions, row: Uint8Array, nowMs: number): boolean {
  const base = rowTimeOf(o, row);
  if (base === undefined) return false;
  const keep = retentionOf(o.retention, row.subarray(o.saltWidth, o.saltWidth + o.metricWidth));
  return keep !== undefined && base + HOUR_MS <= nowMs - keep;
}

/** Reused by compressRow (its points are encoded before it returns) up to KEEP_POINTS. */
let BLOCK = newPointBlock(0);
const KEEP_POINTS = 1 << 16;

/** The cells that replace a row's cells: one compressed cell for all its data points. */
export function compressRow(cells: readonly TransformCell[], tag: number): TransformCell[] | undefined {
  let data = 0;
  let hourCells = 0;
  let newest = 0;
  for (const c of cells) {
    if (!isDataPointCell(c.qualifier)) continue;
    data++;
    if (isHourCellQualifier(c.qualifier)) hourCells++;
    if (c.timestamp > newest) newest = c.timestamp;
  }
  if (data === 0 || (data === 1 && hourCells === 1)) return undefined; // nothing to do
  delete BLOCK.bigInts;
  const block = mergeRowCells(cells.map((c): Cell => ({ family: DATA_FAMILY, qualifier: c.qualifier, timestamp: c.timestamp, value: c.value })), BLOCK);
  const out: TransformCell[] = cells.filter((c) => !isDataPointCell(c.qualifier));
  if (block.count > 0) out.push({ qualifier: hourCellQualifier(tag), timestamp: newest, value: encodeHourBlock(block) });
  if (pointCapacity(block) > KEEP_POINTS) BLOCK = newPointBlock(0);
  return out;
}

export const hourTransform: RowTransformFactory = (options): RowTransform => {
  const o = options as HourTransformOptions;
  return {
    transformRow(row, cells, ctx) {
      if (rowExpired(o, row, ctx.nowMs)) return [];
      return o.compress ? compressRow(cells, ctx.tag) : undefined;
    },
    rowTime: (row) => rowTimeOf(o, row),
  };
};

/**
 * Registers `tsdb.hour` in this process with the options the next flushes and compactions
 * use (read at each job). One configuration per process: the last call wins.
 */
export function registerHourTransform(options: () => HourTransformOptions): void {
  registerRowTransform(HOUR_TRANSFORM, {
    module: import.meta.url,
    exportName: 'hourTransform',
    factory: hourTransform,
    options,
    expiredBefore: (nowMs) => {
      const keep = options().retention.longestMs;
      // Rows whose hour ended at or before nowMs - keep: base < nowMs - keep - 1 h + 1.
      return keep === undefined ? undefined : nowMs - keep - HOUR_MS + 1;
    },
  });
}
