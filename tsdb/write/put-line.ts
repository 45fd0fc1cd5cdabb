/**
 * The `put` line (telnet) and OpenTSDB's import-file line, `<metric> <ts> <value> <k=v>…`,
 * read straight from its bytes: the one parser of both. Words are separated by runs of
 * spaces, tabs and CRs.
 *
 * readPutLine reads a line into byte ranges (the metric; the tags, from the first tag word
 * to the last: the series key, see catalog/series-byte-cache.ts) and numbers, with no
 * string and no object, or answers OpenTSDB's error. A point whose series must be named
 * (the byte cache does not know those bytes) is made from the same reading by
 * putLinePoint, which also splits and checks the tag words. Errors carry OpenTSDB's
 * texts; the telnet session prefixes them (`put: illegal argument: …`,
 * `put: invalid value: …`).
 *
 * Text: a line is decoded as UTF-8 if all of it is valid UTF-8, else as latin1 (one char a
 * byte, nothing replaced), as OpenTSDB decodes every line; error messages quote it so.
 *
 * Timestamps: integer seconds or milliseconds; `<seconds>.<fraction>` is taken as seconds
 * with a fraction (OpenTSDB deletes the dot instead, which mis-scales `1.5`). Values:
 * number-text.ts.
 */
import { isUtf8 } from 'node:buffer';
import { latin1Range } from '../../core/api/bytes.js';
import { TsdbError } from '../errors.js';
import { MAX_SECOND_TIMESTAMP, formatTags } from './data-point.js';
import type { IncomingPoint } from './data-point.js';
import { scanValue } from './number-text.js';
import type { NumberOut } from './number-text.js';

/** What readPutLine reads: ranges are offsets into the line's buffer. */
export interface PutLineFields extends NumberOut {
  metricStart: number;
  metricEnd: number;
  tagsStart: number;
  tagsEnd: number;
  timestamp: number;
}

export function newPutLineFields(): PutLineFields {
  return { metricStart: 0, metricEnd: 0, tagsStart: 0, tagsEnd: 0, timestamp: 0, value: 0, isInt: false, big: undefined };
}

function isBlank(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d;
}

/**
 * Reads the line `line[start, end)` (terminator removed) into `out`, its words starting at
 * `wordsAt` (after a telnet line's `put`; `start` for an import line). Returns undefined,
 * or the error that rejects the line (ILLEGAL_ARGUMENT or INVALID_VALUE). Tag words are
 * not looked into here (putLinePoint).
 */
export function readPutLine(line: Uint8Array, start: number, end: number, wordsAt: number, out: PutLineFields): TsdbError | undefined {
  const n = end;
  let i = wordsAt;
  while (i < n && isBlank(line[i])) i++;
  const ms = i;
  while (i < n && !isBlank(line[i])) i++;
  const me = i;
  while (i < n && isBlank(line[i])) i++;
  const t0 = i;
  // Timestamp: digits (the common case, summed as they are passed).
  let ts = 0;
  while (i < n) {
    const c = line[i]!;
    if (c < 0x30 || c > 0x39) break;
    ts = ts * 10 + (c - 0x30);
    i++;
  }
  const plainTs = i > t0 && (i === n || isBlank(line[i]));
  while (i < n && !isBlank(line[i])) i++;
  const t1 = i;
  while (i < n && isBlank(line[i])) i++;
  const v0 = i;
  // The value, read as its word is passed (a word that is no number: to its end).
  let v1 = scanValue(line, v0, n, out);
  const valueOk = v1 >= 0;
  if (!valueOk) for (v1 = v0; v1 < n && !isBlank(line[v1]); v1++);
  i = v1;
  while (i < n && isBlank(line[i])) i++;
  let e = n;
  while (e > i && isBlank(line[e - 1])) e--;
  if (e <= i) return notEnough((me > ms ? 1 : 0) + (t1 > t0 ? 1 : 0) + (v1 > v0 ? 1 : 0));
  if (plainTs && t1 - t0 <= 15) {
    out.timestamp = ts;
  } else {
    const t = timestampOf(line, start, end, t0, t1);
    if (typeof t !== 'number') return t;
    out.timestamp = t;
  }
  if (!valueOk) return notANumber(line, start, end, v0, v1);
  out.metricStart = ms;
  out.metricEnd = me;
  out.tagsStart = i;
  out.tagsEnd = e;
  return undefined;
}

function notEnough(got: number): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', `not enough arguments (need least 4, got ${got})`);
}

function notANumber(line: Uint8Array, start: number, end: number, v0: number, v1: number): TsdbError {
  return new TsdbError('TSDB_INVALID_VALUE', `Unable to parse value to a number: ${wordText(line, start, end, v0, v1)}`);
}

/**
 * A timestamp word other than up to 15 plain digits: 16 digits, seconds with a fraction
 * (→ ms), or the error (INVALID_VALUE).
 */
