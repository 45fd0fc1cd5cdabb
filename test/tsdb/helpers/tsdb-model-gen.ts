/**
 * What the time-series model test (tsdb-model.ts) sends: seeded random points (late ones,
 * duplicate timestamps, integers and floats, s and ms timestamps) with their text in each
 * protocol, and random queries (aggregators incl. none, downsampling with fill policies,
 * literal/wildcard/regexp/group-by filters, rate) in OpenTSDB's JSON and `m=` forms, each
 * with the reference query it means.
 */
import { Random } from '../../../core/util/random.js';
import type { Pt, RefDownsample, RefRate } from './opentsdb-reference.js';
import type { FilterType, RefFilter, RefQuery, Tags } from './reference-store.js';

export interface GenPoint {
  readonly metric: string;
  readonly tags: Tags;
  /** The point as the reference stores it. */
  readonly pt: Pt;
  /** The timestamp as sent: seconds when the point is on a whole second and chose to. */
  readonly tsText: string;
  /** The value as sent in text protocols (telnet, import, JSON): no '.' or 'e' means an integer. */
  readonly valueText: string;
}

export interface GenQuery {
  readonly ref: RefQuery;
  /** POST /api/query body. */
  readonly json: string;
  /** GET /api/query path with `m=`, when the query has that form (no regexp with '|'). */
  readonly get: string | undefined;
  readonly msResolution: boolean;
  readonly arrays: boolean;
}

const HOSTS = ['web01', 'web02', 'db1', 'Db2', 'cache-3'];
const DCS = ['east', 'west'];
const CORES = ['0', '1', '2'];
const GROUP_AGGS = ['sum', 'avg', 'min', 'max', 'count', 'zimsum', 'mimmin', 'mimmax', 'dev', 'median', 'p50', 'p95', 'ep90r3', 'ep75r7', 'pfsum', 'squareSum', 'mult', 'none'];
const DS_FNS = ['avg', 'sum', 'min', 'max', 'count', 'dev', 'first', 'last', 'median', 'p95', 'zimsum', 'mimmax', 'diff'];
const INTERVALS: Array<[string, number]> = [['1s', 1000], ['10s', 10_000], ['30s', 30_000], ['1m', 60_000], ['5m', 300_000], ['7m', 420_000], ['15m', 900_000], ['1h', 3_600_000], ['90s', 90_000]];
const FILLS = ['none', 'nan', 'null', 'zero'];
const HOUR = 3_600_000;

/** The series of a run (metric → tag sets), chosen by the seed. */
export class World {
  readonly r: Random;
  readonly metrics = ['sys.cpu.user', 'm.net', 'disk_io'];
  readonly series: Array<{ metric: string; tags: Tags }> = [];
  private readonly many: boolean;

