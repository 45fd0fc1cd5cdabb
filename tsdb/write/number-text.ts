/**
 * Numbers read straight from bytes: the one reader of a value's text for every protocol
 * (a telnet or import line's value word, a JSON put's numeric string) and of JSON numbers.
 *
 * A value's text is typed as OpenTSDB's put path types it (schema/value.ts
 * parseValueString, with two departures: digits beyond int64 and NaN/Infinity parse):
 *   - no '.', 'e' or 'E' anywhere: an integer, `[+-]?[0-9]+` of at most 19 digits within
 *     int64 (beyond ±2^53 also kept exactly as `big`); unsigned digits beyond that
 *     (collectd's counters) are the nearest double, typed as a float;
 *     `[+-]?(NaN|Infinity)` are floats (validatePointValue then rejects them);
 *   - else a float, `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?`, finite.
 *
 * Doubles are exact: a mantissa below 2^53 with a power of ten up to 10^22 is one
 * correctly rounded multiplication or division of two exact doubles (Clinger's fast path,
 * most values); longer tokens go through Number() on just the token's bytes, whose shape
 * was checked here.
 */
import { latin1Range } from '../../core/api/bytes.js';
import { TsdbError } from '../errors.js';

export interface NumberOut {
  value: number;
  isInt: boolean;
  /** The exact integer when |value| > 2^53 − 1 (an int64). */
  big: bigint | undefined;
}

export function newNumberOut(): NumberOut {
  return { value: 0, isInt: false, big: undefined };
}

/** readValue: a number; no text at all; text that is not a number. */
export const VALUE_OK = 0;
export const VALUE_EMPTY = 1;
export const VALUE_BAD = 2;

const TWO_53 = 2 ** 53;
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const PLUS = 0x2b;
const MINUS = 0x2d;
const DOT = 0x2e;

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Bytes b[s, e) equal the ASCII word w. */
function isWord(b: Uint8Array, s: number, e: number, w: string): boolean {
  if (e - s !== w.length) return false;
  for (let k = 0; k < w.length; k++) if (b[s + k] !== w.charCodeAt(k)) return false;
  return true;
}

/** A value's text b[s, e) into `out`; VALUE_OK, VALUE_EMPTY or VALUE_BAD. */
export function readValue(b: Uint8Array, s: number, e: number, out: NumberOut): number {
  const r = scanValue(b, s, e, out);
  return r === e ? VALUE_OK : r === -2 ? VALUE_EMPTY : VALUE_BAD;
}

/**
 * A value sent as a string (a JSON or msgpack put's string value): its trimmed text read
 * as a telnet value word. Throws TSDB_INVALID_VALUE: `empty value` for blank text,
 * `Unable to parse value to a number: <text>` for text that is not a number (any
 * character beyond printable ASCII included).
 */
export function valueOfText(s: string): NumberOut {
  const text = s.trim();
  const out = newNumberOut();
  const r = /^[\x20-\x7e]*$/.test(text) ? readValue(Buffer.from(text, 'latin1'), 0, text.length, out) : text.length === 0 ? VALUE_EMPTY : VALUE_BAD;
  if (r === VALUE_OK) return out;
  throw new TsdbError('TSDB_INVALID_VALUE', r === VALUE_EMPTY ? 'empty value' : `Unable to parse value to a number: ${text}`);
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d;
}

/**
 * The value text starting at b[s] and ending at `e` or at the first blank (space, tab,
 * CR) before it, read into `out`, in one pass (most of a put line's reading): returns
 * where the text ends, -1 when it is not a number, -2 when there is none.
 */
