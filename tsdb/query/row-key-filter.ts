/**
 * The row-key filter OpenTSDB's scanner builds from a sub-query's tag filters
 * (TsdbQuery#findGroupBys, QueryUtil#getRowKeyUIDRegex / #getRowKeyTSUIDRegex), for
 * core's `keyRegex` RowFilter, which matches the whole row key read as latin1 with `.`
 * matching every byte (core/api/store.ts RowFilter, core/api/filters.ts). The patterns
 * therefore carry no `(?s)`, `^` or `$`, quote UID bytes as `\xHH`, and use only
 * RE2-compatible syntax.
 *
 * Planning, as OpenTSDB does it: filters are taken in tagk-UID order; every tagk mentioned
 * by a filter gets one entry in the key pattern: the union of the resolved literal UIDs of
 * its case-sensitive literal_or filters, or "any value" when it has none. So a series
 * lacking a filtered tagk is never scanned, even for not_literal_or. Literal filters whose
 * UIDs went into the pattern need no post-scan check; the other filters (and all filters
 * of a tagk whose literals would push the running literal count past the expansion limit;
 * that tagk then gets no entry at all) are post-scan. A pure `*` wildcard is never
 * post-scan. Without explicitTags any other tags may sit between and around the entries;
 * with it the key holds exactly the filtered tagks.
 */
import { compareBytes, toHex } from '../../core/api/bytes.js';
import type { FuzzyRule } from '../../core/api/store.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { TagFilter } from './tag-filter.js';

/** OpenTSDB's tsd.query.filter.expansion_limit default. */
export const DEFAULT_EXPANSION_LIMIT = 4096;

/** A filter with its tagk resolved to a UID and, for literals, its tagv UIDs. */
export interface ResolvedTagFilter {
  readonly filter: TagFilter;
  readonly tagk: Uint8Array;
  /**
   * The UIDs of literalsToResolve(filter) that exist (OpenTSDB fails the query on an
   * unknown one unless tsd.query.skip_unresolved_tagvs drops it). Omit for other filters.
   */
  readonly tagvs?: readonly Uint8Array[];
}

/** A filtered tagk of the key pattern. */
export interface KeyEntry {
  readonly tagk: Uint8Array;
  readonly values: readonly Uint8Array[] | undefined;
}

export interface RowKeyFilterPlan {
  /** For a `keyRegex` RowFilter; undefined when no filter narrows the key. */
  readonly keyRegex: string | undefined;
  /** The same pattern over a TSUID (metric UID then tag pairs: a series-index key). */
  readonly seriesRegex: string | undefined;
  /**
   * seriesRegex as a byte test (true exactly for the TSUIDs it matches), for callers that
   * hold the TSUIDs in memory: no pattern to compile per query, no string per key.
   */
  readonly seriesTest: ((tsuid: Uint8Array) => boolean) | undefined;
  /**
   * The key entries, in tagk-UID order: one per filtered tagk that is in the key, with
   * its literal tagv UIDs (sorted), or undefined for any value. The series index reads
   * their postings (series-plan.ts matchingSeries).
   */
  readonly entries: readonly KeyEntry[];
  /** Filters still to check against each new series' tag names. */
  readonly postScan: readonly TagFilter[];
  /** Tagk UIDs to group by, sorted and distinct. */
  readonly groupBy: readonly Uint8Array[];
}

/**
 * The literals whose tagv UIDs the caller should resolve before planning: those of a
 * case-sensitive literal_or with at most `expansionLimit` values; undefined otherwise.
 */
export function literalsToResolve(f: TagFilter, expansionLimit = DEFAULT_EXPANSION_LIMIT): readonly string[] | undefined {
  return f.type === 'literal_or' && f.literals.length <= expansionLimit ? f.literals : undefined;
}

/** Plans the key pattern and post-scan filters of one sub-query (see the file header). */
export function planRowKeyFilter(widths: SchemaWidths, filters: readonly ResolvedTagFilter[],
  opts: { readonly explicitTags?: boolean; readonly expansionLimit?: number } = {}): RowKeyFilterPlan {
  const limit = opts.expansionLimit ?? DEFAULT_EXPANSION_LIMIT;
  const byTagk = new Map<string, { tagk: Uint8Array; filters: ResolvedTagFilter[] }>();
  for (const r of filters) {
    const id = toHex(r.tagk);
    let e = byTagk.get(id);
    if (e === undefined) byTagk.set(id, e = { tagk: r.tagk, filters: [] });
    e.filters.push(r);
  }
  const groups = [...byTagk.values()].sort((a, b) => compareBytes(a.tagk, b.tagk));
  const entries: Array<{ tagk: Uint8Array; values: Uint8Array[] | undefined }> = [];
  const inKey = new Set<ResolvedTagFilter>();
  const groupBy: Uint8Array[] = [];
  let literalCount = 0;
  for (const g of groups) {
    if (g.filters.some((r) => r.filter.groupBy)) groupBy.push(g.tagk);
    const literals = new Map<string, Uint8Array>();
    const literalFilters = g.filters.filter((r) => r.tagvs !== undefined && r.tagvs.length > 0);
    for (const r of literalFilters) for (const v of r.tagvs!) literals.set(toHex(v), v);
    if (literals.size === 0) {
      entries.push({ tagk: g.tagk, values: undefined });
    } else if (literals.size + literalCount <= limit) {
      entries.push({ tagk: g.tagk, values: [...literals.values()].sort(compareBytes) });
      literalCount += literals.size;
      for (const r of literalFilters) inKey.add(r);
    }
  }
  const postScan = filters
    .filter((r) => !inKey.has(r) && !(r.filter.type === 'wildcard' || r.filter.type === 'iwildcard' ? r.filter.matchAll : false))
    .map((r) => r.filter);
  const explicit = opts.explicitTags === true;
  const narrowed = entries.length > 0 || explicit;
  const keyRegex = narrowed ? keyPattern(widths, entries, explicit, widths.saltWidth + widths.metric + 4) : undefined;
  const seriesRegex = narrowed ? keyPattern(widths, entries, explicit, widths.metric) : undefined;
  const seriesTest = narrowed ? seriesMatcher(widths, entries, explicit) : undefined;
  return { keyRegex, seriesRegex, seriesTest, entries, postScan, groupBy };
}

