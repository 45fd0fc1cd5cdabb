/**
 * Tag-value filters (tsdb/query/tag-filter.ts, filter-types.ts) and the row-key filter
 * built from them (row-key-filter.ts), against OpenTSDB's semantics (the wildcard vectors
 * are OpenTSDB's TestTagVWildcardFilter). Key patterns are checked through core's own
 * keyRegex evaluation.
 */
import { describe, expect, it } from 'vitest';
import { compileReadFilter, fuzzyMatches } from '../../../core/api/filters.js';
import { isTsdbError } from '../../../tsdb/errors.js';
import { explicitTagsFuzzyRule, literalsToResolve, planRowKeyFilter, tsuidKeyRegex } from '../../../tsdb/query/row-key-filter.js';
import type { ResolvedTagFilter } from '../../../tsdb/query/row-key-filter.js';
import {
  FILTER_TYPES, createTagFilter, javaSplit, matchAllTagFilters, matchTagFilter, matchTagValue, parseTagValue,
  tagFilterEcho, tagFilterKey, tagMapToFilters,
} from '../../../tsdb/query/tag-filter.js';
import type { TagFilter } from '../../../tsdb/query/tag-filter.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';
import { Random } from '../../../core/util/random.js';
import { compareBytes, toHex } from '../../../core/api/bytes.js';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isTsdbError(e, 'TSDB_ILLEGAL_ARGUMENT')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('filter construction', () => {
  it('builds the seven types, matched case-sensitively by name', () => {
    for (const type of ['literal_or', 'iliteral_or', 'not_literal_or', 'not_iliteral_or', 'wildcard', 'iwildcard', 'regexp']) {
      expect(createTagFilter(type, 'host', type.includes('wildcard') ? 'web*' : 'web01', true)).toMatchObject({ type, tagk: 'host', groupBy: true });
    }
    expect(errorOf(() => createTagFilter('Wildcard', 'host', 'web*'))).toBe('Could not find a tag value filter of the type: Wildcard');
    expect(errorOf(() => createTagFilter('not_key', 'host', ''))).toBe('Could not find a tag value filter of the type: not_key');
    expect(errorOf(() => createTagFilter('', 'host', 'a'))).toBe('The filter type cannot be null or empty');
    expect(errorOf(() => createTagFilter('literal_or', '', 'a'))).toBe('The tagk cannot be null or empty');
    expect(errorOf(() => createTagFilter('literal_or', 'host', ''))).toBe('Filter cannot be null or empty');
    expect(errorOf(() => createTagFilter('literal_or', 'host', '|'))).toBe('Filter must contain more than just a pipe');
    expect(errorOf(() => createTagFilter('wildcard', 'host', 'web01'))).toBe('Filter must contain an asterisk');
    expect(errorOf(() => createTagFilter('regexp', 'host', '(web'))).toMatch(/^Invalid regular expression/);
  });

  it('splits literals as Java does (trailing empties dropped)', () => {
    expect(javaSplit('a||b', '|')).toEqual(['a', '', 'b']);
    expect(javaSplit('a|', '|')).toEqual(['a']);
    expect(javaSplit('||', '|')).toEqual([]);
    expect(createTagFilter('iliteral_or', 'host', 'Web01|WEB02|web01')).toMatchObject({ literals: ['web01', 'web02'] });
  });
});

