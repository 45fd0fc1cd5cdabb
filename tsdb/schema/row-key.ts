/**
 * Data-table row keys and TSUIDs (tsdb/SCHEMA.md "Row key", "TSUID"):
 *
 *   [salt saltWidth][metric UID][base time: u32 BE epoch seconds, hour-aligned][tagk tagv]*
 *
 * Tag pairs are sorted by the unsigned bytes of tagk||tagv (OpenTSDB `Bytes.MEMCMP`), i.e.
 * by tagk UID, not by tag name. A TSUID is the same key without salt and base time.
 *
 * Hot path: a writer builds a *series key* once per series (`encodeRowKey` with base time
 * 0: the salt does not depend on time) and per point only copies it and patches the four
 * base-time bytes (`rowKeyWithBaseTime`, or `writeBaseTime` into its own buffer).
 */
import { compareBytes, fromHex, prefixEnd, toHex } from '../../core/api/bytes.js';
import { IllegalDataError, InvalidInputError } from './errors.js';
import { ROW_SPAN_S, checkTimestamp, isMsTimestamp } from './qualifier.js';
import { saltKey, readSalt, writeSalt } from './salt.js';
import type { SchemaWidths } from './widths.js';

export const BASE_TIME_BYTES = 4;
/** Largest base time a key can hold (the last hour-aligned u32). */
export const MAX_BASE_TIME_S = 0xffffffff - (0xffffffff % ROW_SPAN_S);

/** Fields of a decoded row key. `metric` and the tags are views into the key. */
export interface DecodedRowKey {
  /** The salt bucket (0 when salting is off). */
  readonly salt: number;
  /** Metric UID bytes (a view into the key). */
  readonly metric: Uint8Array;
  /** Epoch seconds of the row's hour. */
  readonly baseTimeSec: number;
  /** Tag pairs in key order (by tagk UID), as views into the key. */
  readonly tags: Array<[tagk: Uint8Array, tagv: Uint8Array]>;
}

/** Byte length of a row key with `nTags` tag pairs. */
export function rowKeyLength(w: SchemaWidths, nTags: number): number {
  return w.saltWidth + w.metric + BASE_TIME_BYTES + nTags * (w.tagk + w.tagv);
}

/**
 * Base time (epoch seconds, hour-aligned) of the row holding timestamp `ts` (seconds, or
 * ms when > 2^32-1). Throws RangeError for a timestamp outside 0..9999999999999.
 */
export function baseTimeOf(ts: number): number {
  checkTimestamp(ts);
  const s = isMsTimestamp(ts) ? Math.floor(ts / 1000) : ts;
  return s - (s % ROW_SPAN_S);
}

function checkBaseTime(baseTimeSec: number): void {
  if (!(baseTimeSec >= 0 && baseTimeSec <= MAX_BASE_TIME_S && baseTimeSec % ROW_SPAN_S === 0)) {
    throw new RangeError(`base time ${baseTimeSec} is not an hour-aligned u32 of epoch seconds`);
  }
}

/**
 * Writes the base time at key[offset, offset+4) in place (hot path); `offset` is
 * saltWidth + metric. Throws RangeError unless the base time is an hour-aligned u32.
 */
export function writeBaseTimeAt(key: Uint8Array, offset: number, baseTimeSec: number): void {
  checkBaseTime(baseTimeSec);
  key[offset] = baseTimeSec >>> 24;
  key[offset + 1] = (baseTimeSec >>> 16) & 0xff;
  key[offset + 2] = (baseTimeSec >>> 8) & 0xff;
  key[offset + 3] = baseTimeSec & 0xff;
}

/** Writes the base time into a row key in place. */
export function writeBaseTime(w: SchemaWidths, key: Uint8Array, baseTimeSec: number): void {
  writeBaseTimeAt(key, w.saltWidth + w.metric, baseTimeSec);
}

/** The base time stored in a row key. */
export function baseTimeOfKey(w: SchemaWidths, key: Uint8Array): number {
  const o = w.saltWidth + w.metric;
  return ((key[o]! << 24) | (key[o + 1]! << 16) | (key[o + 2]! << 8) | key[o + 3]!) >>> 0;
}

