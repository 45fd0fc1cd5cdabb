/**
 * The validated /api/query request (OpenTSDB TSQuery / TSSubQuery#validateAndSetQuery,
 * DownsamplingSpecification), built from the raw fields
 * both request syntaxes produce (query-spec.ts: POST JSON; query-string.ts: GET m=/tsuid=).
 * Immutable data; times are epoch ms. Errors are TSDB_ILLEGAL_ARGUMENT with OpenTSDB's text.
 *
 * Validation order and messages follow OpenTSDB: `Missing start time`, start, end (default
 * now), `End time [e] must be greater than or equal to the start time [s]` (2.5 allows
 * end == start), `Missing queries`; duplicate sub-queries are dropped before `index` is
 * assigned (OpenTSDB's LinkedHashSet); per sub-query `Missing the aggregation function`,
 * `No such aggregation function: x` (names case-sensitive), `Missing the metric or tsuids,
 * provide at least one`, then the downsample spec (downsample-spec.ts) and histogram checks.
 */
import { TsdbError } from '../errors.js';
import { parseDownsample } from './downsample-spec.js';
import type { DownsampleSpec } from './downsample-spec.js';
import type { TagFilter } from './tag-filter.js';
import { tagFilterEcho, tagFilterKey } from './tag-filter.js';
import { parseDateTime } from './time.js';

export type { DownsampleSpec, FillPolicy } from './downsample-spec.js';

/** Every name /api/aggregators lists (OpenTSDB Aggregators.java), matched case-sensitively. */
export const AGGREGATOR_NAMES: ReadonlySet<string> = new Set([
  'sum', 'min', 'max', 'avg', 'none', 'median', 'mult', 'dev', 'diff', 'count', 'zimsum', 'mimmin', 'mimmax',
  'first', 'last', 'pfsum', 'squareSum', 'p999', 'p99', 'p95', 'p90', 'p75', 'p50',
  'ep999r3', 'ep99r3', 'ep95r3', 'ep90r3', 'ep75r3', 'ep50r3', 'ep999r7', 'ep99r7', 'ep95r7', 'ep90r7', 'ep75r7', 'ep50r7',
]);

/** Rate options as given (RateOptions): counterMax undefined = Long.MAX_VALUE, resetValue undefined = 0. */
export interface RateOptions {
  readonly counter: boolean;
  readonly counterMax?: number;
  readonly resetValue?: number;
  readonly dropResets: boolean;
}

export const ROLLUP_USAGES = ['ROLLUP_RAW', 'ROLLUP_NOFALLBACK', 'ROLLUP_FALLBACK', 'ROLLUP_FALLBACK_RAW'] as const;
export type RollupUsage = (typeof ROLLUP_USAGES)[number];

interface SubQueryCommon {
  /** Position in the (de-duplicated) query list; echoed by showQuery, Grafana maps results by it. */
  readonly index: number;
  readonly aggregator: string;
  readonly downsample?: DownsampleSpec;
  readonly rate: boolean;
  /** As given; see rateOf() for the effective options. */
  readonly rateOptions?: RateOptions;
  readonly explicitTags: boolean;
  /** Histogram percentiles, sorted ascending. */
  readonly percentiles?: readonly number[];
  readonly showHistogramBuckets: boolean;
  readonly preAggregate: boolean;
  readonly rollupUsage?: RollupUsage;
  readonly useFuzzyFilter: boolean;
  readonly useMultiGets: boolean;
}

export interface MetricSubQuery extends SubQueryCommon {
  readonly kind: 'metric';
  readonly metric: string;
  /** ANDed; from `filters`, or converted from the legacy `tags` map / m= curly sets. */
  readonly filters: readonly TagFilter[];
}

/** `tsuids` given: they take precedence over metric and filters. */
export interface TsuidSubQuery extends SubQueryCommon {
  readonly kind: 'tsuids';
  /** Hex TSUIDs as given; OpenTSDB requires them to share one metric. */
  readonly tsuids: readonly string[];
}

export type SubQuery = MetricSubQuery | TsuidSubQuery;

export interface TsQuery {
  readonly startMs: number;
  readonly endMs: number;
  readonly timezone?: string;
  readonly useCalendar: boolean;
  readonly msResolution: boolean;
  readonly showTSUIDs: boolean;
  readonly showQuery: boolean;
  readonly showStats: boolean;
  readonly showSummary: boolean;
  readonly noAnnotations: boolean;
  readonly globalAnnotations: boolean;
  readonly delete: boolean;
  readonly padding: boolean;
  /** `dps` as [[ts, v], …] (the `arrays` query-string flag, honoured on POST too). */
  readonly arrays: boolean;
  readonly queries: readonly SubQuery[];
}

