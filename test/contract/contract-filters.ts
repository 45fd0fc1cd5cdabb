/**
 * Store contract: every filter kind (prefix, keyRegex over binary keys, fuzzyKey rules,
 * qualifierRange, timeRange), `and` combinations, filters on gets and reverse scans, and
 * rejection of malformed or unsupported filters.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import type { FuzzyRule, RowFilter, RowFilterKind, Table } from '../../core/api/store.js';
import {
  b, bytesOf, cells, expectErrorClass, expectStoreError, fmt, getRow, put, scanAll, scanKeys, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

const ALL_KINDS: readonly RowFilterKind[] = ['keyRegex', 'fuzzyKey', 'prefix', 'qualifierRange', 'timeRange', 'and'];

/** Reference fuzzy match, written independently of core/api/filters.ts. */
function fuzzyOk(rules: readonly FuzzyRule[], key: Uint8Array): boolean {
  return rules.some((r) => key.length >= r.template.length &&
    r.template.every((t, i) => r.mask[i] === 0 || key[i] === t));
}

export function filterContract(ctx: ContractContext): void {
  const caps = ctx.caps;
  const has = (...kinds: RowFilterKind[]): boolean => kinds.every((k) => caps.filters.has(k));

  async function keyTable(ks: readonly Uint8Array[]): Promise<Table> {
    const t = await ctx.table();
    await t.mutate(ks.map((key) => ({ key, mutations: [put('cf', 'q', 'v')] })));
    return t;
  }

  /** A row 'k' with families a and b, qualifiers '', a, b, c, 0xff, at timestamp 1. */
  async function qualifierTable(): Promise<Table> {
    const t = await ctx.store.createTable({ name: 't', families: [{ name: 'a' }, { name: 'b' }] });
    const quals = [new Uint8Array(0), bytesOf('a'), bytesOf('b'), bytesOf('c'), b(0xff)];
    await write(t, ['k', quals.flatMap((q) => [put('a', q, 'x', 1), put('b', q, 'y', 1)])], ['other', [put('b', 'z', 'w', 1)]]);
    return t;
  }

  async function rowCells(t: Table, filter: RowFilter): Promise<[string, string[] | undefined][]> {
    return (await scanAll(t, { filter })).rows.map((r) => [fmt(r.key), cells(r)]);
  }

  describe('filters', () => {
    it('an unknown filter kind is rejected with STORE_NOT_SUPPORTED naming it', async () => {
      const t = await ctx.table();
      const err = await expectStoreError(() => scanKeys(t, { filter: { kind: 'bogusKind' } as unknown as RowFilter }), 'STORE_NOT_SUPPORTED');
      expect(err.message).toContain('bogusKind');
    });

    for (const kind of ALL_KINDS) {
      it.runIf(!caps.filters.has(kind))(`an unsupported ${kind} filter is rejected with STORE_NOT_SUPPORTED`, async () => {
        const t = await ctx.table();
        const filter = {
          keyRegex: { kind: 'keyRegex', pattern: 'a' },
          fuzzyKey: { kind: 'fuzzyKey', rules: [{ template: b(1), mask: b(1) }] },
          prefix: { kind: 'prefix', prefix: b(1) },
          qualifierRange: { kind: 'qualifierRange', start: b(1) },
          timeRange: { kind: 'timeRange', range: { start: 1 } },
          and: { kind: 'and', filters: [] },
        }[kind] as RowFilter;
        const err = await expectStoreError(() => scanKeys(t, { filter }), 'STORE_NOT_SUPPORTED');
        expect(err.message).toContain(kind);
      });
    }

    it.runIf(has('prefix'))('prefix selects rows starting with it, within the scan bounds', async () => {
      const t = await keyTable(['a', 'ab', 'abc', 'abd', 'ac', 'b'].map(bytesOf).concat([b(0xff), b(0xff, 0x00), b(0xff, 0xff), b(0xfe, 0xff)]));
      const scanP = (prefix: Uint8Array, extra: object = {}): Promise<string[]> =>
        scanKeys(t, { filter: { kind: 'prefix', prefix }, ...extra });
      expect(await scanP(bytesOf('ab'))).toEqual(['ab', 'abc', 'abd']);
      expect(await scanP(b(0xff))).toEqual(['0xff', '0xff00', '0xffff']);
      expect(await scanP(b(0xff, 0xff))).toEqual(['0xffff']);
      expect(await scanP(new Uint8Array(0))).toHaveLength(10);
      expect(await scanP(bytesOf('x'))).toEqual([]);
      expect(await scanP(bytesOf('ab'), { start: bytesOf('abc') })).toEqual(['abc', 'abd']);
      expect(await scanP(bytesOf('ab'), { end: bytesOf('abd') })).toEqual(['ab', 'abc']);
      expect(await scanP(bytesOf('ab'), { start: bytesOf('b') })).toEqual([]);
      expect(await scanP(bytesOf('ab'), { limit: 2 })).toEqual(['ab', 'abc']);
      if (caps.reverseScan) expect(await scanP(bytesOf('ab'), { reverse: true })).toEqual(['abd', 'abc', 'ab']);
    });

    it.runIf(has('keyRegex'))('keyRegex matches the whole key read as latin1, including any byte', async () => {
      const t = await keyTable([
        b(0x00, 0x01), b(0x0a), b(0x61, 0x0a, 0x62), b(0x80, 0xff), b(0xff),
        bytesOf('abc'), bytesOf('abd'), bytesOf('abcd'), bytesOf('xabc'),
      ]);
      const re = (pattern: string, extra: object = {}): Promise<string[]> =>
        scanKeys(t, { filter: { kind: 'keyRegex', pattern }, ...extra });
      expect(await re('ab.')).toEqual(['abc', 'abd']);
      expect(await re('a.b')).toEqual(['0x610a62']);
      expect(await re('.')).toEqual(['0x0a', '0xff']);
      expect(await re('\\x00.*')).toEqual(['0x0001']);
      expect(await re('[\\x80-\\xff]+')).toEqual(['0x80ff', '0xff']);
      expect(await re('abc|d')).toEqual(['abc']);
      expect(await re('x?abc')).toEqual(['abc', 'xabc']);
      expect(await re('nomatch')).toEqual([]);
      if (caps.reverseScan) expect(await re('ab.*', { reverse: true })).toEqual(['abd', 'abcd', 'abc']);
    });

    it.runIf(has('keyRegex'))('keyRegex rejects invalid and non-RE2 patterns with STORE_INVALID_ARGUMENT', async () => {
      const t = await keyTable([bytesOf('a')]);
      for (const pattern of ['(', 'a)|(b', '[a', '(?=a)a', '(?!b)a', '(?<=a)b', '(a)\\1']) {
        const err = await expectStoreError(() => scanKeys(t, { filter: { kind: 'keyRegex', pattern } }), 'STORE_INVALID_ARGUMENT');
        expect(err.message.length).toBeGreaterThan(0);
      }
    });

    it.runIf(has('fuzzyKey'))('fuzzyKey: mask 1 fixes a byte, 0 matches any; short keys never match; any rule suffices', async () => {
      // [salt, metric, t0, t1] for every combination, plus short and long keys.
      const ks: Uint8Array[] = [b(0, 1), b(0, 1, 0, 0, 9), b(1, 2, 0xff, 0xff, 0)];
      for (const s of [0, 1]) for (const m of [1, 2]) for (const t0 of [0, 0xff]) for (const t1 of [0, 7]) ks.push(b(s, m, t0, t1));
      const t = await keyTable(ks);
      const sorted = [...ks].sort((x, y) => (toHex(x) < toHex(y) ? -1 : 1));
      const check = async (rules: FuzzyRule[]): Promise<void> => {
        const want = sorted.filter((k) => fuzzyOk(rules, k)).map(fmt);
        expect(want.length).toBeGreaterThan(0);
        expect(await scanKeys(t, { filter: { kind: 'fuzzyKey', rules } })).toEqual(want);
        if (caps.reverseScan) {
          expect(await scanKeys(t, { filter: { kind: 'fuzzyKey', rules }, reverse: true })).toEqual([...want].reverse());
        }
      };
      await check([{ template: b(0, 1, 0, 0), mask: b(0, 1, 0, 1) }]);
      await check([{ template: b(0, 2, 0, 7), mask: b(1, 1, 0, 1) }, { template: b(1, 1, 0xff), mask: b(1, 1, 1) }]);
      await check([{ template: b(0, 0, 0), mask: b(0, 0, 0) }]);
      await check([{ template: b(0, 1, 0, 0, 0), mask: b(1, 1, 0, 0, 0) }]);
      const rows = await scanKeys(t, { filter: { kind: 'fuzzyKey', rules: [{ template: b(0, 1, 0), mask: b(1, 1, 0) }] } });
      expect(rows).not.toContain('0x0001');
      expect(rows).toContain('0x0001000009');
    });

    it.runIf(has('fuzzyKey'))('fuzzyKey finds sparse matches across many rows and small batches', async () => {
      const ks: Uint8Array[] = [];
      for (let x = 0; x < 13; x++) for (let y = 0; y < 13; y++) for (let z = 0; z < 13; z++) ks.push(b(x * 20, y * 20, z * 20));
      const t = await keyTable(ks);
      const rules = [{ template: b(0, 100, 0), mask: b(0, 1, 0) }, { template: b(240, 0, 20), mask: b(1, 0, 1) }];
      const want = ks.filter((k) => fuzzyOk(rules, k)).map(fmt);
      const { rows, batches } = await scanAll(t, { filter: { kind: 'fuzzyKey', rules }, batchRows: 7 });
      expect(rows.map((r) => fmt(r.key))).toEqual(want);
      expect(want).toHaveLength(13 * 13 + 13 - 1);
      for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(7);
    });

    it.runIf(has('fuzzyKey'))('fuzzyKey rejects malformed rules with STORE_INVALID_ARGUMENT', async () => {
      const t = await keyTable([b(1)]);
      const bad: FuzzyRule[][] = [
        [{ template: b(1, 2), mask: b(1) }],
        [{ template: b(1), mask: b(2) }],
        [],
      ];
      for (const rules of bad) {
        await expectStoreError(() => scanKeys(t, { filter: { kind: 'fuzzyKey', rules } }), 'STORE_INVALID_ARGUMENT');
      }
    });

    it.runIf(has('qualifierRange'))('qualifierRange selects cells in [start, end), of one family or all', async () => {
      const t = await qualifierTable();
      expect(await rowCells(t, { kind: 'qualifierRange', family: 'a', start: bytesOf('a'), end: bytesOf('c') }))
        .toEqual([['k', ['a:a=x', 'a:b=x']]]);
      expect(await rowCells(t, { kind: 'qualifierRange', start: bytesOf('b') })).toEqual([
        ['k', ['a:b=x', 'a:c=x', 'a:0xff=x', 'b:b=y', 'b:c=y', 'b:0xff=y']],
        ['other', ['b:z=w']],
      ]);
      expect(await rowCells(t, { kind: 'qualifierRange', end: bytesOf('b') })).toEqual([
        ['k', ['a:=x', 'a:a=x', 'b:=y', 'b:a=y']],
      ]);
      expect(await rowCells(t, { kind: 'qualifierRange', family: 'b', start: b(0xff) })).toEqual([['k', ['b:0xff=y']]]);
      expect(await rowCells(t, { kind: 'qualifierRange', family: 'b', start: bytesOf('c'), end: new Uint8Array(0) }))
        .toEqual([['k', ['b:c=y', 'b:0xff=y']], ['other', ['b:z=w']]]);
      expect(await rowCells(t, { kind: 'qualifierRange', start: bytesOf('d'), end: bytesOf('e') })).toEqual([]);
      expect(cells(await getRow(t, 'k', { filter: { kind: 'qualifierRange', family: 'a', start: bytesOf('c') } })))
        .toEqual(['a:c=x', 'a:0xff=x']);
    });

    it.runIf(has('qualifierRange'))('qualifierRange rejects unknown families and reversed ranges', async () => {
      const t = await qualifierTable();
      await expectStoreError(() => scanKeys(t, { filter: { kind: 'qualifierRange', family: 'zz' } }), 'STORE_FAMILY_NOT_FOUND');
      await expectErrorClass(() => scanKeys(t, { filter: { kind: 'qualifierRange', start: bytesOf('c'), end: bytesOf('b') } }), RangeError);
    });

    it.runIf(has('timeRange'))('a timeRange filter selects versions and intersects the read\'s timeRange', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 5 }] });
      for (const ts of [10, 20, 30, 40]) await write(t, ['k', [put('cf', 'q', `v${ts}`, ts)]]);
      const stampsOf = async (filter: RowFilter, extra: object = {}): Promise<number[]> =>
        (await scanAll(t, { filter, maxVersions: 5, ...extra })).rows.flatMap((r) => r.cells.map((c) => c.timestamp));
      expect(await stampsOf({ kind: 'timeRange', range: { start: 20, end: 40 } })).toEqual([30, 20]);
      expect(await stampsOf({ kind: 'timeRange', range: { start: 20 } }, { timeRange: { end: 31 } })).toEqual([30, 20]);
      expect(await stampsOf({ kind: 'timeRange', range: { end: 40 } }, { timeRange: { end: 25 } })).toEqual([20, 10]);
      expect(await stampsOf({ kind: 'timeRange', range: { start: 5 } }, { timeRange: { start: 25 } })).toEqual([40, 30]);
      expect(await stampsOf({ kind: 'timeRange', range: { start: 35 } }, { timeRange: { end: 35 } })).toEqual([]);
      await expectErrorClass(() => stampsOf({ kind: 'timeRange', range: { start: 5, end: 1 } }), RangeError);
    });

    it.runIf(has('and', 'prefix', 'qualifierRange'))('and combines row and cell filters', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'a' }, { name: 'b' }] });
      await write(t,
        ['p1', [put('a', 'x', '1'), put('a', 'y', '2'), put('b', 'x', '3')]],
        ['p2', [put('a', 'y', '4')]],
        ['q1', [put('a', 'x', '5')]]);
      const filter: RowFilter = { kind: 'and', filters: [
        { kind: 'prefix', prefix: bytesOf('p') },
        { kind: 'qualifierRange', family: 'a', start: bytesOf('x'), end: bytesOf('y') },
      ] };
      expect(await rowCells(t, filter)).toEqual([['p1', ['a:x=1']]]);
      expect(await rowCells(t, { kind: 'and', filters: [] })).toHaveLength(3);
      expect(await rowCells(t, { kind: 'and', filters: [{ kind: 'and', filters: [filter] }, { kind: 'prefix', prefix: bytesOf('p1') }] }))
        .toEqual([['p1', ['a:x=1']]]);
      expect(await rowCells(t, { kind: 'and', filters: [{ kind: 'prefix', prefix: bytesOf('p') }, { kind: 'prefix', prefix: bytesOf('q') }] }))
        .toEqual([]);
    });

    it.runIf(has('and', 'fuzzyKey', 'keyRegex', 'timeRange'))('and of fuzzyKey, keyRegex and timeRange needs all of them', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      const ks = [b(1, 0x41, 1), b(1, 0x42, 1), b(2, 0x41, 1), b(1, 0x41, 2), b(1, 0x41)];
      for (const ts of [5, 15]) await t.mutate(ks.map((key) => ({ key, mutations: [put('cf', 'q', `v${ts}`, ts)] })));
      const filter: RowFilter = { kind: 'and', filters: [
        { kind: 'fuzzyKey', rules: [{ template: b(1, 0, 0), mask: b(1, 0, 0) }] },
        { kind: 'keyRegex', pattern: '.A.' },
        { kind: 'timeRange', range: { end: 10 } },
      ] };
      const { rows } = await scanAll(t, { filter, maxVersions: 3 });
      expect(rows.map((r) => [fmt(r.key), cells(r, true)])).toEqual([
        ['0x014101', ['cf:q@5=v5']], ['0x014102', ['cf:q@5=v5']],
      ]);
    });

    it.runIf(has('prefix', 'keyRegex'))('gets apply row filters too', async () => {
      const t = await keyTable([bytesOf('abc'), bytesOf('xyz')]);
      const got = await t.get([bytesOf('abc'), bytesOf('xyz')], { filter: { kind: 'prefix', prefix: bytesOf('a') } });
      expect(got.map((r) => r && fmt(r.key))).toEqual(['abc', undefined]);
      const re = await t.get([bytesOf('abc'), bytesOf('xyz')], { filter: { kind: 'keyRegex', pattern: 'x.*' } });
      expect(re.map((r) => r && fmt(r.key))).toEqual([undefined, 'xyz']);
    });
  });
}
