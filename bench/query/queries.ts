/**
 * The queries of bench/query-bench.ts on the devops-cpu dataset (bench/devops-data.ts), as
 * Horae requests (OpenTSDB /api/query POST JSON and /api/query/last) and as
 * VictoriaMetrics requests (Prometheus API, MetricsQL, `nocache=1`), their answers reduced
 * to one shape (series key → timestamp → value), and the answers expected, computed from
 * the regenerated dataset:
 *
 *   q1       max of one metric for one host over 1 h by 1 m               (1 × 60 points)
 *   q2       avg of one metric over all hosts for 12 h by 1 h, one output  (1 × 12)
 *   q2-host  the same grouped by host                                      (100 × 12)
 *   q3       the last point of every host for one metric                   (100 × 1)
 *   q4       one metric, all hosts, 24 h, 5 m averages, grouped by host    (100 × 288)
 *
 * InfluxDB 1.6 gets the same queries in InfluxQL (`/query?db=opentsdb&epoch=ms`, GROUP BY
 * time(w) buckets [t, t+w) as OpenTSDB's, `fill(none)`); its `mean` over all hosts is the mean
 * of every point, which equals the mean of the per-host means here (every host has the same
 * timestamps).
 *
 * Buckets: Horae (as OpenTSDB) downsamples into [t, t+w) aligned to the epoch and labels a
 * bucket t. A PromQL rollup evaluated at t covers (t−w, t]. With `vmBuckets: 'opentsdb'`
 * (the default) VictoriaMetrics is evaluated at t+w−1 ms, whose window (t−1 ms, t+w−1 ms]
 * holds exactly the points of [t, t+w) (timestamps are whole ms), so both systems answer
 * the same buckets and the answers are compared one to one. With `'prom'` it is evaluated
 * at the aligned t+w (what a Grafana panel sends) and its answer is checked against buckets
 * (t, t+w] instead.
 */
import { METRICS, devopsChunks, hostTags, seriesCount } from '../devops-data.js';
import type { DevopsOptions } from '../devops-data.js';
import type { HttpReq } from './http-client.js';

/** q1–q4 of the query set; c-group and c-filter of bench:cardinality (cardinalityQueries). */
export type QueryId = 'q1' | 'q2' | 'q2-host' | 'q3' | 'q4' | 'c-group' | 'c-filter';
export const QUERY_IDS: readonly QueryId[] = ['q1', 'q2', 'q2-host', 'q3', 'q4'];
export type VmBuckets = 'opentsdb' | 'prom';
type Fn = 'max' | 'avg' | 'last';

/** Series key ('host_7', or '*' for an answer not grouped by host) → timestamp ms → value. */
export type Answer = Map<string, Map<number, number>>;

export interface Window {
  readonly startSec: number;
  readonly widthSec: number;
  readonly count: number;
}

export interface BenchQuery {
  readonly id: QueryId;
  readonly title: string;
  readonly fn: Fn;
  readonly byHost: boolean;
  /** Only host (q1). */
  readonly host?: number;
  /** Downsample buckets (all but q3). */
  readonly window?: Window;
  /** The tag whose value names an answer's series (default hostname; '*' when absent). */
  readonly keyTag?: string;
  readonly horae: HttpReq;
  readonly vm: HttpReq;
  /** InfluxDB 1.x: GET /query with InfluxQL. */
  readonly influx: HttpReq;
  /** The MetricsQL expression (for the report). */
  readonly promql: string;
}

export interface QuerySetOptions {
  readonly metric?: string;
  readonly host?: number;
  readonly vmBuckets: VmBuckets;
}

export function datasetHours(o: DevopsOptions): number {
  return (o.steps * o.intervalSec) / 3600;
}

const sel = (metric: string, host?: string): string => `{__name__=${JSON.stringify(metric)}${host === undefined ? '' : `,hostname=${JSON.stringify(host)}`}}`;
const secs = (ms: number): string => (ms / 1000).toFixed(3);
const hostName = (h: number): string => `host_${h}`;

function vmRange(expr: string, w: Window, b: VmBuckets): HttpReq {
  const shift = b === 'opentsdb' ? 1 : 0;
  const first = (w.startSec + w.widthSec) * 1000 - shift;
  const q = new URLSearchParams({
    query: expr,
    start: secs(first),
    end: secs(first + (w.count - 1) * w.widthSec * 1000),
    step: `${w.widthSec}s`,
    nocache: '1',
  });
  return { method: 'GET', path: `/api/v1/query_range?${q}` };
}