/**
 * A complete, salted row key. `tagPairs` are tagk||tagv each (tagk + tagv bytes), in any
 * order: they are sorted here. Throws RangeError for wrong widths, duplicate tag keys or a
 * base time that is not an hour-aligned u32. Zero tags are allowed at this level (the
 * global-annotation row); the write path enforces 1..max tags.
 */
export function encodeRowKey(
  w: SchemaWidths, metricUid: Uint8Array, baseTimeSec: number, tagPairs: readonly Uint8Array[],
): Uint8Array {
  if (metricUid.length !== w.metric) throw new RangeError(`metric UID has ${metricUid.length} bytes, expected ${w.metric}`);
  const pairLen = w.tagk + w.tagv;
  const sorted = tagPairs.slice().sort(compareBytes);
  const key = new Uint8Array(rowKeyLength(w, sorted.length));
  key.set(metricUid, w.saltWidth);
  writeBaseTime(w, key, baseTimeSec);
  let o = w.saltWidth + w.metric + BASE_TIME_BYTES;
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i]!;
    if (p.length !== pairLen) throw new RangeError(`tag pair ${i} has ${p.length} bytes, expected ${pairLen} (tagk + tagv)`);
    if (i > 0 && compareBytes(p.subarray(0, w.tagk), sorted[i - 1]!.subarray(0, w.tagk)) === 0) {
      throw new RangeError(`duplicate tag key UID ${toHex(p.subarray(0, w.tagk))}`);
    }
    key.set(p, o);
    o += pairLen;
  }
  saltKey(key, w);
  return key;
}

/** The key of a series with base time 0 and its salt filled in: the template for every row. */
export function encodeSeriesKey(w: SchemaWidths, metricUid: Uint8Array, tagPairs: readonly Uint8Array[]): Uint8Array {
  return encodeRowKey(w, metricUid, 0, tagPairs);
}

/**
 * A copy of `seriesKey` with the base time written at `baseTimeOffset` (= saltWidth +
 * metric, computed once by the caller): the per-point fast path, one allocation.
 */
export function patchBaseTime(seriesKey: Uint8Array, baseTimeOffset: number, baseTimeSec: number): Uint8Array {
  const key = seriesKey.slice();
  writeBaseTimeAt(key, baseTimeOffset, baseTimeSec);
  return key;
}

/** A copy of `seriesKey` with its base time set (`patchBaseTime` with the offset from `w`). */
export function rowKeyWithBaseTime(w: SchemaWidths, seriesKey: Uint8Array, baseTimeSec: number): Uint8Array {
  return patchBaseTime(seriesKey, w.saltWidth + w.metric, baseTimeSec);
}

/**
 * Splits a row key into its fields. Throws IllegalDataError when the length does not fit
 * salt + metric + base time + whole tag pairs.
 */
export function decodeRowKey(w: SchemaWidths, key: Uint8Array): DecodedRowKey {
  const head = w.saltWidth + w.metric + BASE_TIME_BYTES;
  const pairLen = w.tagk + w.tagv;
  if (key.length < head || (key.length - head) % pairLen !== 0) {
    throw new IllegalDataError(
      `row key ${toHex(key)} has ${key.length} bytes: expected ${head} + n x ${pairLen} ` +
      `(salt ${w.saltWidth}, metric ${w.metric}, base time 4, tagk ${w.tagk} + tagv ${w.tagv})`,
    );
  }
  const tags: Array<[Uint8Array, Uint8Array]> = [];
  for (let o = head; o < key.length; o += pairLen) {
    tags.push([key.subarray(o, o + w.tagk), key.subarray(o + w.tagk, o + pairLen)]);
  }
  return {
    salt: readSalt(key, w),
    metric: key.subarray(w.saltWidth, w.saltWidth + w.metric),
    baseTimeSec: baseTimeOfKey(w, key),
    tags,
  };
}

/** The (tagk, tagv) UID pairs of a TSUID, in key order: views of it. */
export function tsuidTagPairs(w: SchemaWidths, tsuid: Uint8Array): Array<[Uint8Array, Uint8Array]> {
  const pairLen = w.tagk + w.tagv;
  const tags: Array<[Uint8Array, Uint8Array]> = [];
  for (let o = w.metric; o + pairLen <= tsuid.length; o += pairLen) tags.push([tsuid.subarray(o, o + w.tagk), tsuid.subarray(o + w.tagk, o + pairLen)]);
  return tags;
}

