/**
 * Column qualifiers of the data table (tsdb/SCHEMA.md "Qualifiers"), as OpenTSDB writes
 * them (`Internal#buildQualifier`, `#getOffsetFromQualifier`):
 *
 *   seconds, 2 bytes:  (offset_s << 4) | flags              offset_s 0..3599 (12 bits)
 *   ms,      4 bytes:  0xF0000000 | (offset_ms << 6) | flags offset_ms 0..3599999 (22 bits),
 *                                                            2 reserved zero bits
 *   flags (4 bits):    0x8 = float, low 3 bits = value length - 1
 *
 * A ms qualifier always starts with nibble F; a second qualifier never can (max 0xE0Fx).
 * The kind of a whole qualifier is decided by its length and first byte (`qualifierKind`).
 * Horae's compressed hour cells use the qualifier 0x0C, alone (one byte, the first format)
 * or followed by an 8-byte suffix that tells a row's compressed cells apart (nine bytes):
 * odd lengths, so OpenTSDB's data-point parsing skips them (tsdb/SCHEMA.md "Suffixed hour cells").
 *
 * Offsets are handled in ms everywhere (a second qualifier at 10 s and a ms qualifier at
 * 10000 ms are the same timestamp). Hot path: `writeQualifier` and the readers take an
 * offset into a caller's array and allocate nothing.
 */

/** Row span in seconds (OpenTSDB `Const.MAX_TIMESPAN`). */
export const ROW_SPAN_S = 3600;
/** Largest timestamp read as seconds; anything larger is ms (`Const.SECOND_MASK`). */
export const MAX_SECOND_TIMESTAMP = 4294967295;
/** Largest accepted ms timestamp (`TSDB#checkTimestampAndTags`). */
export const MAX_MS_TIMESTAMP = 9999999999999;

/** DO NOT CHANGE: on-disk values. */
export const FLAG_FLOAT = 0x8;
export const LENGTH_MASK = 0x7;
export const FLAGS_MASK = 0xf;

/** The one-byte qualifier of Horae's compressed hour cell. */
export const HOUR_CELL_QUALIFIER_BYTE = 0x0c;
/** The compressed hour cell's one-byte qualifier as bytes. Shared: do not mutate. */
export const HOUR_CELL_QUALIFIER: Uint8Array = Uint8Array.of(HOUR_CELL_QUALIFIER_BYTE);
/** Length of a suffixed hour cell qualifier: 0x0C and an 8-byte suffix. */
export const HOUR_CELL_SUFFIXED_BYTES = 9;

/** True for a compressed hour cell's qualifier: `0c`, or `0c` and an 8-byte suffix. */
export function isHourCellQualifier(q: Uint8Array): boolean {
  return (q.length === 1 || q.length === HOUR_CELL_SUFFIXED_BYTES) && q[0] === HOUR_CELL_QUALIFIER_BYTE;
}

/** The suffixed hour cell qualifier whose suffix is `n` (0..2^53-1) as a big-endian u64. */
export function hourCellQualifier(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`hour cell suffix ${n} is not an integer in 0..2^53-1`);
  const q = new Uint8Array(HOUR_CELL_SUFFIXED_BYTES);
  q[0] = HOUR_CELL_QUALIFIER_BYTE;
  const hi = Math.floor(n / 0x100000000);
  const lo = n >>> 0;
  q[1] = hi >>> 24; q[2] = (hi >>> 16) & 0xff; q[3] = (hi >>> 8) & 0xff; q[4] = hi & 0xff;
  q[5] = lo >>> 24; q[6] = (lo >>> 16) & 0xff; q[7] = (lo >>> 8) & 0xff; q[8] = lo & 0xff;
  return q;
}

/** True when `ts` is in ms by OpenTSDB's rule (ts > 2^32 - 1). */
export function isMsTimestamp(ts: number): boolean {
  return ts > MAX_SECOND_TIMESTAMP;
}

/** Throws RangeError unless `ts` is an integer in 0..MAX_MS_TIMESTAMP. */
export function checkTimestamp(ts: number): void {
  if (!Number.isInteger(ts) || ts < 0 || ts > MAX_MS_TIMESTAMP) {
    throw new RangeError(`timestamp ${ts} is not an integer in 0..${MAX_MS_TIMESTAMP} (seconds, or ms above 2^32-1)`);
  }
}

function checkFlags(flags: number): void {
  if (!Number.isInteger(flags) || flags < 0 || flags > FLAGS_MASK) throw new RangeError(`qualifier flags ${flags} not in 0..15`);
}

/** Writes the 2-byte second qualifier for `offsetS` (0..3599) at out[off]; returns 2. */
export function writeSecondQualifier(out: Uint8Array, off: number, offsetS: number, flags: number): number {
  const v = (offsetS << 4) | flags;
  out[off] = v >>> 8;
  out[off + 1] = v & 0xff;
  return 2;
}

