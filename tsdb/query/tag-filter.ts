/**
 * Tag-value filters of /api/query (OpenTSDB src/query/filter/TagV*Filter.java):
 * the built-in types, their construction errors, their match semantics, the `type(expr)`
 * syntax, and the legacy tags map → filters conversion. Filters are immutable data.
 *
 * Match semantics (a series lacking the tagk never matches, except the not_ types):
 * - literal_or / iliteral_or: value ∈ the `|`-separated set (Java split: trailing empty
 *   literals dropped), exact or lower-cased;
 * - not_literal_or / not_iliteral_or: value ∉ the set, true when the tagk is absent;
 * - wildcard / iwildcard: glob on `*`. A leading `*` checks "ends with the last component",
 *   a trailing one "starts with the first"; then every component must be found by
 *   sequential indexOf where the search index advances by the component's *length*, not to
 *   the match (so `web*.com` is not anchored). A pattern of only `*`s matches any value.
 * - regexp: unanchored search (Java Matcher.find) in RE2 syntax, linear time (safe-regex.ts);
 *   a leading Java inline flag group such as `(?i)` becomes a flag.
 * Deviations, both bugs in OpenTSDB: iwildcard lower-cases the tag value as its description
 * says (OpenTSDB discards the lower-cased value, so upper-case values never match), and
 * not_literal_or accepts a one-character value (OpenTSDB requires two characters).
 */
import { TsdbError } from '../errors.js';
import { compileSafeRegex } from './safe-regex.js';
import type { SafeRegex } from './safe-regex.js';

export const TAG_FILTER_TYPES = [
  'literal_or', 'iliteral_or', 'not_literal_or', 'not_iliteral_or', 'wildcard', 'iwildcard', 'regexp',
] as const;
export type TagFilterType = (typeof TAG_FILTER_TYPES)[number];

interface FilterBase {
  readonly tagk: string;
  /** The expression as given, e.g. `web01|web02` (echoed by showQuery). */
  readonly filter: string;
  /** Results are grouped by this tagk when any of its filters has groupBy. */
  readonly groupBy: boolean;
}

export interface LiteralOrFilter extends FilterBase {
  readonly type: 'literal_or' | 'iliteral_or' | 'not_literal_or' | 'not_iliteral_or';
  /** Distinct literals, lower-cased for the i types. */
  readonly literals: readonly string[];
  /** The same literals as a set, for matching. */
  readonly literalSet: ReadonlySet<string>;
  readonly caseInsensitive: boolean;
  readonly negate: boolean;
}

export interface WildcardFilter extends FilterBase {
  readonly type: 'wildcard' | 'iwildcard';
  /** True for iwildcard and for the legacy `host=web*` form (which reports type wildcard). */
  readonly caseInsensitive: boolean;
  readonly components: readonly string[];
  /** The pattern started with `*` (OpenTSDB's has_postfix). */
  readonly leadingStar: boolean;
  /** The pattern ended with `*` (OpenTSDB's has_prefix). */
  readonly trailingStar: boolean;
  /** Only `*`s: any value matches and no post-scan check is needed. */
  readonly matchAll: boolean;
}

export interface RegexpFilter extends FilterBase {
  readonly type: 'regexp';
  /** Linear-time (RE2) matcher: a hostile pattern cannot stall the server (safe-regex.ts). */
  readonly regex: SafeRegex;
}

export type TagFilter = LiteralOrFilter | WildcardFilter | RegexpFilter;

function illegal(message: string): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message);
}

