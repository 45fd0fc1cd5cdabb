/**
 * A datapoint of a scanned /api/put JSON body (put-json.ts) as an IncomingPoint, made from
 * the places the scan recorded, or OpenTSDB's per-point error (TsdbError, thrown):
 *
 *   not an object                              → Datapoint must be an object
 *   metric not a string, or empty              → Metric name was empty
 *   timestamp not a positive safe integer (a number, or a string of digits) → Invalid timestamp
 *   value absent or null                       → Empty value
 *   value a string: its trimmed text typed as a telnet value (number-text.ts),
 *     empty → `empty value`, else `Unable to parse value to a number: <text>`
 *   value true, false, an object or an array   → Unable to parse value to a number
 *   tags not an object, or empty               → Missing tags
 *   a tag value not a string or number         → Invalid tag value for <key>
 *
 * The object is read as JSON.parse reads it: a key given twice keeps its last value at its
 * first place, and keys that are array indices ("0", "17") come first, in numeric order
 * (a JavaScript object's key order); a number tag value is its shortest text (1.0 → "1").
 */
import { TsdbError } from '../errors.js';
import type { IncomingPoint } from './data-point.js';
import { newNumberOut, readJsonNumber, valueOfText } from './number-text.js';
import type { NumberOut } from './number-text.js';
import { NOT_OBJECT, jsonStringText, objectMembers } from './put-json.js';
import type { JsonPutScan } from './put-json.js';

const Q = 0x22;

/** Datapoint k of the body `b` scanned as `scan`; throws TsdbError with OpenTSDB's message. */
export function jsonPoint(b: Uint8Array, scan: JsonPutScan, k: number): IncomingPoint {
  if (scan.kind[k] === NOT_OBJECT) throw illegal('Datapoint must be an object');
  const ms = scan.metricStart[k]!;
  const metric = ms >= 0 && b[ms] === Q ? jsonStringText(b, ms + 1, scan.metricEnd[k]! - 1) : '';
  if (metric.length === 0) throw illegal('Metric name was empty');
  const timestamp = timestampOf(b, scan.timestampStart[k]!, scan.timestampEnd[k]!);
  const v = valueOf(b, scan.valueStart[k]!, scan.valueEnd[k]!);
  const t0 = scan.tagsStart[k]!;
  if (t0 < 0 || b[t0] !== 0x7b) throw illegal('Missing tags');
  const tags = tagPairs(b, t0);
  if (tags.length === 0) throw illegal('Missing tags');
  let seriesText = metric;
  for (const [key, val] of tags) seriesText += ` ${key}=${val}`;
  const { value, isInt, big } = v;
  return big === undefined ? { metric, timestamp, value, isInt, tags, seriesText } : { metric, timestamp, value, isInt, big, tags, seriesText };
}

function timestampOf(b: Uint8Array, s: number, e: number): number {
  let n = Number.NaN;
  if (s >= 0 && b[s] === Q) {
    const text = jsonStringText(b, s + 1, e - 1);
    if (/^\d+$/.test(text)) n = Number(text);
  } else if (s >= 0 && (b[s] === 0x2d || (b[s]! >= 0x30 && b[s]! <= 0x39))) {
    const num = newNumberOut();
    readJsonNumber(b, s, e, num);
    n = num.value;
  }
  if (!Number.isSafeInteger(n) || n <= 0) throw illegal('Invalid timestamp');
  return n;
}

function valueOf(b: Uint8Array, s: number, e: number): NumberOut {
  if (s < 0 || b[s] === 0x6e) throw illegal('Empty value');
  const c = b[s]!;
  if (c === Q) return valueOfText(jsonStringText(b, s + 1, e - 1));
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    const out = newNumberOut();
    readJsonNumber(b, s, e, out);
    return out;
  }
  throw new TsdbError('TSDB_INVALID_VALUE', 'Unable to parse value to a number');
}

/** The tags object at b[at] as [key, value] pairs in a JavaScript object's key order; throws for a value not a string or number. */
function tagPairs(b: Uint8Array, at: number): Array<[string, string]> {
  const m = objectMembers(b, at);
  const index = new Map<string, number>();
  const keys: string[] = [];
  const ranges: number[] = [];
  for (let j = 0; j < m.length; j += 4) {
    const key = jsonStringText(b, m[j]!, m[j + 1]!);
    const at2 = index.get(key);
    if (at2 === undefined) {
      index.set(key, keys.length);
      keys.push(key);
      ranges.push(m[j + 2]!, m[j + 3]!);
    } else {
      ranges[2 * at2] = m[j + 2]!;
      ranges[2 * at2 + 1] = m[j + 3]!;
    }
  }
  const order = keys.map((_, j) => j);
  const idx = keys.map(arrayIndex);
  order.sort((x, y) => {
    const a = idx[x]!;
    const c = idx[y]!;
    if (a >= 0 && c >= 0) return a - c;
    if (a >= 0) return -1;
    if (c >= 0) return 1;
    return x - y;
  });
  const pairs: Array<[string, string]> = [];
  const num = newNumberOut();
  for (const j of order) {
    const key = keys[j]!;
    const s = ranges[2 * j]!;
    const e = ranges[2 * j + 1]!;
    const c = b[s]!;
    if (c === Q) pairs.push([key, jsonStringText(b, s + 1, e - 1)]);
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      readJsonNumber(b, s, e, num);
      pairs.push([key, String(num.value)]);
    } else {
      throw illegal(`Invalid tag value for ${key}`);
    }
  }
  return pairs;
}

/** The key as an array index (a canonical integer below 2^32 − 1), else -1. */
function arrayIndex(key: string): number {
  if (!/^(0|[1-9]\d{0,9})$/.test(key)) return -1;
  const n = Number(key);
  return n < 4294967295 ? n : -1;
}

function illegal(message: string): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message);
}
