/**
 * A plain in-memory OpenTSDB for the time-series model test (test/model/tsdb-model.test.ts):
 * a map of series → (ms timestamp → value) where the last write of a timestamp wins, the
 * names ever written, and OpenTSDB's semantics on top — tag filters, grouping and the
 * tags/aggregateTags of outputs (OpenTSDB's TsdbQuery and SpanGroup), the pipeline of
 * opentsdb-reference.ts per group, delete queries (whole hour rows of the scan window),
 * the last point (with and without a back-scan), lookup and suggest. Slow on purpose:
 * every answer is computed from scratch from the points.
 */
import { refScan, reference } from './opentsdb-reference.js';
import type { Pt, RefDownsample, RefOut, RefRate } from './opentsdb-reference.js';

export type Tags = Readonly<Record<string, string>>;

/** The filter types the model uses (OpenTSDB's TagVFilter built-ins). */
export type FilterType = 'literal_or' | 'iliteral_or' | 'not_literal_or' | 'wildcard' | 'iwildcard' | 'regexp';

export interface RefFilter {
  readonly type: FilterType;
  readonly tagk: string;
  readonly filter: string;
  readonly groupBy: boolean;
}

export interface RefQuery {
  readonly startMs: number;
  /** Inclusive. */
  readonly endMs: number;
  readonly metric: string;
  readonly aggregator: string;
  readonly filters: readonly RefFilter[];
  readonly downsample?: RefDownsample | undefined;
  readonly rate?: RefRate | undefined;
}

export interface RefSeriesOut {
  readonly metric: string;
  readonly tags: Tags;
  /** Sorted. */
  readonly aggregateTags: readonly string[];
  readonly dps: readonly RefOut[];
}

/** A query the reference refuses: an unknown metric or tag key. */
export interface RefError {
  readonly error: string;
  /** An empty answer is right too (an unknown tag key beside a literal that matches nothing). */
  readonly orNothing?: boolean;
}

export interface RefLast {
  readonly metric: string;
  readonly tags: Tags;
  readonly point: Pt;
}

interface Series {
  readonly metric: string;
  readonly tags: Tags;
  readonly points: Map<number, Pt>;
}

/** The series key: metric and tags in key order. */
export function seriesKey(metric: string, tags: Tags): string {
  return `${metric}{${Object.keys(tags).sort().map((k) => `${k}=${tags[k]}`).join(',')}}`;
}

/**
 * OpenTSDB's wildcard (TagVWildcardFilter): only stars match anything; a leading `*` makes
 * the value end with the last part, a trailing one start with the first; otherwise the parts
 * are looked for in order from a position that moves by each part's length, not past the
 * match, so `e*t` matches `west` (not anchored).
 */
function globMatch(pattern: string, v: string): boolean {
  const parts = pattern.split('*').filter((p) => p !== '');
  if (parts.length === 0) return true;
  const postfix = pattern.startsWith('*');
  const prefix = pattern.endsWith('*');
  if (postfix && !prefix && !v.endsWith(parts[parts.length - 1]!)) return false;
  if (prefix && !postfix && !v.startsWith(parts[0]!)) return false;
  let at = 0;
  for (const p of parts) {
    if (v.indexOf(p, at) < 0) return false;
    at += p.length;
  }
  return true;
}

/** Does one filter match these tags? Every filter requires its tag key (OpenTSDB's row-key regex). */
export function filterMatches(f: RefFilter, tags: Tags): boolean {
  const v = tags[f.tagk];
  if (v === undefined) return false;
  const words = f.filter.split('|');
  switch (f.type) {
    case 'literal_or': return words.includes(v);
    case 'iliteral_or': return words.some((w) => w.toLowerCase() === v.toLowerCase());
    case 'not_literal_or': return !words.includes(v);
    case 'wildcard': return globMatch(f.filter, v);
    case 'iwildcard': return globMatch(f.filter.toLowerCase(), v.toLowerCase());
    case 'regexp': return new RegExp(f.filter).test(v);
  }
}

/** SpanGroup#computeTags: tags equal in every series that has the key; the other keys aggregated. */
export function groupTags(all: readonly Tags[]): { tags: Tags; aggregateTags: string[] } {
  const values = new Map<string, Set<string>>();
  for (const t of all) for (const [k, v] of Object.entries(t)) values.set(k, (values.get(k) ?? new Set()).add(v));
  const tags: Record<string, string> = {};
  const aggregateTags: string[] = [];
  for (const k of [...values.keys()].sort()) {
    const vs = values.get(k)!;
    if (vs.size === 1) tags[k] = [...vs][0]!;
    else aggregateTags.push(k);
  }
  return { tags, aggregateTags };
}