/** Java's String.split on a literal separator: trailing empty strings are dropped. */
export function javaSplit(s: string, sep: string): string[] {
  if (!s.includes(sep)) return [s];
  const parts = s.split(sep);
  if (parts.length === 1) return parts;
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/**
 * A filter of a known type (TagVFilter.Builder#build, then the type's constructor).
 * `type` is matched case-sensitively, as OpenTSDB's filter map lookup does.
 */
export function createTagFilter(type: string, tagk: string, filter: string, groupBy = false): TagFilter {
  if (type.length === 0) throw illegal('The filter type cannot be null or empty');
  if (tagk.length === 0) throw illegal('The tagk cannot be null or empty');
  switch (type) {
    case 'literal_or':
    case 'iliteral_or':
    case 'not_literal_or':
    case 'not_iliteral_or':
      return literalOr(type, tagk, filter, groupBy);
    case 'wildcard':
      return wildcard(tagk, filter, false, groupBy, 'wildcard');
    case 'iwildcard':
      return wildcard(tagk, filter, true, groupBy, 'iwildcard');
    case 'regexp':
      return regexp(tagk, filter, groupBy);
    default:
      throw illegal(`Could not find a tag value filter of the type: ${type}`);
  }
}

function literalOr(type: LiteralOrFilter['type'], tagk: string, filter: string, groupBy: boolean): LiteralOrFilter {
  const negate = type.startsWith('not_');
  const caseInsensitive = type === 'iliteral_or' || type === 'not_iliteral_or';
  if (filter.length === 0) throw illegal('Filter cannot be null or empty');
  if (!negate && filter === '|') throw illegal('Filter must contain more than just a pipe');
  const literalSet = new Set(javaSplit(filter, '|').map((s) => (caseInsensitive ? s.toLowerCase() : s)));
  return { type, tagk, filter, groupBy, literals: [...literalSet], literalSet, caseInsensitive, negate };
}

/** TagVWildcardFilter's constructor: strips leading/trailing `*`s, splits the rest. */
export function wildcard(tagk: string, filter: string, caseInsensitive: boolean, groupBy: boolean,
  type: WildcardFilter['type'] = caseInsensitive ? 'iwildcard' : 'wildcard'): WildcardFilter {
  if (filter.length === 0) throw illegal('Filter cannot be null or empty');
  let actual = caseInsensitive ? filter.toLowerCase() : filter;
  if (!actual.includes('*')) throw illegal('Filter must contain an asterisk');
  const leadingStar = actual.startsWith('*');
  while (actual.startsWith('*') && actual.length >= 2) actual = actual.slice(1);
  const trailingStar = actual.endsWith('*');
  while (actual.endsWith('*') && actual.length >= 2) actual = actual.slice(0, -1);
  const components = actual.indexOf('*') > 0 ? actual.split('*') : [actual];
  const matchAll = components.length === 1 && components[0] === '*';
  return { type, tagk, filter, groupBy, caseInsensitive, components, leadingStar, trailingStar, matchAll };
}

function regexp(tagk: string, filter: string, groupBy: boolean): RegexpFilter {
  if (filter.length === 0) throw illegal('Filter cannot be null or empty');
  try {
    return { type: 'regexp', tagk, filter, groupBy, regex: compileSafeRegex(filter) };
  } catch (e) {
    throw illegal(`Invalid regular expression for tagk ${tagk}: ${(e as Error).message}`);
  }
}

/** Whether a series whose value for the filter's tagk is `value` (undefined: absent) passes. */
export function matchTagValue(f: TagFilter, value: string | undefined): boolean {
  if (value === undefined) return f.type === 'not_literal_or' || f.type === 'not_iliteral_or';
  switch (f.type) {
    case 'literal_or':
    case 'iliteral_or':
    case 'not_literal_or':
    case 'not_iliteral_or':
      return f.literalSet.has(f.caseInsensitive ? value.toLowerCase() : value) !== f.negate;
    case 'wildcard':
    case 'iwildcard':
      return matchWildcard(f, f.caseInsensitive ? value.toLowerCase() : value);
    case 'regexp':
      return f.regex.test(value);
  }
}

function matchWildcard(f: WildcardFilter, v: string): boolean {
  if (f.matchAll) return true;
  const c = f.components;
  if (f.leadingStar && !f.trailingStar && !v.endsWith(c[c.length - 1]!)) return false;
  if (f.trailingStar && !f.leadingStar && !v.startsWith(c[0]!)) return false;
  let idx = 0;
  for (const comp of c) {
    if (v.indexOf(comp, idx) < 0) return false;
    idx += comp.length;
  }
  return true;
}

/** Whether a series with these tags passes the filter. */
export function matchTagFilter(f: TagFilter, tags: Readonly<Record<string, string>>): boolean {
  return matchTagValue(f, Object.hasOwn(tags, f.tagk) ? tags[f.tagk] : undefined);
}

/** Whether a series passes every filter (filters are ANDed, SaltScanner). */
export function matchAllTagFilters(filters: readonly TagFilter[], tags: Readonly<Record<string, string>>): boolean {
  for (const f of filters) if (!matchTagFilter(f, tags)) return false;
  return true;
}

/**
 * Equality as OpenTSDB's filters define it (groupBy is not part of it): same family, tagk,
 * case flag and literal set / wildcard components / pattern. iwildcard equals a
 * case-insensitive wildcard; wildcard components ignore where the stars were.
 */
export function tagFilterKey(f: TagFilter): string {
  switch (f.type) {
    case 'literal_or':
    case 'iliteral_or':
    case 'not_literal_or':
    case 'not_iliteral_or':
      return JSON.stringify([f.negate ? 'not_literal' : 'literal', f.tagk, f.caseInsensitive, [...f.literals].sort()]);
    case 'wildcard':
    case 'iwildcard':
      return JSON.stringify(['wildcard', f.tagk, f.caseInsensitive, f.components]);
    case 'regexp':
      return JSON.stringify(['regexp', f.tagk, f.filter]);
  }
}

/** The same filter with groupBy set. */
export function withGroupBy(f: TagFilter, groupBy: boolean): TagFilter {
  return f.groupBy === groupBy ? f : { ...f, groupBy };
}

/** A filter as OpenTSDB writes it in showQuery output (note `group_by`, not `groupBy`). */
export function tagFilterEcho(f: TagFilter): { tagk: string; filter: string; group_by: boolean; type: string } {
  return { tagk: f.tagk, filter: f.filter, group_by: f.groupBy, type: f.type };
}

/**
 * TagVFilter#getFilter: a tag value of the legacy map or of an `m=` curly set, read as a
 * filter. `*` and plain literals give undefined (the caller makes them wildcard(*) /
 * literal_or); `type(expr)` builds that type (lower-cased); any other value with a `*`
 * is a case-insensitive wildcard that reports type `wildcard`.
 */
export function parseTagValue(tagk: string, value: string): TagFilter | undefined {
  if (tagk.length === 0) throw illegal('Tagk cannot be null or empty');
  if (value.length === 0) throw illegal('Filter cannot be null or empty');
  if (value === '*') return undefined;
  const paren = value.indexOf('(');
  if (paren >= 0) {
    if (!value.endsWith(')')) throw illegal(`Filter must end with a ')': ${value}`);
    return createTagFilter(value.slice(0, paren).toLowerCase(), tagk, value.slice(paren + 1, -1));
  }
  return value.includes('*') ? wildcard(tagk, value, true, false, 'wildcard') : undefined;
}

/**
 * TagVFilter#mapToFilters: appends the filters of tag map entries to `filters` (returned
 * as a new array). With `groupBy`, each gets groupBy and a filter equal to one already in
 * the list is not added again; the existing one gets groupBy instead.
 */
export function tagMapToFilters(entries: Iterable<readonly [string, string]>, filters: readonly TagFilter[],
  groupBy: boolean): TagFilter[] {
  const out = [...filters];
  for (const [tagk, value] of entries) {
    let f = parseTagValue(tagk, value) ?? (value === '*'
      ? wildcard(tagk, '*', true, false, 'wildcard')
      : createTagFilter('literal_or', tagk, value));
    if (!groupBy) {
      out.push(f);
      continue;
    }
    f = withGroupBy(f, true);
    if (out.length === 0) {
      out.push(f); // nothing to be equal to (the common case: a tag map's first entry)
      continue;
    }
    const key = tagFilterKey(f);
    const i = out.findIndex((e) => tagFilterKey(e) === key);
    if (i < 0) out.push(f);
    else out[i] = withGroupBy(out[i]!, true);
  }
  return out;
}

export { FILTER_TYPES } from './filter-types.js';
