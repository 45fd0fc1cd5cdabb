/**
 * The request side of /api/query: POST JSON here, GET m=/tsuid= in query-string.ts, both
 * validated by query-model.ts into an immutable TsQuery (OpenTSDB TSQuery / TSSubQuery as
 * Jackson maps them, HttpJsonSerializer#parseQueryV1; Grafana's two request shapes too).
 *
 * JSON mapping is as lenient as Jackson's: unknown fields are ignored; strings accept
 * numbers and booleans (`"start": 1356998400` is the string "1356998400", so 10 digits are
 * seconds); booleans accept "true"/"false" and numbers; longs accept numeric strings and
 * truncate floats (Grafana's Go backend sends rateOptions as floats); `ms` is an alias of
 * `msResolution`. A sub-query's `tags` map (legacy, every entry group-by) and `filters`
 * list replace each other, so the one later in the document wins, as with Jackson's
 * setters. `tsuids` take precedence over `metric`. A malformed shape fails with OpenTSDB's
 * `Unable to parse the given JSON` (the detail is the error's `cause`); an empty body with
 * `Missing message content`. Extension: `"tags": []` (old Grafana) is read as no tags.
 * The `arrays` flag is a query-string parameter, also on POST: pass `queryString`.
 */
import type { TagFilter } from './tag-filter.js';
import { createTagFilter, tagMapToFilters } from './tag-filter.js';
import type { ParseOptions, QueryFlag, RateOptions, RawQuery, RawSubQuery, TsQuery } from './query-model.js';
import { buildQuery, illegal } from './query-model.js';
import type { QueryParams } from './query-string.js';
import { hasQueryParam } from './query-string.js';
import { parseJavaLong } from './time.js';

export type {
  DownsampleSpec, FillPolicy, MetricSubQuery, ParseOptions, RateOptions, RawQuery, RawSubQuery, RollupUsage,
  SubQuery, TsQuery, TsuidSubQuery,
} from './query-model.js';
export { AGGREGATOR_NAMES, buildQuery, groupByTagks, rateOf, subQueryEcho } from './query-model.js';
export type { QueryParams } from './query-string.js';
export { parseQueryString } from './query-string.js';

export interface JsonParseOptions extends ParseOptions {
  /** The request's query string, for the serializer flag `arrays`. */
  readonly queryString?: QueryParams;
}

type Json = unknown;

function mappingError(path: string, detail: string): Error {
  return illegal('Unable to parse the given JSON', new Error(`${path}: ${detail}`));
}

function str(v: Json, path: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
  throw mappingError(path, 'expected a string');
}

function bool(v: Json, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    const l = v.toLowerCase();
    if (l === 'true' || l === 'false' || l === '') return l === 'true';
  }
  throw mappingError(path, 'expected a boolean');
}

function long(v: Json, path: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string') {
    try {
      return Number(parseJavaLong(v));
    } catch {
      // fall through
    }
  }
  throw mappingError(path, 'expected an integer');
}

function obj(v: Json, path: string): Readonly<Record<string, Json>> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw mappingError(path, 'expected an object');
  return v as Record<string, Json>;
}

function arr(v: Json, path: string): readonly Json[] {
  if (!Array.isArray(v)) throw mappingError(path, 'expected an array');
  return v;
}

const TOP_FLAGS: Readonly<Record<string, QueryFlag>> = {
  useCalendar: 'useCalendar', msResolution: 'msResolution', ms: 'msResolution', showTSUIDs: 'showTSUIDs',
  showQuery: 'showQuery', showStats: 'showStats', showSummary: 'showSummary', noAnnotations: 'noAnnotations',
  globalAnnotations: 'globalAnnotations', delete: 'delete', padding: 'padding',
};

const UTF8 = new TextDecoder();

/** Decodes a POST body (text, bytes or an already-parsed value) to its JSON value. */
function decodeBody(body: unknown): Json {
  // Buffer's own UTF-8 decoding costs a third of TextDecoder's on a small body.
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : body instanceof Uint8Array ? UTF8.decode(body) : body;
  if (text === undefined || text === null || text === '') {
    throw illegal('Missing message content');
  }
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw illegal('Unable to parse the given JSON', e);
  }
}