function horaeQuery(w: Window, sub: Record<string, unknown>): HttpReq {
  // end = the last second of the last bucket: exactly `count` buckets whether the end is
  // taken as inclusive or not.
  const body = { start: w.startSec, end: w.startSec + w.count * w.widthSec - 1, queries: [sub] };
  return { method: 'POST', path: '/api/query', body: JSON.stringify(body) };
}

/** The InfluxDB database the OpenTSDB listener writes to (bench/peers/targets.ts). */
export const INFLUX_DB = 'opentsdb';

function influxReq(q: string): HttpReq {
  return { method: 'GET', path: `/query?${new URLSearchParams({ db: INFLUX_DB, epoch: 'ms', q })}` };
}

/** SELECT fn("value") FROM "metric" WHERE … GROUP BY time(w)[, "hostname"] fill(none). */
function influxRange(fn: 'max' | 'mean', metric: string, w: Window, byHost: boolean, host?: string): HttpReq {
  const where = `${host === undefined ? '' : `"hostname"='${host}' AND `}time >= ${w.startSec * 1000}ms AND time < ${(w.startSec + w.count * w.widthSec) * 1000}ms`;
  return influxReq(`SELECT ${fn}("value") FROM ${JSON.stringify(metric)} WHERE ${where} GROUP BY time(${w.widthSec}s)${byHost ? ', "hostname"' : ''} fill(none)`);
}

const BY_HOST = [{ type: 'wildcard', tagk: 'hostname', filter: '*', groupBy: true }];

/** q1 for host `h` (the concurrency run rotates the host). */
export function q1(o: DevopsOptions, opts: QuerySetOptions, h: number): BenchQuery {
  const metric = opts.metric ?? METRICS[0]!;
  const hour = Math.floor(datasetHours(o) / 2);
  const w: Window = { startSec: o.startSec + hour * 3600, widthSec: 60, count: 60 };
  const promql = `max_over_time(${sel(metric, hostName(h))}[1m])`;
  return {
    id: 'q1', title: `max of ${metric} for ${hostName(h)}, 1 h (hour ${hour}) by 1 m`, fn: 'max', byHost: true, host: h, window: w,
    horae: horaeQuery(w, { metric, aggregator: 'max', downsample: '1m-max', tags: { hostname: hostName(h) } }),
    vm: vmRange(promql, w, opts.vmBuckets),
    influx: influxRange('max', metric, w, true, hostName(h)),
    promql,
  };
}

export function querySet(o: DevopsOptions, opts: QuerySetOptions): BenchQuery[] {
  const metric = opts.metric ?? METRICS[0]!;
  const hours = datasetHours(o);
  const q2Hours = Math.max(1, Math.min(12, Math.floor(hours)));
  const w2: Window = { startSec: o.startSec + Math.floor((hours - q2Hours) / 2) * 3600, widthSec: 3600, count: q2Hours };
  const w4: Window = { startSec: o.startSec, widthSec: 300, count: Math.floor((hours * 3600) / 300) };
  const lastSec = o.startSec + (o.steps - 1) * o.intervalSec;
  const avg2 = `avg_over_time(${sel(metric)}[1h])`;
  const avg4 = `avg_over_time(${sel(metric)}[5m])`;
  const last = `last_over_time(${sel(metric)}[1h])`;
  return [
    q1(o, opts, opts.host ?? Math.min(42, o.hosts - 1)),
    {
      id: 'q2', title: `avg of ${metric} over all ${o.hosts} hosts, ${q2Hours} h by 1 h, one series`, fn: 'avg', byHost: false, window: w2,
      horae: horaeQuery(w2, { metric, aggregator: 'avg', downsample: '1h-avg' }),
      vm: vmRange(`avg(${avg2})`, w2, opts.vmBuckets),
      influx: influxRange('mean', metric, w2, false),
      promql: `avg(${avg2})`,
    },
    {
      id: 'q2-host', title: `the same grouped by host (${o.hosts} series)`, fn: 'avg', byHost: true, window: w2,
      horae: horaeQuery(w2, { metric, aggregator: 'avg', downsample: '1h-avg', filters: BY_HOST }),
      vm: vmRange(avg2, w2, opts.vmBuckets),
      influx: influxRange('mean', metric, w2, true),
      promql: avg2,
    },
    {
      id: 'q3', title: `last point of ${metric} of every host`, fn: 'last', byHost: true,
      horae: { method: 'POST', path: '/api/query/last', body: JSON.stringify({ queries: [{ metric, tags: {} }], resolveNames: true }) },
      vm: { method: 'GET', path: `/api/v1/query?${new URLSearchParams({ query: last, time: String(lastSec), nocache: '1' })}` },
      influx: influxReq(`SELECT last("value") FROM ${JSON.stringify(metric)} GROUP BY "hostname"`),
      promql: `${last} at time=${lastSec}`,
    },
    {
      id: 'q4', title: `${metric}, all hosts, ${hours} h by 5 m avg, grouped by host`, fn: 'avg', byHost: true, window: w4,
      horae: horaeQuery(w4, { metric, aggregator: 'avg', downsample: '5m-avg', filters: BY_HOST }),
      vm: vmRange(avg4, w4, opts.vmBuckets),
      influx: influxRange('mean', metric, w4, true),
      promql: avg4,
    },
  ];
}

