/**
 * core/api/filters.ts: compiled predicates, and fuzzyNextKey checked against brute force —
 * it must never skip a matching key, and must return the least matching key above its
 * argument — plus prefixOfFilter and intersectPrefixRange.
 */
import { describe, expect, it } from 'vitest';
import { compareBytes, latin1, toHex, utf8 } from '../../core/api/bytes.js';
import {
  compileReadFilter, fuzzyMatches, fuzzyNextKey, intersectPrefixRange, prefixOfFilter,
} from '../../core/api/filters.js';
import type { FuzzyRule } from '../../core/api/store.js';
import { seededRandom, testSeed } from '../helpers/model.js';

const b = (...n: number[]): Uint8Array => Uint8Array.from(n);
const hex = (x: Uint8Array | undefined): string | undefined => (x === undefined ? undefined : toHex(x));

/** Every key over `alphabet` of length 0..maxLen, sorted. */
function universe(alphabet: readonly number[], maxLen: number): Uint8Array[] {
  const out: Uint8Array[] = [new Uint8Array(0)];
  let layer: Uint8Array[] = [new Uint8Array(0)];
  for (let len = 1; len <= maxLen; len++) {
    const next: Uint8Array[] = [];
    for (const k of layer) for (const c of alphabet) next.push(Uint8Array.from([...k, c]));
    out.push(...next);
    layer = next;
  }
  return out.sort(compareBytes);
}

function randomRules(rnd: () => number, alphabet: readonly number[], maxLen: number): FuzzyRule[] {
  const n = 1 + Math.floor(rnd() * 3);
  return Array.from({ length: n }, () => {
    const len = Math.floor(rnd() * (maxLen + 1));
    return {
      template: Uint8Array.from({ length: len }, () => alphabet[Math.floor(rnd() * alphabet.length)]!),
      mask: Uint8Array.from({ length: len }, () => (rnd() < 0.6 ? 1 : 0)),
    };
  });
}

/**
 * Checks fuzzyNextKey(rules, k) against the sorted universe for every k in `probes`;
 * returns the failures (asserting per probe would dominate the run time).
 */
function nextKeyFailures(rules: FuzzyRule[], keys: readonly Uint8Array[], probes: readonly number[]): string[] {
  const matching = keys.map((k) => fuzzyMatches(rules, k));
  const failures: string[] = [];
  for (const idx of probes) {
    const k = keys[idx]!;
    const next = fuzzyNextKey(rules, k);
    let firstMatch = -1; // the first matching universe key after k
    for (let j = idx + 1; j < keys.length; j++) if (matching[j]) { firstMatch = j; break; }
    const ok = next === undefined
      ? firstMatch === -1
      // above k, matching, and no matching key strictly between k and next
      : compareBytes(next, k) > 0 && fuzzyMatches(rules, next) &&
        (firstMatch === -1 || compareBytes(next, keys[firstMatch]!) <= 0);
    if (!ok) failures.push(`key ${toHex(k)} → ${hex(next)}`);
  }
  return failures;
}

