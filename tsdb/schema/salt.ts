/**
 * Salt: the bucket prefix of every data-table row key (tsdb/SCHEMA.md "Salt"), exactly as
 * OpenTSDB 2.2+ computes it (`RowKey#prefixKeyWithSalt`, `#getSaltBytes`):
 *
 *   salt_base = metric UID bytes ++ all tagk/tagv UID bytes (NOT the base time, so a series
 *               stays in one bucket forever)
 *   h         = Java Arrays.hashCode(salt_base): h = 1; h = 31*h + (signed byte), int32 wrap
 *   bucket    = |h % buckets|   (Java % takes the dividend's sign; negate when negative)
 *   salt      = bucket, big-endian in saltWidth bytes
 *
 * Exception: a key whose metric bytes are all zero (the global-annotation row) keeps an
 * all-zero salt. With saltWidth 0 there is no salt and every function here is a no-op.
 *
 * Hot path: `saltOfKey` hashes the key in place (no copy of salt_base); `writeSalt` writes
 * into the caller's key.
 */
import type { SchemaWidths } from './widths.js';

/** Base-time bytes between the metric and the tags. */
const BASE_TIME_BYTES = 4;

/**
 * Java `Arrays.hashCode(byte[])` continued from `h` over `b[start, end)`. Start with h = 1
 * for a fresh hash; feeding two ranges in turn equals hashing their concatenation.
 */
export function javaHashBytes(h: number, b: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + ((b[i]! << 24) >> 24)) | 0;
  return h;
}

/** The bucket of a Java hash: `|h % buckets|`. */
export function bucketOfHash(h: number, buckets: number): number {
  const m = h % buckets;
  return (m < 0 ? -m : m) | 0; // NB: `| 0` turns the -0 of a negative multiple into 0
}

function allZero(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i] !== 0) return false;
  return true;
}

/**
 * The salt bucket of a series given its metric UID and its tag bytes (the sorted
 * tagk||tagv pairs concatenated, as they appear at the end of the row key). Independent of
 * the salt width, so it also works when salting is configured off (the result is then unused).
 */
export function saltBucket(metricUid: Uint8Array, tagBytes: Uint8Array, buckets: number): number {
  if (allZero(metricUid, 0, metricUid.length)) return 0;
  const h = javaHashBytes(javaHashBytes(1, metricUid, 0, metricUid.length), tagBytes, 0, tagBytes.length);
  return bucketOfHash(h, buckets);
}

/**
 * The salt bucket of a complete row key, hashing the key's metric bytes
 * [saltWidth, saltWidth+metric) and tag bytes [saltWidth+metric+4, end) in place. The salt
 * and base-time bytes are ignored, so a key whose salt is not filled in yet works too.
 * Returns 0 when salting is off. REQUIRES: key.length >= saltWidth + metric + 4.
 */
export function saltOfKey(key: Uint8Array, w: SchemaWidths): number {
  if (w.saltWidth === 0) return 0;
  const metricEnd = w.saltWidth + w.metric;
  const tagsStart = metricEnd + BASE_TIME_BYTES;
  if (key.length < tagsStart) {
    throw new RangeError(`saltOfKey: key of ${key.length} bytes is shorter than salt + metric + base time (${tagsStart})`);
  }
  if (allZero(key, w.saltWidth, metricEnd)) return 0;
  const h = javaHashBytes(javaHashBytes(1, key, w.saltWidth, metricEnd), key, tagsStart, key.length);
  return bucketOfHash(h, w.saltBuckets);
}

/**
 * Writes `bucket` as the salt at key[off, off+saltWidth), big-endian. NB: like OpenTSDB's
 * `getSaltBytes` the shift is taken mod 32 (Java and JS `>>>` both do this), so for salt
 * widths above 4 the bytes in front of the low 4 repeat the bucket's low bytes rather than
 * being zero. Kept for byte compatibility; only matters for widths 5..8.
 */
export function writeSalt(key: Uint8Array, bucket: number, saltWidth: number, off = 0): void {
  for (let i = 1; i <= saltWidth; i++) key[off + saltWidth - i] = (bucket >>> ((8 * (i - 1)) & 31)) & 0xff;
}

/** Computes the salt of `key` and writes it into the key's first saltWidth bytes; returns it. */
export function saltKey(key: Uint8Array, w: SchemaWidths): number {
  const bucket = saltOfKey(key, w);
  writeSalt(key, bucket, w.saltWidth);
  return bucket;
}

/** The salt bytes of `bucket` (a fresh array of `width` bytes). */
export function saltBytes(bucket: number, width: number): Uint8Array {
  const out = new Uint8Array(width);
  writeSalt(out, bucket, width);
  return out;
}

/** The bucket stored in a key's salt prefix (its last min(saltWidth, 4) bytes). */
export function readSalt(key: Uint8Array, w: SchemaWidths): number {
  let v = 0;
  for (let i = w.saltWidth > 4 ? w.saltWidth - 4 : 0; i < w.saltWidth; i++) v = v * 256 + key[i]!;
  return v;
}

/**
 * Split points that pre-split the data table into one region per salt bucket: the salt
 * bytes of buckets 1..buckets-1 (bucket 0 starts at the beginning of the table). Empty when
 * salting is off.
 */
export function saltSplitKeys(w: SchemaWidths): Uint8Array[] {
  const out: Uint8Array[] = [];
  if (w.saltWidth === 0) return out;
  for (let b = 1; b < w.saltBuckets; b++) out.push(saltBytes(b, w.saltWidth));
  return out;
}
