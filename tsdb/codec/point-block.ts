/**
 * PointBlock: the points of one series-hour as parallel typed arrays, the unit the hour
 * codec (hour-codec.ts, format in tsdb/SCHEMA.md) encodes into one cell and
 * decodes back. Columnar so reads go straight into Float64Arrays.
 *
 * Invariants (checked by the encoder): offsets strictly ascending in 0..3_599_999; arrays
 * hold at least `count` entries (they may be longer: spare capacity for reuse).
 */

/** Points of one series-hour, ascending by offset, no duplicates. */
export interface PointBlock {
  count: number;
  /** ms offset within the hour, strictly ascending, 0..3_599_999. */
  offsetsMs: Int32Array;
  /** The value; integers converted to number (exact when |v| <= 2^53). */
  values: Float64Array;
  /** 1 when the point is an integer. */
  isInt: Uint8Array;
  /** Only when some integer is beyond +-(2^53-1): the exact int64 per point (0 for others). */
  bigInts?: BigInt64Array;
}

const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);

/** An empty block with room for `capacity` points. */
export function newPointBlock(capacity: number): PointBlock {
  const n = Math.max(0, capacity | 0);
  return { count: 0, offsetsMs: new Int32Array(n), values: new Float64Array(n), isInt: new Uint8Array(n) };
}

/** The number of points the block's arrays can hold. */
export function pointCapacity(b: PointBlock): number {
  return Math.min(b.offsetsMs.length, b.values.length, b.isInt.length);
}

/** Grows the arrays (keeping the first `count` points) so they hold `capacity` points. */
export function ensurePointCapacity(b: PointBlock, capacity: number): void {
  if (pointCapacity(b) >= capacity && (b.bigInts === undefined || b.bigInts.length >= capacity)) return;
  const n = Math.max(capacity, pointCapacity(b) * 2, 16);
  const keep = b.count;
  const o = new Int32Array(n);
  o.set(b.offsetsMs.subarray(0, keep));
  const v = new Float64Array(n);
  v.set(b.values.subarray(0, keep));
  const k = new Uint8Array(n);
  k.set(b.isInt.subarray(0, keep));
  b.offsetsMs = o;
  b.values = v;
  b.isInt = k;
  if (b.bigInts !== undefined) {
    const g = new BigInt64Array(n);
    g.set(b.bigInts.subarray(0, keep));
    b.bigInts = g;
  }
}

/** True when `v` is an integer that a float64 cannot hold exactly (beyond +-(2^53-1)). */
export function isBigInt64(v: bigint): boolean {
  return v > MAX_SAFE_BIG || v < -MAX_SAFE_BIG;
}

/**
 * Appends one point (offset after the last one). A bigint is an integer point; one beyond
 * +-(2^53-1) also goes to `bigInts` (created on first need). A number is a float point
 * unless `isInt` says otherwise.
 */
export function appendPoint(b: PointBlock, offsetMs: number, value: number | bigint, isInt = typeof value === 'bigint'): void {
  ensurePointCapacity(b, b.count + 1);
  const i = b.count++;
  b.offsetsMs[i] = offsetMs;
  b.isInt[i] = isInt ? 1 : 0;
  if (typeof value === 'bigint') {
    b.values[i] = Number(value);
    if (isBigInt64(value)) {
      if (b.bigInts === undefined) b.bigInts = new BigInt64Array(b.values.length);
      b.bigInts[i] = value;
    } else if (b.bigInts !== undefined) {
      b.bigInts[i] = 0n;
    }
  } else {
    b.values[i] = value;
    if (b.bigInts !== undefined) b.bigInts[i] = 0n;
  }
}

/**
 * The value of point i as OpenTSDB reports it: a bigint for an integer beyond
 * +-(2^53-1), otherwise a number (check isInt[i] for the kind).
 */
export function pointValue(b: PointBlock, i: number): number | bigint {
  const big = b.bigInts?.[i];
  if (big !== undefined && b.isInt[i] === 1 && isBigInt64(big)) return big;
  return b.values[i]!;
}

/** A copy holding exactly `count` points (bigInts only when one is beyond +-(2^53-1)). */
export function clonePointBlock(b: PointBlock): PointBlock {
  const n = b.count;
  const out: PointBlock = {
    count: n,
    offsetsMs: b.offsetsMs.slice(0, n),
    values: b.values.slice(0, n),
    isInt: b.isInt.slice(0, n),
  };
  if (b.bigInts !== undefined) out.bigInts = b.bigInts.slice(0, n);
  return out;
}

/**
 * Bit-exact equality of the points (float values compared by their 64-bit pattern, so -0
 * differs from 0; NaNs are equal to each other). bigInts compare where isInt is set and
 * the integer is beyond +-(2^53-1); a missing array counts as all zero.
 */
export function pointBlocksEqual(a: PointBlock, b: PointBlock): boolean {
  if (a.count !== b.count) return false;
  for (let i = 0; i < a.count; i++) {
    if (a.offsetsMs[i] !== b.offsetsMs[i] || a.isInt[i] !== b.isInt[i]) return false;
    if (!Object.is(a.values[i], b.values[i])) return false;
    if (a.isInt[i] === 1 && !Object.is(pointValue(a, i), pointValue(b, i))) return false;
  }
  return true;
}
