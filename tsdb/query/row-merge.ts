/**
 * The points of one series-hour row, whatever mix of cells holds them: compressed hour
 * cells (tsdb/codec), OpenTSDB single-point cells and OpenTSDB compacted columns
 * (tsdb/schema/compacted.ts). Where several cells hold the same millisecond, the last
 * write wins (tsdb/SCHEMA.md "Reading a row"): cells are ranked by timestamp, then a raw
 * cell above a compressed one, then compressed cells by qualifier (their suffix), and the
 * highest-ranked cell's point is the one read — never an error. Annotations, histograms
 * and unknown qualifiers are not data points and are skipped.
 */
import type { Cell } from '../../core/api/store.js';
import { compareBytes } from '../../core/api/bytes.js';
import { decodeHourBlock } from '../codec/hour-codec.js';
import type { PointBlock } from '../codec/point-block.js';
import { appendPoint, newPointBlock } from '../codec/point-block.js';
import { parseDataCell } from '../schema/compacted.js';
import type { PointSink } from '../schema/compacted.js';
import { isHourCellQualifier } from '../schema/qualifier.js';
import { decodeValue } from '../schema/value.js';

/** True for cells that hold data points: 2/4-byte points, compacted columns, hour cells. */
export function isDataPointCell(q: Uint8Array): boolean {
  const n = q.length;
  if (n % 2 === 1) return isHourCellQualifier(q);
  return n >= 2;
}

/** Collected points before de-duplication. */
class Collector implements PointSink {
  offsets: number[] = [];
  values: Array<number | bigint> = [];
  ints: boolean[] = [];
  ranks: number[] = [];
  rank = 0;

  point(offsetMs: number, flags: number, value: Uint8Array, start: number): void {
    const d = decodeValue(flags, value, start);
    this.add(offsetMs, d.big ?? d.value, d.isInt, this.rank);
  }

  add(offsetMs: number, value: number | bigint, isInt: boolean, rank: number): void {
    this.offsets.push(offsetMs);
    this.values.push(value);
    this.ints.push(isInt);
    this.ranks.push(rank);
  }
}

/**
 * The order in which a row's data cells were written, oldest first (tsdb/SCHEMA.md "Reading a
 * row"): by timestamp; at one timestamp a compressed cell before a raw one; compressed
 * cells by qualifier, raw cells by qualifier.
 */
export function compareWriteOrder(a: Cell, b: Cell): number {
  if (a.timestamp !== b.timestamp) return a.timestamp - b.timestamp;
  const ha = isHourCellQualifier(a.qualifier);
  const hb = isHourCellQualifier(b.qualifier);
  if (ha !== hb) return ha ? -1 : 1;
  return compareBytes(a.qualifier, b.qualifier);
}

/**
 * Decodes and merges a row's data cells into one block, ascending by offset, one point
 * per millisecond. `out` is reused when given. Throws IllegalDataError / HourCodecError
 * when a cell does not decode.
 */
export function mergeRowCells(cells: readonly Cell[], out?: PointBlock): PointBlock {
  let dataCells = 0;
  let only: Cell | undefined;
  for (const c of cells) {
    if (!isDataPointCell(c.qualifier)) continue;
    dataCells++;
    only = c;
  }
  const block = out ?? newPointBlock(0);
  block.count = 0;
  if (dataCells === 0) return block;
  if (dataCells === 1 && isHourCellQualifier(only!.qualifier)) return decodeHourBlock(only!.value, block);

  const data = cells.filter((c) => isDataPointCell(c.qualifier)).sort(compareWriteOrder);
  const col = new Collector();
  let scratch: PointBlock | undefined;
  for (let r = 0; r < data.length; r++) {
    const c = data[r]!;
    if (isHourCellQualifier(c.qualifier)) {
      scratch = decodeHourBlock(c.value, scratch);
      for (let i = 0; i < scratch.count; i++) {
        const big = scratch.bigInts?.[i];
        const v = scratch.isInt[i] === 1 && big !== undefined && big !== 0n ? big : scratch.values[i]!;
        col.add(scratch.offsetsMs[i]!, v, scratch.isInt[i] === 1, r);
      }
    } else {
      col.rank = r;
      parseDataCell(c.qualifier, c.value, col);
    }
  }
  const n = col.offsets.length;
  const order = Array.from({ length: n }, (_, i) => i);
  // Ascending offset; for one offset the latest-written cell first, then its later point.
  order.sort((a, b) => col.offsets[a]! - col.offsets[b]! || col.ranks[b]! - col.ranks[a]! || b - a);
  let last = -1;
  for (const i of order) {
    const off = col.offsets[i]!;
    if (off === last) continue;
    last = off;
    appendPoint(block, off, col.values[i]!, col.ints[i]!);
  }
  return block;
}
