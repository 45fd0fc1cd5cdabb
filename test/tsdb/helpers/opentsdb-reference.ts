/**
 * A slow reference of OpenTSDB's query pipeline (scan bounds, downsample and fill, rate,
 * cross-series aggregation with interpolation, trim), written plainly: point objects, Maps
 * of buckets, BigInt for every long operation, the active window and the look-ahead typing
 * rule evaluated per output timestamp from scratch instead of with an iterator. Used by the
 * pipeline property test (query/pipeline-property.test.ts) and, under the series store of
 * reference-store.ts, by the time-series model test (test/model/tsdb-model.test.ts).
 */

/** One point: ms timestamp, value (as a double), the exact long when an integer, integer or not. */
export interface Pt { t: number; v: number; big: bigint | undefined; int: boolean }

/** A downsample spec (`<interval>-<fn>[-<fill>]`, or `0all-<fn>`). */
export interface RefDownsample { readonly intervalMs: number; readonly all: boolean; readonly fn: string; readonly fill: string }
/** Rate options (counterMax: Long.MAX_VALUE when absent; resetValue: off when absent or 0). */
export interface RefRate { readonly counter: boolean; readonly counterMax?: number | bigint | undefined; readonly resetValue?: number | undefined; readonly dropResets: boolean }
/** One group's query: [startMs, endMs] (inclusive), aggregator ('none' too), downsample, rate. */
export interface RefSpec { readonly startMs: number; readonly endMs: number; readonly aggregator: string; readonly downsample?: RefDownsample | undefined; readonly rate?: RefRate | undefined }

const LMAX = 2n ** 63n - 1n;
const LMIN = -(2n ** 63n);
const w64 = (x: bigint): bigint => BigInt.asIntN(64, x);
const bigOf = (p: Pt): bigint => p.big ?? BigInt(p.v);
const javaLong = (d: number): bigint => (Number.isNaN(d) ? 0n : d >= 2 ** 63 ? LMAX : d <= -(2 ** 63) ? LMIN : BigInt(Math.trunc(d)));

// ---- aggregators, plainly ---------------------------------------------------------------
export const INTERP: Record<string, string> = { sum: 'lerp', avg: 'lerp', min: 'lerp', max: 'lerp', dev: 'lerp', median: 'lerp', diff: 'lerp', mult: 'lerp', p50: 'lerp', p95: 'lerp', ep90r3: 'lerp', ep75r7: 'lerp', zimsum: 'zim', count: 'zim', first: 'zim', last: 'zim', squareSum: 'zim', mimmin: 'max', mimmax: 'min', pfsum: 'prev' };
export const AGGS = Object.keys(INTERP);

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
export function refScan(startMs: number, endMs: number, iv: number): [number, number] {
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

function refDownsample(pts: Pt[], ds: RefDownsample, scan: [number, number], q: [number, number]): Pt[] {
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

function refRate(pts: Pt[], r: RefRate): Pt[] {
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

export interface RefOut { t: number; v: number; big: bigint | undefined; int: boolean }

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

export function reference(series: Pt[][], spec: RefSpec): RefOut[][] {
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
