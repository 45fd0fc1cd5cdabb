/**
 * GET /api/query: the query-string syntax (OpenTSDB QueryRpc#parseQuery,
 * #parseMTypeSubQuery, #parseTsuidTypeSubQuery, #parseRateOptions, #parsePercentiles and
 * Tags#parseWithMetricAndFilters).
 *
 *   m=<agg>:[<ds>:][rate[{[drop]counter[,<max>[,<reset>]]}]:][explicit_tags:]
 *     [percentiles[<p>,…]:][show-histogram-buckets:][pre-agg:][rollup_<usage>:]
 *     <metric>[{<group-by filters>}][{<other filters>}]
 *   tsuid=<agg>:[<ds>:][rate…:]<hex>[,<hex>…]
 *
 * The value is split on every `:` into 2..5 parts; the middle ones are recognised by prefix
 * (a leading digit is the downsample spec), unknown ones ignored. Filters are `tagk=value`
 * with `*`, `a|b`, globs or `type(expr)` (tag-filter.ts); the first curly set groups by,
 * the second does not. Flags count when present, whatever their value (`ms=false` is on).
 * `timezone` and `use_calendar` are not read on GET, as in OpenTSDB 2.4 (a `c` suffix
 * still aligns a downsample to the UTC calendar). Deviation: an empty middle part
 * (`sum::m`) is skipped instead of failing with a Java exception.
 */
import type { TagFilter } from './tag-filter.js';
import { javaSplit, tagMapToFilters } from './tag-filter.js';
import type { ParseOptions, QueryFlag, RateOptions, RawSubQuery, TsQuery } from './query-model.js';
import { buildQuery, illegal } from './query-model.js';
import { parseJavaLong } from './time.js';

/** Parsed query-string parameters: URLSearchParams, or fastify's object (repeated keys → arrays). */
export type QueryParams = URLSearchParams | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Every value of a parameter, in order. */
export function queryParamValues(params: QueryParams, name: string): string[] {
  if (params instanceof URLSearchParams) return params.getAll(name);
  const v = params[name];
  return v === undefined ? [] : typeof v === 'string' ? [v] : [...v];
}

/** HttpQuery#hasQueryStringParam: present, with any value. */
export function hasQueryParam(params: QueryParams, name: string): boolean {
  return queryParamValues(params, name).length > 0;
}

const GET_FLAGS: ReadonlyArray<readonly [string, QueryFlag]> = [
  ['padding', 'padding'], ['no_annotations', 'noAnnotations'], ['global_annotations', 'globalAnnotations'],
  ['show_tsuids', 'showTSUIDs'], ['ms', 'msResolution'], ['show_query', 'showQuery'], ['show_stats', 'showStats'],
  ['show_summary', 'showSummary'], ['arrays', 'arrays'],
];

/** GET /api/query's parameters → a validated query (buildQuery); `nowMs` as there. */
export function parseQueryString(params: QueryParams, nowMs: number, opts: ParseOptions = {}): TsQuery {
  const start = queryParamValues(params, 'start').at(-1);
  if (start === undefined || start === '') throw illegal('Missing parameter <code>start</code>');
  const end = queryParamValues(params, 'end').at(-1);
  const flags: { [F in QueryFlag]?: boolean } = {};
  for (const [name, flag] of GET_FLAGS) if (hasQueryParam(params, name)) flags[flag] = true;
  const queries = [
    ...queryParamValues(params, 'tsuid').map(parseTsuidSubQuery),
    ...queryParamValues(params, 'm').map(parseMSubQuery),
  ];
  if (queries.length === 0) throw illegal('Missing sub queries');
  return buildQuery({ start, ...(end === undefined ? {} : { end }), ...flags, queries }, nowMs, opts);
}

function splitParts(text: string, emptyMessage: string): string[] {
  if (text.length === 0) throw illegal(emptyMessage);
  const parts = text.split(':');
  if (parts.length < 2 || parts.length > 5) {
    throw illegal(`Invalid parameter m=${text} (${parts.length < 2 ? 'not enough' : 'too many'} :-separated parts)`);
  }
  return parts;
}

type MutableRaw = { -readonly [K in keyof RawSubQuery]: RawSubQuery[K] };

/** The options common to m= and tsuid=; returns false for a part it does not know. */
function applyOption(raw: MutableRaw, part: string): boolean {
  const lower = part.toLowerCase();
  if (lower.startsWith('rate')) {
    raw.rate = true;
    if (part.includes('{')) raw.rateOptions = parseRateOptions(part);
  } else if (/^[0-9]/.test(part)) {
    raw.downsample = part;
  } else if (lower.startsWith('percentiles')) {
    raw.percentiles = parsePercentiles(part);
  } else if (lower.startsWith('show-histogram-buckets')) {
    raw.showHistogramBuckets = true;
  } else {
    return false;
  }
  return true;
}