describe('filter matching', () => {
  it('literal_or: exact membership; i: lower-cased; a missing tagk never matches', () => {
    const f = createTagFilter('literal_or', 'host', 'web01|web02');
    expect([matchTagValue(f, 'web01'), matchTagValue(f, 'web02'), matchTagValue(f, 'Web01'), matchTagValue(f, 'web03')])
      .toEqual([true, true, false, false]);
    expect(matchTagFilter(f, { dc: 'lga' })).toBe(false);
    const i = createTagFilter('iliteral_or', 'host', 'WEB01');
    expect([matchTagValue(i, 'web01'), matchTagValue(i, 'wEb01'), matchTagValue(i, undefined)]).toEqual([true, true, false]);
  });

  it('not_literal_or: not in the set, and true when the tagk is absent', () => {
    const n = createTagFilter('not_literal_or', 'host', 'web01|web02');
    expect([matchTagValue(n, 'web01'), matchTagValue(n, 'web03'), matchTagValue(n, 'WEB01'), matchTagValue(n, undefined)])
      .toEqual([false, true, true, true]);
    const ni = createTagFilter('not_iliteral_or', 'host', 'WEB01');
    expect([matchTagValue(ni, 'web01'), matchTagValue(ni, 'web02')]).toEqual([false, true]);
    // Deviation: OpenTSDB rejects one-character values here.
    expect(matchTagValue(createTagFilter('not_literal_or', 'host', 'a'), 'a')).toBe(false);
  });

  const value = 'ogg-01.ops.ankh.morpork.com';
  const wild = (p: string, ci = false): boolean => matchTagValue(createTagFilter(ci ? 'iwildcard' : 'wildcard', 'host', p), value);

  it("wildcard: OpenTSDB's own test vectors", () => {
    for (const p of ['*', '*.morpork.com', 'ogg*', 'ogg*com', 'ogg*ops*ank*com', 'ogg*ops*com', '*morpork*', '*ops*com',
      '*ops*mor*com', 'ogg*ops*', 'ogg*ops*mor*', 'ogg***com', 'ogg*****', '****com', '****ogg*****mor****com****', '****']) {
      expect(wild(p), p).toBe(true);
    }
    for (const p of ['*.morpork.org', 'magrat*', 'magrat*com', '*quirm*', '*.MorPork.com', 'Ogg*', 'ogG*Com']) {
      expect(wild(p), p).toBe(false);
    }
    for (const p of ['*.MorPork.com', 'Ogg*', 'ogG*Com']) expect(wild(p, true), p).toBe(true);
    expect(matchTagValue(createTagFilter('wildcard', 'host', '*ops*mor'), '*ops*mor')).toBe(true);
    expect(matchTagValue(createTagFilter('wildcard', 'host', 'Здр*ра'), "Здравей'_хора")).toBe(true);
    expect(matchTagFilter(createTagFilter('wildcard', 'host', '*'), { colo: 'lga' })).toBe(false);
  });

  it('wildcard quirks: an infix pattern is not anchored and order is loosely enforced', () => {
    expect(matchTagValue(createTagFilter('wildcard', 'host', 'ogg*com'), 'xxogg-01.comxx')).toBe(true);
    // The search index advances by the component's length, not past its match.
    expect(matchTagValue(createTagFilter('wildcard', 'host', 'xyz*a'), 'aaaaxyz')).toBe(true);
  });

  it('iwildcard lower-cases the value too (deviation: OpenTSDB compares the raw value)', () => {
    expect(matchTagValue(createTagFilter('iwildcard', 'host', 'web*'), 'WEB01')).toBe(true);
    expect(matchTagValue(createTagFilter('iwildcard', 'host', 'WEB*'), 'Web01')).toBe(true);
  });

  it('regexp: an unanchored search; a leading (?i) becomes a flag', () => {
    expect(matchTagValue(createTagFilter('regexp', 'host', 'web'), 'myweb01')).toBe(true);
    expect(matchTagValue(createTagFilter('regexp', 'host', '^web'), 'myweb01')).toBe(false);
    expect(matchTagValue(createTagFilter('regexp', 'host', '(?i)^WEB\\d+$'), 'web01')).toBe(true);
  });

  it('ANDs a filter list', () => {
    const fs = [createTagFilter('wildcard', 'host', 'web*'), createTagFilter('not_literal_or', 'dc', 'lga')];
    expect(matchAllTagFilters(fs, { host: 'web01', dc: 'sjc' })).toBe(true);
    expect(matchAllTagFilters(fs, { host: 'web01', dc: 'lga' })).toBe(false);
    expect(matchAllTagFilters([], {})).toBe(true);
  });
});