function timestampOf(line: Uint8Array, start: number, end: number, t0: number, t1: number): number | TsdbError {
  let dot = -1;
  for (let k = t0; k < t1; k++) {
    if (line[k] === 0x2e) {
      dot = k;
      break;
    }
  }
  if (dot < 0) return digitsOf(line, start, end, t0, t1);
  const whole = digitsOf(line, start, end, t0, dot);
  if (typeof whole !== 'number') return whole;
  let frac = 0;
  for (let k = dot + 1; k < t1; k++) {
    const c = line[k]!;
    if (c < 0x30 || c > 0x39) return badTimestamp(line, start, end, t0, t1);
    frac = frac * 10 + (c - 0x30);
  }
  const fd = t1 - dot - 1;
  if (fd === 0 || fd > 3) return badTimestamp(line, start, end, t0, t1);
  const ms = whole * 1000 + frac * (fd === 1 ? 100 : fd === 2 ? 10 : 1);
  // A fraction makes the value milliseconds; it must look like one (after 1970-02-19).
  if (ms <= MAX_SECOND_TIMESTAMP) return badTimestamp(line, start, end, t0, t1);
  return ms;
}

/** The digits line[s, e) as a number (at most 16 of them), or OpenTSDB's error naming them. */
function digitsOf(line: Uint8Array, start: number, end: number, s: number, e: number): number | TsdbError {
  if (e === s) return badTimestamp(line, start, end, s, e);
  for (let k = s; k < e; k++) {
    const c = line[k]!;
    if (c < 0x30 || c > 0x39) {
      const text = wordText(line, start, end, s, e);
      // The character as Java's charAt names it: the UTF-16 unit at the byte's place.
      const at = wordText(line, start, end, s, k).length;
      return new TsdbError('TSDB_INVALID_VALUE', `Invalid character '${text[at]}' in ${text}`);
    }
  }
  if (e - s > 16) return badTimestamp(line, start, end, s, e);
  return Number(latin1Range(line, s, e));
}

function badTimestamp(line: Uint8Array, start: number, end: number, s: number, e: number): TsdbError {
  return new TsdbError('TSDB_INVALID_VALUE', `Invalid timestamp: ${wordText(line, start, end, s, e)}`);
}

/** Whether the line decodes as UTF-8 (else latin1). */
function lineIsUtf8(line: Uint8Array, start: number, end: number): boolean {
  return isUtf8(line.subarray(start, end));
}

/** line[s, e) as text, decoded as its line is (blanks are ASCII: a word decodes alone as within the line). */
function wordText(line: Uint8Array, start: number, end: number, s: number, e: number, utf8 = lineIsUtf8(line, start, end)): string {
  return Buffer.from(line.buffer, line.byteOffset + s, e - s).toString(utf8 ? 'utf8' : 'latin1');
}

/**
 * The point of a line readPutLine read into `f` without error: its names decoded and its
 * tag words split and checked (`invalid tag`, `duplicate tag`: ILLEGAL_ARGUMENT, thrown).
 * A tag given twice with the same value counts once. `seriesText` is the metric and tag
 * words joined by single spaces.
 */
export function putLinePoint(line: Uint8Array, start: number, end: number, f: PutLineFields): IncomingPoint {
  const utf8 = lineIsUtf8(line, start, end);
  const metric = wordText(line, start, end, f.metricStart, f.metricEnd, utf8);
  const tags: Array<[string, string]> = [];
  let seriesText = metric;
  let i = f.tagsStart;
  const n = f.tagsEnd;
  while (i < n) {
    const s = i;
    let eq = -1;
    while (i < n && !isBlank(line[i])) {
      if (eq < 0 && line[i] === 0x3d) eq = i;
      i++;
    }
    const w = wordText(line, start, end, s, i, utf8);
    seriesText += ` ${w}`;
    if (eq <= s || eq === i - 1) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `invalid tag: ${w}`);
    const k = wordText(line, start, end, s, eq, utf8);
    const val = wordText(line, start, end, eq + 1, i, utf8);
    const dup = tags.find((t) => t[0] === k);
    if (dup !== undefined) {
      if (dup[1] !== val) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `duplicate tag: ${w}, tags=${formatTags(tags)}`);
    } else {
      tags.push([k, val]);
    }
    while (i < n && isBlank(line[i])) i++;
  }
  const { timestamp, value, isInt, big } = f;
  return big === undefined ? { metric, timestamp, value, isInt, tags, seriesText } : { metric, timestamp, value, isInt, big, tags, seriesText };
}

/** The point of line[start, end) (words from `wordsAt`); throws its TsdbError. */
export function parsePutLine(line: Uint8Array, start: number, end: number, wordsAt: number, f: PutLineFields = newPutLineFields()): IncomingPoint {
  const err = readPutLine(line, start, end, wordsAt, f);
  if (err !== undefined) throw err;
  return putLinePoint(line, start, end, f);
}

/** Splits a line into words on runs of spaces, tabs and CRs; never yields an empty word. */
export function splitWords(line: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= line.length; i++) {
    const c = i < line.length ? line.charCodeAt(i) : 32;
    if (c === 32 || c === 9 || c === 13) {
      if (start >= 0) {
        out.push(line.slice(start, i));
        start = -1;
      }
    } else if (start < 0) {
      start = i;
    }
  }
  return out;
}