/** Writes the 4-byte ms qualifier for `offsetMs` (0..3599999) at out[off]; returns 4. */
export function writeMsQualifier(out: Uint8Array, off: number, offsetMs: number, flags: number): number {
  out[off] = 0xf0 | (offsetMs >>> 18);
  out[off + 1] = (offsetMs >>> 10) & 0xff;
  out[off + 2] = (offsetMs >>> 2) & 0xff;
  out[off + 3] = ((offsetMs & 0x3) << 6) | flags;
  return 4;
}

/**
 * Writes the qualifier of a point at `ts` (seconds, or ms when > 2^32-1) into out[off];
 * returns the bytes written (2 or 4). Throws RangeError for a bad timestamp or flags.
 */
export function writeQualifier(out: Uint8Array, off: number, ts: number, flags: number): number {
  checkTimestamp(ts);
  checkFlags(flags);
  if (isMsTimestamp(ts)) return writeMsQualifier(out, off, ts % (ROW_SPAN_S * 1000), flags);
  return writeSecondQualifier(out, off, ts % ROW_SPAN_S, flags);
}

/** The qualifier of a point at `ts` with `flags`, as a fresh 2- or 4-byte array. */
export function qualifierFor(ts: number, flags: number): Uint8Array {
  checkTimestamp(ts);
  const out = new Uint8Array(isMsTimestamp(ts) ? 4 : 2);
  writeQualifier(out, 0, ts, flags);
  return out;
}

/** True when the point qualifier at q[off] is a 4-byte ms qualifier (first nibble F). */
export function isMsQualifier(q: Uint8Array, off = 0): boolean {
  return (q[off]! & 0xf0) === 0xf0;
}

/** Length of the point qualifier at q[off]: 4 (ms) or 2 (seconds). */
export function pointQualifierLength(q: Uint8Array, off = 0): number {
  return (q[off]! & 0xf0) === 0xf0 ? 4 : 2;
}

/** Offset in ms from the row's base time of the point qualifier at q[off]. */
export function offsetMsOfQualifier(q: Uint8Array, off = 0): number {
  if ((q[off]! & 0xf0) === 0xf0) {
    return ((q[off]! & 0x0f) << 18) | (q[off + 1]! << 10) | (q[off + 2]! << 2) | (q[off + 3]! >>> 6);
  }
  return ((q[off]! << 4) | (q[off + 1]! >>> 4)) * 1000;
}

/** The 4 flag bits of the point qualifier at q[off]. */
export function flagsOfQualifier(q: Uint8Array, off = 0): number {
  return q[off + ((q[off]! & 0xf0) === 0xf0 ? 3 : 1)]! & FLAGS_MASK;
}

/** Timestamp in ms of the point qualifier at q[off] in a row with base time `baseTimeSec`. */
export function timestampMsOfQualifier(q: Uint8Array, off: number, baseTimeSec: number): number {
  return baseTimeSec * 1000 + offsetMsOfQualifier(q, off);
}

/** What a qualifier holds. DO NOT CHANGE the rules: they follow OpenTSDB's on-disk layout. */
export const QualifierKind = {
  /** 2 bytes, first nibble not F: one point, second resolution. */
  SecondPoint: 'second-point',
  /** 4 bytes, first nibble F: one point, ms resolution. */
  MsPoint: 'ms-point',
  /** Even length >= 4 otherwise: concatenated point qualifiers (OpenTSDB compaction). */
  Compacted: 'compacted',
  /** 3 or 5 bytes starting 0x01: annotation (JSON value). */
  Annotation: 'annotation',
  /** 3 or 5 bytes starting 0x06: histogram point. */
  Histogram: 'histogram',
  /** 3 bytes 05 00 00: append column. */
  Append: 'append',
  /** 1 byte 0x0C: Horae compressed hour cell. */
  HourCell: 'hour-cell',
  /** Anything else (other odd lengths, empty, a 2-byte qualifier with nibble F). */
  Unknown: 'unknown',
} as const;
export type QualifierKind = (typeof QualifierKind)[keyof typeof QualifierKind];

/** Classifies a whole column qualifier by its length and first byte. */
export function qualifierKind(q: Uint8Array): QualifierKind {
  const n = q.length;
  if (n === 0) return QualifierKind.Unknown;
  const b0 = q[0]!;
  if (n === 1 || n === HOUR_CELL_SUFFIXED_BYTES) return b0 === HOUR_CELL_QUALIFIER_BYTE ? QualifierKind.HourCell : QualifierKind.Unknown;
  if (n === 2) return (b0 & 0xf0) === 0xf0 ? QualifierKind.Unknown : QualifierKind.SecondPoint;
  if (n === 4 && (b0 & 0xf0) === 0xf0) return QualifierKind.MsPoint;
  if (n === 3 || n === 5) {
    if (b0 === 0x01) return QualifierKind.Annotation;
    if (b0 === 0x06) return QualifierKind.Histogram;
    if (n === 3 && b0 === 0x05 && q[1] === 0 && q[2] === 0) return QualifierKind.Append;
    return QualifierKind.Unknown;
  }
  return n % 2 === 0 ? QualifierKind.Compacted : QualifierKind.Unknown;
}
