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
import { appendPoint, ensurePointCapacity, isBigInt64, newPointBlock } from '../codec/point-block.js';
import { parseDataCell } from '../schema/compacted.js';
import type { PointSink } from '../schema/compacted.js';
import { isHourCellQualifier } from '../schema/qualifier.js';
import { FLAG_FLOAT } from '../schema/qualifier.js';
import { decodeValue, readFloatingPoint, readLong, valueLengthOfFlags } from '../schema/value.js';

/** True for cells that hold data points: 2/4-byte points, compacted columns, hour cells. */
export function isDataPointCell(q: Uint8Array): boolean {
  const n = q.length;
  if (n % 2 === 1) return isHourCellQualifier(q);
  return n >= 2;
}

/**
 * Collected points before de-duplication, in typed arrays grown by doubling (a point costs
 * no allocation: no boxed number, no decoded-value object). `ascending` stays true while
 * every point's offset is above the previous one's, the usual case (cells written in time
 * order), when the points need no sort and hold no duplicate.
 */
/** Points the shared collector's arrays keep between rows (~17 bytes each). */
const KEEP_POINTS = 1 << 16;

class Collector implements PointSink {
  n = 0;
  offsets = new Int32Array(64);
  values = new Float64Array(64);
  ints = new Uint8Array(64);
  /** Integers beyond +-(2^53-1), by point index. */
  bigs: Map<number, bigint> | undefined;
  ascending = true;

  point(offsetMs: number, flags: number, value: Uint8Array, start: number): void {
    const len = valueLengthOfFlags(flags);
    if (start + len > value.length) {
      decodeValue(flags, value, start); // throws the IllegalDataError
    }
    if ((flags & FLAG_FLOAT) !== 0) {
      this.add(offsetMs, readFloatingPoint(value, start, len), false);
      return;
    }
    const v = readLong(value, start, len);
    if (typeof v === 'number') this.add(offsetMs, v, true);
    else this.addBig(offsetMs, v);
  }

  add(offsetMs: number, value: number, isInt: boolean): void {
    const i = this.n;
    if (i === this.offsets.length) this.grow();
    if (i > 0 && offsetMs <= this.offsets[i - 1]!) this.ascending = false;
    this.offsets[i] = offsetMs;
    this.values[i] = value;
    this.ints[i] = isInt ? 1 : 0;
    this.n = i + 1;
  }

  addBig(offsetMs: number, value: bigint): void {
    if (!isBigInt64(value)) {
      this.add(offsetMs, Number(value), true);
      return;
    }
    (this.bigs ??= new Map()).set(this.n, value);
    this.add(offsetMs, Number(value), true);
  }

  /** Ready for another row; arrays past KEEP_POINTS go back to the small size. */
  reset(): void {
    this.n = 0;
    this.ascending = true;
    this.bigs = undefined;
    if (this.offsets.length > KEEP_POINTS) {
      this.offsets = new Int32Array(64);
      this.values = new Float64Array(64);
      this.ints = new Uint8Array(64);
    }
  }

  private grow(): void {
    const n = this.offsets.length * 2;
    const o = new Int32Array(n);
    o.set(this.offsets);
    this.offsets = o;
    const v = new Float64Array(n);
    v.set(this.values);
    this.values = v;
    const k = new Uint8Array(n);
    k.set(this.ints);
    this.ints = k;
  }

  /** Writes point i after the block's last one (capacity ensured by the caller). */
  emit(block: PointBlock, i: number): void {
    const big = this.bigs?.get(i);
    if (big !== undefined) {
      appendPoint(block, this.offsets[i]!, big, true);
      return;
    }
    const j = block.count++;
    block.offsetsMs[j] = this.offsets[i]!;
    block.values[j] = this.values[i]!;
    block.isInt[j] = this.ints[i]!;
    if (block.bigInts !== undefined) block.bigInts[j] = 0n;
  }
}

/** Sort keys (offset * KEY_SPAN + reversed collection index), reused like the collector. */
let SORT_KEYS = new Float64Array(64);
/** offset * KEY_SPAN + index is exact in a double: a row's offsets are below 2^22 (a ms
 * qualifier's 22 bits, a second qualifier's 4095 s, an hour cell's 3_599_999). */
const KEY_SPAN = 2 ** 31;

/** One for the thread: mergeRowCells runs to its end without yielding. */
const COLLECTOR = new Collector();

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
  const col = COLLECTOR;
  col.reset();
  let scratch: PointBlock | undefined;
  for (let r = 0; r < data.length; r++) {
    const c = data[r]!;
    if (isHourCellQualifier(c.qualifier)) {
      scratch = decodeHourBlock(c.value, scratch);
      for (let i = 0; i < scratch.count; i++) {
        const big = scratch.bigInts?.[i];
        if (scratch.isInt[i] === 1 && big !== undefined && big !== 0n) col.addBig(scratch.offsetsMs[i]!, big);
        else col.add(scratch.offsetsMs[i]!, scratch.values[i]!, scratch.isInt[i] === 1);
      }
    } else {
      parseDataCell(c.qualifier, c.value, col);
    }
  }
  const n = col.n;
  ensurePointCapacity(block, n);
  if (col.ascending) {
    // Offsets strictly ascending in write order: no point to sort, no duplicate to drop.
    for (let i = 0; i < n; i++) col.emit(block, i);
    return block;
  }
  // Ascending offset; for one offset the latest written first: the cells were collected in
  // write order and each cell's points in order, so that is the highest collection index.
  // Both go into one number, sorted natively (no comparator call per comparison).
  const { offsets } = col;
  const keys = SORT_KEYS.length >= n ? SORT_KEYS : (SORT_KEYS = new Float64Array(n));
  for (let i = 0; i < n; i++) keys[i] = offsets[i]! * KEY_SPAN + (n - 1 - i);
  keys.subarray(0, n).sort();
  let last = -1;
  for (let j = 0; j < n; j++) {
    const k = keys[j]!;
    const off = Math.floor(k / KEY_SPAN);
    if (off === last) continue;
    last = off;
    col.emit(block, n - 1 - (k - off * KEY_SPAN));
  }
  if (SORT_KEYS.length > KEEP_POINTS) SORT_KEYS = new Float64Array(64);
  return block;
}
