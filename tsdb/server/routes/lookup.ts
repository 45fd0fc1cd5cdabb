/**
 * /api/search/lookup and /api/suggest, served from the UID table and Horae's own series
 * index (tsdb/meta/series-index.ts; a metric's lookup with tag patterns through its
 * postings) — no meta-sync step, so Grafana's template variables work on a fresh server.
 *
 *   GET  /api/search/lookup?m=<metric>{k=v,k=*,*=v}&limit=25   (metric may be * or empty)
 *   POST /api/search/lookup {"metric":…, "tags":[{"key":…,"value":…}], "limit":n}
 *     → {"type":"LOOKUP","metric","tags","limit","time","results":[{"tsuid","metric","tags"}],"startIndex":0,"totalResults"}
 *     Values of one key are ORed, different keys ANDed; `*` matches anything. A series
 *     whose points are all past their metric's retention is not listed.
 *   GET|POST /api/suggest?type=metrics|tagk|tagv&q=<prefix>&max=25[&metric=<m>]
 *     → names in byte order; `metric` (beyond OpenTSDB) limits tagk/tagv to that metric's series.
 */
import type { FastifyInstance } from 'fastify';
import { latin1 } from '../../../core/api/bytes.js';
import { TsdbError } from '../../errors.js';
import { lastPoints } from '../../query/last-point.js';
import type { SeriesNames } from '../../catalog/series-names.js';
import type { PostingClause } from '../../meta/postings.js';
import type { Tsdb } from '../../tsdb.js';
import { parseUidKind } from '../../uid/uid-kind.js';
import { jsonBody } from '../body-parsers.js';
import { sendError } from '../http-errors.js';

interface TagPattern {
  readonly key: string;
  readonly value: string;
}

/**
 * The series that still hold a point within their metric's retention (tsdb/SCHEMA.md
 * "Retention"): a series whose points have all expired is not listed, as in OpenTSDB,
 * whose lookup finds series by their data rows. Only series of metrics with a retention
 * are looked at (their newest point: the last-value cache, or a read).
 */
async function retained<T extends { tsuid: Uint8Array }>(tsdb: Tsdb, found: T[]): Promise<T[]> {
  const cuts = new Map<string, number>();
  const check: number[] = [];
  for (let i = 0; i < found.length; i++) {
    const metric = found[i]!.tsuid.subarray(0, tsdb.widths.metric);
    const id = latin1(metric);
    let cut = cuts.get(id);
    if (cut === undefined) cuts.set(id, (cut = await tsdb.retainedFromUid(metric)));
    if (cut > 0) check.push(i);
  }
  if (check.length === 0) return found;
  const newest = await lastPoints(tsdb, check.map((i) => found[i]!.tsuid), 0, tsdb.now());
  const gone = new Set(check.filter((_, k) => newest[k] === undefined));
  return found.filter((_, i) => !gone.has(i));
}