/** The TSUID of a row key: metric UID and tag pairs, without salt and base time (a copy). */
export function tsuidOfKey(w: SchemaWidths, key: Uint8Array): Uint8Array {
  const metricEnd = w.saltWidth + w.metric;
  if (key.length < metricEnd + BASE_TIME_BYTES) throw new IllegalDataError(`row key ${toHex(key)} is too short for a TSUID`);
  const out = new Uint8Array(key.length - w.saltWidth - BASE_TIME_BYTES);
  out.set(key.subarray(w.saltWidth, metricEnd), 0);
  out.set(key.subarray(metricEnd + BASE_TIME_BYTES), w.metric);
  return out;
}

function checkTsuidLength(w: SchemaWidths, len: number): boolean {
  return len >= w.metric && (len - w.metric) % (w.tagk + w.tagv) === 0;
}

/**
 * The salted row key of a TSUID for the row holding `ts` (seconds or ms; reduced to its
 * hour like OpenTSDB `RowKey#rowKeyFromTSUID`, which leaves salting to its caller). Throws
 * RangeError when the TSUID length does not fit the widths.
 */
export function rowKeyFromTsuid(w: SchemaWidths, tsuid: Uint8Array, ts: number): Uint8Array {
  if (!checkTsuidLength(w, tsuid.length)) throw new RangeError(`TSUID of ${tsuid.length} bytes does not fit the UID widths`);
  const key = new Uint8Array(w.saltWidth + tsuid.length + BASE_TIME_BYTES);
  key.set(tsuid.subarray(0, w.metric), w.saltWidth);
  key.set(tsuid.subarray(w.metric), w.saltWidth + w.metric + BASE_TIME_BYTES);
  writeBaseTime(w, key, baseTimeOf(ts));
  saltKey(key, w);
  return key;
}

/** The TSUID's string form: upper-case hex, as OpenTSDB prints it. */
export function tsuidToHex(tsuid: Uint8Array): string {
  return toHex(tsuid).toUpperCase();
}

/**
 * Parses a TSUID string (either case). Throws InvalidInputError for non-hex text or a
 * length that does not fit the UID widths.
 */
export function tsuidFromHex(w: SchemaWidths, hex: string): Uint8Array {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) {
    throw new InvalidInputError(`invalid TSUID "${hex.slice(0, 64)}": expected an even number of hex digits`);
  }
  const tsuid = fromHex(hex);
  if (!checkTsuidLength(w, tsuid.length)) {
    throw new InvalidInputError(
      `invalid TSUID "${hex.slice(0, 64)}": ${tsuid.length} bytes is not a ${w.metric}-byte metric plus whole ` +
      `${w.tagk + w.tagv}-byte tag pairs`,
    );
  }
  return tsuid;
}

/**
 * Scan bounds for one salt bucket of one metric over [startTs, endTsInclusive] (seconds or
 * ms): [salt][metric][base(start)] up to the exclusive [salt][metric][base(end) + 3600].
 * When that end would pass the last u32 base time, the end is the prefix end of
 * [salt][metric] (empty = end of table).
 */
export function metricScanRange(
  w: SchemaWidths, salt: number, metricUid: Uint8Array, startTs: number, endTsInclusive: number,
): { start: Uint8Array; end: Uint8Array } {
  if (metricUid.length !== w.metric) throw new RangeError(`metric UID has ${metricUid.length} bytes, expected ${w.metric}`);
  const startBase = baseTimeOf(startTs);
  const endBase = baseTimeOf(endTsInclusive);
  if (endBase < startBase) throw new RangeError(`scan end ${endTsInclusive} is before start ${startTs}`);
  const head = w.saltWidth + w.metric;
  const start = new Uint8Array(head + BASE_TIME_BYTES);
  writeSalt(start, salt, w.saltWidth);
  start.set(metricUid, w.saltWidth);
  writeBaseTime(w, start, startBase);
  const stopBase = endBase + ROW_SPAN_S;
  if (stopBase > MAX_BASE_TIME_S) return { start, end: prefixEnd(start.subarray(0, head)) };
  const end = start.slice();
  writeBaseTime(w, end, stopBase);
  return { start, end };
}
