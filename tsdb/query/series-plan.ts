/**
 * The series side of a metric sub-query, resolved once and reused: the metric's UID, the
 * filters' UIDs, the row-key filter plan (row-key-filter.ts) and the series the index
 * matched. A dashboard asks the same sub-queries over and over with other times; for a
 * small one (one series, an hour by the minute) resolving and planning cost about a fifth
 * of its CPU (bench/results/query-ab-inproc-plans-3ba3bf1.json).
 *
 * A plan is kept by the catalog (Catalog.keepByMetric), keyed by the sub-query's metric,
 * explicitTags and filters (type, tag key, expression, case, groupBy), while the catalog
 * holds it (catalog/catalog.ts): until a rename, a dropCaches or a new series of its
 * metric. Unknown literal values (dropped by the resolution, "nothing matches") are
 * therefore resolved again once a series of the metric could carry them. Where other
 * servers write the store too, their new series touch the metric once the change feed
 * brings them (catalog keepsSeries); without a feed, plans are not kept.
 */
import { equalBytes } from '../../core/api/bytes.js';
import { TsdbError } from '../errors.js';
import type { PostingClause } from '../meta/postings.js';
import type { Tsdb } from '../tsdb.js';
import type { MetricSubQuery } from './query-model.js';
import { literalsToResolve, planRowKeyFilter } from './row-key-filter.js';
import { matchTagValue } from './tag-filter.js';
import type { ResolvedTagFilter } from './row-key-filter.js';
import type { SeriesPlan } from './series-plan-types.js';

/** A metric with more series than this is not checked by everySeriesMatches (false). */
export const EVERY_MATCH_MAX_SERIES = 16_384;

/** The plan of `sub` (see the file header); throws TSDB_NO_SUCH_NAME for an unknown metric or tag key. */
export async function seriesPlan(tsdb: Tsdb, sub: MetricSubQuery): Promise<SeriesPlan> {
  const catalog = tsdb.catalog;
  if (!catalog.keepsSeries) return buildPlan(tsdb, sub);
  const plans = tsdb.seriesPlans;
  const key = planKey(sub);
  const hit = plans.get(key);
  if (hit !== undefined) return hit;
  // Kept under the stamp read before it was built: if the catalog moved meanwhile, the
  // next query finds the entry out of date and builds the plan again.
  const at = catalog.stamp();
  const plan = await buildPlan(tsdb, sub);
  plans.set(key, plan, plan.metricUid, at);
  return plan;
}

/**
 * TSUIDs of the plan's series matching its series regex, at most `limit` (as
 * SeriesIndex.matching; a cut answer holds `limit` matches, not necessarily the first),
 * reusing the plan's last answer where it holds these too: a complete one (fewer than its
 * limit) for any limit, a cut one for limits up to its own. The series are found through
 * the postings of the filtered tag values (postingClauses), not by reading every series of
 * the metric. REQUIRES plan.rows.seriesRegex.
 */
export async function matchingSeries(tsdb: Tsdb, plan: SeriesPlan, limit: number, signal?: AbortSignal): Promise<Uint8Array[]> {
  const m = plan.matched;
  if (m !== undefined && (m.tsuids.length < m.limit || limit <= m.limit)) return m.tsuids.length <= limit ? m.tsuids : m.tsuids.slice(0, limit);
  const rows = plan.rows!;
  const clauses = await postingClauses(tsdb, plan, signal);
  const tsuids = await tsdb.index.matching(plan.metricUid, clauses, limit, signal, rows.seriesTest);
  // Safe to keep even if the catalog moved meanwhile: the plan's entry is then out of date.
  plan.matched = { limit, tsuids };
  tsdb.seriesPlans.remeasure(plan);
  return tsuids;
}

/**
 * One posting clause per key entry of the plan: its literal values; for a tagk whose
 * filters are not literals in the key (wildcard, regexp, not_ and i types), the values of
 * the tagk among the metric's series (their value rows) whose names pass every such
 * filter of the tagk; any value when its only filters are pure `*` wildcards.
 */
