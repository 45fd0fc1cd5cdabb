/**
 * A readable hint of a data-table key that bounds a region (tsdb/SCHEMA.md "Row key"):
 *
 *   [salt saltWidth][metric UID][base time: u32 BE][tagk tagv]*
 *
 * Region boundaries are often not whole row keys: the pre-split points are bare salt
 * buckets (`05`), and a split point may end anywhere. So each field is decoded only when
 * the key holds all of its bytes; the rest stays absent. The empty key (the start or the
 * end of the table) has no hint. Pure; the metric name is looked up by the caller.
 */
import type { SchemaWidths } from '../../schema/widths.js';

export interface KeyHintBytes {
  /** The salt bucket, when salting is on and the key holds the salt bytes. */
  readonly salt?: number;
  /** The metric UID bytes (a view into the key), when the key holds all of them. */
  readonly metricUid?: Uint8Array;
  /** The base hour (epoch seconds), when the key holds all four bytes. */
  readonly baseTimeSec?: number;
}

const BASE_TIME_BYTES = 4;

export function decodeKeyHint(w: SchemaWidths, key: Uint8Array): KeyHintBytes | undefined {
  if (key.length === 0) return undefined;
  const out: { salt?: number; metricUid?: Uint8Array; baseTimeSec?: number } = {};
  let at = 0;
  if (w.saltWidth > 0) {
    if (key.length < w.saltWidth) return undefined;
    let salt = 0;
    for (let i = 0; i < w.saltWidth; i++) salt = salt * 256 + key[i]!;
    out.salt = salt;
    at = w.saltWidth;
  }
  if (key.length < at + w.metric) return w.saltWidth > 0 ? out : undefined;
  out.metricUid = key.subarray(at, at + w.metric);
  at += w.metric;
  if (key.length < at + BASE_TIME_BYTES) return out;
  out.baseTimeSec = new DataView(key.buffer, key.byteOffset + at, BASE_TIME_BYTES).getUint32(0);
  return out;
}