/**
 * The queries of bench:cardinality over one metric of a dataset of thousands of hosts or
 * more, both over its first hour (answers compared between the systems):
 *
 *   c-group   every host's hourly avg, averaged by region    (9 series × 1 point)
 *   c-filter  hosts host_1000 … host_1999 by a regular expression on hostname (1,000
 *             series of the metric's `hosts`), 10 m avgs        (1,000 × 6)
 */
export function cardinalityQueries(o: DevopsOptions, metric: string = METRICS[0]!): BenchQuery[] {
  if (o.hosts < 2000) throw new Error(`cardinality queries need 2,000 hosts or more (host_1000 … host_1999), not ${o.hosts}`);
  const wg: Window = { startSec: o.startSec, widthSec: 3600, count: 1 };
  const wf: Window = { startSec: o.startSec, widthSec: 600, count: 6 };
  const group = `avg by (region) (avg_over_time(${sel(metric)}[1h]))`;
  const filter = `avg_over_time({__name__=${JSON.stringify(metric)},hostname=~"host_1[0-9]{3}"}[10m])`;
  const where = (w: Window): string => `time >= ${w.startSec * 1000}ms AND time < ${(w.startSec + w.count * w.widthSec) * 1000}ms`;
  return [
    {
      id: 'c-group', title: `avg of ${metric} over all ${o.hosts} hosts, 1 h, by region`, fn: 'avg', byHost: false, keyTag: 'region', window: wg,
      horae: horaeQuery(wg, { metric, aggregator: 'avg', downsample: '1h-avg', filters: [{ type: 'wildcard', tagk: 'region', filter: '*', groupBy: true }] }),
      vm: vmRange(group, wg, 'opentsdb'),
      influx: influxReq(`SELECT mean("value") FROM ${JSON.stringify(metric)} WHERE ${where(wg)} GROUP BY time(3600s), "region" fill(none)`),
      promql: group,
    },
    {
      id: 'c-filter', title: `${metric} of host_1000 … host_1999 (regexp), 1 h by 10 m avg`, fn: 'avg', byHost: true, window: wf,
      horae: horaeQuery(wf, { metric, aggregator: 'avg', downsample: '10m-avg', filters: [{ type: 'regexp', tagk: 'hostname', filter: '^host_1[0-9]{3}$', groupBy: true }] }),
      vm: vmRange(filter, wf, 'opentsdb'),
      influx: influxReq(`SELECT mean("value") FROM ${JSON.stringify(metric)} WHERE "hostname" =~ /^host_1[0-9]{3}$/ AND ${where(wf)} GROUP BY time(600s), "hostname" fill(none)`),
      promql: filter,
    },
  ];
}

// ---------------------------------------------------------------------------------------
// Expected answers

/** One metric of every host, regenerated: values[h * steps + k]. */
export class MetricValues {
  readonly values: Float64Array;

  constructor(readonly o: DevopsOptions, readonly metricIndex: number) {
    const s = seriesCount(o);
    const m = o.metrics;
    this.values = new Float64Array(o.hosts * o.steps);
    for (const c of devopsChunks(o)) {
      for (let j = 0; j < c.n; j++) {
        const i = c.start + j;
        const si = i % s;
        if (si % m !== metricIndex) continue;
        this.values[((si - metricIndex) / m) * o.steps + Math.floor(i / s)] = c.values[j]!;
      }
    }
  }

  /** fn over the points of host h in [aMs, aMs+wMs) ('opentsdb') or (aMs, aMs+wMs] ('prom'); undefined if none. */
  bucket(h: number, fn: 'max' | 'avg', aMs: number, wMs: number, conv: VmBuckets): number | undefined {
    const { startSec, intervalSec, steps } = this.o;
    const t0 = startSec * 1000;
    const iv = intervalSec * 1000;
    // first k with t_k >= aMs (or > aMs), last with t_k < aMs+wMs (or <= )
    let k0 = Math.ceil((aMs - t0) / iv);
    if (conv === 'prom' && t0 + k0 * iv === aMs) k0++;
    let k1 = Math.floor((aMs + wMs - t0) / iv);
    if (conv === 'opentsdb' && t0 + k1 * iv === aMs + wMs) k1--;
    k0 = Math.max(0, k0);
    k1 = Math.min(steps - 1, k1);
    if (k1 < k0) return undefined;
    const base = h * steps;
    let acc = fn === 'max' ? -Infinity : 0;
    for (let k = k0; k <= k1; k++) {
      const v = this.values[base + k]!;
      acc = fn === 'max' ? (v > acc ? v : acc) : acc + v;
    }
    return fn === 'max' ? acc : acc / (k1 - k0 + 1);
  }
}