/** One `m=` value → raw sub-query fields. */
export function parseMSubQuery(text: string): RawSubQuery {
  const parts = splitParts(text, 'The query string was empty');
  const { metric, filters } = parseMetricWithFilters(parts[parts.length - 1]!);
  const raw: MutableRaw = { aggregator: parts[0]!, metric, filters };
  for (const part of parts.slice(1, -1)) {
    if (part === '' || applyOption(raw, part)) continue;
    const lower = part.toLowerCase();
    if (lower === 'pre-agg') raw.preAggregate = true;
    else if (lower.startsWith('rollup_')) raw.rollupUsage = part;
    else if (lower.startsWith('explicit_tags')) raw.explicitTags = true;
  }
  return raw;
}

/** One `tsuid=` value → raw sub-query fields (its error text says m=, as OpenTSDB's does). */
export function parseTsuidSubQuery(text: string): RawSubQuery {
  const parts = splitParts(text, 'The tsuid query string was empty');
  const tsuids = javaSplit(parts[parts.length - 1]!, ',');
  const raw: MutableRaw = { aggregator: parts[0]!, tsuids };
  for (const part of parts.slice(1, -1)) if (part !== '') applyOption(raw, part);
  return raw;
}

const LONG_MAX = 9223372036854775807n;

/** QueryRpc#parseRateOptions for `rate{…}`: `counter`/`dropcounter`, then max and reset (empty = default). */
export function parseRateOptions(spec: string): RateOptions {
  if (spec.length < 6) throw illegal(`Invalid rate options specification: ${spec}`);
  const parts = spec.slice(5, -1).split(',');
  if (parts.length > 3) {
    throw illegal('Incorrect number of values in rate options specification, must be ' +
      `counter[,counter max value,reset value], recieved: ${parts.length} parts`);
  }
  const [kind = '', max = '', reset = ''] = parts;
  const long = (s: string, what: string): bigint => {
    try {
      return parseJavaLong(s);
    } catch (e) {
      throw illegal(`${what} was not a number, received '${s}'`, e);
    }
  };
  const counterMax = max === '' ? LONG_MAX : long(max, 'Max value of counter');
  const resetValue = reset === '' ? 0n : long(reset, 'Reset value of counter');
  return {
    counter: kind.endsWith('counter'),
    ...(counterMax === LONG_MAX ? {} : { counterMax: Number(counterMax) }),
    ...(resetValue === 0n ? {} : { resetValue: Number(resetValue) }),
    dropResets: kind === 'dropcounter',
  };
}

/** QueryRpc#parsePercentiles: `percentiles[p1, p2, …]`. */
export function parsePercentiles(spec: string): number[] {
  const open = spec.indexOf('[');
  const close = spec.indexOf(']');
  if (open < 0 || close < 0) throw illegal(`Malformated percentile query paramater: ${spec}`);
  return spec.slice(open + 1, close).split(',').map((s) => {
    const t = s.trim();
    const p = Number(t);
    if (t === '' || !Number.isFinite(p)) throw illegal(`Invalid percentile: ${t}`);
    return p;
  });
}

/**
 * Tags#parseWithMetricAndFilters: `metric{k=v,…}{k=v,…}` → the metric and its filters.
 * The second set's filters come first in the list (as OpenTSDB adds them); a group-by
 * filter equal to one of them only sets groupBy on it.
 */
export function parseMetricWithFilters(text: string): { metric: string; filters: TagFilter[] } {
  if (text.length === 0) throw illegal('Metric cannot be null or empty');
  const curly = text.indexOf('{');
  if (curly < 0) return { metric: text, filters: [] };
  const len = text.length;
  if (text[len - 1] !== '}') throw illegal(`Missing '}' at the end of: ${text}`);
  if (curly === len - 2) return { metric: text.slice(0, len - 2), filters: [] };
  const close = text.indexOf('}');
  let filters: TagFilter[] = [];
  if (close !== len - 1) {
    for (const f of text.slice(text.lastIndexOf('{') + 1, len - 1).split(',')) {
      if (f === '') break;
      filters = withContext(`When parsing filter '${f}': `, () => tagMapToFilters([parseTag(f)], filters, false));
    }
  }
  for (const tag of text.slice(curly + 1, close).split(',')) {
    if (tag === '' && close !== len - 1) break;
    filters = withContext(`When parsing tag '${tag}': `, () => tagMapToFilters([parseTag(tag)], filters, true));
  }
  return { metric: text.slice(0, curly), filters };
}

/** Tags#parse: exactly one `=` with text on both sides. */
function parseTag(tag: string): [string, string] {
  const kv = tag.split('=');
  if (kv.length !== 2 || kv[0]!.length === 0 || kv[1]!.length === 0) throw illegal(`invalid tag: ${tag}`);
  return [kv[0]!, kv[1]!];
}

function withContext<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw illegal(prefix + (e as Error).message, e);
  }
}
