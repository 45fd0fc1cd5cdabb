/**
 * Compiles the filter data of one read (RowFilter tree, time range, family list) into fast
 * predicates, once per get/scan. Shared by the memory store and the embedded engine so
 * both evaluate filters identically.
 *
 * Semantics (store.ts, RowFilter):
 * - row filters (keyRegex, fuzzyKey, prefix) look at the key only; cell filters
 *   (qualifierRange, timeRange, the read's families and timeRange) at one cell version;
 *   `and` is the conjunction of its children, so it splits into "all row filters" and
 *   "all cell filters"; an empty `and` selects everything;
 * - keyRegex: the key read as latin1 must match the whole pattern, `^(?:pattern)$` with
 *   flag `s`;
 * - fuzzyKey: a key matches a rule when it is at least as long as the template and every
 *   byte where mask = 1 equals the template's; any rule matching suffices;
 * - qualifierRange with a family selects only that family's cells in [start, end); cells
 *   of other families are not selected (Bigtable ColumnRangeFilter). An absent or empty
 *   `end` is unbounded, as for row keys.
 *
 * REQUIRES: the filter passed validateFilter (core/api/validate.ts). Compiled filters copy
 * what they keep, so callers may reuse their buffers afterwards. Not thread-safe, but
 * stateless between calls (a compiled filter may serve several interleaved scans).
 */
import { compareBytes, latin1, prefixEnd, startsWith } from './bytes.js';
import type { FuzzyRule, KeyRange, RowFilter, TimeRange } from './store.js';

/** What one read selects, as predicates. */
export interface CompiledFilter {
  /** True when some row filter is present (else rowMatches always returns true). */
  readonly hasRowFilter: boolean;
  /** True when some cell filter, family list or time range is present. */
  readonly hasCellFilter: boolean;
  /** Whether a row with this key can be returned (its cells are still filtered). */
  rowMatches(key: Uint8Array): boolean;
  /** Whether one version of a cell is selected. */
  cellMatches(family: string, qualifier: Uint8Array, timestamp: number): boolean;
}

/** The filter data of one read. */
export interface ReadFilterInput {
  readonly filter?: RowFilter | undefined;
  readonly timeRange?: TimeRange | undefined;
  readonly families?: readonly string[] | undefined;
}

interface QualifierRange {
  readonly family: string | undefined;
  readonly start: Uint8Array | undefined;
  /** Undefined = unbounded (an empty `end` normalizes to undefined). */
  readonly end: Uint8Array | undefined;
}

/** Compiles a read's filter data into predicates (see the file header for semantics). */
/** Selects everything: the compiled form of a read without filters (shared). */
const SELECT_ALL: CompiledFilter = {
  hasRowFilter: false,
  hasCellFilter: false,
  rowMatches: () => true,
  cellMatches: () => true,
};

export function compileReadFilter(opts: ReadFilterInput): CompiledFilter {
  if (opts.filter === undefined && opts.timeRange === undefined && opts.families === undefined) return SELECT_ALL;
  const parts: Parts = { prefixes: [], fuzzy: [], regexes: [], qualifierRanges: [], timeStart: 0, timeEnd: Infinity };
  if (opts.timeRange !== undefined) addTimeRange(parts, opts.timeRange);
  if (opts.filter !== undefined) collect(parts, opts.filter);
  return new ReadFilter(parts, opts.families === undefined ? undefined : new Set(opts.families));
}

interface Parts {
  prefixes: Uint8Array[];
  fuzzy: FuzzyRule[][];
  regexes: RegExp[];
  qualifierRanges: QualifierRange[];
  timeStart: number;
  timeEnd: number;
}