/** POST /api/query's body → a validated query; `nowMs` serves `now`, `-ago` and a missing end. */
export function parseQueryJson(body: unknown, nowMs: number, opts: JsonParseOptions = {}): TsQuery {
  const top = obj(decodeBody(body), '$');
  let start: string | undefined;
  let end: string | undefined;
  let timezone: string | undefined;
  let queries: RawSubQuery[] | undefined;
  const flags: { [F in QueryFlag]?: boolean } = {};
  for (const [key, v] of Object.entries(top)) {
    const flag = TOP_FLAGS[key];
    if (flag !== undefined) flags[flag] = bool(v, key) ?? false;
    else if (key === 'start') start = str(v, key);
    else if (key === 'end') end = str(v, key);
    else if (key === 'timezone') timezone = str(v, key);
    else if (key === 'queries') queries = v === null ? undefined : arr(v, key).map((q, i) => subQuery(q, `queries[${i}]`));
  }
  if (opts.queryString !== undefined && hasQueryParam(opts.queryString, 'arrays')) flags.arrays = true;
  const raw: { -readonly [K in keyof RawQuery]: RawQuery[K] } = flags;
  if (start !== undefined) raw.start = start;
  if (end !== undefined) raw.end = end;
  if (timezone !== undefined) raw.timezone = timezone;
  if (queries !== undefined) raw.queries = queries;
  return buildQuery(raw, nowMs, opts);
}

type SubBool = 'rate' | 'explicitTags' | 'useFuzzyFilter' | 'useMultiGets' | 'preAggregate' | 'showHistogramBuckets';
type SubString = 'aggregator' | 'metric' | 'downsample' | 'rollupUsage';

function subQuery(v: Json, path: string): RawSubQuery {
  const o = obj(v, path);
  const raw: { -readonly [K in keyof RawSubQuery]: RawSubQuery[K] } = {};
  for (const key in o) {
    if (!Object.hasOwn(o, key)) continue;
    const value = o[key];
    switch (key) {
      case 'rate': case 'explicitTags': case 'useFuzzyFilter': case 'useMultiGets': case 'preAggregate': case 'showHistogramBuckets':
        raw[key as SubBool] = bool(value, `${path}.${key}`) ?? false;
        break;
      case 'aggregator': case 'metric': case 'downsample': case 'rollupUsage': {
        const s = str(value, `${path}.${key}`);
        if (s === undefined) delete raw[key as SubString];
        else raw[key as SubString] = s;
        break;
      }
      case 'tsuids':
        if (value === null) delete raw.tsuids;
        else raw.tsuids = arr(value, `${path}.${key}`).map((t, i) => str(t, `${path}.${key}[${i}]`) ?? '');
        break;
      case 'rateOptions':
        if (value === null) delete raw.rateOptions;
        else raw.rateOptions = rateOptions(value, `${path}.${key}`);
        break;
      case 'percentiles':
        if (value === null) delete raw.percentiles;
        else raw.percentiles = arr(value, `${path}.${key}`).map((p, i) => percentile(p, `${path}.${key}[${i}]`));
        break;
      case 'tags': {
        if (value === null || (Array.isArray(value) && value.length === 0)) break;
        const at = `${path}.${key}`;
        const entries = Object.entries(obj(value, at)).map(([k, tv]) => [k, str(tv, `${at}.${k}`) ?? ''] as const);
        raw.filters = tagMapToFilters(entries, [], true);
        break;
      }
      case 'filters':
        raw.filters = value === null ? [] : arr(value, `${path}.${key}`).map((f, i) => filterOf(f, `${path}.${key}[${i}]`));
        break;
      default:
        break;
    }
  }
  return raw;
}

function rateOptions(v: Json, path: string): RateOptions {
  const o = obj(v, path);
  const counterMax = long(o.counterMax, `${path}.counterMax`);
  const resetValue = long(o.resetValue, `${path}.resetValue`);
  return {
    counter: bool(o.counter, `${path}.counter`) ?? false,
    ...(counterMax === undefined || counterMax >= 2 ** 63 ? {} : { counterMax }),
    ...(resetValue === undefined || resetValue === 0 ? {} : { resetValue }),
    dropResets: bool(o.dropResets, `${path}.dropResets`) ?? false,
  };
}

function percentile(v: Json, path: string): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw mappingError(path, 'expected a number');
  return n;
}

/** One `filters` entry, `{type, tagk, filter, groupBy}` (TagVFilter.Builder; `group_by` also accepted). */
function filterOf(v: Json, path: string): TagFilter {
  const o = obj(v, path);
  const groupBy = bool(o.groupBy ?? o.group_by, `${path}.groupBy`) ?? false;
  return createTagFilter(str(o.type, `${path}.type`) ?? '', str(o.tagk, `${path}.tagk`) ?? '',
    str(o.filter, `${path}.filter`) ?? '', groupBy);
}
