/**
 * A data point as it arrives (telnet line, JSON or msgpack body, import file) and the
 * checks OpenTSDB makes on it, with OpenTSDB's messages (clients match on them):
 * names of allowed characters, 1..maxTags tags, timestamps in s or ms, finite values.
 *
 * Value typing follows OpenTSDB's put path for strings: no '.', 'e' or 'E' → a 64-bit
 * integer; otherwise a float. JSON numbers have lost their spelling by the time they are
 * parsed, so an integral JSON number is stored as an integer (OpenTSDB would store `1.0`
 * as a float); a numeric string keeps OpenTSDB's rule exactly.
 */
import { TsdbError } from '../errors.js';
import { valueOfText } from './number-text.js';
import type { NumberOut } from './number-text.js';

export interface IncomingPoint {
  readonly metric: string;
  /** Seconds (≤ 4294967295) or milliseconds, as sent. */
  readonly timestamp: number;
  /** The value; for integers beyond ±(2^53−1) the nearest double (see `big`). */
  readonly value: number;
  readonly isInt: boolean;
  /** The exact integer when |value| > 2^53−1. */
  readonly big?: bigint;
  /** Tag pairs in the order sent; duplicates already rejected. */
  readonly tags: ReadonlyArray<readonly [string, string]>;
  /**
   * Optional cache key naming the series (metric and tags as sent); points with equal
   * keys must have equal metric and tags. Lets the writer skip re-validating names.
   */
  readonly seriesText?: string;
}

/** Largest millisecond timestamp OpenTSDB accepts (13 digits). */
export const MAX_MS_TIMESTAMP = 9_999_999_999_999;
/** Timestamps above this are milliseconds. */
export const MAX_SECOND_TIMESTAMP = 4_294_967_295;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Checks metric/tag names and the tag count; returns nothing, throws TSDB_ILLEGAL_ARGUMENT. */
export function validateSeries(p: IncomingPoint, maxTags: number, specialChars: string): void {
  if (p.metric.length === 0) throw illegal('Metric name was empty');
  checkName('metric name', p.metric, specialChars);
  if (p.tags.length === 0) throw illegal(`Need at least one tag (metric=${p.metric}, tags=${formatTags(p.tags)})`);
  if (p.tags.length > maxTags) {
    throw illegal(`Too many tags: ${p.tags.length} maximum allowed: ${maxTags}, tags: ${formatTags(p.tags)}`);
  }
  for (const [k, v] of p.tags) {
    checkName('tag name', k, specialChars);
    checkName('tag value', v, specialChars);
  }
}

/** Checks the timestamp and value of a point whose series already passed validateSeries. */
export function validatePointValue(p: IncomingPoint): void {
  const ts = p.timestamp;
  if (!Number.isInteger(ts) || ts <= 0 || ts > MAX_MS_TIMESTAMP) {
    throw illegal(`${ts < 0 ? 'negative' : 'bad'} timestamp=${ts} when trying to add value=${p.value} to metric=${p.metric}, tags=${formatTags(p.tags)}`);
  }
  if (!Number.isFinite(p.value)) {
    throw illegal(`value is NaN or Infinite: ${p.value} for metric=${p.metric} timestamp=${ts}`);
  }
}

/** Longest metric, tag key or tag value in UTF-8 bytes (OpenTSDB has none; HBase's key limit is 32 KiB). */
export const MAX_NAME_BYTES = 1024;

/**
 * OpenTSDB's name check: a-z A-Z 0-9 - _ . / and any Unicode letter, plus `specialChars`.
 * Message: `Invalid metric name ("x y"): illegal character:  `.
 */
export function checkName(what: string, s: string, specialChars: string): void {
  if (s.length === 0) throw illegal(`Invalid ${what} (""): empty string`);
  // A name is the key of its UID row: bound it well under the store's key limit.
  if (s.length > MAX_NAME_BYTES / 4 && Buffer.byteLength(s) > MAX_NAME_BYTES) {
    throw illegal(`Invalid ${what} ("${s.slice(0, 40)}…"): longer than ${MAX_NAME_BYTES} bytes`);
  }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 46 || c === 47) continue;
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    if (c > 127 && /\p{L}/u.test(ch)) {
      if (ch.length === 2) i++;
      continue;
    }
    if (specialChars.includes(ch)) continue;
    throw illegal(`Invalid ${what} ("${s}"): illegal character: ${ch}`);
  }
}

/**
 * A decoded msgpack value as a typed value, as a JSON put's value reads (put-json-point.ts):
 * a number as JSON's, a string's text (and an int64's) through the one value reader
 * (number-text.ts valueOfText).
 */
export function valueOfJson(v: unknown): { value: number; isInt: boolean; big?: bigint } {
  if (typeof v === 'number') return { value: v, isInt: Number.isSafeInteger(v) };
  if (typeof v === 'string') return withoutEmptyBig(valueOfText(v));
  if (typeof v === 'bigint') return withoutEmptyBig(valueOfText(v.toString()));
  if (v === undefined || v === null) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'Empty value');
  throw new TsdbError('TSDB_INVALID_VALUE', 'Unable to parse value to a number');
}

function withoutEmptyBig(n: NumberOut): { value: number; isInt: boolean; big?: bigint } {
  return n.big === undefined ? { value: n.value, isInt: n.isInt } : { value: n.value, isInt: n.isInt, big: n.big };
}

/** Tags as OpenTSDB prints a Java map: {k=v, k2=v2}. */
export function formatTags(tags: ReadonlyArray<readonly [string, string]>): string {
  return `{${tags.map(([k, v]) => `${k}=${v}`).join(', ')}}`;
}

function illegal(message: string): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message);
}