export function scanValue(b: Uint8Array, s: number, e: number, out: NumberOut): number {
  if (s >= e || isBlank(b[s]!)) return -2;
  let i = s;
  let c = b[i]!;
  const neg = c === MINUS;
  if (neg || c === PLUS) i++;
  const digitsStart = i;
  let m = 0;
  while (i < e) {
    c = b[i]!;
    if (c < 0x30 || c > 0x39) break;
    m = m * 10 + (c - 0x30);
    i++;
  }
  const intDigits = i - digitsStart;
  if (i === e || isBlank(c)) {
    if (intDigits === 0) return -1;
    if (intDigits > 15) return integerValue(b, s, i, neg, intDigits, out);
    out.value = neg ? -m : m;
    out.isInt = true;
    out.big = undefined;
    return i;
  }
  // Text with no '.', 'e' or 'E' that is not all digits: only the two words Java's
  // parseDouble knows are numbers (an integer's text is digits only; a float's has a
  // '.' or an exponent right after its digits).
  if (c !== DOT && c !== 0x65 && c !== 0x45) return intDigits === 0 ? namedValue(b, i, e, neg, out) : -1;
  let exp10 = 0;
  if (c !== DOT && intDigits === 0) return -1;
  if (c === DOT) {
    i++;
    const fracStart = i;
    while (i < e) {
      c = b[i]!;
      if (c < 0x30 || c > 0x39) break;
      m = m * 10 + (c - 0x30);
      i++;
    }
    exp10 = fracStart - i;
    if (intDigits === 0 && exp10 === 0) return -1;
  }
  if (i < e && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    let eneg = false;
    if (i < e && (b[i] === MINUS || b[i] === PLUS)) {
      eneg = b[i] === MINUS;
      i++;
    }
    const expStart = i;
    let x = 0;
    while (i < e && isDigit(b[i])) x = x * 10 + (b[i++]! - 0x30);
    if (i === expStart) return -1;
    exp10 += eneg ? -x : x;
  }
  let end = i;
  if (i < e && !isBlank(b[i]!)) {
    // One type suffix (Java's parseDouble takes 1.5f, 2d), then nothing.
    c = b[i]!;
    if (c !== 0x66 && c !== 0x46 && c !== 0x64 && c !== 0x44) return -1;
    i++;
    if (i < e && !isBlank(b[i]!)) return -1;
  }
  let v: number;
  if (m < TWO_53 && exp10 >= -22 && exp10 <= 22) {
    v = exp10 === 0 ? m : exp10 > 0 ? m * POW10[exp10]! : m / POW10[-exp10]!;
    if (neg) v = -v;
  } else {
    v = Number(latin1Range(b, s, end));
    if (!Number.isFinite(v)) return -1;
  }
  out.value = v;
  out.isInt = false;
  out.big = undefined;
  return i;
}

/** `[+-]?(NaN|Infinity)` (from b[i], after the sign): floats; anything else is no number. */
function namedValue(b: Uint8Array, i: number, e: number, neg: boolean, out: NumberOut): number {
  let end = i;
  while (end < e && !isBlank(b[end]!)) end++;
  if (isWord(b, i, end, 'NaN')) out.value = Number.NaN;
  else if (isWord(b, i, end, 'Infinity')) out.value = neg ? -Infinity : Infinity;
  else return -1;
  out.isInt = false;
  out.big = undefined;
  return end;
}

/** The integer text b[s, e) (`[+-]?digits`, `digits` of them, more than 15); returns e, or -1. */
function integerValue(b: Uint8Array, s: number, e: number, neg: boolean, digits: number, out: NumberOut): number {
  out.big = undefined;
  const text = latin1Range(b, s, e);
  const v = Number(text);
  out.value = v;
  out.isInt = false;
  // Not an int64's text: unsigned digits are kept as the nearest double.
  if (digits > 19) return neg ? -1 : e;
  if (Number.isSafeInteger(v)) {
    out.isInt = true;
    return e;
  }
  const big = BigInt(b[s] === PLUS ? text.slice(1) : text);
  if (big >= INT64_MIN && big <= INT64_MAX) {
    out.isInt = true;
    out.big = big;
    return e;
  }
  return neg ? -1 : e;
}

/**
 * The double nearest the decimal b[s, e) (shape already checked; a sign, digits, a dot,
 * an exponent) whose digits sum to m with the exponent exp10.
 */
export function decimalOf(b: Uint8Array, s: number, e: number, neg: boolean, m: number, exp10: number): number {
  if (m < TWO_53) {
    let v: number | undefined;
    if (exp10 === 0 || m === 0) v = m;
    else if (exp10 > 0 && exp10 <= 22) v = m * POW10[exp10]!;
    else if (exp10 < 0 && exp10 >= -22) v = m / POW10[-exp10]!;
    if (v !== undefined) return neg ? -v : v;
  }
  return Number(latin1Range(b, s, e));
}

/**
 * A JSON number b[s, e) (its grammar already checked by the caller) as JSON.parse reads
 * it, into `out`: isInt when its value is a safe integer.
 */
export function readJsonNumber(b: Uint8Array, s: number, e: number, out: NumberOut): void {
  let i = s;
  const neg = b[i] === MINUS;
  if (neg) i++;
  let m = 0;
  let exp10 = 0;
  while (i < e && isDigit(b[i])) m = m * 10 + (b[i++]! - 0x30);
  if (b[i] === DOT && i < e) {
    i++;
    while (i < e && isDigit(b[i])) {
      m = m * 10 + (b[i++]! - 0x30);
      exp10--;
    }
  }
  if (i < e) {
    i++;
    let eneg = false;
    if (b[i] === MINUS || b[i] === PLUS) eneg = b[i++] === MINUS;
    let x = 0;
    while (i < e) x = x * 10 + (b[i++]! - 0x30);
    exp10 += eneg ? -x : x;
  }
  const v = decimalOf(b, s, e, neg, m, exp10);
  out.value = v;
  out.isInt = Number.isSafeInteger(v);
  out.big = undefined;
}
