/**
 * OpenTSDB data-point cells (tsdb/SCHEMA.md "OpenTSDB compacted column"): a single point
 * (2-byte second or 4-byte ms qualifier) or a compacted column, whose qualifier is the
 * concatenation of point qualifiers sorted by offset and whose value is the concatenation
 * of the point values plus ONE trailing meta byte (0x01 when the column mixes second and
 * ms qualifiers, else 0x00; `CompactionQueue#buildCompactedColumn`). A column holding a
 * single point has no meta byte.
 *
 * Reading follows `Internal#extractDataPoints`: odd-length qualifiers are not data points
 * (annotations, histograms, appends, the Horae hour cell) and yield nothing; a single
 * 2-byte cell gets the legacy fix-ups (value.ts); a compacted column must consume exactly
 * value.length - 1 bytes. The meta byte's value is not checked (OpenTSDB's read path does
 * not either; its fsck reports values other than 0 and 1). Points come out in qualifier
 * order; columns written by OpenTSDB are sorted, but readers must not rely on it.
 * The whole cell is validated before the first point reaches the sink.
 */
import { compareBytes, toHex } from '../../core/api/bytes.js';
import { IllegalDataError } from './errors.js';
import {
  FLAGS_MASK, flagsOfQualifier, isMsQualifier, offsetMsOfQualifier, writeMsQualifier, writeSecondQualifier,
} from './qualifier.js';
import { fixQualifierFlags, floatingPointValueToFix, readNumber, valueLengthOfFlags } from './value.js';

/** Receives the points of a cell. `value[valueStart, valueStart+valueLength)` is a view. */
export interface PointSink {
  point(offsetMs: number, flags: number, value: Uint8Array, valueStart: number, valueLength: number, msQualifier: boolean): void;
}

/** One single-point cell: a 2- or 4-byte qualifier and its value. */
export interface DataCell {
  /** A 2-byte second or 4-byte ms point qualifier (or, as a result, a compacted one). */
  readonly qualifier: Uint8Array;
  /** The value bytes (plus the meta byte for a compacted result). */
  readonly value: Uint8Array;
}

/** Output columns for `readDataCell`: typed arrays must be large enough (`countDataPoints`). */
export interface PointColumns {
  /** Offset of each point from the row's base time, in ms. */
  readonly offsetsMs: number[] | Float64Array;
  /** The point's 4 flag bits, after legacy fix-ups. */
  readonly flags: number[] | Uint8Array;
  /** The value as a number (integers beyond 2^53 rounded to the nearest double). */
  readonly values: number[] | Float64Array;
}

function cellText(q: Uint8Array, v: Uint8Array): string {
  return `[q ${toHex(q)} v ${toHex(v)}]`;
}

/** Number of points in a cell with this qualifier (0 for odd lengths). No value checks. */
export function countDataPoints(q: Uint8Array): number {
  if (q.length % 2 !== 0) return 0;
  let n = 0;
  for (let i = 0; i < q.length; i += isMsQualifier(q, i) ? 4 : 2) n++;
  return n;
}

function parseSingleSecond(q: Uint8Array, v: Uint8Array, sink: PointSink): number {
  if (isMsQualifier(q, 0)) throw new IllegalDataError(`2-byte qualifier with the ms marker: ${cellText(q, v)}`);
  let flags = q[1]! & FLAGS_MASK;
  let start = 0;
  let len = v.length;
  if (floatingPointValueToFix(flags, len)) {
    if (v[0] !== 0 || v[1] !== 0 || v[2] !== 0 || v[3] !== 0) {
      throw new IllegalDataError(`corrupted floating point value: flagged 4 bytes, stored in 8 whose first 4 are not zero: ${cellText(q, v)}`);
    }
    start = 4;
    len = 4;
  }
  if (len < 1 || len > 8) throw new IllegalDataError(`value of ${len} bytes cannot be a data point: ${cellText(q, v)}`);
  if (valueLengthOfFlags(flags) !== len) flags = fixQualifierFlags(flags, len);
  sink.point(offsetMsOfQualifier(q, 0), flags, v, start, len, false);
  return 1;
}

/**
 * Feeds every data point of one cell to `sink` and returns how many there were (0 for a
 * qualifier that is not a data point). Throws IllegalDataError, before calling the sink,
 * when the cell does not decode.
 */
export function parseDataCell(q: Uint8Array, v: Uint8Array, sink: PointSink): number {
  const n = q.length;
  if (n === 0 || n % 2 !== 0) return 0;
  if (n === 2) return parseSingleSecond(q, v, sink);
  if (n === 4 && isMsQualifier(q, 0)) {
    const flags = flagsOfQualifier(q, 0);
    if (valueLengthOfFlags(flags) !== v.length) {
      throw new IllegalDataError(`ms point flagged ${valueLengthOfFlags(flags)} value bytes has ${v.length}: ${cellText(q, v)}`);
    }
    sink.point(offsetMsOfQualifier(q, 0), flags, v, 0, v.length, true);
    return 1;
  }
  let consumed = 0;
  let count = 0;
  for (let i = 0; i < n; i += isMsQualifier(q, i) ? 4 : 2) {
    if (isMsQualifier(q, i) && i + 4 > n) throw new IllegalDataError(`compacted qualifier ends inside a ms qualifier: ${cellText(q, v)}`);
    consumed += valueLengthOfFlags(flagsOfQualifier(q, i));
    count++;
  }
  if (consumed !== v.length - 1) {
    throw new IllegalDataError(
      `corrupted value: couldn't break down into individual values (consumed ${consumed} bytes, ` +
      `but was expecting to consume ${v.length - 1}): ${cellText(q, v)}`,
    );
  }
  let vi = 0;
  for (let i = 0; i < n;) {
    const ms = isMsQualifier(q, i);
    const flags = flagsOfQualifier(q, i);
    const len = valueLengthOfFlags(flags);
    sink.point(offsetMsOfQualifier(q, i), flags, v, vi, len, ms);
    vi += len;
    i += ms ? 4 : 2;
  }
  return count;
}

