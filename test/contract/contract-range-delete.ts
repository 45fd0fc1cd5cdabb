/**
 * Store contract: Table.deleteRange — every row in [start, end) as it stands goes, rows
 * outside stay, writes after it are kept, bad ranges are refused before anything changes,
 * and (persistent backends) the delete survives a reopen; with `heavy`, over many rows
 * across flushes, compactions and splits.
 */
import { describe, expect, it } from 'vitest';
import {
  b, bytesOf, cells, expectStoreError, getRow, put, scanKeys, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

const range = (start: string, end: string): { start: Uint8Array; end: Uint8Array } => ({ start: bytesOf(start), end: bytesOf(end) });

export function rangeDeleteContract(ctx: ContractContext): void {
  describe('deleteRange', () => {
    it('deletes the rows in [start, end) and keeps the others', async () => {
      const t = await ctx.table();
      for (const k of ['a', 'b', 'b1', 'b2', 'c', 'd']) await write(t, [k, [put('cf', 'q', `v-${k}`), put('cf', 'r', 'x')]]);
      await t.deleteRange(range('b', 'c'));
      expect(await scanKeys(t)).toEqual(['a', 'c', 'd']);
      expect(await getRow(t, 'b1')).toBeUndefined();
      expect(cells(await getRow(t, 'c'))).toEqual(['cf:q=v-c', 'cf:r=x']);
      if (ctx.caps.reverseScan) expect(await scanKeys(t, { reverse: true })).toEqual(['d', 'c', 'a']);
    });

    it('an empty end deletes to the end of the table; an empty start from its beginning', async () => {
      const t = await ctx.table();
      for (const k of ['a', 'b', 'c', 'd']) await write(t, [k, [put('cf', 'q', k)]]);
      await t.deleteRange({ start: bytesOf('c'), end: new Uint8Array(0) });
      expect(await scanKeys(t)).toEqual(['a', 'b']);
      await t.deleteRange({ start: new Uint8Array(0), end: bytesOf('b') });
      expect(await scanKeys(t)).toEqual(['b']);
    });

    it('writes after the delete are kept, even with older timestamps', async () => {
      const t = await ctx.table();
      await write(t, ['k1', [put('cf', 'q', 'old', 5000)]], ['k2', [put('cf', 'q', 'old')]]);
      await t.deleteRange(range('k', 'l'));
      await write(t, ['k1', [put('cf', 'q', 'new', 1000)]]);
      expect(cells(await getRow(t, 'k1'), true)).toEqual(['cf:q@1000=new']);
      expect(await getRow(t, 'k2')).toBeUndefined();
      expect(await scanKeys(t)).toEqual(['k1']);
    });

    it('spans regions (split points inside the range)', async () => {
      const t = await ctx.table({ splitPoints: [b(0x20), b(0x40), b(0x60)] });
      const rows = Array.from({ length: 0x80 }, (_, i) => ({ key: b(i, 1), mutations: [put('cf', 'q', `v${i}`)] }));
      await t.mutate(rows);
      await t.deleteRange({ start: b(0x10), end: b(0x50) });
      const left = (await scanKeys(t)).length;
      expect(left).toBe(0x80 - 0x40);
      expect(await getRow(t, b(0x30, 1))).toBeUndefined();
      expect(cells(await getRow(t, b(0x50, 1)))).toEqual(['cf:q=v80']);
    });

    it('refuses a start not before a non-empty end, changing nothing', async () => {
      const t = await ctx.table();
      await write(t, ['a', [put('cf', 'q', 'v')]]);
      await expectStoreError(() => t.deleteRange(range('b', 'b')), 'STORE_INVALID_ARGUMENT');
      await expectStoreError(() => t.deleteRange(range('c', 'a')), 'STORE_INVALID_ARGUMENT');
      expect(await scanKeys(t)).toEqual(['a']);
    });

    it.runIf(ctx.factory.reopen !== undefined)('survives a reopen, before and after a flush and a compaction', async () => {
      const t = await ctx.table();
      for (const k of ['a', 'b', 'c']) await write(t, [k, [put('cf', 'q', k)]]);
      await t.flush();
      await write(t, ['b', [put('cf', 'r', 'memstore')]]);
      await t.deleteRange(range('b', 'c'));
      await write(t, ['bb', [put('cf', 'q', 'after')]]);
      const again = await (await ctx.reopen()).openTable('t');
      expect(await scanKeys(again)).toEqual(['a', 'bb', 'c']);
      await again.flush();
      await again.compact({ major: true });
      const third = await (await ctx.reopen()).openTable('t');
      expect(await scanKeys(third)).toEqual(['a', 'bb', 'c']);
      expect(cells(await getRow(third, 'bb'))).toEqual(['cf:q=after']);
    });

    it.runIf(ctx.factory.heavy === true)('over thousands of rows across flushes, compactions and splits', async () => {
      const t = await ctx.table();
      const key = (i: number): Uint8Array => bytesOf(`row${String(i).padStart(5, '0')}`);
      for (let base = 0; base < 6000; base += 1000) {
        await t.mutate(Array.from({ length: 1000 }, (_, j) => ({ key: key(base + j), mutations: [put('cf', 'q', `v${base + j}`)] })));
        if (base === 3000) await t.flush();
      }
      await t.deleteRange({ start: key(1000), end: key(5000) });
      await t.mutate([{ key: key(2500), mutations: [put('cf', 'q', 'again')] }]);
      await t.flush();
      await t.compact({ major: true });
      const keys = await scanKeys(t);
      expect(keys).toHaveLength(2001);
      expect(cells(await getRow(t, key(2500)))).toEqual(['cf:q=again']);
      expect(await getRow(t, key(4999))).toBeUndefined();
      expect(cells(await getRow(t, key(5000)))).toEqual(['cf:q=v5000']);
    });
  });
}
