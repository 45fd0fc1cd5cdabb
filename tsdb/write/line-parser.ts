/**
 * The `put` line (telnet) and OpenTSDB's import-file line: `<metric> <ts> <value> <k=v>…`
 * as words (runs of spaces already collapsed). Errors carry OpenTSDB's texts; the telnet
 * session prefixes them (`put: illegal argument: …`, `put: invalid value: …`).
 *
 * Timestamps: integer seconds or milliseconds; `<seconds>.<fraction>` is taken as
 * seconds with a fraction (OpenTSDB deletes the dot instead, which mis-scales `1.5`).
 */
import { TsdbError } from '../errors.js';
import { MAX_SECOND_TIMESTAMP, formatTags, parseValue } from './data-point.js';
import type { IncomingPoint } from './data-point.js';

/** Parses the words after `put`. Throws TsdbError (ILLEGAL_ARGUMENT or INVALID_VALUE). */
export function parsePutWords(words: readonly string[]): IncomingPoint {
  if (words.length < 4) {
    throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `not enough arguments (need least 4, got ${words.length})`);
  }
  const metric = words[0]!;
  if (metric.length === 0) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'empty metric name');
  const timestamp = parseTimestamp(words[1]!);
  const v = parseValue(words[2]!);
  const tags: Array<[string, string]> = [];
  let seriesText = metric;
  for (let i = 3; i < words.length; i++) {
    const w = words[i]!;
    seriesText += ` ${w}`;
    const eq = w.indexOf('=');
    if (eq <= 0 || eq === w.length - 1) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `invalid tag: ${w}`);
    const k = w.slice(0, eq);
    const val = w.slice(eq + 1);
    const dup = tags.find((t) => t[0] === k);
    if (dup !== undefined) {
      if (dup[1] === val) continue;
      throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `duplicate tag: ${w}, tags=${formatTags(tags)}`);
    }
    tags.push([k, val]);
  }
  return v.big === undefined
    ? { metric, timestamp, value: v.value, isInt: v.isInt, tags, seriesText }
    : { metric, timestamp, value: v.value, isInt: v.isInt, big: v.big, tags, seriesText };
}

/** Integer seconds or ms, or seconds with a fraction (→ ms). Throws INVALID_VALUE. */
export function parseTimestamp(s: string): number {
  const dot = s.indexOf('.');
  if (dot < 0) return parseDigits(s);
  const whole = parseDigits(s.slice(0, dot));
  const frac = s.slice(dot + 1);
  if (frac.length === 0 || frac.length > 3 || !/^\d+$/.test(frac)) {
    throw new TsdbError('TSDB_INVALID_VALUE', `Invalid timestamp: ${s}`);
  }
  const ms = whole * 1000 + Number(frac.padEnd(3, '0'));
  // A fraction makes the value milliseconds; it must look like one (after 1970-02-19).
  if (ms <= MAX_SECOND_TIMESTAMP) throw new TsdbError('TSDB_INVALID_VALUE', `Invalid timestamp: ${s}`);
  return ms;
}

function parseDigits(s: string): number {
  if (s.length === 0) throw new TsdbError('TSDB_INVALID_VALUE', `Invalid timestamp: ${s}`);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) throw new TsdbError('TSDB_INVALID_VALUE', `Invalid character '${s[i]}' in ${s}`);
  }
  if (s.length > 16) throw new TsdbError('TSDB_INVALID_VALUE', `Invalid timestamp: ${s}`);
  return Number(s);
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
