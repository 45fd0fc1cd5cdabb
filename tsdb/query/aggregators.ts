/**
 * OpenTSDB's aggregators (src/core/Aggregators.java): every registered
 * name with its interpolation and its two code paths. `runLong` is used while every input
 * is an integer (long arithmetic: integer division for avg, truncating casts for dev and
 * the percentiles, int64 wrap-around), `runDouble` otherwise and always for downsampling.
 *
 * runLong works on integer-valued Numbers and returns NaN when it cannot guarantee an exact
 * result (a partial result left ±2^53); the caller then runs `runBig` on exact int64 inputs.
 * The double paths skip NaN as OpenTSDB 2.4+ does (sum/avg/min/max/dev/count/median/
 * squareSum/percentiles; NaN when nothing is left), `mult` propagates it. Percentiles follow
 * commons-math3 Percentile (NaNs removed, LEGACY estimation; R_3/R_7 on the long path only).
 */
import { TsdbError } from '../errors.js';
import * as series from './series.js';
import { toLong, toLongNum, wrap64 } from './series.js';

const MAX_SAFE = series.MAX_SAFE; // a module-local constant for the hot loops

/** Interpolations (Aggregators.Interpolation). */
export const LERP = 0;
export const ZIM = 1;
/** Missing → Long.MAX_VALUE / Double.MAX_VALUE. */
export const MAX = 2;
/** Missing → Long.MIN_VALUE / −Double.MAX_VALUE. */
export const MIN = 3;
export const PREV = 4;

/** Runs over v[from, to). */
export type RunFn = (v: Float64Array, from: number, to: number) => number;

export interface Aggregator {
  readonly name: string;
  readonly interpolation: number;
  readonly runDouble: RunFn;
  /** Integer inputs; NaN = "not exact in a double, use runBig". */
  readonly runLong: RunFn;
  readonly runBig: (v: readonly bigint[]) => bigint;
  /** The long result is one of the inputs (or a count): big inputs need no exact path. */
  readonly selects: boolean;
  /**
   * runDouble over one value is that value, for every value but ±0 and NaN (callers ask
   * runDouble for those): a group of one series needs no call per point (aggregate.ts).
   */
  readonly oneIsValue: boolean;
}

const safe = (r: number): number => (r > MAX_SAFE || r < -MAX_SAFE ? NaN : r);

function sumD(v: Float64Array, a: number, b: number): number {
  let r = 0;
  let n = 0;
  for (let i = a; i < b; i++) {
    const x = v[i]!;
    if (x === x) {
      r += x;
      n++;
    }
  }
  return n === 0 ? NaN : r;
}
function sumL(v: Float64Array, a: number, b: number): number {
  let r = 0;
  for (let i = a; i < b; i++) {
    r += v[i]!;
    if (r > MAX_SAFE || r < -MAX_SAFE) return NaN;
  }
  return r;
}
const sumB = (v: readonly bigint[]): bigint => wrap64(v.reduce((s, x) => s + x, 0n));

function minD(v: Float64Array, a: number, b: number): number {
  let r = NaN;
  for (let i = a; i < b; i++) {
    const x = v[i]!;
    if (x < r || r !== r) r = x;
  }
  return r;
}
function maxD(v: Float64Array, a: number, b: number): number {
  let r = NaN;
  for (let i = a; i < b; i++) {
    const x = v[i]!;
    if (x > r || r !== r) r = x;
  }
  return r;
}
const minB = (v: readonly bigint[]): bigint => v.reduce((m, x) => (x < m ? x : m));
const maxB = (v: readonly bigint[]): bigint => v.reduce((m, x) => (x > m ? x : m));

function avgD(v: Float64Array, a: number, b: number): number {
  let r = 0;
  let n = 0;
  for (let i = a; i < b; i++) {
    const x = v[i]!;
    if (x === x) {
      r += x;
      n++;
    }
  }
  return n === 0 ? NaN : r / n;
}
function avgL(v: Float64Array, a: number, b: number): number {
  const s = sumL(v, a, b);
  return s === s ? Math.trunc(s / (b - a)) : NaN;
}

