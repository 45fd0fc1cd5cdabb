/**
 * Property tests: runGroup over random series (seeded; TEST_SEED replays one) against a
 * slow reference written plainly from OpenTSDB's rules (pipeline.ts): point objects,
 * Maps of buckets, BigInt for every long operation, the active window and the look-ahead
 * typing rule evaluated per output timestamp from scratch instead of with an iterator.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { runGroup, type PipelineSpec } from '../../../tsdb/query/pipeline.js';
import { seriesOf, type OutSeries } from '../../../tsdb/query/series.js';

interface Pt { t: number; v: number; big: bigint | undefined; int: boolean }

const LMAX = 2n ** 63n - 1n;
const LMIN = -(2n ** 63n);
const w64 = (x: bigint): bigint => BigInt.asIntN(64, x);
const bigOf = (p: Pt): bigint => p.big ?? BigInt(p.v);
const javaLong = (d: number): bigint => (Number.isNaN(d) ? 0n : d >= 2 ** 63 ? LMAX : d <= -(2 ** 63) ? LMIN : BigInt(Math.trunc(d)));

// ---- aggregators, plainly ---------------------------------------------------------------
const INTERP: Record<string, string> = { sum: 'lerp', avg: 'lerp', min: 'lerp', max: 'lerp', dev: 'lerp', median: 'lerp', diff: 'lerp', mult: 'lerp', p50: 'lerp', p95: 'lerp', ep90r3: 'lerp', ep75r7: 'lerp', zimsum: 'zim', count: 'zim', first: 'zim', last: 'zim', squareSum: 'zim', mimmin: 'max', mimmax: 'min', pfsum: 'prev' };
const AGGS = Object.keys(INTERP);

function pct(sorted: number[], p: number, est: string): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  if (n === 1) return sorted[0]!;
  const q = p / 100;
  const pos = est === 'r3' ? (q <= 0.5 / n ? 0 : roundHalfEven(n * q)) : est === 'r7' ? 1 + (n - 1) * q : q * (n + 1);
  if (pos < 1) return sorted[0]!;
  if (pos >= n) return sorted[n - 1]!;
  const lo = Math.floor(pos);
  return sorted[lo - 1]! + (pos - lo) * (sorted[lo]! - sorted[lo - 1]!);
}
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
function welford(xs: number[]): number {
  if (xs.length === 0) return NaN;
  let mean = xs[0]!;
  let m2 = 0;
  for (let i = 1; i < xs.length; i++) {
    const next = mean + (xs[i]! - mean) / (i + 1);
    m2 += (xs[i]! - mean) * (xs[i]! - next);
    mean = next;
  }
  return xs.length === 1 ? 0 : Math.sqrt(m2 / xs.length);
}
const PCT: Record<string, [number, string]> = { p50: [50, 'legacy'], p95: [95, 'legacy'], ep90r3: [90, 'r3'], ep75r7: [75, 'r7'] };

function aggDouble(name: string, vs: number[]): number {
  const ok = vs.filter((v) => !Number.isNaN(v));
  const sorted = [...ok].sort((a, b) => a - b);
  switch (name) {
    case 'sum': case 'zimsum': case 'pfsum': return ok.length === 0 ? NaN : ok.reduce((a, b) => a + b, 0);
    case 'avg': return ok.length === 0 ? NaN : ok.reduce((a, b) => a + b, 0) / ok.length;
    case 'min': case 'mimmin': return ok.length === 0 ? NaN : Math.min(...ok);
    case 'max': case 'mimmax': return ok.length === 0 ? NaN : Math.max(...ok);
    case 'count': return ok.length;
    case 'dev': return welford(ok);
    case 'median': return ok.length === 0 ? NaN : sorted[sorted.length >> 1]!;
    case 'first': return vs[0]!;
    case 'last': return vs[vs.length - 1]!;
    case 'diff': return vs[vs.length - 1]! - (ok.length > 0 ? ok[0]! : NaN);
    case 'mult': return vs.reduce((a, b) => a * b, 1);
    case 'squareSum': return ok.length === 0 ? NaN : ok.reduce((a, b) => a + b * b, 0);
    default: return vs.length === 1 ? vs[0]! : pct(sorted, PCT[name]![0], 'legacy');
  }
}
function aggLong(name: string, vs: bigint[]): bigint {
  const sorted = [...vs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  switch (name) {
    case 'sum': case 'zimsum': case 'pfsum': return w64(vs.reduce((a, b) => a + b, 0n));
    case 'avg': return w64(vs.reduce((a, b) => a + b, 0n)) / BigInt(vs.length);
    case 'min': case 'mimmin': return sorted[0]!;
    case 'max': case 'mimmax': return sorted[sorted.length - 1]!;
    case 'count': return BigInt(vs.length);
    case 'dev': return javaLong(welford(vs.map(Number)));
    case 'median': return sorted[sorted.length >> 1]!;
    case 'first': return vs[0]!;
    case 'last': return vs[vs.length - 1]!;
    case 'diff': return w64(vs[vs.length - 1]! - vs[0]!);
    case 'mult': return w64(vs.reduce((a, b) => a * b, 1n));
    case 'squareSum': return w64(vs.reduce((a, b) => a + b * b, 0n));
    default: return javaLong(pct(sorted.map(Number), PCT[name]![0], PCT[name]![1]));
  }
}

// ---- the pipeline, plainly --------------------------------------------------------------
function refScan(startMs: number, endMs: number, iv: number): [number, number] {
  let s = Math.floor(startMs / 1000);
  if (iv > 0) s -= Math.floor(((s * 1000) % iv) / 1000);
  s = Math.max(0, s - (s % 3600));
  let e = Math.floor(endMs / 1000) + 1;
  if (iv > 0) {
    e += Math.floor((iv - ((e * 1000) % iv)) / 1000);
    while (e % 3600 !== 0) e++;
  } else {
    e += 3600 - (e % 3600);
  }
  return [s * 1000, e * 1000];
}

function refDownsample(pts: Pt[], ds: NonNullable<PipelineSpec['downsample']>, scan: [number, number], q: [number, number]): Pt[] {
  const dbl = (xs: Pt[]): number => aggDouble(ds.fn, xs.map((p) => p.v));
  if (ds.all) {
    const inRange = pts.filter((p) => p.t >= q[0] && p.t < q[1]);
    return inRange.length === 0 ? [] : [{ t: q[0], v: dbl(inRange), big: undefined, int: false }];
  }
  const iv = ds.intervalMs;
  const seek = Math.ceil(scan[0] / iv) * iv;
  const buckets = new Map<number, Pt[]>();
  for (const p of pts) if (p.t >= seek) buckets.set(p.t - (p.t % iv), [...(buckets.get(p.t - (p.t % iv)) ?? []), p]);
  if (ds.fill === 'none') return [...buckets].map(([t, xs]) => ({ t, v: dbl(xs), big: undefined, int: false }));
  const out: Pt[] = [];
  for (let t = Math.floor(scan[0] / iv) * iv; t < Math.floor(scan[1] / iv) * iv; t += iv) {
    const xs = buckets.get(t);
    out.push({ t, v: xs !== undefined ? dbl(xs) : ds.fill === 'zero' ? 0 : NaN, big: undefined, int: false });
  }
  return out;
}

function refRate(pts: Pt[], r: NonNullable<PipelineSpec['rate']>): Pt[] {
  const out: Pt[] = [];
  let prev: Pt = { t: 0, v: 0, big: undefined, int: false };
  const cm = r.counterMax === undefined ? LMAX : BigInt(r.counterMax);
  for (const p of pts) {
    const both = prev.int && p.int;
    let d = both ? Number(w64(bigOf(p) - bigOf(prev))) : p.v - prev.v;
    const secs = (p.t - prev.t) / 1000;
    let v: number;
    if (r.counter && d < 0) {
      if (r.dropResets) {
        prev = p;
        continue;
      }
      d = both ? Number(w64(cm - bigOf(prev) + bigOf(p))) : Number(cm) - prev.v + p.v;
      v = d / secs;
      if ((r.resetValue ?? 0) > 0 && v > r.resetValue!) v = 0;
    } else {
      v = d / secs;
    }
    out.push({ t: p.t, v, big: undefined, int: false });
    prev = p;
  }
  return out;
}

interface RefOut { t: number; v: number; big: bigint | undefined; int: boolean }

function refAggregate(all: Pt[][], agg: string, rate: boolean, q: [number, number]): RefOut[] {
  const times = [...new Set(all.flatMap((s) => (rate ? s.slice(1) : s).map((p) => p.t)))].sort((a, b) => a - b);
  const out: RefOut[] = [];
  for (const x of times) {
    if (x < q[0] || x > q[1]) continue;
    // The typing rule: every series' current and look-ahead point must be an integer.
    let allInt = !rate;
    const contrib: Array<{ s: Pt[]; cur: number }> = [];
    for (const s of all) {
      if (s.length === 0) continue;
      let cur = -1; // the last point at or before x (binary search)
      for (let lo = 0, hi = s.length - 1; lo <= hi; ) {
        const mid = (lo + hi) >> 1;
        if (s[mid]!.t <= x) {
          cur = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      if (rate) {
        if (s.length >= 2 && x <= s[s.length - 1]!.t) contrib.push({ s, cur: Math.max(cur, 0) });
        continue;
      }
      if (cur === -1) {
        allInt &&= s[0]!.int;
      } else if (x <= s[s.length - 1]!.t) {
        allInt &&= s[cur]!.int && (cur + 1 >= s.length || s[cur + 1]!.int);
        contrib.push({ s, cur });
      }
    }
    const interp = INTERP[agg]!;
    if (allInt) {
      const vs = contrib.map(({ s, cur }): bigint => {
        const a = s[cur]!;
        if (a.t === x) return bigOf(a);
        const b = s[cur + 1]!;
        if (interp === 'zim') return 0n;
        if (interp === 'max') return LMAX;
        if (interp === 'min') return LMIN;
        if (interp === 'prev') return bigOf(a);
        return w64(bigOf(a) + w64(BigInt(x - a.t) * w64(bigOf(b) - bigOf(a))) / BigInt(b.t - a.t));
      });
      const r = aggLong(agg, vs);
      out.push({ t: x, v: Number(r), big: r, int: true });
    } else {
      const vs = contrib.map(({ s, cur }): number => {
        const a = s[cur]!;
        if (a.t === x || rate) return a.v;
        const b = s[cur + 1]!;
        if (interp === 'zim') return 0;
        if (interp === 'max') return Number.MAX_VALUE;
        if (interp === 'min') return -Number.MAX_VALUE;
        if (interp === 'prev') return a.v;
        return a.v + ((x - a.t) * (b.v - a.v)) / (b.t - a.t);
      });
      out.push({ t: x, v: aggDouble(agg, vs), big: undefined, int: false });
    }
  }
  return out;
}

function reference(series: Pt[][], spec: PipelineSpec): RefOut[][] {
  const ds = spec.downsample;
  const scan = refScan(spec.startMs, spec.endMs, ds !== undefined && !ds.all ? ds.intervalMs : 0);
  const q: [number, number] = [spec.startMs, spec.endMs];
  const prepared = series.map((s) => {
    let p = s.filter((x) => x.t >= scan[0] && x.t < scan[1]);
    if (ds !== undefined) p = refDownsample(p, ds, scan, q);
    if (spec.rate !== undefined) p = refRate(p, spec.rate);
    return p;
  });
  if (spec.aggregator === 'none') return prepared.map((p) => refAggregate([p], 'first', spec.rate !== undefined, q));
  return [refAggregate(prepared, spec.aggregator, spec.rate !== undefined, q)];
}

// ---- random inputs ----------------------------------------------------------------------
const BASE = 1_356_998_400_000;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function randomSeries(rnd: Random, big: boolean): Pt[] {
  const n = rnd.int(30);
  const kind = rnd.int(3); // 0 ints, 1 doubles, 2 mixed
  const pts: Pt[] = [];
  let t = BASE + rnd.int(4) * 3_600_000 + rnd.int(7_200_000);
  for (let i = 0; i < n; i++) {
    t += rnd.chance(0.2) ? 1 + rnd.int(999) : 1000 * (1 + rnd.int(rnd.chance(0.3) ? 3000 : 300));
    const int = kind === 0 || (kind === 2 && rnd.chance(0.5));
    if (big && int) {
      const b = BigInt(rnd.range(-3, 3)) * 2n ** 61n + BigInt(rnd.range(-1000, 1000));
      pts.push({ t, v: Number(b), big: b, int });
    } else {
      const v = int ? rnd.range(-500, 500) : rnd.range(-50_000, 50_000) / 64;
      pts.push({ t, v, big: undefined, int });
    }
  }
  return pts;
}

function randomSpec(rnd: Random, big: boolean): PipelineSpec {
  const startMs = BASE + rnd.int(3) * 3_600_000 + rnd.int(3_600_000);
  const endMs = startMs + rnd.int(4 * 3_600_000);
  const aggregator = rnd.chance(0.1) ? 'none' : AGGS[rnd.int(AGGS.length)]!;
  let downsample: PipelineSpec['downsample'];
  if (!big && rnd.chance(0.5)) {
    const fn = AGGS[rnd.int(AGGS.length)]!;
    const fill = (['none', 'nan', 'null', 'zero'] as const)[rnd.int(4)]!;
    downsample = rnd.chance(0.15)
      ? { intervalMs: 0, all: true, fn, fill, calendar: false }
      : { intervalMs: [1000, 10_000, 60_000, 420_000, 900_000, 3_600_000][rnd.int(6)]!, all: false, fn, fill, calendar: false };
  }
  const rate = !big && rnd.chance(0.3) ? { counter: rnd.chance(0.5), counterMax: rnd.chance(0.5) ? 1000 : undefined, resetValue: rnd.chance(0.3) ? 5 : undefined, dropResets: rnd.chance(0.3) } : undefined;
  return { startMs, endMs, aggregator, downsample, rate };
}

/** Compares without expect() per point (millions of calls would dominate the run time). */
function mismatch(got: OutSeries, i: number, want: RefOut): string | undefined {
  const v = got.values[i]!;
  if (got.ts[i] !== want.t) return `ts ${got.ts[i]} vs ${want.t}`;
  if ((got.isInt[i] === 1) !== want.int) return `isInt ${got.isInt[i]} vs ${want.int} at ${want.t}`;
  if (want.int) {
    const exact = Math.abs(v) > MAX_SAFE ? got.exact?.[i] : BigInt(v);
    return exact === want.big ? undefined : `long ${exact} vs ${want.big} at ${want.t}`;
  }
  if (Number.isNaN(want.v)) return Number.isNaN(v) ? undefined : `${v} vs NaN at ${want.t}`;
  return Math.abs(v - want.v) <= 1e-9 * Math.max(1, Math.abs(want.v)) ? undefined : `${v} vs ${want.v} at ${want.t}`;
}