describe('fuzzyNextKey', () => {
  it('never skips a matching key and is matching itself (small alphabet, exhaustive)', () => {
    const seed = testSeed(1234);
    const rnd = seededRandom(seed);
    const alphabet = [0x00, 0x01, 0x7f, 0xfe, 0xff];
    const keys = universe(alphabet, 4);
    const all = keys.map((_, i) => i);
    for (let n = 0; n < 150; n++) {
      const rules = randomRules(rnd, alphabet, 3);
      expect(nextKeyFailures(rules, keys, all), `seed ${seed}, rules #${n}: ${JSON.stringify(rules.map((r) => [toHex(r.template), toHex(r.mask)]))}`).toEqual([]);
    }
  });

  it('returns the least matching key above its argument (all byte values, length <= 2)', () => {
    const seed = testSeed(99);
    const rnd = seededRandom(seed);
    const alphabet = Array.from({ length: 256 }, (_, i) => i);
    const keys = universe(alphabet, 2);
    for (let n = 0; n < 20; n++) {
      const rules = randomRules(rnd, [0x00, 0x10, 0x80, 0xff], 2);
      const probes = Array.from({ length: 100 }, () => Math.floor(rnd() * keys.length));
      // With templates of length <= 2, the least match above a key is a universe key, or
      // key + 0x00 (length 3) when the key itself matches; both are checked exactly.
      for (const idx of probes) {
        const k = keys[idx]!;
        const next = fuzzyNextKey(rules, k);
        if (fuzzyMatches(rules, k)) {
          expect(hex(next)).toBe(toHex(Uint8Array.from([...k, 0])));
          continue;
        }
        let want: Uint8Array | undefined;
        for (let j = idx + 1; j < keys.length; j++) if (fuzzyMatches(rules, keys[j]!)) { want = keys[j]; break; }
        expect(hex(next), `seed ${seed}: key ${toHex(k)}`).toBe(hex(want));
      }
    }
  });

  it('a seek-driven scan finds exactly the matching keys', () => {
    const rnd = seededRandom(testSeed(5));
    const alphabet = [0x00, 0x02, 0x80, 0xff];
    const keys = universe(alphabet, 4);
    for (let n = 0; n < 100; n++) {
      const rules = randomRules(rnd, alphabet, 4);
      const want = keys.filter((k) => fuzzyMatches(rules, k)).map(toHex);
      const got: string[] = [];
      let i = 0;
      let seeks = 0;
      while (i < keys.length) {
        const k = keys[i]!;
        if (fuzzyMatches(rules, k)) {
          got.push(toHex(k));
          i++;
          continue;
        }
        const target = fuzzyNextKey(rules, k);
        if (target === undefined) break;
        seeks++;
        let lo = i + 1;
        let hi = keys.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (compareBytes(keys[mid]!, target) < 0) lo = mid + 1;
          else hi = mid;
        }
        i = lo;
      }
      expect(got, `rules #${n}`).toEqual(want);
      expect(seeks).toBeLessThanOrEqual(keys.length);
    }
  });

  it('handles the HBase-style examples', () => {
    const rules = [{ template: b(0, 0, 1, 0), mask: b(0, 0, 1, 0) }];
    expect(hex(fuzzyNextKey(rules, b(0, 0, 0, 5)))).toBe('00000100');
    expect(hex(fuzzyNextKey(rules, b(0, 0, 2, 5)))).toBe('00010100');
    expect(hex(fuzzyNextKey(rules, b(0xff, 0xff, 2)))).toBeUndefined();
    expect(hex(fuzzyNextKey(rules, b(0, 0)))).toBe('00000100');
    expect(hex(fuzzyNextKey(rules, b(0, 0, 1, 9)))).toBe('0000010900');
    expect(hex(fuzzyNextKey([{ template: b(5), mask: b(1) }], b(6)))).toBeUndefined();
    expect(hex(fuzzyNextKey([{ template: b(5), mask: b(1) }, { template: b(7), mask: b(1) }], b(6)))).toBe('07');
  });
});

describe('compileReadFilter', () => {
  it('without filter data selects everything', () => {
    const f = compileReadFilter({});
    expect([f.hasRowFilter, f.hasCellFilter]).toEqual([false, false]);
    expect(f.rowMatches(b(1))).toBe(true);
    expect(f.cellMatches('cf', b(), 0)).toBe(true);
    const g = compileReadFilter({ filter: { kind: 'and', filters: [] } });
    expect([g.hasRowFilter, g.hasCellFilter]).toEqual([false, false]);
  });

  it('splits an and into row and cell predicates', () => {
    const f = compileReadFilter({
      families: ['a', 'b'],
      timeRange: { start: 10 },
      filter: { kind: 'and', filters: [
        { kind: 'prefix', prefix: utf8('ab') },
        { kind: 'keyRegex', pattern: 'ab.|x' },
        { kind: 'qualifierRange', family: 'a', start: utf8('m') },
        { kind: 'timeRange', range: { end: 20 } },
      ] },
    });
    expect([f.hasRowFilter, f.hasCellFilter]).toEqual([true, true]);
    expect(f.rowMatches(utf8('abc'))).toBe(true);
    expect(f.rowMatches(utf8('abcd'))).toBe(false);
    expect(f.rowMatches(utf8('x'))).toBe(false);
    expect(f.cellMatches('a', utf8('n'), 15)).toBe(true);
    expect(f.cellMatches('a', utf8('a'), 15)).toBe(false);
    expect(f.cellMatches('b', utf8('n'), 15)).toBe(false);
    expect(f.cellMatches('a', utf8('n'), 20)).toBe(false);
    expect(f.cellMatches('a', utf8('n'), 9)).toBe(false);
  });

  it('reads keys as latin1 with dotAll, and copies filter buffers', () => {
    const prefix = b(0xff);
    const f = compileReadFilter({ filter: { kind: 'and', filters: [
      { kind: 'prefix', prefix }, { kind: 'keyRegex', pattern: '\\xff.\\x00' },
    ] } });
    prefix[0] = 0;
    expect(f.rowMatches(b(0xff, 0x0a, 0x00))).toBe(true);
    expect(f.rowMatches(b(0xff, 0x0a, 0x01))).toBe(false);
  });

  it('treats an empty qualifierRange end as unbounded', () => {
    const f = compileReadFilter({ filter: { kind: 'qualifierRange', start: b(5), end: b() } });
    expect(f.cellMatches('cf', b(0xff, 0xff), 1)).toBe(true);
    expect(f.cellMatches('cf', b(4), 1)).toBe(false);
  });
});