  /**
   * `manySeries`: 150 to 250 series a metric instead of 2 to 6, most hosts numbered
   * (`web01.17`): more series than the small caches of a test hold; no integers near 2^40.
   */
  constructor(seed: number, manySeries = false) {
    this.r = new Random(seed);
    this.many = manySeries;
    for (const metric of this.metrics) {
      const seen = new Set<string>();
      const n = manySeries ? 150 + this.r.int(101) : 2 + this.r.int(5);
      for (let i = 0; i < n; i++) {
        const host = this.pick(HOSTS);
        const tags: Record<string, string> = { host: manySeries && this.r.chance(0.8) ? `${host}.${this.r.int(40)}` : host };
        if (this.r.chance(0.7)) tags.dc = this.pick(DCS);
        if (this.r.chance(0.35)) tags.core = this.pick(CORES);
        const key = JSON.stringify(Object.entries(tags).sort());
        if (!seen.has(key)) {
          seen.add(key);
          this.series.push({ metric, tags });
        }
      }
    }
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.r.int(xs.length)]!;
  }

  /**
   * A batch of points around `nowMs`: mostly recent, some hours late, a few ahead; on a
   * duplicate timestamp (also a second written once in s and once in ms) now and then.
   */
  points(nowMs: number, n: number, existing: (metric: string, tags: Tags) => readonly Pt[]): GenPoint[] {
    const out: GenPoint[] = [];
    const seriesHere = this.r.chance(0.5) ? [this.pick(this.series)] : this.series.filter(() => this.r.chance(0.5));
    if (seriesHere.length === 0) seriesHere.push(this.pick(this.series));
    for (let i = 0; i < n; i++) {
      const s = this.pick(seriesHere);
      const r = this.r;
      let t: number;
      const old = existing(s.metric, s.tags);
      const recentOut = out.filter((p) => p.metric === s.metric && p.tags === s.tags);
      if (r.chance(0.15) && (old.length > 0 || recentOut.length > 0)) {
        t = r.chance(0.5) && recentOut.length > 0 ? this.pick(recentOut).pt.t : this.pick(old.length > 0 ? old : recentOut.map((p) => p.pt)).t;
      } else {
        const late = r.chance(0.12) ? HOUR + r.int(6 * HOUR) : r.chance(0.05) ? -r.int(20 * 60_000) : r.int(10 * 60_000);
        t = nowMs - late;
        if (r.chance(0.6)) t -= t % 1000;
        if (r.chance(0.05)) t -= t % HOUR;
      }
      const valueText = this.valueText();
      out.push({ metric: s.metric, tags: s.tags, pt: ptOf(t, valueText), tsText: t % 1000 === 0 && r.chance(0.6) ? String(t / 1000) : String(t), valueText });
    }
    return out;
  }

  private valueText(): string {
    const r = this.r;
    const k = r.int(10);
    if (k < 4) return String(r.range(-1000, 1000));
    // Not with many series: summed over hundreds, values near 2^40 cancel and the sum
    // depends on the order of the series beyond the checks' 1e-9.
    if (k < 5) return String((r.chance(0.5) ? -1 : 1) * ((this.many ? 0 : 2 ** 40) + r.int(1_000_000)));
    if (k < 6) return String(r.range(0, 50)) + (r.chance(0.5) ? '.0' : '.5');
    if (k < 8) return (r.range(-100_000, 100_000) / 100).toFixed(2);
    const v = (r.next() - 0.3) * 10 ** r.range(0, 5);
    const s = String(v);
    return /[.e]/.test(s) ? s : `${s}.0`;
  }

  /** A random /api/query; `minStartMs` (an hour's start) moves its window past a metric's expired hours. */
  query(nowMs: number, minStartMs?: (metric: string) => number): GenQuery {
    const r = this.r;
    let startMs = nowMs - r.int(7 * HOUR) - r.int(1000);
    if (r.chance(0.2)) startMs -= startMs % (r.chance(0.5) ? HOUR : 60_000);
    let endMs = startMs + (r.chance(0.1) ? 0 : r.int(r.chance(0.5) ? HOUR : 6 * HOUR));
    if (r.chance(0.15)) endMs -= endMs % 60_000;
    // The last second of an hour: the scan window then takes the next hour too.
    if (r.chance(0.06)) endMs += HOUR - (endMs % HOUR) - 1 - r.int(1000);
    if (endMs < startMs) endMs = startMs;
    const metric = r.chance(0.03) ? 'no.such.metric' : this.pick(this.metrics);
    const aggregator = this.pick(GROUP_AGGS);
    let downsample: RefDownsample | undefined;
    let dsText: string | undefined;
    if (r.chance(0.5)) {
      const fn = this.pick(DS_FNS);
      const fill = r.chance(0.4) ? 'none' : this.pick(FILLS);
      const withFill = fill !== 'none' || r.chance(0.5);
      if (r.chance(0.1)) {
        downsample = { intervalMs: 0, all: true, fn, fill };
        dsText = `0all-${fn}${withFill ? `-${fill}` : ''}`;
      } else {
        const [text, ms] = this.pick(INTERVALS);
        downsample = { intervalMs: ms, all: false, fn, fill };
        dsText = `${text}-${fn}${withFill ? `-${fill}` : ''}`;
      }
    }
    let rate: RefRate | undefined;
    if (r.chance(0.25)) {
      const counter = r.chance(0.5);
      rate = counter
        ? { counter, counterMax: r.chance(0.5) ? 1_000_000 : undefined, resetValue: r.chance(0.3) ? 50 : undefined, dropResets: r.chance(0.3) }
        : { counter: false, dropResets: false };
    }
    // Past expired hours; an interval that does not divide the hour aligns the scan's start
    // down into the hour before.
    const floor = (minStartMs?.(metric) ?? -Infinity) + (downsample !== undefined && !downsample.all && HOUR % downsample.intervalMs !== 0 ? HOUR : 0);
    if (startMs < floor) {
      endMs += floor - startMs;
      startMs = floor;
    }
    const filters = this.filters();
    const ref: RefQuery = { startMs, endMs, metric, aggregator, filters: filters.map((f) => f.ref), downsample, rate };
    const msResolution = r.chance(0.7);
    const arrays = r.chance(0.3);
    return { ref, json: queryJson(ref, dsText, filters, msResolution), get: queryGet(ref, dsText, filters, msResolution, arrays), msResolution, arrays };
  }

  private filters(): Array<{ ref: RefFilter; legacy: boolean }> {
    const r = this.r;
    const out: Array<{ ref: RefFilter; legacy: boolean }> = [];
    const n = r.int(3);
    for (let i = 0; i < n; i++) {
      const tagk = r.chance(0.02) ? 'rack' : this.pick(['host', 'host', 'dc', 'core']);
      const values = tagk === 'host' ? HOSTS : tagk === 'dc' ? DCS : CORES;
      const groupBy = r.chance(0.5);
      const k = r.int(12);
      const lit = (): string => (r.chance(0.05) ? 'nohost' : this.pick(values));
      let type: FilterType;
      let filter: string;
      if (k < 4) [type, filter] = ['literal_or', r.chance(0.5) ? lit() : `${lit()}|${lit()}`];
      else if (k < 5) [type, filter] = ['iliteral_or', lit().toUpperCase()];
      else if (k < 6) [type, filter] = ['not_literal_or', lit()];
      else if (k < 9) [type, filter] = ['wildcard', this.pick(['*', 'web*', '*1', '*b*', 'D*', 'e*t', '*a*e*'])];
      else if (k < 10) [type, filter] = ['iwildcard', this.pick(['d*', '*B*', 'WEB0*'])];
      else [type, filter] = ['regexp', this.pick(['^web', '[12]$', 'b', '^(db|Db)', 'e.s', '^.$'])];
      out.push({ ref: { type, tagk, filter, groupBy }, legacy: false });
    }
    // The legacy `tags` map instead of `filters` (not both: the later key wins): every entry
    // group-by, one per tag key; `*` a wildcard, other globs case-insensitive.
    const keys = new Set(out.map((f) => f.ref.tagk));
    if (out.length > 0 && keys.size === out.length && out.every((f) => f.ref.groupBy && (f.ref.type === 'literal_or' || f.ref.type === 'wildcard')) && r.chance(0.6)) {
      return out.map(({ ref: f }) => ({ ref: f.type === 'wildcard' && f.filter !== '*' ? { ...f, type: 'iwildcard' } : f, legacy: true }));
    }
    return out;
  }
}