function check(seed: number, big: boolean): void {
  const rnd = new Random(seed);
  const series = Array.from({ length: 1 + rnd.int(5) }, () => randomSeries(rnd, big));
  const spec = randomSpec(rnd, big);
  const data = series.map((s, i) => seriesOf('m', { id: String(i) }, s.map((p) => [p.t, p.big ?? p.v, p.int] as const)));
  const got = runGroup(data, spec);
  const want = reference(series, spec);
  expect(got.length, `outputs (seed ${seed})`).toBe(want.length);
  got.forEach((g, j) => {
    expect(g.count, `points (seed ${seed}, ${JSON.stringify(spec)})`).toBe(want[j]!.length);
    const bad = want[j]!.map((w, i) => mismatch(g, i, w)).find((m) => m !== undefined);
    expect(bad, `seed ${seed}, ${JSON.stringify(spec)}`).toBeUndefined();
    expect(g.nanAsNull === true).toBe(spec.downsample?.fill === 'null');
  });
}

const SEED = process.env['TEST_SEED'] === undefined ? undefined : Number(process.env['TEST_SEED']);
const seeds = (n: number, from: number): number[] => (SEED !== undefined ? [SEED] : Array.from({ length: n }, (_, i) => from + i));

describe('runGroup equals the plain reference on random series', () => {
  it('downsample, fill, rate and aggregation', () => {
    for (const seed of seeds(600, 1)) check(seed, false);
  });

  it('integers beyond 2^53: exact int64 arithmetic, wrapping as Java longs', () => {
    for (const seed of seeds(300, 10_001)) check(seed, true);
  });
});