/** The key pattern after `head` bytes (salt, metric, base time of a row key; metric of a TSUID). */
function keyPattern(w: SchemaWidths, entries: ReadonlyArray<{ tagk: Uint8Array; values: Uint8Array[] | undefined }>,
  explicit: boolean, head: number): string {
  // Lazy: a whole-key match selects exactly the keys OpenTSDB's greedy `(?:.{6})*` does,
  // but tries the fewest skipped pairs first, so a filtered tagk near the key's start (tags
  // sort by UID: the oldest tagks come first) matches without backtracking over the whole
  // key (a devops row key: 860 -> 280 ns a test with its latin1 conversion).
  const skip = `(?:.{${w.tagk + w.tagv}})*?`;
  let p = `.{${head}}`;
  for (const e of entries) {
    if (!explicit) p += skip;
    p += quoteBytes(e.tagk);
    p += e.values === undefined ? `.{${w.tagv}}` : `(?:${e.values.map(quoteBytes).join('|')})`;
  }
  if (!explicit) p += skip;
  return p;
}

/**
 * keyPattern over a TSUID, as a byte test. The pattern matches the whole key: the metric,
 * then whole tag pairs in which the entries' pairs appear in order (each the entry's tagk
 * and one of its values, or any value), with any pairs between and around them unless
 * `explicit` (then exactly the entries' pairs). Taking each entry at the first pair that
 * satisfies it decides whether such a subsequence exists, as the pattern's backtracking
 * does.
 */
function seriesMatcher(w: SchemaWidths, entries: ReadonlyArray<{ tagk: Uint8Array; values: Uint8Array[] | undefined }>,
  explicit: boolean): (tsuid: Uint8Array) => boolean {
  const kw = w.tagk;
  const pw = w.tagk + w.tagv;
  const head = w.metric;
  const n = entries.length;
  const pairOk = (t: Uint8Array, o: number, e: { tagk: Uint8Array; values: Uint8Array[] | undefined }): boolean => {
    if (!bytesAt(t, o, e.tagk)) return false;
    if (e.values === undefined) return true;
    for (const v of e.values) if (bytesAt(t, o + kw, v)) return true;
    return false;
  };
  return (t) => {
    const len = t.length;
    if (len < head || (len - head) % pw !== 0) return false;
    if (explicit) {
      if ((len - head) / pw !== n) return false;
      for (let j = 0, o = head; j < n; j++, o += pw) if (!pairOk(t, o, entries[j]!)) return false;
      return true;
    }
    let j = 0;
    for (let o = head; o < len && j < n; o += pw) if (pairOk(t, o, entries[j]!)) j++;
    return j === n;
  };
}

/** True when b occurs in t at offset o. */
function bytesAt(t: Uint8Array, o: number, b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (t[o + i] !== b[i]) return false;
  return true;
}

/**
 * QueryUtil#getRowKeyTSUIDRegex: rows of exactly these series, given as TSUIDs (metric UID
 * then tag pairs) that share one metric; the metric is matched by the scan range.
 */
export function tsuidKeyRegex(widths: SchemaWidths, tsuids: readonly Uint8Array[]): string {
  const tagParts = [...new Map(tsuids.map((t) => {
    const tags = t.subarray(widths.metric);
    return [toHex(tags), tags] as const;
  })).values()].sort(compareBytes);
  return `.{${widths.saltWidth + widths.metric + 4}}(?:${tagParts.map(quoteBytes).join('|')})`;
}

/**
 * The FuzzyRowFilter OpenTSDB adds for explicitTags: the metric and every tagk
 * fixed, the salt, base time and tag values free. `tagks` in key order (sorted UIDs).
 */
export function explicitTagsFuzzyRule(widths: SchemaWidths, metric: Uint8Array, tagks: readonly Uint8Array[]): FuzzyRule {
  const head = widths.saltWidth + widths.metric + 4;
  const len = head + tagks.length * (widths.tagk + widths.tagv);
  const template = new Uint8Array(len);
  const mask = new Uint8Array(len);
  template.set(metric, widths.saltWidth);
  mask.fill(1, widths.saltWidth, widths.saltWidth + widths.metric);
  let off = head;
  for (const k of tagks) {
    template.set(k, off);
    mask.fill(1, off, off + widths.tagk);
    off += widths.tagk + widths.tagv;
  }
  return { template, mask };
}

/** Each byte as `\xHH`, so UID bytes are never read as regex syntax. */
function quoteBytes(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += `\\x${x.toString(16).padStart(2, '0')}`;
  return s;
}
