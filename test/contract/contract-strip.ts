/**
 * Store contract: stripped values (ReadOptionsBase.stripValues). The span's cells come back
 * with empty values and every other cell as a plain read returns it, in gets and scans,
 * with filters, several versions and other families beside.
 */
import { describe, expect, it } from 'vitest';
import type { Row } from '../../core/api/store.js';
import { b, cells, expectStoreError, getRow, put, scanAll, write } from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

/** A plain read's rows with the cells of family cf in [start, end) emptied. */
function expected(rows: readonly (Row | undefined)[], start: Uint8Array, end: Uint8Array | undefined): (string[] | undefined)[] {
  const cmp = (x: Uint8Array, y: Uint8Array): number => Buffer.compare(Buffer.from(x), Buffer.from(y));
  return rows.map((r) => (r === undefined ? undefined : cells({
    key: r.key,
    cells: r.cells.map((c) => (c.family === 'cf' && cmp(c.qualifier, start) >= 0 && (end === undefined || cmp(c.qualifier, end) < 0) ? { ...c, value: new Uint8Array(0) } : c)),
  }, true)));
}

export function stripContract(ctx: ContractContext): void {
  describe('stripped values', () => {
    const fill = async () => {
      const t = await ctx.table({ families: [{ name: 'cf', maxVersions: 3 }, { name: 'other' }] });
      const q = (...bytes: number[]): Uint8Array => b(...bytes);
      for (const k of ['r1', 'r2', 'r3']) {
        await write(t, [k, [
          put('cf', q(0x01), `a-${k}`), put('cf', q(0x0c), `hour-${k}`), put('cf', q(0x0c, 0x07), `h7-${k}`),
          put('cf', q(0x0d, 0x00), `s-${k}`), put('cf', q(0x20, 0x01), `p-${k}`), put('other', q(0x0c), `o-${k}`),
        ]]);
      }
      await write(t, ['r2', [put('cf', q(0x0c), 'hour-r2-v2')]]);
      await write(t, ['r4', [put('cf', q(0x0c, 0x01), 'only')]]);
      return t;
    };
    const spans: [string, Uint8Array, Uint8Array | undefined][] = [
      ['[0c, 0d)', b(0x0c), b(0x0d)],
      ['[0c, end)', b(0x0c), undefined],
      ['[start, 0d)', new Uint8Array(0), b(0x0d)],
      ['the whole family', new Uint8Array(0), undefined],
    ];
    for (const [name, start, end] of spans) {
      it(`gets and scans empty the values of ${name} and nothing else`, async () => {
        const t = await fill();
        const keys = ['r1', 'r2', 'r3', 'r4', 'nope'].map((k) => new TextEncoder().encode(k));
        const stripValues = { family: 'cf', start, ...(end === undefined ? {} : { end }) };
        for (const maxVersions of [1, 3]) {
          const plain = await t.get(keys, { maxVersions });
          expect((await t.get(keys, { maxVersions, stripValues })).map((r) => (r === undefined ? undefined : cells(r, true)))).toEqual(expected(plain, start, end));
          const scanned = (await scanAll(t, { maxVersions })).rows;
          expect((await scanAll(t, { maxVersions, stripValues, batchRows: 2 })).rows.map((r) => cells(r, true))).toEqual(expected(scanned, start, end));
        }
        const filtered = { kind: 'keyRegex', pattern: 'r[13]' } as const;
        const plain = (await scanAll(t, { filter: filtered, families: ['cf'] })).rows;
        expect((await scanAll(t, { filter: filtered, families: ['cf'], stripValues })).rows.map((r) => cells(r, true))).toEqual(expected(plain, start, end));
        expect((await scanAll(t, { ranges: [{ start: b(0x72, 0x32), end: b(0x72, 0x35) }], stripValues })).rows.map((r) => cells(r, true)))
          .toEqual(expected((await scanAll(t, { ranges: [{ start: b(0x72, 0x32), end: b(0x72, 0x35) }] })).rows, start, end));
      });
    }

    it('a row whose only cells are stripped is still returned', async () => {
      const t = await fill();
      expect(cells(await getRow(t, 'r4', { stripValues: { family: 'cf', start: b(0x0c), end: b(0x0d) } }))).toEqual([cells(await getRow(t, 'r4'))![0]!.replace(/=.*/, '=')]);
    });

    it('rejects a span of an unknown family, or one that ends before it starts', async () => {
      const t = await fill();
      await expectStoreError(() => t.get([b(0x72)], { stripValues: { family: 'nope', start: b(0x0c) } }), 'STORE_FAMILY_NOT_FOUND');
      await expect(t.get([b(0x72)], { stripValues: { family: 'cf', start: b(0x0d), end: b(0x0c) } })).rejects.toThrow(/stripValues start/);
    });
  });
}
