/**
 * The points of one series-hour row, whatever mix of cells holds them: a compressed hour
 * cell (tsdb/codec), OpenTSDB single-point cells and OpenTSDB compacted columns
 * (tsdb/schema/compacted.ts). Where two cells hold the same millisecond, the cell with
 * the newer version (write time) wins: the last write wins, never an error.
 * Annotations, histograms and unknown qualifiers are not data points and are skipped.
 */
import type { Cell } from '../../core/api/store.js';
import { decodeHourBlock } from '../codec/hour-codec.js';
import type { PointBlock } from '../codec/point-block.js';
import { appendPoint, newPointBlock } from '../codec/point-block.js';
import { parseDataCell } from '../schema/compacted.js';
import type { PointSink } from '../schema/compacted.js';
import { HOUR_CELL_QUALIFIER_BYTE } from '../schema/qualifier.js';
import { decodeValue } from '../schema/value.js';

/** True for cells that hold data points: 2/4-byte points, compacted columns, the hour cell. */
export function isDataPointCell(q: Uint8Array): boolean {
  const n = q.length;
  if (n === 1) return q[0] === HOUR_CELL_QUALIFIER_BYTE;
  return n >= 2 && n % 2 === 0;
}

function isHourCell(q: Uint8Array): boolean {
  return q.length === 1 && q[0] === HOUR_CELL_QUALIFIER_BYTE;
}

/** Collected points before de-duplication. */
class Collector implements PointSink {
  offsets: number[] = [];
  values: Array<number | bigint> = [];
  ints: boolean[] = [];
  versions: number[] = [];
  version = 0;

  point(offsetMs: number, flags: number, value: Uint8Array, start: number): void {
    const d = decodeValue(flags, value, start);
    this.add(offsetMs, d.big ?? d.value, d.isInt, this.version);
  }

  add(offsetMs: number, value: number | bigint, isInt: boolean, version: number): void {
    this.offsets.push(offsetMs);
    this.values.push(value);
    this.ints.push(isInt);
    this.versions.push(version);
  }
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
  if (dataCells === 1 && isHourCell(only!.qualifier)) return decodeHourBlock(only!.value, block);

  const col = new Collector();
  let scratch: PointBlock | undefined;
  for (const c of cells) {
    if (!isDataPointCell(c.qualifier)) continue;
    if (isHourCell(c.qualifier)) {
      scratch = decodeHourBlock(c.value, scratch);
      for (let i = 0; i < scratch.count; i++) {
        const big = scratch.bigInts?.[i];
        const v = scratch.isInt[i] === 1 && big !== undefined && big !== 0n ? big : scratch.values[i]!;
        col.add(scratch.offsetsMs[i]!, v, scratch.isInt[i] === 1, c.timestamp);
      }
    } else {
      col.version = c.timestamp;
      parseDataCell(c.qualifier, c.value, col);
    }
  }
  const n = col.offsets.length;
  const order = Array.from({ length: n }, (_, i) => i);
  // Ascending offset; for one offset the newest version first, then the later cell.
  order.sort((a, b) => col.offsets[a]! - col.offsets[b]! || col.versions[b]! - col.versions[a]! || b - a);
  let last = -1;
  for (const i of order) {
    const off = col.offsets[i]!;
    if (off === last) continue;
    last = off;
    appendPoint(block, off, col.values[i]!, col.ints[i]!);
  }
  return block;
}