async function postingClauses(tsdb: Tsdb, plan: SeriesPlan, signal?: AbortSignal): Promise<PostingClause[]> {
  const out: PostingClause[] = [];
  for (const e of plan.rows!.entries) {
    if (e.values !== undefined) {
      out.push(e);
      continue;
    }
    const filters = plan.resolved
      .filter((r) => equalBytes(r.tagk, e.tagk) && !((r.filter.type === 'wildcard' || r.filter.type === 'iwildcard') && r.filter.matchAll))
      .map((r) => r.filter);
    if (filters.length === 0) {
      out.push(e);
      continue;
    }
    const values = await tsdb.index.tagValues(plan.metricUid, e.tagk, signal);
    const names = await Promise.all(values.map((v) => tsdb.tagvs.getName(v)));
    out.push({ tagk: e.tagk, values: values.filter((_, i) => names[i] !== undefined && filters.every((f) => matchTagValue(f, names[i]!))) });
  }
  return out;
}

/**
 * True when every series of the plan's metric passes its series test (the tag filters
 * narrow nothing) and the metric has at most EVERY_MATCH_MAX_SERIES series; kept with
 * the plan. False where series sets are not kept.
 */
export async function everySeriesMatches(tsdb: Tsdb, plan: SeriesPlan, signal?: AbortSignal): Promise<boolean> {
  const test = plan.rows?.seriesTest;
  if (test === undefined) return false;
  plan.every ??= await tsdb.index.everyMatches(plan.metricUid, test, EVERY_MATCH_MAX_SERIES, signal);
  return plan.every;
}

async function buildPlan(tsdb: Tsdb, sub: MetricSubQuery): Promise<SeriesPlan> {
  const metricUid = await tsdb.metrics.getId(sub.metric);
  if (metricUid === undefined) throw new TsdbError('TSDB_NO_SUCH_NAME', `No such name for 'metrics': '${sub.metric}'`);
  const resolved = await resolveFilters(tsdb, sub);
  if (resolved === undefined) return { metricUid, rows: undefined, resolved: [] };
  return { metricUid, rows: planRowKeyFilter(tsdb.widths, resolved, { explicitTags: sub.explicitTags }), resolved };
}

/** Tag keys and literal values to UIDs; undefined when a literal filter can match nothing. */
async function resolveFilters(tsdb: Tsdb, sub: MetricSubQuery): Promise<ResolvedTagFilter[] | undefined> {
  const out: ResolvedTagFilter[] = [];
  for (const f of sub.filters) {
    const tagk = await tsdb.tagks.getId(f.tagk);
    if (tagk === undefined) throw new TsdbError('TSDB_NO_SUCH_NAME', `No such name for 'tagk': '${f.tagk}'`);
    const literals = literalsToResolve(f);
    if (literals === undefined) {
      out.push({ filter: f, tagk });
      continue;
    }
    const tagvs: Uint8Array[] = [];
    for (const v of literals) {
      const id = await tsdb.tagvs.getId(v);
      if (id !== undefined) tagvs.push(id);
    }
    if (tagvs.length === 0) return undefined;
    out.push({ filter: f, tagk, tagvs });
  }
  return out;
}

/**
 * Everything of `sub` its plan depends on; two sub-queries with one key have one plan.
 * Free text (names, expressions) is length-prefixed, so no two sub-queries share a key.
 */
function planKey(sub: MetricSubQuery): string {
  let key = `${sub.explicitTags ? 'x' : '-'}${sub.metric.length}:${sub.metric}`;
  for (const f of sub.filters) {
    const ci = f.type === 'regexp' ? '-' : f.caseInsensitive ? 'i' : 'c';
    key += `|${f.type}${ci}${f.groupBy ? 'g' : 'n'}${f.tagk.length}:${f.tagk}${f.filter.length}:${f.filter}`;
  }
  return key;
}