/** Welford as Aggregators.StdDev (population deviation; 0 for a single value). */
function devD(v: Float64Array, a: number, b: number): number {
  let i = a;
  while (i < b && v[i] !== v[i]) i++;
  if (i === b) return NaN;
  let mean = v[i++]!;
  let n = 2;
  let m2 = 0;
  for (; i < b; i++) {
    const x = v[i]!;
    if (x !== x) continue;
    const next = mean + (x - mean) / n;
    m2 += (x - mean) * (x - next);
    mean = next;
    n++;
  }
  return n === 2 ? 0 : Math.sqrt(m2 / (n - 1));
}
const devL: RunFn = (v, a, b) => toLongNum(devD(v, a, b));

function countD(v: Float64Array, a: number, b: number): number {
  let n = 0;
  for (let i = a; i < b; i++) if (v[i] === v[i]) n++;
  return n;
}

/** Sorted copy without NaN (typed-array sort puts NaN last). */
function sortedNoNaN(v: Float64Array, a: number, b: number): Float64Array {
  const s = v.slice(a, b).sort();
  let n = s.length;
  while (n > 0 && s[n - 1] !== s[n - 1]) n--;
  return n === s.length ? s : s.subarray(0, n);
}
function medianD(v: Float64Array, a: number, b: number): number {
  const s = sortedNoNaN(v, a, b);
  return s.length === 0 ? NaN : s[s.length >> 1]!;
}
const medianB = (v: readonly bigint[]): bigint => [...v].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))[v.length >> 1]!;

function multD(v: Float64Array, a: number, b: number): number {
  let r = v[a]!;
  for (let i = a + 1; i < b; i++) r *= v[i]!;
  return r;
}
function multL(v: Float64Array, a: number, b: number): number {
  let r = v[a]!;
  for (let i = a + 1; i < b; i++) {
    r *= v[i]!;
    if (r > MAX_SAFE || r < -MAX_SAFE) return NaN;
  }
  return r;
}
const multB = (v: readonly bigint[]): bigint => wrap64(v.reduce((p, x) => wrap64(p * x), 1n));

/** last − first, the first skipping NaN. */
function diffD(v: Float64Array, a: number, b: number): number {
  let i = a;
  while (i < b - 1 && v[i] !== v[i]) i++;
  return v[b - 1]! - v[i]!;
}
const diffL: RunFn = (v, a, b) => safe(v[b - 1]! - v[a]!);
const diffB = (v: readonly bigint[]): bigint => wrap64(v[v.length - 1]! - v[0]!);

function sqSumD(v: Float64Array, a: number, b: number): number {
  let r = 0;
  let n = 0;
  for (let i = a; i < b; i++) {
    const x = v[i]!;
    if (x === x) {
      r += x * x;
      n++;
    }
  }
  return n === 0 ? NaN : r;
}
function sqSumL(v: Float64Array, a: number, b: number): number {
  let r = 0;
  for (let i = a; i < b; i++) {
    r += v[i]! * v[i]!;
    if (r > MAX_SAFE) return NaN;
  }
  return r;
}
const sqSumB = (v: readonly bigint[]): bigint => wrap64(v.reduce((s, x) => s + x * x, 0n));

function noneD(v: Float64Array, a: number, b: number): number {
  if (b - a > 1) throw new TsdbError('TSDB_ILLEGAL_DATA', 'More than one value in aggregator none');
  return v[a]!;
}
const noneB = (v: readonly bigint[]): bigint => {
  if (v.length > 1) throw new TsdbError('TSDB_ILLEGAL_DATA', 'More than one value in aggregator none');
  return v[0]!;
};

/** commons-math3 estimation types. */
export const LEGACY = 0;
export const R_3 = 3;
export const R_7 = 7;