/** The reference point of a value text at `t`: integers exactly (BigInt), others as doubles. */
export function ptOf(t: number, valueText: string): Pt {
  const int = /^-?\d+$/.test(valueText);
  return int ? { t, v: Number(valueText), big: BigInt(valueText), int } : { t, v: Number(valueText), big: undefined, int };
}

function rateJson(rate: RefRate | undefined): string {
  if (rate === undefined) return '';
  const o: Record<string, unknown> = { counter: rate.counter, dropResets: rate.dropResets };
  if (rate.counterMax !== undefined) o.counterMax = Number(rate.counterMax);
  if (rate.resetValue !== undefined) o.resetValue = rate.resetValue;
  return `,"rate":true,"rateOptions":${JSON.stringify(o)}`;
}

function queryJson(q: RefQuery, ds: string | undefined, filters: ReadonlyArray<{ ref: RefFilter; legacy: boolean }>, ms: boolean): string {
  const legacy = filters.filter((f) => f.legacy);
  const modern = filters.filter((f) => !f.legacy).map((f) => f.ref);
  let sub = `{"metric":${JSON.stringify(q.metric)},"aggregator":"${q.aggregator}"`;
  if (ds !== undefined) sub += `,"downsample":"${ds}"`;
  sub += rateJson(q.rate);
  if (legacy.length > 0) sub += `,"tags":${JSON.stringify(Object.fromEntries(legacy.map((f) => [f.ref.tagk, f.ref.filter])))}`;
  if (modern.length > 0) sub += `,"filters":${JSON.stringify(modern.map((f) => ({ type: f.type, tagk: f.tagk, filter: f.filter, groupBy: f.groupBy })))}`;
  return `{"start":${q.startMs},"end":${q.endMs}${ms ? ',"msResolution":true' : ''},"queries":[${sub}}]}`;
}

function queryGet(q: RefQuery, ds: string | undefined, filters: ReadonlyArray<{ ref: RefFilter; legacy: boolean }>, ms: boolean, arrays: boolean): string | undefined {
  if (filters.some((f) => /[|{},=()]/.test(f.ref.filter) && f.ref.type === 'regexp')) return undefined;
  const fmt = (f: RefFilter): string => `${f.tagk}=${f.type}(${f.filter})`;
  const group = filters.filter((f) => f.ref.groupBy).map((f) => fmt(f.ref));
  const other = filters.filter((f) => !f.ref.groupBy).map((f) => fmt(f.ref));
  let m = `${q.aggregator}:`;
  if (ds !== undefined) m += `${ds}:`;
  if (q.rate !== undefined) {
    const rt = q.rate;
    m += !rt.counter ? 'rate:' : `rate{${rt.dropResets ? 'dropcounter' : 'counter'},${rt.counterMax ?? ''},${rt.resetValue ?? ''}}:`;
  }
  m += q.metric;
  if (group.length > 0 || other.length > 0) m += `{${group.join(',')}}`;
  if (other.length > 0) m += `{${other.join(',')}}`;
  return `/api/query?start=${q.startMs}&end=${q.endMs}${ms ? '&ms=true' : ''}${arrays ? '&arrays' : ''}&m=${encodeURIComponent(m)}`;
}
