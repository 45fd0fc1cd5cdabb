/**
 * Point streams of the query pipeline (pipeline.ts): one decoded series as it enters,
 * the per-series stage outputs (downsampled buckets, rates) and the aggregated output.
 * Everything is typed arrays, ascending by timestamp (epoch ms), one point per ms.
 *
 * Integers: OpenTSDB keeps `long` arithmetic while every input is an integer. We carry
 * integers as Numbers; where a value may lie beyond ±2^53 the optional `exact` column holds
 * the exact int64. The rule, for inputs and outputs alike: for a point with isInt = 1 and
 * |values[i]| > Number.MAX_SAFE_INTEGER, `exact[i]` (when the column is present) is the
 * exact value and `values[i]` its nearest double. Below that bound `values[i]` is exact and
 * `exact[i]` is not consulted (it may be 0).
 */

/** One series' points after decoding, ascending by ts, one per ms. */
export interface SeriesData {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  /** Upper-case hex. */
  readonly tsuid?: string;
  count: number;
  /** Epoch ms. */
  ts: Float64Array;
  values: Float64Array;
  /** 1 = integer point (OpenTSDB keeps long arithmetic for all-integer spans). */
  isInt: Uint8Array;
  /** Exact int64 values of integer points beyond ±2^53 (see the header); optional. */
  exact?: BigInt64Array | undefined;
}

/** A computed output point stream. */
export interface OutSeries {
  count: number;
  ts: Float64Array;
  values: Float64Array;
  isInt: Uint8Array;
  /** Exact int64 of integer points beyond ±2^53 (see the header); absent when none. */
  exact?: BigInt64Array | undefined;
  /**
   * The sub-query's fill policy is `null`: NaN values serialize as JSON null instead of
   * "NaN" (HttpJsonSerializer decides per sub-query, not per point; same as
   * format-json.ts's OutputPoints.nanAsNull).
   */
  nanAsNull?: boolean;
}

/** The shape every stage reads and writes. */
export interface Points {
  count: number;
  ts: Float64Array;
  values: Float64Array;
  isInt: Uint8Array;
  exact?: BigInt64Array | undefined;
}

export const LONG_MAX = 9223372036854775807n;
export const LONG_MIN = -9223372036854775808n;
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Long.MAX_VALUE / MIN_VALUE as the nearest doubles. */
export const LONG_MAX_NUM = 9223372036854775807;
export const LONG_MIN_NUM = -9223372036854775808;

/** The exact int64 of integer point i (values[i] itself when it is within ±2^53). */
export function exactAt(p: Points, i: number): bigint {
  const v = p.values[i]!;
  if (p.exact !== undefined && (v > MAX_SAFE || v < -MAX_SAFE)) return p.exact[i]!;
  return BigInt(v);
}

/** Java's `(long) d`: truncation toward zero, saturating, NaN → 0. */
export function toLong(d: number): bigint {
  if (Number.isNaN(d)) return 0n;
  if (d >= 9223372036854775807) return LONG_MAX;
  if (d <= -9223372036854775808) return LONG_MIN;
  return BigInt(Math.trunc(d));
}

/** Java's `(long) d` as a Number (saturated to the nearest doubles of the long range). */
export function toLongNum(d: number): number {
  if (Number.isNaN(d)) return 0;
  if (d >= LONG_MAX_NUM) return LONG_MAX_NUM;
  if (d <= LONG_MIN_NUM) return LONG_MIN_NUM;
  return Math.trunc(d);
}

/** Wraps to int64 like Java long arithmetic. */
export function wrap64(v: bigint): bigint {
  return BigInt.asIntN(64, v);
}

/** The first index in [0, count) whose ts is >= x (count when none). */
export function lowerBound(ts: Float64Array, count: number, x: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A view of the points with fromMs <= ts < toMs (no copy). */
export function slicePoints(p: Points, fromMs: number, toMs: number): Points {
  const a = lowerBound(p.ts, p.count, fromMs);
  const b = Math.max(a, lowerBound(p.ts, p.count, toMs));
  if (a === 0 && b === p.count) return p;
  return {
    count: b - a,
    ts: p.ts.subarray(a, b),
    values: p.values.subarray(a, b),
    isInt: p.isInt.subarray(a, b),
    exact: p.exact?.subarray(a, b),
  };
}

/** Fresh arrays for up to `capacity` points (count 0). */
export function allocPoints(capacity: number): Points {
  const [buf, at] = pointBytes(capacity);
  return {
    count: 0,
    ts: new Float64Array(buf, at, capacity),
    values: new Float64Array(buf, at + capacity * 8, capacity),
    isInt: new Uint8Array(buf, at + capacity * 16, capacity),
  };
}

/** Bytes of one point in allocPoints' layout: ts f64, value f64, isInt u8. */
const POINT_BYTES = 17;
/** Point arrays up to this many bytes share a slab; bigger ones get their own buffer. */
const SLAB_MAX_BYTES = 8 * 1024;
const SLAB_BYTES = 64 * 1024;
let slab = new ArrayBuffer(0);
let slabUsed = 0;

/**
 * Zeroed room for `capacity` points in allocPoints' layout: a buffer and the offset to start
 * at (8-aligned). Small arrays are carved from a shared 64 KiB slab that is never reused: a
 * fresh ArrayBuffer costs a query microseconds (allocation, zeroing, the external-memory
 * accounting and sweeping), far more than a small one's bytes, and a query allocates a few
 * per series. The arrays' buffer is therefore shared: never transfer or detach it (a
 * worker's answer copies its points out first, decode-worker.ts).
 */
export function pointBytes(capacity: number): [ArrayBuffer, number] {
  const bytes = (capacity * POINT_BYTES + 7) & ~7;
  if (bytes > SLAB_MAX_BYTES) return [new ArrayBuffer(bytes), 0];
  if (slabUsed + bytes > slab.byteLength) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed += bytes;
  return [slab, at];
}

/** Shrinks the arrays of `p` to its count (views, no copy). */
export function trimmed(p: Points): OutSeries {
  const n = p.count;
  const out: OutSeries = {
    count: n,
    ts: p.ts.subarray(0, n),
    values: p.values.subarray(0, n),
    isInt: p.isInt.subarray(0, n),
  };
  if (p.exact !== undefined) out.exact = p.exact.subarray(0, n);
  return out;
}

/**
 * Builds a SeriesData from [ts, value, isInt?] rows (tests, small inputs). A bigint value
 * is an integer point and may lie beyond ±2^53; a number is an integer point when `isInt`
 * is true or omitted and the number is an integer.
 */
export function seriesOf(
  metric: string,
  tags: Readonly<Record<string, string>>,
  rows: ReadonlyArray<readonly [number, number | bigint, boolean?]>,
): SeriesData {
  const n = rows.length;
  const s: SeriesData = { metric, tags, count: n, ts: new Float64Array(n), values: new Float64Array(n), isInt: new Uint8Array(n) };
  for (let i = 0; i < n; i++) {
    const [t, v, int] = rows[i]!;
    s.ts[i] = t;
    if (typeof v === 'bigint') {
      s.values[i] = Number(v);
      s.isInt[i] = 1;
      if (v > BigInt(MAX_SAFE) || v < -BigInt(MAX_SAFE)) {
        s.exact ??= new BigInt64Array(n);
        s.exact[i] = v;
      }
    } else {
      s.values[i] = v;
      s.isInt[i] = (int ?? Number.isInteger(v)) ? 1 : 0;
    }
  }
  return s;
}