export class ReferenceStore {
  private readonly series = new Map<string, Series>();
  /** Every name ever written, by kind (UIDs are never taken back). */
  readonly names = { metric: new Set<string>(), tagk: new Set<string>(), tagv: new Set<string>() };

  /** Stores a point; a point at a timestamp the series has replaces it (last write wins). */
  put(metric: string, tags: Tags, p: Pt): void {
    const key = seriesKey(metric, tags);
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = { metric, tags: { ...tags }, points: new Map() }));
    s.points.set(p.t, p);
    this.names.metric.add(metric);
    for (const [k, v] of Object.entries(tags)) {
      this.names.tagk.add(k);
      this.names.tagv.add(v);
    }
  }

  /**
   * /api/uid/rename of a name never used to one never used: every series carrying the old
   * name now carries the new one (data rows keep their UIDs); the old name is free again.
   */
  rename(kind: 'metric' | 'tagk' | 'tagv', from: string, to: string): void {
    const all = [...this.series.values()];
    this.series.clear();
    for (const s of all) {
      const metric = kind === 'metric' && s.metric === from ? to : s.metric;
      const tags = Object.fromEntries(Object.entries(s.tags).map(([k, v]) => [kind === 'tagk' && k === from ? to : k, kind === 'tagv' && v === from ? to : v]));
      this.series.set(seriesKey(metric, tags), { metric, tags, points: s.points });
    }
    this.names[kind].delete(from);
    this.names[kind].add(to);
  }

  /**
   * /api/admin/tsdb/delete_series: a bare metric goes whole, with its name (a new write gets
   * a new UID); `metric{filters}` removes the matching series, points and index rows (a new
   * write brings the series back). The filters match as a query's do.
   */
  deleteSeries(metric: string, filters: readonly RefFilter[]): void {
    for (const [k, s] of [...this.series]) {
      if (s.metric !== metric) continue;
      if (filters.length === 0 || filters.every((f) => filterMatches(f, s.tags))) this.series.delete(k);
    }
    if (filters.length === 0) this.names.metric.delete(metric);
  }

  /** The points of a series in time order (for messages). */
  points(metric: string, tags: Tags): Pt[] {
    const s = this.series.get(seriesKey(metric, tags));
    return s === undefined ? [] : [...s.points.values()].sort((a, b) => a.t - b.t);
  }

  /** Every series (ever written) in key order. */
  allSeries(): Array<{ metric: string; tags: Tags; points: Pt[] }> {
    return [...this.series.keys()].sort().map((k) => {
      const s = this.series.get(k)!;
      return { metric: s.metric, tags: s.tags, points: this.points(s.metric, s.tags) };
    });
  }

  /**
   * An unknown metric or filter tag key fails a query; unknown literal values match nothing.
   * Beside a literal_or none of whose values exists, an unknown tag key may fail the query or
   * the query may match nothing (which is seen first is the planner's business).
   */
  private unknown(q: { metric: string; filters: readonly RefFilter[] }): RefError | undefined {
    if (!this.names.metric.has(q.metric)) return { error: `unknown metric ${q.metric}` };
    const k = q.filters.find((f) => !this.names.tagk.has(f.tagk));
    return k === undefined ? undefined : { error: `unknown tag key ${k.tagk}`, orNothing: this.emptyLiteral(q.filters) };
  }

  /** A literal_or none of whose values was ever written (it matches nothing). */
  private emptyLiteral(filters: readonly RefFilter[]): boolean {
    return filters.some((f) => f.type === 'literal_or' && f.filter.split('|').every((v) => !this.names.tagv.has(v)));
  }

  private scanOf(q: RefQuery): [number, number] {
    const ds = q.downsample;
    return refScan(q.startMs, q.endMs, ds !== undefined && !ds.all ? ds.intervalMs : 0);
  }

  /**
   * The series a query reads: its metric, its filters matching, a point in the scan window.
   * The literal_or filters of one tag key go into the row-key regex together, so they match
   * the union of their values (OpenTSDB's code; its docs say the intersection); the other
   * filters are checked one by one after the scan.
   */
  private matched(q: RefQuery): Series[] {
    const [from, to] = this.scanOf(q);
    const literals = new Map<string, string[]>();
    for (const f of q.filters) if (f.type === 'literal_or') literals.set(f.tagk, [...(literals.get(f.tagk) ?? []), ...f.filter.split('|')]);
    if (this.emptyLiteral(q.filters)) return [];
    const others = q.filters.filter((f) => f.type !== 'literal_or');
    const passes = (tags: Tags): boolean =>
      [...literals].every(([k, vs]) => tags[k] !== undefined && vs.includes(tags[k]!)) && others.every((f) => filterMatches(f, tags));
    return [...this.series.keys()].sort().map((k) => this.series.get(k)!).filter((s) =>
      s.metric === q.metric && passes(s.tags) && [...s.points.keys()].some((t) => t >= from && t < to));
  }

  /** /api/query for one sub-query: outputs in no particular order (compare by tags). */
  query(q: RefQuery): RefSeriesOut[] | RefError {
    const bad = this.unknown(q);
    if (bad !== undefined) return bad;
    const [from, to] = this.scanOf(q);
    const spec = { startMs: q.startMs, endMs: q.endMs, aggregator: q.aggregator, downsample: q.downsample, rate: q.rate };
    const inWindow = (s: Series): Pt[] => [...s.points.values()].filter((p) => p.t >= from && p.t < to).sort((a, b) => a.t - b.t);
    const matched = this.matched(q);
    if (q.aggregator === 'none') {
      return matched.map((s) => ({ metric: s.metric, tags: s.tags, aggregateTags: [], dps: reference([inWindow(s)], spec)[0]! }));
    }
    const groupKeys = [...new Set(q.filters.filter((f) => f.groupBy).map((f) => f.tagk))].sort();
    const groups = new Map<string, Series[]>();
    for (const s of matched) {
      if (groupKeys.some((k) => s.tags[k] === undefined)) continue;
      const g = JSON.stringify(groupKeys.map((k) => s.tags[k]));
      groups.set(g, [...(groups.get(g) ?? []), s]);
    }
    return [...groups.values()].map((members) => ({
      metric: q.metric,
      ...groupTags(members.map((m) => m.tags)),
      dps: reference(members.map(inWindow), spec)[0]!,
    }));
  }

  /** A delete query: its answer, then every hour row of the scan window of each matched series goes. */
  delete(q: RefQuery): RefSeriesOut[] | RefError {
    const answer = this.query(q);
    if ('error' in answer) return answer;
    const [from, to] = this.scanOf(q);
    for (const s of this.matched(q)) for (const t of [...s.points.keys()]) if (t >= from && t < to) s.points.delete(t);
    return answer;
  }

  /**
   * /api/query/last for metric + tags: each series of the metric whose tags include these,
   * with the newest point of its newest hour row up to the hour of `nowMs` (OpenTSDB reads
   * the current hour and back, never a later one); without a back-scan however old, with
   * one from the `backScan` hours before the current one. Series without one are left out.
   */
  last(metric: string, tags: Tags, backScan: number, nowMs: number): RefLast[] {
    const hour = nowMs - (nowMs % 3_600_000);
    const [from, to] = [backScan > 0 ? hour - backScan * 3_600_000 : -Infinity, hour + 3_600_000];
    const out: RefLast[] = [];
    for (const s of this.series.values()) {
      if (s.metric !== metric || Object.entries(tags).some(([k, v]) => s.tags[k] !== v)) continue;
      const pts = [...s.points.values()].filter((p) => p.t >= from && p.t < to);
      if (backScan > 0) {
        // The newest non-empty hour row, then its last point.
        const newestHour = Math.max(...pts.map((p) => p.t - (p.t % 3_600_000)));
        pts.splice(0, pts.length, ...pts.filter((p) => p.t - (p.t % 3_600_000) === newestHour));
      }
      if (pts.length === 0) continue;
      out.push({ metric, tags: s.tags, point: pts.reduce((a, b) => (b.t > a.t ? b : a)) });
    }
    return out;
  }

  /**
   * /api/search/lookup: series ever written of `metric` (any with '*'); values of one key
   * ORed, keys ANDed, `*` any value of the key.
   */
  lookup(metric: string, patterns: ReadonlyArray<{ key: string; value: string }>): Array<{ metric: string; tags: Tags }> {
    const byKey = new Map<string, string[]>();
    for (const p of patterns) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p.value]);
    return [...this.series.values()]
      .filter((s) => metric === '*' || s.metric === metric)
      .filter((s) => [...byKey].every(([k, vs]) => s.tags[k] !== undefined && vs.some((v) => v === '*' || v === s.tags[k])))
      .map((s) => ({ metric: s.metric, tags: s.tags }));
  }

  /** /api/suggest: names of a kind starting with `prefix`, in byte order, at most `max`. */
  suggest(kind: 'metric' | 'tagk' | 'tagv', prefix: string, max: number): string[] {
    return [...this.names[kind]].filter((n) => n.startsWith(prefix)).sort().slice(0, max);
  }
}