describe('prefixOfFilter and intersectPrefixRange', () => {
  it('derives the required prefix', () => {
    expect(prefixOfFilter(undefined)).toBeUndefined();
    expect(hex(prefixOfFilter({ kind: 'prefix', prefix: b(1, 2) }))).toBe('0102');
    expect(prefixOfFilter({ kind: 'prefix', prefix: b() })).toBeUndefined();
    expect(hex(prefixOfFilter({ kind: 'fuzzyKey', rules: [
      { template: b(1, 2, 3, 4), mask: b(1, 1, 0, 1) }, { template: b(1, 2, 9), mask: b(1, 1, 1) },
    ] }))).toBe('0102');
    expect(prefixOfFilter({ kind: 'fuzzyKey', rules: [{ template: b(1), mask: b(1) }, { template: b(2), mask: b(1) }] })).toBeUndefined();
    expect(prefixOfFilter({ kind: 'fuzzyKey', rules: [{ template: b(1), mask: b(0) }] })).toBeUndefined();
    expect(hex(prefixOfFilter({ kind: 'and', filters: [
      { kind: 'prefix', prefix: b(1) }, { kind: 'keyRegex', pattern: '.*' },
      { kind: 'fuzzyKey', rules: [{ template: b(1, 2, 3), mask: b(1, 1, 0) }] },
    ] }))).toBe('0102');
    expect(prefixOfFilter({ kind: 'keyRegex', pattern: 'abc.*' })).toBeUndefined();
    expect(prefixOfFilter({ kind: 'timeRange', range: {} })).toBeUndefined();
  });

  it('intersects a key range with a prefix range', () => {
    const r = (s: number[], e: number[]): { start: Uint8Array; end: Uint8Array } => ({ start: b(...s), end: b(...e) });
    const show = (x: { start: Uint8Array; end: Uint8Array } | undefined): string | undefined =>
      x === undefined ? undefined : `${toHex(x.start)}..${toHex(x.end)}`;
    expect(show(intersectPrefixRange(r([], []), b(1, 2)))).toBe('0102..0103');
    expect(show(intersectPrefixRange(r([1, 2, 5], []), b(1, 2)))).toBe('010205..0103');
    expect(show(intersectPrefixRange(r([], [1, 2, 5]), b(1, 2)))).toBe('0102..010205');
    expect(show(intersectPrefixRange(r([], []), b(0xff)))).toBe('ff..');
    expect(show(intersectPrefixRange(r([], [0xff, 1]), b(0xff)))).toBe('ff..ff01');
    expect(intersectPrefixRange(r([2], []), b(1, 2))).toBeUndefined();
    expect(intersectPrefixRange(r([], [1, 2]), b(1, 2))).toBeUndefined();
    expect(intersectPrefixRange(r([0xff, 0xff], []), b(0xfe))).toBeUndefined();
  });
});

describe('latin1', () => {
  it('maps every byte to the char of the same code, in plain and shared memory', () => {
    for (const make of [(n: number) => new Uint8Array(n), (n: number) => new Uint8Array(new SharedArrayBuffer(n))]) {
      const b = make(256 * 40);
      for (let i = 0; i < b.length; i++) b[i] = (i * 7) & 255;
      const s = latin1(b.subarray(3));
      expect(s.length).toBe(b.length - 3);
      for (let i = 0; i < s.length; i++) expect(s.charCodeAt(i)).toBe(b[i + 3]);
      expect(latin1(b.subarray(0, 0))).toBe('');
    }
  });
});