describe('type(expr) syntax and the legacy tags map', () => {
  it('reads tag values as OpenTSDB getFilter does', () => {
    expect(parseTagValue('host', '*')).toBeUndefined();
    expect(parseTagValue('host', 'web01')).toBeUndefined();
    expect(parseTagValue('host', 'Regexp(web.*)')).toMatchObject({ type: 'regexp', filter: 'web.*', groupBy: false });
    expect(parseTagValue('host', 'web*')).toMatchObject({ type: 'wildcard', caseInsensitive: true });
    expect(errorOf(() => parseTagValue('host', 'literal_or(a|b'))).toBe("Filter must end with a ')': literal_or(a|b");
    expect(errorOf(() => parseTagValue('host', 'foo(x)'))).toBe('Could not find a tag value filter of the type: foo');
    expect(errorOf(() => parseTagValue('host', ''))).toBe('Filter cannot be null or empty');
  });

  it('converts a map to group-by filters, merging duplicates', () => {
    const fs = tagMapToFilters(Object.entries({ host: '*', dc: 'lga|sjc', rack: 'r1', os: 'regexp(lin.*)' }), [], true);
    expect(fs.map((f) => [f.type, f.tagk, f.filter, f.groupBy])).toEqual([
      ['wildcard', 'host', '*', true], ['literal_or', 'dc', 'lga|sjc', true], ['literal_or', 'rack', 'r1', true],
      ['regexp', 'os', 'lin.*', true],
    ]);
    const plain = tagMapToFilters([['host', 'web01']], [], false);
    const merged = tagMapToFilters([['host', 'web01'], ['host', 'web01']], plain, true);
    expect(merged.map(tagFilterEcho)).toEqual([{ tagk: 'host', filter: 'web01', group_by: true, type: 'literal_or' }]);
  });

  it('compares filters as OpenTSDB does (groupBy and star positions ignored)', () => {
    const k = (t: string, e: string, g = false): string => tagFilterKey(createTagFilter(t, 'host', e, g));
    expect(k('wildcard', 'web*')).toBe(k('wildcard', '*web', true));
    expect(k('literal_or', 'a|b')).toBe(k('literal_or', 'b|a'));
    expect(k('literal_or', 'a')).not.toBe(k('iliteral_or', 'a'));
    expect(k('iwildcard', 'web*')).toBe(tagFilterKey(parseTagValue('host', 'WEB*')!));
  });

  it('lists the filter types for /api/config/filters exactly as OpenTSDB prints them', () => {
    expect(Object.keys(FILTER_TYPES).sort()).toEqual(['iliteral_or', 'iwildcard', 'literal_or', 'not_iliteral_or', 'not_literal_or', 'regexp', 'wildcard']);
    expect(FILTER_TYPES.literal_or).toEqual({
      examples: 'host=literal_or(web01),  host=literal_or(web01|web02|web03)  {"type":"literal_or","tagk":"host","filter":"web01|web02|web03","groupBy":false}',
      description: 'Accepts one or more exact values and matches if the series contains any of them. Multiple values can be ' +
        'included and must be separated by the | (pipe) character. The filter is case sensitive and will not allow ' +
        'characters that TSDB does not allow at write time.',
    });
    expect(FILTER_TYPES.not_iliteral_or!.description).toContain('does NOT contain any of them');
    expect(FILTER_TYPES.not_iliteral_or!.description).toContain('case insensitive');
    expect(FILTER_TYPES.regexp!.examples).toBe('host=regexp(.*)  {"type":"regexp","tagk":"host","filter":".*","groupBy":false}');
    expect(FILTER_TYPES.iwildcard!.description).toContain('Case insensitivity is achieved by dropping all values to lower case.');
  });
});

