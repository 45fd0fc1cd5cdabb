/**
 * Data-point values (tsdb/SCHEMA.md "Values"), as OpenTSDB writes them (`TSDB#addPoint`)
 * and reads them (`RowSeq#extractIntegerValue`, `#extractFloatingPointValue`):
 *
 *   integer: signed big-endian in the smallest of 1/2/4/8 bytes; flags = length - 1
 *   float:   IEEE 754 binary32 (4 bytes), flags 0xB, when Math.fround(v) === v
 *   double:  IEEE 754 binary64 (8 bytes), flags 0xF otherwise
 *
 * Integers are `number` while |v| <= 2^53-1 and `bigint` beyond (int64 range); a decoded
 * value always has a `number` form (the nearest double) and, for big integers, `big`.
 * Reading takes the length from the flags; any other length is IllegalDataError.
 *
 * Hot path: `writeValue` writes into the caller's array and returns the flags; floats go
 * through one module-level scratch buffer (no DataView, no allocation).
 */
import { IllegalDataError, InvalidInputError } from './errors.js';
import { FLAG_FLOAT, LENGTH_MASK } from './qualifier.js';
import { toHex } from '../../core/api/bytes.js';

/** A value as the put path parsed it (the same shape tsdb/write uses). */
export interface NumericValue {
  /** The value; for integers beyond +-(2^53-1) the nearest double (see `big`). */
  readonly value: number;
  readonly isInt: boolean;
  /** Exact integer when it is beyond +-(2^53-1). */
  readonly big?: bigint | undefined;
}

/** A decoded value; `big` is set only for integers beyond +-(2^53-1). */
export interface DecodedValue {
  readonly isInt: boolean;
  readonly value: number;
  readonly big?: bigint | undefined;
}

const TWO_32 = 4294967296;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const F32 = new Float32Array(1);
const F64 = new Float64Array(1);
const F32B = new Uint8Array(F32.buffer);
const F64B = new Uint8Array(F64.buffer);
/** Byte index in the scratch buffers of big-endian byte 0 (host order is usually little). */
const LE = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Value length in bytes encoded in `flags` (low 3 bits + 1). */
export function valueLengthOfFlags(flags: number): number {
  return (flags & LENGTH_MASK) + 1;
}

/** OpenTSDB `Tags.looksLikeInteger`: no '.', 'e' or 'E' anywhere. */
export function looksLikeInteger(s: string): boolean {
  return !/[.eE]/.test(s);
}

const INTEGER_TEXT = /^[+-]?[0-9]+$/;
const DECIMAL_TEXT = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?$/;

/**
 * Parses a value string the way OpenTSDB's put path decides its type: text that looks like
 * an integer must parse as an int64 (`Tags.parseLong`: optional sign, at most 19 digits);
 * anything else is parsed as a double and must be finite. Throws InvalidInputError.
 */
export function parseValueString(s: string): NumericValue {
  if (looksLikeInteger(s)) {
    const digits = s.length - (s[0] === '+' || s[0] === '-' ? 1 : 0);
    if (!INTEGER_TEXT.test(s) || digits > 19) throw new InvalidInputError(`invalid integer value "${s.slice(0, 40)}"`);
    const n = Number(s);
    if (Number.isSafeInteger(n)) return { value: n, isInt: true };
    const big = BigInt(s[0] === '+' ? s.slice(1) : s);
    if (big < INT64_MIN || big > INT64_MAX) throw new InvalidInputError(`integer value ${s} is outside the int64 range`);
    return { value: n, isInt: true, big };
  }
  if (!DECIMAL_TEXT.test(s)) throw new InvalidInputError(`invalid floating-point value "${s.slice(0, 40)}"`);
  const d = Number(/[fFdD]$/.test(s) ? s.slice(0, -1) : s);
  if (!Number.isFinite(d)) throw new InvalidInputError(`value ${s} is not a finite number`);
  return { value: d, isInt: false };
}

/** Bytes an integer takes: the smallest of 1, 2, 4, 8 that holds it as signed. */
export function intLength(v: number | bigint): 1 | 2 | 4 | 8 {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? intLength(Number(v)) : 8;
  if (v >= -128 && v <= 127) return 1;
  if (v >= -32768 && v <= 32767) return 2;
  if (v >= -2147483648 && v <= 2147483647) return 4;
  return 8;
}

function writeU32(out: Uint8Array, off: number, v: number): void {
  out[off] = v >>> 24;
  out[off + 1] = (v >>> 16) & 0xff;
  out[off + 2] = (v >>> 8) & 0xff;
  out[off + 3] = v & 0xff;
}

/** Writes an integer in `len` bytes (from `intLength`) at out[off]. */
export function writeInt(out: Uint8Array, off: number, v: number | bigint, len: number): void {
  if (typeof v === 'bigint') {
    if (v < INT64_MIN || v > INT64_MAX) throw new RangeError(`integer ${v} is outside the int64 range`);
    if (len !== 8) {
      writeInt(out, off, Number(v), len);
      return;
    }
    const u = BigInt.asUintN(64, v);
    writeU32(out, off, Number(u >> 32n));
    writeU32(out, off + 4, Number(u & 0xffffffffn));
    return;
  }
  if (len === 1) out[off] = v & 0xff;
  else if (len === 2) {
    out[off] = (v >> 8) & 0xff;
    out[off + 1] = v & 0xff;
  } else if (len === 4) writeU32(out, off, v);
  else {
    const hi = Math.floor(v / TWO_32);
    writeU32(out, off, hi);
    writeU32(out, off + 4, v - hi * TWO_32);
  }
}