function rint(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

/** Percentile.evaluate over sorted, NaN-free `s`; p in (0, 100]. */
export function percentileOfSorted(s: Float64Array, p: number, est: number): number {
  const len = s.length;
  if (len === 0) return NaN;
  if (len === 1) return s[0]!;
  const q = p / 100;
  let pos: number;
  if (est === R_3) pos = q <= 0.5 / len ? 0 : rint(len * q);
  else if (est === R_7) pos = q === 0 ? 0 : q === 1 ? len : 1 + (len - 1) * q;
  else pos = q === 0 ? 0 : q === 1 ? len : q * (len + 1);
  if (pos < 1) return s[0]!;
  if (pos >= len) return s[len - 1]!;
  const fpos = Math.floor(pos);
  const lower = s[fpos - 1]!;
  return lower + (pos - fpos) * (s[fpos]! - lower);
}

function percentileAgg(name: string, p: number, est: number): Aggregator {
  // length 1 returns the value before NaN removal, as Percentile does.
  const runDouble: RunFn = (v, a, b) => (b - a === 1 ? v[a]! : percentileOfSorted(sortedNoNaN(v, a, b), p, LEGACY));
  const runLong: RunFn = (v, a, b) => toLongNum(percentileOfSorted(v.slice(a, b).sort(), p, est));
  const runBig = (v: readonly bigint[]): bigint => toLong(percentileOfSorted(Float64Array.from(v, Number).sort(), p, est));
  return { name, interpolation: LERP, runDouble, runLong, runBig, selects: false, oneIsValue: true };
}

/** Aggregators whose runDouble over one value is the value (Aggregator.oneIsValue; test/tsdb/query/aggregators.test.ts checks it). */
const ONE_IS_VALUE: ReadonlySet<string> = new Set(['sum', 'min', 'max', 'avg', 'none', 'median', 'zimsum', 'mimmin', 'mimmax', 'first', 'last', 'pfsum']);

function agg(name: string, interpolation: number, runDouble: RunFn, runLong: RunFn, runBig: (v: readonly bigint[]) => bigint, selects: boolean): Aggregator {
  return { name, interpolation, runDouble, runLong, runBig, selects, oneIsValue: ONE_IS_VALUE.has(name) };
}

const firstD: RunFn = (v, a) => v[a]!;
const lastD: RunFn = (v, _a, b) => v[b - 1]!;
const viaDouble = (f: RunFn) => (v: readonly bigint[]): bigint => toLong(f(Float64Array.from(v, Number), 0, v.length));

/** Registration order of Aggregators' static block (only matters for hash-bucket ties). */
const ALL: readonly Aggregator[] = [
  agg('sum', LERP, sumD, sumL, sumB, false),
  agg('min', LERP, minD, minD, minB, true),
  agg('max', LERP, maxD, maxD, maxB, true),
  agg('avg', LERP, avgD, avgL, (v) => wrap64(v.reduce((s, x) => s + x, 0n)) / BigInt(v.length), false),
  agg('none', ZIM, noneD, noneD, noneB, true),
  agg('median', LERP, medianD, medianD, medianB, true),
  agg('mult', LERP, multD, multL, multB, false),
  agg('dev', LERP, devD, devL, viaDouble(devD), false),
  agg('diff', LERP, diffD, diffL, diffB, false),
  agg('count', ZIM, countD, (_v, a, b) => b - a, (v) => BigInt(v.length), true),
  agg('zimsum', ZIM, sumD, sumL, sumB, false),
  agg('mimmin', MAX, minD, minD, minB, true),
  agg('mimmax', MIN, maxD, maxD, maxB, true),
  agg('first', ZIM, firstD, firstD, (v) => v[0]!, true),
  agg('last', ZIM, lastD, lastD, (v) => v[v.length - 1]!, true),
  agg('pfsum', PREV, sumD, sumL, sumB, false),
  agg('squareSum', ZIM, sqSumD, sqSumL, sqSumB, false),
  ...(['999', '99', '95', '90', '75', '50'] as const).map((s) => percentileAgg(`p${s}`, s === '999' ? 99.9 : Number(s), LEGACY)),
  ...(['999', '99', '95', '90', '75', '50'] as const).map((s) => percentileAgg(`ep${s}r3`, s === '999' ? 99.9 : Number(s), R_3)),
  ...(['999', '99', '95', '90', '75', '50'] as const).map((s) => percentileAgg(`ep${s}r7`, s === '999' ? 99.9 : Number(s), R_7)),
];

const BY_NAME: ReadonlyMap<string, Aggregator> = new Map(ALL.map((a) => [a.name, a]));

/** Java String#hashCode. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The names in the order /api/aggregators prints them: `Aggregators.set()` is the key set
 * of a HashMap grown to 64 buckets, iterated by bucket ((h ^ h>>>16) & 63), ties in
 * insertion order.
 */
export const AGGREGATOR_NAMES: readonly string[] = ALL.map((a, i) => ({ n: a.name, i, b: (javaHash(a.name) ^ (javaHash(a.name) >>> 16)) & 63 }))
  .sort((x, y) => x.b - y.b || x.i - y.i)
  .map((x) => x.n);

/** Names are case-sensitive (a HashMap lookup). */
export function isAggregator(name: string): boolean {
  return BY_NAME.has(name);
}

export function getAggregator(name: string): Aggregator {
  const a = BY_NAME.get(name);
  if (a === undefined) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `No such aggregator: ${name}`);
  return a;
}