describe('row-key filter', () => {
  const W: SchemaWidths = { metric: 3, tagk: 3, tagv: 3, saltWidth: 0, saltBuckets: 1 };
  const u = (...b: number[]): Uint8Array => Uint8Array.from(b);
  const HOST = u(0, 0, 1), DC = u(0, 0, 3), RACK = u(0, 0, 2);
  const key = (tags: Array<[Uint8Array, Uint8Array]>, w = W): Uint8Array => {
    const parts = [new Uint8Array(w.saltWidth), u(0, 0, 9), u(0x50, 0xe2, 0x27, 0x00), ...tags.flatMap(([k, v]) => [k, v])];
    return Uint8Array.from(parts.flatMap((p) => [...p]));
  };
  const matches = (pattern: string | undefined, k: Uint8Array): boolean =>
    compileReadFilter({ filter: { kind: 'keyRegex', pattern: pattern! } }).rowMatches(k);
  const resolved = (f: TagFilter, tagk: Uint8Array, tagvs?: Uint8Array[]): ResolvedTagFilter => ({ filter: f, tagk, ...(tagvs ? { tagvs } : {}) });

  it('puts literal UIDs into the pattern and requires every filtered tagk', () => {
    const host = createTagFilter('literal_or', 'host', 'web01|web02', true);
    const dc = createTagFilter('wildcard', 'dc', '*', false);
    expect(literalsToResolve(host)).toEqual(['web01', 'web02']);
    const plan = planRowKeyFilter(W, [resolved(dc, DC), resolved(host, HOST, [u(0, 0, 2), u(0, 0, 1)])]);
    expect(plan.keyRegex).toBe('.{7}(?:.{6})*?\\x00\\x00\\x01(?:\\x00\\x00\\x01|\\x00\\x00\\x02)(?:.{6})*?\\x00\\x00\\x03.{3}(?:.{6})*?');
    expect(plan.postScan).toEqual([]);
    expect(plan.groupBy).toEqual([HOST]);
    expect(matches(plan.keyRegex, key([[HOST, u(0, 0, 1)], [DC, u(0, 0, 7)]]))).toBe(true);
    expect(matches(plan.keyRegex, key([[HOST, u(0, 0, 1)], [RACK, u(0, 0, 5)], [DC, u(0, 0, 7)]]))).toBe(true);
    expect(matches(plan.keyRegex, key([[HOST, u(0, 0, 4)], [DC, u(0, 0, 7)]]))).toBe(false);
    expect(matches(plan.keyRegex, key([[HOST, u(0, 0, 1)]]))).toBe(false);
  });

  it('with explicitTags the key holds exactly the filtered tagks', () => {
    const host = createTagFilter('literal_or', 'host', 'web01');
    const plan = planRowKeyFilter(W, [resolved(host, HOST, [u(0, 0, 1)])], { explicitTags: true });
    expect(plan.keyRegex).toBe('.{7}\\x00\\x00\\x01(?:\\x00\\x00\\x01)');
    expect(matches(plan.keyRegex, key([[HOST, u(0, 0, 1)]]))).toBe(true);
    expect(matches(plan.keyRegex, key([[HOST, u(0, 0, 1)], [DC, u(0, 0, 7)]]))).toBe(false);
    const rule = explicitTagsFuzzyRule(W, u(0, 0, 9), [HOST]);
    expect(fuzzyMatches([rule], key([[HOST, u(0, 0, 8)]]))).toBe(true);
    expect(fuzzyMatches([rule], key([[DC, u(0, 0, 8)]]))).toBe(false);
  });

  it('keeps other filters post-scan; not_literal_or still requires the tagk', () => {
    const not = createTagFilter('not_literal_or', 'host', 'web01');
    const ci = createTagFilter('iliteral_or', 'dc', 'LGA');
    expect(literalsToResolve(ci)).toBeUndefined();
    const plan = planRowKeyFilter(W, [resolved(not, HOST), resolved(ci, DC)]);
    expect(plan.postScan).toEqual([not, ci]);
    expect(plan.keyRegex).toBe('.{7}(?:.{6})*?\\x00\\x00\\x01.{3}(?:.{6})*?\\x00\\x00\\x03.{3}(?:.{6})*?');
    expect(matches(plan.keyRegex, key([[DC, u(0, 0, 7)]]))).toBe(false);
  });

  it('unions the literals of one tagk, and drops a tagk past the expansion limit', () => {
    const a = createTagFilter('literal_or', 'host', 'web01');
    const b = createTagFilter('literal_or', 'host', 'web02');
    const both = planRowKeyFilter(W, [resolved(a, HOST, [u(0, 0, 1)]), resolved(b, HOST, [u(0, 0, 2)])]);
    expect(both.keyRegex).toContain('(?:\\x00\\x00\\x01|\\x00\\x00\\x02)');
    expect(both.postScan).toEqual([]);
    const limited = planRowKeyFilter(W, [resolved(a, HOST, [u(0, 0, 1)]), resolved(b, HOST, [u(0, 0, 2)])], { expansionLimit: 1 });
    expect(limited.keyRegex).toBeUndefined();
    expect(limited.postScan).toEqual([a, b]);
    expect(literalsToResolve(createTagFilter('literal_or', 'host', 'a|b|c'), 2)).toBeUndefined();
  });

  it('quotes UID bytes that are regex syntax, and handles salt and TSUIDs', () => {
    const v = u(0x5c, 0x45, 0x2e); // "\E."
    const plan = planRowKeyFilter(W, [resolved(createTagFilter('literal_or', 'host', 'x'), HOST, [v])]);
    expect(matches(plan.keyRegex, key([[HOST, v]]))).toBe(true);
    expect(matches(plan.keyRegex, key([[HOST, u(0x5c, 0x45, 0x41)]]))).toBe(false);
    const salted: SchemaWidths = { ...W, saltWidth: 1, saltBuckets: 20 };
    const sp = planRowKeyFilter(salted, [resolved(createTagFilter('wildcard', 'host', '*'), HOST)]);
    expect(sp.keyRegex!.startsWith('.{8}')).toBe(true);
    expect(matches(sp.keyRegex, key([[HOST, u(1, 2, 3)]], salted))).toBe(true);
    const t = tsuidKeyRegex(W, [u(0, 0, 9, 0, 0, 1, 0, 0, 2)]);
    expect(t).toBe('.{7}(?:\\x00\\x00\\x01\\x00\\x00\\x02)');
    expect(matches(t, key([[HOST, u(0, 0, 2)]]))).toBe(true);
    expect(matches(t, key([[HOST, u(0, 0, 2)], [DC, u(0, 0, 1)]]))).toBe(false);
  });
  it('seriesTest answers exactly as seriesRegex does, on random TSUIDs and filters', () => {
    // Small UID alphabets so keys often share tagks and values; widths of 1 and 2 bytes
    // too; lengths that are not whole pairs; keys with pairs out of order or repeated.
    for (const w of [W, { metric: 1, tagk: 1, tagv: 2, saltWidth: 0, saltBuckets: 1 }, { metric: 2, tagk: 2, tagv: 1, saltWidth: 1, saltBuckets: 4 }] as SchemaWidths[]) {
      const r = new Random(4242 + w.metric);
      const uid = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i === n - 1 ? r.int(5) : r.chance(0.1) ? 0x5c : 0));
      let matched = 0;
      for (let round = 0; round < 300; round++) {
        const tagks = [...new Map(Array.from({ length: 1 + r.int(3) }, () => uid(w.tagk)).map((k) => [toHex(k), k])).values()];
        const filters = tagks.map((k) => {
          const literal = r.chance(0.6);
          const f = literal ? createTagFilter('literal_or', 'host', 'a|b') : createTagFilter('wildcard', 'host', '*');
          return resolved(f, k, literal ? Array.from({ length: 1 + r.int(2) }, () => uid(w.tagv)) : undefined);
        });
        const explicit = r.chance(0.3);
        const plan = planRowKeyFilter(w, filters, { explicitTags: explicit });
        const re = new RegExp(`^(?:${plan.seriesRegex!})$`, 's');
        for (let k = 0; k < 40; k++) {
          const pairs = Array.from({ length: r.int(5) }, () => [...(r.chance(0.7) ? tagks[r.int(tagks.length)]! : uid(w.tagk)), ...uid(w.tagv)]);
          if (!r.chance(0.3)) pairs.sort((a, b) => compareBytes(Uint8Array.from(a), Uint8Array.from(b)));
          const bytes = [...uid(w.metric), ...pairs.flat()];
          if (r.chance(0.05)) bytes.push(r.int(256)); // not whole pairs
          const tsuid = Uint8Array.from(bytes);
          const want = re.test(Buffer.from(tsuid).toString('latin1'));
          expect(plan.seriesTest!(tsuid), `${plan.seriesRegex} on ${toHex(tsuid)}`).toBe(want);
          if (want) matched++;
        }
      }
      expect(matched).toBeGreaterThan(500); // both answers are exercised
    }
  });
});