/** A sub-query's fields before validation, as either syntax yields them. */
export interface RawSubQuery {
  readonly aggregator?: string;
  readonly metric?: string;
  readonly tsuids?: readonly string[];
  readonly downsample?: string;
  readonly rate?: boolean;
  readonly rateOptions?: RateOptions;
  readonly filters?: readonly TagFilter[];
  readonly explicitTags?: boolean;
  readonly percentiles?: readonly number[];
  readonly showHistogramBuckets?: boolean;
  readonly preAggregate?: boolean;
  readonly rollupUsage?: string;
  readonly useFuzzyFilter?: boolean;
  readonly useMultiGets?: boolean;
}

export type QueryFlag = 'useCalendar' | 'msResolution' | 'showTSUIDs' | 'showQuery' | 'showStats' | 'showSummary' |
  'noAnnotations' | 'globalAnnotations' | 'delete' | 'padding' | 'arrays';

export type RawQuery = { readonly [F in QueryFlag]?: boolean } & {
  readonly start?: string;
  readonly end?: string;
  readonly timezone?: string;
  readonly queries?: readonly RawSubQuery[];
};

export interface ParseOptions {
  /** Zone of absolute dates when the request names none (OpenTSDB: the JVM's). Default UTC. */
  readonly defaultTimezone?: string;
  /** Known aggregator names (default AGGREGATOR_NAMES). */
  readonly aggregators?: ReadonlySet<string>;
}

export function illegal(message: string, cause?: unknown): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message, cause === undefined ? undefined : { cause });
}

/** OpenTSDB's ROLLUP_USAGE.parse: case-insensitive, unknown → ROLLUP_NOFALLBACK. */
export function parseRollupUsage(s: string): RollupUsage {
  const u = s.toUpperCase();
  return (ROLLUP_USAGES as readonly string[]).includes(u) ? (u as RollupUsage) : 'ROLLUP_NOFALLBACK';
}

/** Validates `raw` (see the file header) into a TsQuery; `nowMs` serves `now`, `-ago` and a missing end. */
export function buildQuery(raw: RawQuery, nowMs: number, opts: ParseOptions = {}): TsQuery {
  if (raw.start === undefined || raw.start === '') throw illegal('Missing start time');
  const tz = raw.timezone !== undefined && raw.timezone !== '' ? raw.timezone : undefined;
  const dateTz = tz ?? opts.defaultTimezone;
  const startMs = parseDateTime(raw.start, nowMs, dateTz);
  const endMs = raw.end !== undefined && raw.end !== '' ? parseDateTime(raw.end, nowMs, dateTz) : nowMs;
  if (endMs < startMs) {
    throw illegal(`End time [${endMs}] must be greater than or equal to the start time [${startMs}]`);
  }
  if (raw.queries === undefined || raw.queries.length === 0) throw illegal('Missing queries');
  const aggregators = opts.aggregators ?? AGGREGATOR_NAMES;
  const useCalendar = raw.useCalendar === true;
  const queries = dedupe(raw.queries).map((r, index) => buildSubQuery(r, index, aggregators, useCalendar, tz));
  const flag = (f: QueryFlag): boolean => raw[f] === true;
  return {
    startMs, endMs, ...(tz === undefined ? {} : { timezone: tz }), useCalendar,
    msResolution: flag('msResolution'), showTSUIDs: flag('showTSUIDs'), showQuery: flag('showQuery'),
    showStats: flag('showStats'), showSummary: flag('showSummary'), noAnnotations: flag('noAnnotations'),
    globalAnnotations: flag('globalAnnotations'), delete: flag('delete'), padding: flag('padding'),
    arrays: flag('arrays'), queries,
  };
}