/** The answer `q` should get, buckets as `conv` (Horae: always 'opentsdb'). */
export function expectedAnswer(q: BenchQuery, mv: MetricValues, conv: VmBuckets): Answer {
  const o = mv.o;
  const out: Answer = new Map();
  if (q.fn === 'last') {
    const ts = (o.startSec + (o.steps - 1) * o.intervalSec) * 1000;
    for (let h = 0; h < o.hosts; h++) out.set(hostName(h), new Map([[ts, mv.values[h * o.steps + o.steps - 1]!]]));
    return out;
  }
  const w = q.window!;
  const hosts = q.host === undefined ? Array.from({ length: o.hosts }, (_, h) => h) : [q.host];
  const perHost = new Map<number, Map<number, number>>();
  for (const h of hosts) {
    const m = new Map<number, number>();
    for (let b = 0; b < w.count; b++) {
      const a = (w.startSec + b * w.widthSec) * 1000;
      const v = mv.bucket(h, q.fn, a, w.widthSec * 1000, conv);
      if (v !== undefined) m.set(a, v);
    }
    perHost.set(h, m);
  }
  if (q.byHost) {
    for (const [h, m] of perHost) out.set(hostName(h), m);
    return out;
  }
  // avg across hosts of the per-host bucket averages (OpenTSDB: downsample, then aggregate)
  const sum = new Map<number, { s: number; n: number }>();
  for (const m of perHost.values()) {
    for (const [t, v] of m) {
      const e = sum.get(t) ?? { s: 0, n: 0 };
      e.s += v;
      e.n++;
      sum.set(t, e);
    }
  }
  out.set('*', new Map([...sum].map(([t, e]) => [t, e.s / e.n])));
  return out;
}

// ---------------------------------------------------------------------------------------
// Answers as returned

interface OtsdbSeries {
  readonly tags?: Record<string, string>;
  readonly dps?: Record<string, number | null> | Array<[number, number | null]>;
  readonly statsSummary?: Record<string, number>;
}

/** Horae's /api/query (dps keyed by seconds) or /api/query/last answer. */
export function horaeAnswer(q: BenchQuery, body: Buffer): { answer: Answer; summary?: Record<string, number> } {
  const j = JSON.parse(body.toString('utf8')) as unknown;
  if (!Array.isArray(j)) throw new Error(`Horae ${q.id}: not an array: ${body.toString('utf8', 0, 300)}`);
  const out: Answer = new Map();
  let summary: Record<string, number> | undefined;
  if (q.fn === 'last') {
    for (const e of j as Array<{ tags?: Record<string, string>; timestamp: number; value: string }>) {
      out.set(e.tags?.['hostname'] ?? '*', new Map([[e.timestamp, Number(e.value)]]));
    }
    return { answer: out };
  }
  for (const s of j as OtsdbSeries[]) {
    if (s.statsSummary !== undefined) {
      summary = s.statsSummary;
      continue;
    }
    const m = new Map<number, number>();
    const dps = s.dps ?? {};
    const entries: Array<[number, number | null]> = Array.isArray(dps) ? dps : Object.entries(dps).map(([t, v]) => [Number(t), v]);
    for (const [t, v] of entries) if (v !== null) m.set(t < 1e11 ? t * 1000 : t, v);
    const key = s.tags?.[q.keyTag ?? 'hostname'] ?? '*';
    if (out.has(key)) throw new Error(`Horae ${q.id}: two series for ${key}`);
    out.set(key, m);
  }
  return { answer: out, ...(summary === undefined ? {} : { summary }) };
}

interface PromBody {
  readonly status: string;
  readonly error?: string;
  readonly data?: {
    readonly resultType: string;
    readonly result: Array<{ metric: Record<string, string>; values?: Array<[number, string]>; value?: [number, string] }>;
  };
}