function collect(parts: Parts, f: RowFilter): void {
  switch (f.kind) {
    case 'prefix':
      parts.prefixes.push(f.prefix.slice());
      return;
    case 'fuzzyKey':
      parts.fuzzy.push(f.rules.map((r) => ({ template: r.template.slice(), mask: r.mask.slice() })));
      return;
    case 'keyRegex':
      parts.regexes.push(new RegExp(`^(?:${f.pattern})$`, 's'));
      return;
    case 'qualifierRange':
      parts.qualifierRanges.push({
        family: f.family,
        start: f.start === undefined || f.start.length === 0 ? undefined : f.start.slice(),
        end: f.end === undefined || f.end.length === 0 ? undefined : f.end.slice(),
      });
      return;
    case 'timeRange':
      addTimeRange(parts, f.range);
      return;
    case 'and':
      for (const child of f.filters) collect(parts, child);
      return;
  }
}

function addTimeRange(parts: Parts, r: TimeRange): void {
  if (r.start !== undefined && r.start > parts.timeStart) parts.timeStart = r.start;
  if (r.end !== undefined && r.end < parts.timeEnd) parts.timeEnd = r.end;
}

class ReadFilter implements CompiledFilter {
  readonly hasRowFilter: boolean;
  readonly hasCellFilter: boolean;
  private readonly parts: Parts;
  private readonly families: ReadonlySet<string> | undefined;

  constructor(parts: Parts, families: ReadonlySet<string> | undefined) {
    this.parts = parts;
    this.families = families;
    this.hasRowFilter = parts.prefixes.length + parts.fuzzy.length + parts.regexes.length > 0;
    this.hasCellFilter = families !== undefined || parts.qualifierRanges.length > 0 ||
      parts.timeStart > 0 || parts.timeEnd !== Infinity;
  }

  rowMatches(key: Uint8Array): boolean {
    const p = this.parts;
    for (const prefix of p.prefixes) if (!startsWith(key, prefix)) return false;
    for (const rules of p.fuzzy) if (!fuzzyMatches(rules, key)) return false;
    if (p.regexes.length > 0) {
      // The latin1 form is built once per row and shared by every regex of the read.
      const s = latin1(key);
      for (const re of p.regexes) if (!re.test(s)) return false;
    }
    return true;
  }

  cellMatches(family: string, qualifier: Uint8Array, timestamp: number): boolean {
    const p = this.parts;
    if (timestamp < p.timeStart || timestamp >= p.timeEnd) return false;
    if (this.families !== undefined && !this.families.has(family)) return false;
    for (const r of p.qualifierRanges) {
      if (r.family !== undefined && r.family !== family) return false;
      if (r.start !== undefined && compareBytes(qualifier, r.start) < 0) return false;
      if (r.end !== undefined && compareBytes(qualifier, r.end) >= 0) return false;
    }
    return true;
  }
}

/** True when `key` matches at least one rule (see RowFilter 'fuzzyKey'). */
export function fuzzyMatches(rules: readonly FuzzyRule[], key: Uint8Array): boolean {
  for (const rule of rules) if (fuzzyRuleMatches(rule, key)) return true;
  return false;
}

function fuzzyRuleMatches(rule: FuzzyRule, key: Uint8Array): boolean {
  const t = rule.template;
  const m = rule.mask;
  if (key.length < t.length) return false;
  for (let i = 0; i < t.length; i++) if (m[i] !== 0 && key[i] !== t[i]) return false;
  return true;
}

/**
 * For forward scans: the smallest key strictly greater than `key` that matches some rule,
 * or undefined when no greater key can match (HBase FuzzyRowFilter.getNextCellHint).
 * A scan positioned on a non-matching `key` may seek straight to the result without
 * skipping any matching row.
 */
export function fuzzyNextKey(rules: readonly FuzzyRule[], key: Uint8Array): Uint8Array | undefined {
  let best: Uint8Array | undefined;
  for (const rule of rules) {
    const next = fuzzyRuleNextKey(rule, key);
    if (next !== undefined && (best === undefined || compareBytes(next, best) < 0)) best = next;
  }
  return best;
}

