/**
 * Seeded data for the hour codec tests and bench/codec-bench.ts: TSBS "devops cpu"-like
 * series-hours (one point every 10 s, a clamped random walk v = clamp(v + N(0,1), 0, 100)
 * starting uniformly in [0, 100], as TSBS's ClampedRandomWalkDistribution) and the other
 * shapes the codec must handle.
 */
import { Random } from '../../../core/util/random.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';

/** A standard normal deviate (Box-Muller). */
export function gaussian(rng: Random): number {
  const u = 1 - rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export interface OffsetOptions {
  readonly stepMs?: number;
  /** Each point moves by up to +-jitterMs (kept strictly ascending). */
  readonly jitterMs?: number;
  /** Probability that a point is missing. */
  readonly missing?: number;
  /** Probability that a point is jittered (default 1 when jitterMs is set). */
  readonly jitterShare?: number;
}

/** Offsets 0, step, 2 step ... within the hour, with optional jitter and missing points. */
export function devopsOffsets(rng: Random, o: OffsetOptions = {}): Int32Array {
  const step = o.stepMs ?? 10_000;
  const out: number[] = [];
  for (let t = 0; t < 3_600_000; t += step) {
    if (o.missing !== undefined && rng.chance(o.missing)) continue;
    let x = t;
    if (o.jitterMs !== undefined && rng.chance(o.jitterShare ?? 1)) x += rng.range(-o.jitterMs, o.jitterMs);
    x = Math.min(3_599_999, Math.max(x, out.length > 0 ? out[out.length - 1]! + 1 : 0));
    out.push(x);
  }
  return Int32Array.from(out);
}

/** A clamped random walk of n values, rounded to `decimals` digits when given. */
export function walk(rng: Random, n: number, decimals?: number): Float64Array {
  const out = new Float64Array(n);
  let v = rng.next() * 100;
  const p = decimals === undefined ? 0 : 10 ** decimals;
  for (let i = 0; i < n; i++) {
    v = Math.min(100, Math.max(0, v + gaussian(rng)));
    out[i] = decimals === undefined ? v : Math.round(v * p) / p;
  }
  return out;
}

/** A counter: starts at a random value, grows by a random 0..1000 per point. */
export function counter(rng: Random, n: number): Float64Array {
  const out = new Float64Array(n);
  let v = rng.int(1_000_000);
  for (let i = 0; i < n; i++) out[i] = v += rng.int(1001);
  return out;
}

/** A block of the given points; kinds default to "integer when the value is". */
export function blockOf(offsets: Int32Array, values: Float64Array, isInt?: Uint8Array): PointBlock {
  const n = offsets.length;
  const kinds = isInt ?? Uint8Array.from(values.subarray(0, n), (v) => (Number.isInteger(v) && !Object.is(v, -0) ? 1 : 0));
  return { count: n, offsetsMs: offsets, values: values.subarray(0, n), isInt: kinds };
}

// ---- random shapes for the property tests ------------------------------------------

const MAX_OFFSET = 3_599_999;

/** `n` strictly ascending offsets in the hour: gaps of 1 + int(maxGap), from a random start. */
export function randomOffsets(rng: Random, n: number, maxGap: number): Int32Array {
  const out: number[] = [];
  let t = rng.int(Math.max(1, Math.min(maxGap, MAX_OFFSET)));
  while (out.length < n && t <= MAX_OFFSET) {
    out.push(t);
    t += 1 + rng.int(maxGap);
  }
  return Int32Array.from(out);
}

const TIMESTAMP_SHAPES: ReadonlyArray<(rng: Random) => Int32Array> = [
  (rng) => devopsOffsets(rng),
  (rng) => devopsOffsets(rng, { stepMs: 1000 * rng.range(1, 120) }),
  (rng) => devopsOffsets(rng, { missing: rng.next() * 0.5 }),
  (rng) => devopsOffsets(rng, { jitterMs: rng.range(1, 200) }),
  (rng) => devopsOffsets(rng, { jitterMs: 5, jitterShare: 0.05, missing: 0.02 }),
  (rng) => randomOffsets(rng, 1, 1_000_000),
  (rng) => randomOffsets(rng, 2, 1_000_000),
  (rng) => randomOffsets(rng, rng.range(3, 2000), rng.range(1, 5000)),
  (rng) => randomOffsets(rng, rng.range(1, 3000), 1), // every ms
  (rng) => Int32Array.from({ length: rng.range(1, 50) }, (_, i) => MAX_OFFSET - 49 + i), // the hour's end
];

/** A random float64 bit pattern (NaNs with payloads, infinities, subnormals included). */
function randomBits(rng: Random): number {
  const f = new Float64Array(1);
  const w = new Uint32Array(f.buffer);
  w[0] = rng.nextU32();
  w[1] = rng.nextU32();
  return f[0]!;
}

const SPECIALS = [0, -0, 5e-324, -5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity, NaN, 1e300, 1e-300, 2 ** 53, -(2 ** 53), 0.1, 1 / 3];

const VALUE_SHAPES: ReadonlyArray<(rng: Random, n: number) => Float64Array> = [
  (rng, n) => walk(rng, n, 2),
  (rng, n) => walk(rng, n, rng.int(16)),
  (rng, n) => walk(rng, n),
  (rng, n) => counter(rng, n),
  (rng, n) => new Float64Array(n).fill(SPECIALS[rng.int(SPECIALS.length)]!),
  (rng, n) => Float64Array.from({ length: n }, (_, i) => 1000 + 7 * i), // steady counter
  (rng, n) => Float64Array.from({ length: n }, () => (rng.chance(0.05) ? rng.int(10) : 3)), // rare changes
  (rng, n) => Float64Array.from({ length: n }, () => SPECIALS[rng.int(SPECIALS.length)]!),
  (rng, n) => Float64Array.from({ length: n }, () => randomBits(rng)),
  (rng, n) => Float64Array.from({ length: n }, () => (rng.chance(0.5) ? rng.int(1000) : rng.int(1000) / 8)),
  (rng, n) => Float64Array.from({ length: n }, () => (rng.next() - 0.5) * 10 ** rng.range(-320, 308)),
  (rng, n) => Float64Array.from({ length: n }, () => rng.int(2 ** 30) * 2 ** 23 - 2 ** 52), // large ints
  (rng, n) => Float64Array.from({ length: n }, () => (rng.chance(0.7) ? 42.5 : gaussian(rng))), // repeats
];

/**
 * A random series-hour over the shapes above; kinds are all-int, all-float, mixed or "int
 * when integral"; sometimes with int64 values beyond +-(2^53-1) in `bigInts`.
 */
export function randomBlock(rng: Random): PointBlock {
  const offsets = TIMESTAMP_SHAPES[rng.int(TIMESTAMP_SHAPES.length)]!(rng);
  const n = offsets.length;
  const values = VALUE_SHAPES[rng.int(VALUE_SHAPES.length)]!(rng, n);
  const mode = rng.int(4);
  const isInt = Uint8Array.from(values, (v) =>
    mode === 0 ? 1 : mode === 1 ? 0 : mode === 2 ? (rng.chance(0.5) ? 1 : 0) : Number.isInteger(v) ? 1 : 0);
  const b = blockOf(offsets, values, isInt);
  if (rng.chance(0.15)) {
    const big = new BigInt64Array(n);
    for (let i = 0; i < n; i++) {
      if (!rng.chance(0.3)) continue;
      const v = BigInt.asIntN(64, (BigInt(rng.nextU32()) << 32n) | BigInt(rng.nextU32()) | (1n << 60n));
      big[i] = v;
      b.isInt[i] = 1;
      b.values[i] = Number(v);
    }
    b.bigInts = big;
  }
  return b;
}

/** The four benchmark shapes, one series-hour each, from `rng`. */
export const SHAPES = {
  'devops 2-decimal walk': (rng: Random) => {
    const o = devopsOffsets(rng);
    return blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length));
  },
  'full-precision walk': (rng: Random) => {
    const o = devopsOffsets(rng);
    return blockOf(o, walk(rng, o.length), new Uint8Array(o.length));
  },
  'integer counter': (rng: Random) => {
    const o = devopsOffsets(rng);
    return blockOf(o, counter(rng, o.length));
  },
  'constant integer': (rng: Random) => {
    const o = devopsOffsets(rng);
    return blockOf(o, new Float64Array(o.length).fill(rng.int(100)));
  },
} as const satisfies Record<string, (rng: Random) => PointBlock>;

export type ShapeName = keyof typeof SHAPES;

/** `series` blocks of one shape; the bytes/point of a set is sum(bytes) / sum(points). */
export function shapeBlocks(shape: ShapeName, series: number, seed: number): PointBlock[] {
  const rng = new Random(seed);
  return Array.from({ length: series }, () => SHAPES[shape](rng));
}