/** VictoriaMetrics' answer, rollup timestamps mapped back to the bucket start they stand for. */
export function vmAnswer(q: BenchQuery, body: Buffer, conv: VmBuckets): Answer {
  const j = JSON.parse(body.toString('utf8')) as PromBody;
  if (j.status !== 'success' || j.data === undefined) throw new Error(`VictoriaMetrics ${q.id}: ${body.toString('utf8', 0, 300)}`);
  const out: Answer = new Map();
  const back = q.window === undefined ? 0 : q.window.widthSec * 1000 - (conv === 'opentsdb' ? 1 : 0);
  for (const r of j.data.result) {
    const key = r.metric[q.keyTag ?? 'hostname'] ?? '*';
    const m = new Map<number, number>();
    const pts = r.values ?? (r.value === undefined ? [] : [r.value]);
    for (const [t, v] of pts) m.set(Math.round(t * 1000) - back, Number(v));
    if (out.has(key)) throw new Error(`VictoriaMetrics ${q.id}: two series for ${key}`);
    out.set(key, m);
  }
  return out;
}

interface InfluxBody {
  readonly results?: Array<{ error?: string; series?: Array<{ tags?: Record<string, string>; values?: Array<[number, number | null]> }> }>;
  readonly error?: string;
}

/** InfluxDB's /query answer (epoch=ms): one series per hostname group, or one without tags. */
export function influxAnswer(q: BenchQuery, body: Buffer): Answer {
  const j = JSON.parse(body.toString('utf8')) as InfluxBody;
  const r = j.results?.[0];
  if (r === undefined || j.error !== undefined || r.error !== undefined) throw new Error(`InfluxDB ${q.id}: ${body.toString('utf8', 0, 300)}`);
  const out: Answer = new Map();
  for (const s of r.series ?? []) {
    const key = s.tags?.[q.keyTag ?? 'hostname'] ?? '*';
    const m = new Map<number, number>();
    for (const [t, v] of s.values ?? []) if (v !== null) m.set(t, v);
    if (out.has(key)) throw new Error(`InfluxDB ${q.id}: two series for ${key}`);
    out.set(key, m);
  }
  return out;
}

export function answerPoints(a: Answer): number {
  let n = 0;
  for (const m of a.values()) n += m.size;
  return n;
}

export interface Check {
  readonly ok: boolean;
  readonly series: number;
  readonly points: number;
  readonly expectedSeries: number;
  readonly expectedPoints: number;
  readonly missingSeries: number;
  readonly extraSeries: number;
  readonly missingPoints: number;
  readonly extraPoints: number;
  readonly wrongValues: number;
  readonly maxAbsDiff: number;
  readonly samples: readonly string[];
}

/** Compares an answer with the expected one: same series, same timestamps, values within a relative `tol`. */
export function compare(got: Answer, want: Answer, tol = 1e-9): Check {
  let missingSeries = 0;
  let extraSeries = 0;
  let missingPoints = 0;
  let extraPoints = 0;
  let wrongValues = 0;
  let maxAbsDiff = 0;
  const samples: string[] = [];
  const note = (s: string): void => void (samples.length < 6 && samples.push(s));
  for (const [k, wm] of want) {
    const gm = got.get(k);
    if (gm === undefined) {
      missingSeries++;
      missingPoints += wm.size;
      note(`series ${k} missing`);
      continue;
    }
    for (const [t, v] of wm) {
      const g = gm.get(t);
      if (g === undefined) {
        missingPoints++;
        note(`${k} @${new Date(t).toISOString()}: missing (want ${v})`);
        continue;
      }
      const d = Math.abs(g - v);
      maxAbsDiff = Math.max(maxAbsDiff, d);
      if (!(d <= tol * Math.max(1, Math.abs(v)))) {
        wrongValues++;
        note(`${k} @${new Date(t).toISOString()}: got ${g}, want ${v}`);
      }
    }
    for (const t of gm.keys()) {
      if (!wm.has(t)) {
        extraPoints++;
        note(`${k} @${new Date(t).toISOString()}: unexpected point ${gm.get(t)}`);
      }
    }
  }
  for (const k of got.keys()) {
    if (!want.has(k)) {
      extraSeries++;
      extraPoints += got.get(k)!.size;
      note(`unexpected series ${k}`);
    }
  }
  return {
    ok: missingSeries + extraSeries + missingPoints + extraPoints + wrongValues === 0,
    series: got.size,
    points: answerPoints(got),
    expectedSeries: want.size,
    expectedPoints: answerPoints(want),
    missingSeries, extraSeries, missingPoints, extraPoints, wrongValues, maxAbsDiff, samples,
  };
}

/** The tags of host h (for the report). */
export function hostTagText(h: number, o: DevopsOptions): string {
  return hostTags(h, o.seed).map(([k, v]) => `${k}=${v}`).join(' ');
}