export function registerLookupRoutes(app: FastifyInstance, tsdb: Tsdb): void {
  const lookup = async (req: { method: string; query: unknown; body: unknown }, reply: import('fastify').FastifyReply): Promise<unknown> => {
    const started = performance.now();
    let metric = '';
    let tags: TagPattern[] = [];
    let limit = 25;
    if (req.method === 'POST') {
      const b = jsonBody(req.body) as { metric?: unknown; tags?: unknown; limit?: unknown } | undefined;
      if (b === undefined || b === null || typeof b !== 'object') return sendError(reply, 400, 'Missing request content');
      metric = typeof b.metric === 'string' ? b.metric : '';
      if (Array.isArray(b.tags)) tags = b.tags.map((t: { key?: unknown; value?: unknown }) => ({ key: String(t.key ?? '*'), value: String(t.value ?? '*') }));
      if (typeof b.limit === 'number') limit = b.limit;
    } else {
      const q = req.query as { m?: string; limit?: string };
      if (q.m === undefined) return sendError(reply, 400, 'Missing parameter <code>m</code>');
      ({ metric, tags } = parseLookupQuery(q.m));
      if (q.limit !== undefined) limit = Number(q.limit);
    }
    if (!Number.isInteger(limit) || limit < 0) return sendError(reply, 400, `Invalid limit: ${String(limit)}`);
    if (limit === 0) limit = Number.MAX_SAFE_INTEGER; // Grafana's backend sends 0 when unset: no limit
    let prefix: Uint8Array = new Uint8Array(0);
    if (metric !== '' && metric !== '*') {
      const id = await tsdb.metrics.getId(metric);
      if (id === undefined) return sendError(reply, 404, `No such name for 'metrics': '${metric}'`);
      prefix = id;
    }
    const results: Array<{ tsuid: string; metric: string; tags: Readonly<Record<string, string>> }> = [];
    let total = 0;
    const describe = seriesNamer(tsdb);
    let found: Array<{ tsuid: Uint8Array; names: SeriesDescription }> = [];
    for (const tsuid of await candidates(tsdb, prefix, tags)) {
      const s = await describe(tsuid);
      if (s !== undefined && matches(s.tags, tags)) found.push({ tsuid, names: s });
    }
    if (tsdb.hasRetention) found = await retained(tsdb, found);
    for (const { names: s } of found) {
      total++;
      if (results.length < limit) results.push({ tsuid: s.tsuid, metric: s.metric, tags: s.tags });
    }
    return { type: 'LOOKUP', metric: metric === '' ? '*' : metric, tags, limit, time: performance.now() - started, results, startIndex: 0, totalResults: total };
  };

  const suggest = async (req: { method: string; query: unknown; body: unknown }, reply: import('fastify').FastifyReply): Promise<unknown> => {
    const p = (req.method === 'POST' ? jsonBody(req.body) ?? {} : req.query) as { type?: unknown; q?: unknown; max?: unknown; metric?: unknown };
    const kind = typeof p.type === 'string' ? parseUidKind(p.type) : undefined;
    if (kind === undefined) return sendError(reply, 400, p.type === undefined ? 'Missing parameter <code>type</code>' : `Invalid 'type' parameter:${String(p.type)}`);
    const prefix = typeof p.q === 'string' ? p.q : '';
    const max = p.max === undefined ? 25 : Number(p.max);
    if (!Number.isInteger(max) || max < 1) return sendError(reply, 400, `Invalid 'max' parameter: ${String(p.max)}`);
    if (typeof p.metric === 'string' && p.metric !== '' && kind !== 'metric') {
      const id = await tsdb.metrics.getId(p.metric);
      if (id === undefined) return [];
      // The metric's tag pairs (its postings' value rows), not its series.
      const names = new Set<string>();
      const uids = new Map<string, Uint8Array>();
      for (const pair of await tsdb.index.postings.pairs(id)) {
        const u = kind === 'tagk' ? pair.tagk : pair.tagv;
        uids.set(latin1(u), u);
      }
      const table = tsdb.uidTable(kind);
      for (const n of await Promise.all([...uids.values()].map((u) => table.getName(u)))) if (n !== undefined && n.startsWith(prefix)) names.add(n);
      return [...names].sort().slice(0, max);
    }
    return tsdb.uidTable(kind).namesWithPrefix(prefix, max);
  };

  for (const v of ['', '/v1']) {
    app.route({ method: ['GET', 'POST'], url: `/api${v}/search/lookup`, config: { role: 'read' }, handler: lookup });
    app.route({ method: ['GET', 'POST'], url: `/api${v}/suggest`, config: { role: 'read' }, handler: suggest });
  }
}

/** `metric{k=v,k=*,*=v}` → metric and tag patterns. */
export function parseLookupQuery(m: string): { metric: string; tags: TagPattern[] } {
  const brace = m.indexOf('{');
  if (brace < 0) return { metric: m.trim(), tags: [] };
  if (!m.endsWith('}')) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Missing closing brace in: ${m}`);
  const tags: TagPattern[] = [];
  for (const part of m.slice(brace + 1, -1).split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid tag pattern: ${part}`);
    tags.push({ key: part.slice(0, eq).trim() || '*', value: part.slice(eq + 1).trim() || '*' });
  }
  return { metric: m.slice(0, brace).trim(), tags };
}