class ColumnsSink implements PointSink {
  at: number;
  readonly out: PointColumns;
  constructor(out: PointColumns, at: number) {
    this.out = out;
    this.at = at;
  }
  point(offsetMs: number, flags: number, value: Uint8Array, start: number): void {
    const i = this.at++;
    this.out.offsetsMs[i] = offsetMs;
    this.out.flags[i] = flags;
    this.out.values[i] = readNumber(flags, value, start);
  }
}

/**
 * Decodes the points of one cell into `out` from index `at`; returns the next free index.
 * Values are numbers (integers beyond 2^53 rounded). Throws IllegalDataError.
 */
export function readDataCell(q: Uint8Array, v: Uint8Array, out: PointColumns, at: number): number {
  const sink = new ColumnsSink(out, at);
  parseDataCell(q, v, sink);
  return sink.at;
}

class CellsSink implements PointSink {
  readonly cells: DataCell[] = [];
  point(offsetMs: number, flags: number, value: Uint8Array, start: number, len: number, ms: boolean): void {
    const q = new Uint8Array(ms ? 4 : 2);
    if (ms) writeMsQualifier(q, 0, offsetMs, flags);
    else writeSecondQualifier(q, 0, offsetMs / 1000, flags);
    this.cells.push({ qualifier: q, value: value.slice(start, start + len) });
  }
}

/** Splits a cell into single-point cells (fresh arrays, fix-ups applied). */
export function splitDataCell(q: Uint8Array, v: Uint8Array): DataCell[] {
  const sink = new CellsSink();
  parseDataCell(q, v, sink);
  return sink.cells;
}

function checkPointCell(c: DataCell, i: number): void {
  const q = c.qualifier;
  const ok = q.length === 2 ? !isMsQualifier(q, 0) : q.length === 4 && isMsQualifier(q, 0);
  if (!ok) throw new RangeError(`cell ${i}: qualifier ${toHex(q)} is not a single-point qualifier`);
  if (valueLengthOfFlags(flagsOfQualifier(q, 0)) !== c.value.length) {
    throw new RangeError(`cell ${i}: qualifier ${toHex(q)} flags a ${valueLengthOfFlags(flagsOfQualifier(q, 0))}-byte value, got ${c.value.length}`);
  }
}

/**
 * Builds one OpenTSDB cell from single-point cells: sorted by ms offset (stable), equal
 * offsets with identical value bytes kept once (the first given), a meta byte appended when
 * more than one point remains. Throws IllegalDataError for equal offsets with different
 * values (OpenTSDB's default "Duplicate timestamp" error: resolve duplicates first to keep
 * the newest), RangeError for an empty input or a cell that is not a valid single point.
 */
export function buildCompactedColumn(cells: readonly DataCell[]): DataCell {
  if (cells.length === 0) throw new RangeError('buildCompactedColumn: no cells');
  cells.forEach(checkPointCell);
  const sorted = cells.slice().sort((a, b) => offsetMsOfQualifier(a.qualifier) - offsetMsOfQualifier(b.qualifier));
  const kept: DataCell[] = [];
  for (const c of sorted) {
    const prev = kept[kept.length - 1];
    if (prev !== undefined && offsetMsOfQualifier(prev.qualifier) === offsetMsOfQualifier(c.qualifier)) {
      if (compareBytes(prev.value, c.value) === 0) continue;
      throw new IllegalDataError(
        `Duplicate timestamp at offset ${offsetMsOfQualifier(c.qualifier)} ms: ${cellText(prev.qualifier, prev.value)} vs ${cellText(c.qualifier, c.value)}`,
      );
    }
    kept.push(c);
  }
  if (kept.length === 1) return { qualifier: kept[0]!.qualifier.slice(), value: kept[0]!.value.slice() };
  let qLen = 0;
  let vLen = 1;
  let seconds = false;
  let millis = false;
  for (const c of kept) {
    qLen += c.qualifier.length;
    vLen += c.value.length;
    if (c.qualifier.length === 4) millis = true;
    else seconds = true;
  }
  const qualifier = new Uint8Array(qLen);
  const value = new Uint8Array(vLen);
  let qo = 0;
  let vo = 0;
  for (const c of kept) {
    qualifier.set(c.qualifier, qo);
    value.set(c.value, vo);
    qo += c.qualifier.length;
    vo += c.value.length;
  }
  value[vo] = seconds && millis ? 0x01 : 0x00;
  return { qualifier, value };
}
