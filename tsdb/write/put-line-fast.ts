/**
 * The allocation-free fast path for telnet `put` lines: parses
 * `put <metric> <ts> <value> <tags…>` straight from the line's bytes into a reusable
 * result — the metric and tags as byte ranges (the series key, see series-byte-cache.ts),
 * the timestamp and the value as numbers — without creating a string.
 *
 * It handles the common shapes only and says `false` for anything else (a fraction in the
 * timestamp, an integer beyond 2^53, an exponent of more than 3 digits, NaN, odd
 * characters, a missing field); the caller then takes the general path (line-parser.ts),
 * which gives the same result or OpenTSDB's error message. Numbers are exact: decimals
 * m·10^e with m < 2^53 and |e| ≤ 22 are computed with one IEEE multiplication or
 * division of two exact doubles, which is correctly rounded (Clinger's fast path); longer
 * tokens go through Number() on just the token's bytes.
 */
import { latin1Range } from '../../core/api/bytes.js';
import { MAX_MS_TIMESTAMP } from './data-point.js';

export interface FastPut {
  metricStart: number;
  metricEnd: number;
  tagsStart: number;
  tagsEnd: number;
  timestamp: number;
  value: number;
  isInt: boolean;
}

export function newFastPut(): FastPut {
  return { metricStart: 0, metricEnd: 0, tagsStart: 0, tagsEnd: 0, timestamp: 0, value: 0, isInt: false };
}

/**
 * A mantissa below 2^53 was summed exactly (every partial sum is an integer below it), and
 * one correctly rounded division or multiplication by an exact power of ten (at most
 * 10^22) then gives the double nearest the decimal (Clinger's fast path): the 16-digit
 * values of full-precision data mostly qualify. The test is strict: a mantissa of 2^53 + 1
 * is summed as 2^53.
 */
const TWO_53 = 2 ** 53;
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d;
}

/**
 * Parses the line in `line[start, end)` (the whole line, starting with `put`, terminator
 * removed) into `out`; the ranges it sets are offsets into `line`. Returns false when the
 * line needs the general parser. Does not validate names (the series cache does: a
 * series is only cached after the general path validated it). The telnet path passes the
 * received chunk itself with the line's offsets, so no view is made per line.
 */
export function parsePutFast(line: Uint8Array, start: number, end: number, out: FastPut): boolean {
  const n = end;
  let i = start + 3; // after "put"
  while (i < n && isSpace(line[i]!)) i++;
  out.metricStart = i;
  while (i < n && !isSpace(line[i]!)) i++;
  out.metricEnd = i;
  while (i < n && isSpace(line[i]!)) i++;
  // timestamp: 1..13 digits
  let ts = 0;
  const tsStart = i;
  while (i < n) {
    const c = line[i]!;
    if (c < 0x30 || c > 0x39) break;
    ts = ts * 10 + (c - 0x30);
    i++;
  }
  const tsDigits = i - tsStart;
  if (tsDigits === 0 || tsDigits > 13 || i >= n || !isSpace(line[i]!)) return false;
  if (ts <= 0 || ts > MAX_MS_TIMESTAMP) return false;
  out.timestamp = ts;
  while (i < n && isSpace(line[i]!)) i++;
  i = parseNumber(line, i, n, out);
  if (i < 0 || i >= n || !isSpace(line[i]!)) return false;
  while (i < n && isSpace(line[i]!)) i++;
  let e = n;
  while (e > i && isSpace(line[e - 1]!)) e--;
  if (e <= i || out.metricEnd <= out.metricStart) return false;
  out.tagsStart = i;
  out.tagsEnd = e;
  return true;
}

/**
 * Parses a number at line[i], reading no further than `end` (the put-line grammar: sign,
 * digits, fraction, exponent); sets out.value/isInt (isInt: no '.', 'e' or 'E') and
 * returns the index after it, or -1.
 */
export function parseNumber(line: Uint8Array, i: number, end: number, out: { value: number; isInt: boolean }): number {
  const n = end;
  const start = i;
  let neg = false;
  if (i < n && (line[i] === 0x2d || line[i] === 0x2b)) {
    neg = line[i] === 0x2d;
    i++;
  }
  let m = 0;
  let sig = 0;
  let digits = 0;
  let exp10 = 0;
  let isInt = true;
  while (i < n) {
    const c = line[i]!;
    if (c < 0x30 || c > 0x39) break;
    if (m !== 0 || c !== 0x30) sig++;
    m = m * 10 + (c - 0x30);
    digits++;
    i++;
  }
  if (i < n && line[i] === 0x2e) {
    isInt = false;
    i++;
    while (i < n) {
      const c = line[i]!;
      if (c < 0x30 || c > 0x39) break;
      if (m !== 0 || c !== 0x30) sig++;
      m = m * 10 + (c - 0x30);
      exp10--;
      digits++;
      i++;
    }
  }
  if (digits === 0) return -1;
  if (i < n && (line[i] === 0x65 || line[i] === 0x45)) {
    isInt = false;
    i++;
    let eneg = false;
    if (i < n && (line[i] === 0x2d || line[i] === 0x2b)) {
      eneg = line[i] === 0x2d;
      i++;
    }
    let e = 0;
    let ed = 0;
    while (i < n) {
      const c = line[i]!;
      if (c < 0x30 || c > 0x39) break;
      e = e * 10 + (c - 0x30);
      ed++;
      i++;
      if (ed > 3) return -1;
    }
    if (ed === 0) return -1;
    exp10 += eneg ? -e : e;
  }
  if (isInt ? sig > 15 : m >= TWO_53) {
    // Too many digits for the exact fast path (a full-precision double printed with 17
    // digits, say): the token's shape is checked above, so Number() of just these bytes is
    // exact. Integers beyond 2^53 go the general way (they need BigInt).
    const v = Number(latin1Range(line, start, i));
    if (isInt && !Number.isSafeInteger(v)) return -1;
    out.value = v;
    out.isInt = isInt;
    return i;
  }
  let v: number;
  if (exp10 === 0) v = m;
  else if (exp10 > 0 && exp10 <= 22) v = m * POW10[exp10]!;
  else if (exp10 < 0 && exp10 >= -22) v = m / POW10[-exp10]!;
  else return -1;
  if (isInt && digits > 15) return -1;
  out.value = neg ? -v : v;
  out.isInt = isInt;
  return i;
}