/**
 * The series of the metric `prefix` (every series when empty) that may match `patterns`:
 * for a metric, the postings of the patterns' keys (each key's values ORed, or any value
 * for `*`; tsdb/SCHEMA.md "Series postings") instead of its whole series list. A key or a
 * key's every value without a UID matches nothing. The caller checks each by name (matches).
 */
async function candidates(tsdb: Tsdb, prefix: Uint8Array, patterns: readonly TagPattern[]): Promise<Uint8Array[]> {
  if (prefix.length === 0) return tsdb.index.tsuids(prefix, Number.MAX_SAFE_INTEGER);
  const byKey = new Map<string, string[]>();
  for (const p of patterns) if (p.key !== '*') byKey.set(p.key, [...(byKey.get(p.key) ?? []), p.value]);
  if (byKey.size === 0) return tsdb.index.ofMetric(prefix);
  const clauses: PostingClause[] = [];
  for (const [key, values] of byKey) {
    const tagk = await tsdb.tagks.getId(key);
    if (tagk === undefined) return [];
    if (values.includes('*')) {
      clauses.push({ tagk, values: undefined });
      continue;
    }
    const ids = (await Promise.all(values.map((v) => tsdb.tagvs.getId(v)))).filter((id): id is Uint8Array => id !== undefined);
    if (ids.length === 0) return [];
    clauses.push({ tagk, values: ids });
  }
  return tsdb.index.matching(prefix, clauses, Number.MAX_SAFE_INTEGER);
}

/** Values of one key ORed, keys ANDed; `*` matches anything. */
function matches(tags: Readonly<Record<string, string>>, patterns: readonly TagPattern[]): boolean {
  const byKey = new Map<string, string[]>();
  for (const p of patterns) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p.value]);
  for (const [key, values] of byKey) {
    const ok = values.some((v) => {
      if (key === '*') return v === '*' || Object.values(tags).includes(v);
      const have = tags[key];
      return have !== undefined && (v === '*' || have === v);
    });
    if (!ok) return false;
  }
  return true;
}

/** A series' metric and tag names (the tags shared and frozen: read, never change them). */
export interface SeriesDescription {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  /** The TSUID in upper-case hex. */
  readonly tsuid: string;
}

/**
 * Names of a TSUID; undefined when a UID has no name (a damaged index). A value, not a
 * promise, once the series' names are known (callers with many series skip the await).
 */
export type SeriesNamer = (tsuid: Uint8Array) => SeriesDescription | undefined | Promise<SeriesDescription | undefined>;

/**
 * A SeriesNamer for the series of one request: the metric UID is resolved once per
 * request, the tags through the query path's cache of series names (query/series-names.ts:
 * kept across requests while no tag name changed), so a series costs no await once known.
 */
export function seriesNamer(tsdb: Tsdb): SeriesNamer {
  const w = tsdb.widths;
  const metrics = new Map<string, string | undefined>();
  const described = new Map<string, SeriesDescription | undefined>();
  const withTags = (tsuid: Uint8Array, id: string, metric: string | undefined): SeriesDescription | undefined | Promise<SeriesDescription | undefined> => {
    if (metric === undefined) {
      described.set(id, undefined);
      return undefined;
    }
    const done = (names: SeriesNames | undefined): SeriesDescription | undefined => {
      const out = names === undefined ? undefined : { metric, tags: names.tags, tsuid: names.tsuid };
      described.set(id, out);
      return out;
    };
    const named = tsdb.catalog.names.names(tsuid);
    return named instanceof Promise ? named.then(done) : done(named);
  };
  return (tsuid) => {
    const id = latin1(tsuid);
    if (described.has(id)) return described.get(id);
    const metricId = id.slice(0, w.metric);
    if (metrics.has(metricId)) return withTags(tsuid, id, metrics.get(metricId));
    return tsdb.metrics.getName(tsuid.subarray(0, w.metric)).then((metric) => {
      metrics.set(metricId, metric);
      return withTags(tsuid, id, metric);
    });
  };
}