/** Drops sub-queries equal to an earlier one (TSSubQuery#equals: filters compare without groupBy). */
function dedupe(subs: readonly RawSubQuery[]): readonly RawSubQuery[] {
  if (subs.length < 2) return subs;
  const seen = new Set<string>();
  return subs.filter((s) => {
    const key = JSON.stringify([s.aggregator, s.metric, s.tsuids, s.downsample, s.rate === true, s.rateOptions,
      (s.filters ?? []).map(tagFilterKey), s.explicitTags === true, s.preAggregate === true, s.useFuzzyFilter !== false,
      s.percentiles, s.showHistogramBuckets === true, s.useMultiGets !== false]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function buildSubQuery(r: RawSubQuery, index: number, aggregators: ReadonlySet<string>, useCalendar: boolean,
  tz: string | undefined): SubQuery {
  if (r.aggregator === undefined || r.aggregator === '') throw illegal('Missing the aggregation function');
  if (!aggregators.has(r.aggregator)) throw illegal(`No such aggregation function: ${r.aggregator}`);
  const hasTsuids = r.tsuids !== undefined && r.tsuids.length > 0;
  if (!hasTsuids && (r.metric === undefined || r.metric === '')) {
    throw illegal('Missing the metric or tsuids, provide at least one');
  }
  const downsample = r.downsample === undefined || r.downsample === ''
    ? undefined
    : parseDownsample(r.downsample, { aggregators, useCalendar, timezone: tz });
  const percentiles = r.percentiles === undefined || r.percentiles.length === 0
    ? undefined : [...r.percentiles].sort((a, b) => a - b);
  const showHistogramBuckets = r.showHistogramBuckets === true;
  if (percentiles !== undefined || showHistogramBuckets) checkHistogramQuery(r.aggregator, downsample, percentiles);
  const common = {
    index, aggregator: r.aggregator, ...(downsample === undefined ? {} : { downsample }),
    rate: r.rate === true, ...(r.rateOptions === undefined ? {} : { rateOptions: r.rateOptions }),
    explicitTags: r.explicitTags === true, ...(percentiles === undefined ? {} : { percentiles }),
    showHistogramBuckets, preAggregate: r.preAggregate === true,
    ...(r.rollupUsage === undefined ? {} : { rollupUsage: parseRollupUsage(r.rollupUsage) }),
    useFuzzyFilter: r.useFuzzyFilter !== false, useMultiGets: r.useMultiGets !== false,
  };
  return hasTsuids
    ? { kind: 'tsuids', tsuids: r.tsuids!, ...common }
    : { kind: 'metric', metric: r.metric!, filters: r.filters ?? [], ...common };
}

/** TSSubQuery#checkHistogramQuery. */
function checkHistogramQuery(agg: string, ds: DownsampleSpec | undefined, percentiles: readonly number[] | undefined): void {
  if (agg !== 'none' && agg !== 'sum') {
    throw illegal('Only NONE or SUM aggregation function supported for histogram query');
  }
  if (ds !== undefined && ds.fn !== 'sum') throw illegal('Only SUM downsampling aggregation supported for histogram query');
  for (const p of percentiles ?? []) {
    if (!(p >= 0 && p <= 100)) throw illegal(`Invalid percentile parameters: ${Number.isInteger(p) ? `${p}.0` : p}`);
  }
}

/** The effective rate options of a rate sub-query (defaults: not a counter), undefined without rate. */
export function rateOf(sub: SubQuery): RateOptions | undefined {
  if (!sub.rate) return undefined;
  return sub.rateOptions ?? { counter: false, dropResets: false };
}

/** Tag keys the results are grouped by: those with a groupBy filter, in first-mention order. */
export function groupByTagks(sub: SubQuery): string[] {
  if (sub.kind !== 'metric') return [];
  return [...new Set(sub.filters.filter((f) => f.groupBy).map((f) => f.tagk))];
}

/** The sub-query as OpenTSDB echoes it with showQuery (TSSubQuery's JSON), `index` included. */
export function subQueryEcho(sub: SubQuery): Record<string, unknown> {
  const filters = sub.kind === 'metric' ? sub.filters : [];
  const tags: Record<string, string> = {};
  for (const f of filters) if (f.groupBy) tags[f.tagk] = `${f.type}(${f.filter})`;
  return {
    aggregator: sub.aggregator,
    metric: sub.kind === 'metric' ? sub.metric : null,
    tsuids: sub.kind === 'tsuids' ? sub.tsuids : null,
    downsample: sub.downsample?.text ?? null,
    rate: sub.rate,
    filters: filters.map(tagFilterEcho),
    index: sub.index,
    tags,
    rateOptions: sub.rateOptions ?? null,
    explicitTags: sub.explicitTags,
    useFuzzyFilter: sub.useFuzzyFilter,
    preAggregate: sub.preAggregate,
    rollupUsage: sub.rollupUsage ?? null,
    showHistogramBuckets: sub.showHistogramBuckets,
    useMultiGets: sub.useMultiGets,
    percentiles: sub.percentiles ?? null,
  };
}