/** Writes `v` as a big-endian binary32 at out[off]. */
export function writeFloat32(out: Uint8Array, off: number, v: number): void {
  F32[0] = v;
  for (let i = 0; i < 4; i++) out[off + i] = F32B[LE ? 3 - i : i]!;
}

/** Writes `v` as a big-endian binary64 at out[off]. */
export function writeFloat64(out: Uint8Array, off: number, v: number): void {
  F64[0] = v;
  for (let i = 0; i < 8; i++) out[off + i] = F64B[LE ? 7 - i : i]!;
}

/**
 * Writes a value at out[off] and returns its flags (the byte count is
 * `valueLengthOfFlags(flags)`, at most 8). Throws RangeError for a non-finite float, an
 * unsafe integer without `big`, or a `big` outside int64.
 */
export function writeValue(out: Uint8Array, off: number, value: number, isInt: boolean, big?: bigint): number {
  if (isInt) {
    const v = big ?? value;
    if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new RangeError(`integer value ${v} is not a safe integer (pass it as a bigint)`);
    const len = intLength(v);
    writeInt(out, off, v, len);
    return len - 1;
  }
  if (!Number.isFinite(value)) throw new RangeError(`value ${value} is not finite: NaN and infinities cannot be stored`);
  if (Math.fround(value) === value) {
    writeFloat32(out, off, value);
    return FLAG_FLOAT | 0x3;
  }
  writeFloat64(out, off, value);
  return FLAG_FLOAT | 0x7;
}

/** A value's flags and bytes (a fresh array). See `writeValue`. */
export function encodeValue(value: number, isInt: boolean, big?: bigint): { flags: number; bytes: Uint8Array } {
  const tmp = new Uint8Array(8);
  const flags = writeValue(tmp, 0, value, isInt, big);
  return { flags, bytes: tmp.slice(0, valueLengthOfFlags(flags)) };
}

function i32(b: Uint8Array, o: number): number {
  return (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
}

/** Reads a signed integer of `len` (1, 2, 4, 8) bytes; beyond +-(2^53-1) as a bigint. */
export function readLong(b: Uint8Array, off: number, len: number): number | bigint {
  switch (len) {
    case 1: return (b[off]! << 24) >> 24;
    case 2: return (((b[off]! << 8) | b[off + 1]!) << 16) >> 16;
    case 4: return i32(b, off);
    case 8: {
      const hi = i32(b, off);
      const v = hi * TWO_32 + (i32(b, off + 4) >>> 0);
      return Number.isSafeInteger(v) ? v : (BigInt(hi) << 32n) | BigInt(i32(b, off + 4) >>> 0);
    }
    default: throw new IllegalDataError(`integer value at ${off} is on ${len} bytes, not 1, 2, 4 or 8: ${toHex(b)}`);
  }
}

/** Reads a binary32 (len 4) or binary64 (len 8) value. */
export function readFloatingPoint(b: Uint8Array, off: number, len: number): number {
  if (len === 4) {
    for (let i = 0; i < 4; i++) F32B[LE ? 3 - i : i] = b[off + i]!;
    return F32[0]!;
  }
  if (len === 8) {
    for (let i = 0; i < 8; i++) F64B[LE ? 7 - i : i] = b[off + i]!;
    return F64[0]!;
  }
  throw new IllegalDataError(`floating-point value at ${off} is on ${len} bytes, not 4 or 8: ${toHex(b)}`);
}

function checkRoom(flags: number, b: Uint8Array, off: number): number {
  const len = valueLengthOfFlags(flags);
  if (off + len > b.length) {
    throw new IllegalDataError(`value at ${off} needs ${len} bytes (flags 0x${flags.toString(16)}) but only ${b.length - off} remain: ${toHex(b)}`);
  }
  return len;
}

/** The value at b[off] as a number (integers beyond 2^53 rounded to the nearest double). */
export function readNumber(flags: number, b: Uint8Array, off: number): number {
  const len = checkRoom(flags, b, off);
  if ((flags & FLAG_FLOAT) !== 0) return readFloatingPoint(b, off, len);
  const v = readLong(b, off, len);
  return typeof v === 'number' ? v : Number(v);
}

/** Decodes the value at b[off] by its flags. */
export function decodeValue(flags: number, b: Uint8Array, off = 0): DecodedValue {
  const len = checkRoom(flags, b, off);
  if ((flags & FLAG_FLOAT) !== 0) return { isInt: false, value: readFloatingPoint(b, off, len) };
  const v = readLong(b, off, len);
  return typeof v === 'number' ? { isInt: true, value: v } : { isInt: true, value: Number(v), big: v };
}

/**
 * Legacy repair (`Internal#fixQualifierFlags`): the flags with their length bits rewritten
 * to the actual value length (1..8), keeping the float bit.
 */
export function fixQualifierFlags(flags: number, valueLength: number): number {
  return (flags & ~LENGTH_MASK) | (valueLength - 1);
}

/**
 * Legacy repair test (`Internal#floatingPointValueToFix`): old writers stored a float
 * flagged as 4 bytes in 8 bytes; the real value is the last 4 (the first 4 must be zero).
 */
export function floatingPointValueToFix(flags: number, valueLength: number): boolean {
  return (flags & FLAG_FLOAT) !== 0 && (flags & LENGTH_MASK) === 0x3 && valueLength === 8;
}