/**
 * Smallest x > key matching one rule. Two shapes of x > key exist:
 * (A) key is a proper prefix of x: possible when key agrees with the rule on every fixed
 *     byte it covers; the least such x is key + the least completion (fixed bytes from the
 *     template, 0x00 elsewhere), or key + 0x00 when key already covers the template.
 *     Every x of shape A is smaller than every x of shape B.
 * (B) x and key first differ at p < key.length with x[p] > key[p]: key[0, p) must agree
 *     with the rule, so p is at most the first conflicting position c; a larger p gives a
 *     smaller x, so try p = c, c-1, ..., 0: x[p] is the template byte when fixed (usable
 *     if greater than key[p]), else key[p] + 1 (usable if key[p] < 0xff), followed by the
 *     least completion up to the template's length.
 */
function fuzzyRuleNextKey(rule: FuzzyRule, key: Uint8Array): Uint8Array | undefined {
  const t = rule.template;
  const m = rule.mask;
  const overlap = Math.min(key.length, t.length);
  let conflict = -1;
  for (let i = 0; i < overlap; i++) {
    if (m[i] !== 0 && key[i] !== t[i]) {
      conflict = i;
      break;
    }
  }
  if (conflict < 0) {
    const out = new Uint8Array(Math.max(key.length + 1, t.length));
    out.set(key);
    fillLeast(out, rule, key.length);
    return out;
  }
  for (let p = conflict; p >= 0; p--) {
    let b: number;
    if (m[p] !== 0) {
      if (t[p]! <= key[p]!) continue;
      b = t[p]!;
    } else {
      if (key[p] === 0xff) continue;
      b = key[p]! + 1;
    }
    const out = new Uint8Array(t.length); // p < t.length here, so x is template-long
    out.set(key.subarray(0, p));
    out[p] = b;
    fillLeast(out, rule, p + 1);
    return out;
  }
  return undefined;
}

/** Writes the least completion of the rule into out[from, t.length): template or 0x00. */
function fillLeast(out: Uint8Array, rule: FuzzyRule, from: number): void {
  for (let i = from; i < rule.template.length; i++) out[i] = rule.mask[i] !== 0 ? rule.template[i]! : 0;
}

/**
 * A key prefix every row selected by the filter must start with, or undefined when the
 * filter implies none: a prefix filter's prefix; for fuzzyKey, the fixed leading bytes all
 * rules share; for `and`, the longest of its children's prefixes. Scans intersect their
 * range with the prefix's range (see intersectPrefixRange). The result is a copy.
 */
export function prefixOfFilter(filter: RowFilter | undefined): Uint8Array | undefined {
  if (filter === undefined) return undefined;
  switch (filter.kind) {
    case 'prefix':
      return filter.prefix.length === 0 ? undefined : filter.prefix.slice();
    case 'fuzzyKey': {
      let common: Uint8Array | undefined;
      for (const rule of filter.rules) {
        let n = 0;
        while (n < rule.mask.length && rule.mask[n] !== 0) n++;
        const fixed = rule.template.subarray(0, n);
        if (common === undefined) {
          common = fixed;
        } else {
          let k = 0;
          while (k < common.length && k < fixed.length && common[k] === fixed[k]) k++;
          common = common.subarray(0, k);
        }
      }
      return common === undefined || common.length === 0 ? undefined : common.slice();
    }
    case 'and': {
      // Every child's prefix is required, so any of them is a valid answer; the longest
      // narrows most. (Conflicting prefixes select nothing; the row filter still says so.)
      let best: Uint8Array | undefined;
      for (const child of filter.filters) {
        const p = prefixOfFilter(child);
        if (p !== undefined && (best === undefined || p.length > best.length)) best = p;
      }
      return best;
    }
    default:
      return undefined;
  }
}

/**
 * The part of [range.start, range.end) whose keys start with `prefix` (empty bounds mean
 * the table's ends), or undefined when that part is empty.
 */
export function intersectPrefixRange(range: KeyRange, prefix: Uint8Array): KeyRange | undefined {
  const pEnd = prefixEnd(prefix);
  const start = compareBytes(range.start, prefix) >= 0 ? range.start : prefix;
  let end = range.end;
  if (pEnd.length > 0 && (end.length === 0 || compareBytes(pEnd, end) < 0)) end = pEnd;
  if (end.length > 0 && compareBytes(start, end) >= 0) return undefined;
  return { start, end };
}
