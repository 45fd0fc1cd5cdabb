/**
 * Store contract: gets and puts, binary keys in unsigned order, cell order within a row,
 * buffer ownership, versions and server timestamps, every delete kind and their
 * interaction with later puts, and per-row atomicity.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TIMESTAMP } from '../../core/api/store.js';
import type { Mutation, Table } from '../../core/api/store.js';
import {
  b, bytesOf, cells, fmt, getRow, keys, put, scanKeys, stamps, T0, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

export function dataContract(ctx: ContractContext): void {
  describe('gets and puts', () => {
    it('get of absent rows resolves undefined, one entry per key', async () => {
      const t = await ctx.table();
      expect(await t.get([])).toEqual([]);
      expect(await t.get([b(1), b(2)])).toEqual([undefined, undefined]);
      await write(t, ['b', [put('cf', 'q', 'v')]]);
      const rows = await t.get([bytesOf('a'), bytesOf('b'), bytesOf('c'), bytesOf('b')]);
      expect(keys(rows)).toEqual([undefined, 'b', undefined, 'b']);
    });

    it('a put is read back with its key, family, qualifier, timestamp and value', async () => {
      const t = await ctx.table();
      await write(t, ['row1', [put('cf', 'qual', 'value', 1234)]]);
      const row = await getRow(t, 'row1');
      expect(fmt(row!.key)).toBe('row1');
      expect(row!.cells).toHaveLength(1);
      const c = row!.cells[0]!;
      expect([c.family, fmt(c.qualifier), c.timestamp, fmt(c.value)]).toEqual(['cf', 'qual', 1234, 'value']);
    });

    it('one mutate call writes many rows', async () => {
      const t = await ctx.table();
      await t.mutate(Array.from({ length: 50 }, (_, i) => ({ key: b(i), mutations: [put('cf', 'q', `v${i}`)] })));
      const rows = await t.get(Array.from({ length: 50 }, (_, i) => b(i)));
      expect(rows.map((r) => cells(r)![0])).toEqual(Array.from({ length: 50 }, (_, i) => `cf:q=v${i}`));
    });

    it('binary keys (0x00, 0xff, prefixes of each other) sort as unsigned bytes', async () => {
      const t = await ctx.table();
      const ks = [b(0xff, 0xff), b(0x80), b(0x00), b(0x7f), b(0x00, 0x00), b(0xff), b(0x01), b(0x00, 0xff), b(0xff, 0x00), b(0x00, 0x00, 0x00)];
      await t.mutate(ks.map((key, i) => ({ key, mutations: [put('cf', 'q', `v${i}`)] })));
      expect(await scanKeys(t)).toEqual(['0x00', '0x0000', '0x000000', '0x00ff', '0x01', '0x7f', '0x80', '0xff', '0xff00', '0xffff']);
      const rows = await t.get(ks);
      expect(rows.map((r, i) => [fmt(r!.key), cells(r)])).toEqual(ks.map((k, i) => [fmt(k), [`cf:q=v${i}`]]));
    });

    it('cells come sorted by family, then qualifier bytes, across families declared in any order', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'z' }, { name: 'a' }, { name: 'M' }] });
      await write(t, ['k', [
        put('z', 'q', '1'), put('a', b(0xff), '2'), put('M', 'x', '3'), put('a', '', '4'),
        put('a', b(0x00), '5'), put('a', 'b', '6'), put('a', 'ab', '7'), put('z', 'a', '8'), put('a', 'a', '9'),
      ]]);
      expect(cells(await getRow(t, 'k'))).toEqual([
        'M:x=3', 'a:=4', 'a:0x00=5', 'a:a=9', 'a:ab=7', 'a:b=6', 'a:0xff=2', 'z:a=8', 'z:q=1',
      ]);
    });

    it('accepts an empty qualifier and an empty value', async () => {
      const t = await ctx.table();
      await write(t, ['k', [put('cf', '', '')]]);
      const row = await getRow(t, 'k');
      expect(row!.cells).toHaveLength(1);
      expect(row!.cells[0]!.qualifier).toHaveLength(0);
      expect(row!.cells[0]!.value).toHaveLength(0);
    });

    it('does not retain the buffers passed in', async () => {
      const t = await ctx.table();
      const key = bytesOf('key');
      const qual = bytesOf('qual');
      const value = bytesOf('value');
      await t.mutate([{ key, mutations: [{ type: 'put', family: 'cf', qualifier: qual, value }] }]);
      key.fill(0x41);
      qual.fill(0x41);
      value.fill(0x41);
      expect(cells(await getRow(t, 'key'))).toEqual(['cf:qual=value']);
      expect(await getRow(t, 'AAA')).toBeUndefined();
    });

    it('returned buffers belong to the caller: changing them changes nothing stored', async () => {
      const t = await ctx.table();
      await write(t, ['key', [put('cf', 'qual', 'value')]]);
      const row = await getRow(t, 'key');
      (row!.key as Uint8Array).fill(0x41);
      (row!.cells[0]!.qualifier as Uint8Array).fill(0x41);
      (row!.cells[0]!.value as Uint8Array).fill(0x41);
      expect(cells(await getRow(t, 'key'))).toEqual(['cf:qual=value']);
      expect(await scanKeys(t)).toEqual(['key']);
    });

    it('a row\'s mutations are applied atomically: a concurrent get sees none or all', async () => {
      const t = await ctx.table();
      const many: Mutation[] = Array.from({ length: 500 }, (_, i) => put('cf', `q${i}`, 'v'));
      const [, before, after] = await Promise.all([
        t.mutate([{ key: bytesOf('k'), mutations: many }]),
        getRow(t, 'k'),
        Promise.resolve().then(() => getRow(t, 'k')),
      ]);
      for (const r of [before, after]) expect([0, 500]).toContain(r?.cells.length ?? 0);
      expect((await getRow(t, 'k'))!.cells).toHaveLength(500);
    });
  });

  describe('versions', () => {
    it('a family keeps 1 version by default: the newest timestamp wins', async () => {
      const t = await ctx.table();
      await write(t, ['k', [put('cf', 'q', 'a', 10)]]);
      await write(t, ['k', [put('cf', 'q', 'b', 20)]]);
      await write(t, ['k', [put('cf', 'q', 'old', 5)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 5 }), true)).toEqual(['cf:q@20=b']);
    });

    it('a family keeps its maxVersions newest versions; reads return min(requested, maxVersions)', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      for (let ts = 1; ts <= 5; ts++) await write(t, ['k', [put('cf', 'q', `v${ts}`, ts)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 10 }), true)).toEqual(['cf:q@5=v5', 'cf:q@4=v4', 'cf:q@3=v3']);
      expect(stamps(await getRow(t, 'k', { maxVersions: 2 }))).toEqual([5, 4]);
      expect(stamps(await getRow(t, 'k'))).toEqual([5]);
    });

    it('versions are ordered by timestamp, not by write order, per cell', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 5 }] });
      await write(t, ['k', [put('cf', 'a', 'x30', 30), put('cf', 'b', 'y1', 1)]]);
      await write(t, ['k', [put('cf', 'a', 'x10', 10), put('cf', 'b', 'y3', 3)]]);
      await write(t, ['k', [put('cf', 'a', 'x20', 20), put('cf', 'b', 'y2', 2)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 5 }), true)).toEqual([
        'cf:a@30=x30', 'cf:a@20=x20', 'cf:a@10=x10', 'cf:b@3=y3', 'cf:b@2=y2', 'cf:b@1=y1',
      ]);
      expect(cells(await getRow(t, 'k', { maxVersions: 2 }), true)).toEqual(['cf:a@30=x30', 'cf:a@20=x20', 'cf:b@3=y3', 'cf:b@2=y2']);
    });

    it('a put without a timestamp gets the server clock', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      await write(t, ['k', [put('cf', 'q', 'first')]]);
      ctx.clock.advance(5);
      await write(t, ['k', [put('cf', 'q', 'second')]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual([`cf:q@${T0 + 5}=second`, `cf:q@${T0}=first`]);
    });

    it('a put with the timestamp of an existing version replaces it (later write wins)', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      await write(t, ['k', [put('cf', 'q', 'a', 100)]]);
      await write(t, ['k', [put('cf', 'q', 'b', 100)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual(['cf:q@100=b']);
      await write(t, ['k', [put('cf', 'q', 'c', 100), put('cf', 'q', 'd', 100)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual(['cf:q@100=d']);
    });

    it('puts without timestamps in one call share the clock: the last one wins', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      await write(t, ['k', [put('cf', 'q', 'a'), put('cf', 'q', 'b'), put('cf', 'q', 'c')]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual([`cf:q@${T0}=c`]);
    });

    it('accepts timestamps 0 and MAX_TIMESTAMP (or the backend\'s capabilities.maxTimestamp)', async () => {
      const max = ctx.caps.maxTimestamp ?? MAX_TIMESTAMP;
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 2 }] });
      await write(t, ['k', [put('cf', 'q', 'zero', 0), put('cf', 'q', 'max', max)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 2 }), true)).toEqual([`cf:q@${max}=max`, 'cf:q@0=zero']);
    });

    it('maxVersions of each family applies separately', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'one' }, { name: 'three', maxVersions: 3 }] });
      for (let ts = 1; ts <= 4; ts++) await write(t, ['k', [put('one', 'q', `o${ts}`, ts), put('three', 'q', `t${ts}`, ts)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 10 }), true)).toEqual([
        'one:q@4=o4', 'three:q@4=t4', 'three:q@3=t3', 'three:q@2=t2',
      ]);
    });
  });

  describe('deletes', () => {
    async function versioned(): Promise<Table> {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 5 }, { name: 'g', maxVersions: 5 }] });
      for (const ts of [10, 20, 30]) {
        await write(t, ['k', [put('cf', 'a', `a${ts}`, ts), put('cf', 'b', `b${ts}`, ts), put('g', 'a', `g${ts}`, ts)]]);
      }
      return t;
    }
    const all = { maxVersions: 5 };

    it('deleteCell removes every version of one cell', async () => {
      const t = await versioned();
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteCell', family: 'cf', qualifier: bytesOf('a') }] }]);
      expect(cells(await getRow(t, 'k', all), true)).toEqual([
        'cf:b@30=b30', 'cf:b@20=b20', 'cf:b@10=b10', 'g:a@30=g30', 'g:a@20=g20', 'g:a@10=g10',
      ]);
    });

    it('deleteCell with upTo removes the versions with timestamp <= upTo', async () => {
      const t = await versioned();
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteCell', family: 'cf', qualifier: bytesOf('a'), upTo: 20 }] }]);
      expect(cells(await getRow(t, 'k', { ...all, families: ['cf'] }), true)).toEqual([
        'cf:a@30=a30', 'cf:b@30=b30', 'cf:b@20=b20', 'cf:b@10=b10',
      ]);
    });

    it('deleteVersion removes exactly one version; an absent timestamp is a no-op', async () => {
      const t = await versioned();
      await t.mutate([{ key: bytesOf('k'), mutations: [
        { type: 'deleteVersion', family: 'cf', qualifier: bytesOf('a'), timestamp: 20 },
        { type: 'deleteVersion', family: 'cf', qualifier: bytesOf('b'), timestamp: 25 },
      ] }]);
      expect(cells(await getRow(t, 'k', { ...all, families: ['cf'] }), true)).toEqual([
        'cf:a@30=a30', 'cf:a@10=a10', 'cf:b@30=b30', 'cf:b@20=b20', 'cf:b@10=b10',
      ]);
    });

    it('deleteFamily removes every cell of the family, with or without upTo', async () => {
      const t = await versioned();
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteFamily', family: 'g', upTo: 20 }] }]);
      expect(cells(await getRow(t, 'k', { ...all, families: ['g'] }), true)).toEqual(['g:a@30=g30']);
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteFamily', family: 'cf' }] }]);
      expect(cells(await getRow(t, 'k', all), true)).toEqual(['g:a@30=g30']);
    });

    it('deleteRow removes the row; with upTo only the older versions', async () => {
      const t = await versioned();
      await write(t, ['other', [put('cf', 'a', 'x')]]);
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteRow', upTo: 20 }] }]);
      expect(cells(await getRow(t, 'k', all), true)).toEqual(['cf:a@30=a30', 'cf:b@30=b30', 'g:a@30=g30']);
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteRow' }] }]);
      expect(await getRow(t, 'k')).toBeUndefined();
      expect(await scanKeys(t)).toEqual(['other']);
    });

    it('a put after a delete is visible even with an older timestamp', async () => {
      const t = await versioned();
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteCell', family: 'cf', qualifier: bytesOf('a') }] }]);
      await write(t, ['k', [put('cf', 'a', 'older', 5)]]);
      expect(cells(await getRow(t, 'k', { ...all, families: ['cf'] }), true)).toEqual([
        'cf:a@5=older', 'cf:b@30=b30', 'cf:b@20=b20', 'cf:b@10=b10',
      ]);
      await t.mutate([{ key: bytesOf('k'), mutations: [{ type: 'deleteRow' }] }]);
      await write(t, ['k', [put('g', 'a', 'older-g', 1)]]);
      await t.mutate([{ key: bytesOf('k2'), mutations: [put('cf', 'a', 'v', 100)] }]);
      await t.mutate([{ key: bytesOf('k2'), mutations: [{ type: 'deleteVersion', family: 'cf', qualifier: bytesOf('a'), timestamp: 100 }] }]);
      await write(t, ['k2', [put('cf', 'a', 'again', 100)]]);
      expect(cells(await getRow(t, 'k', all), true)).toEqual(['g:a@1=older-g']);
      expect(cells(await getRow(t, 'k2', all), true)).toEqual(['cf:a@100=again']);
    });

    it('mutations of one RowMutation apply in order', async () => {
      const t = await versioned();
      await t.mutate([
        { key: bytesOf('k'), mutations: [{ type: 'deleteRow' }, put('cf', 'new', 'v', 1)] },
        { key: bytesOf('p'), mutations: [put('cf', 'a', 'v', 1), { type: 'deleteRow' }] },
        { key: bytesOf('c'), mutations: [put('cf', 'a', 'v', 1), { type: 'deleteCell', family: 'cf', qualifier: bytesOf('a') }, put('cf', 'b', 'w', 1)] },
        { key: bytesOf('f'), mutations: [put('g', 'a', 'v', 1), { type: 'deleteFamily', family: 'g' }, put('g', 'b', 'w', 1)] },
      ]);
      expect(cells(await getRow(t, 'k', all), true)).toEqual(['cf:new@1=v']);
      expect(await getRow(t, 'p')).toBeUndefined();
      expect(cells(await getRow(t, 'c'))).toEqual(['cf:b=w']);
      expect(cells(await getRow(t, 'f'))).toEqual(['g:b=w']);
    });

    it('deletes of absent rows, families and cells are no-ops', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf' }, { name: 'g' }] });
      await write(t, ['k', [put('cf', 'q', 'v')]]);
      await t.mutate([
        { key: bytesOf('absent'), mutations: [{ type: 'deleteRow' }, { type: 'deleteCell', family: 'cf', qualifier: bytesOf('q') }] },
        { key: bytesOf('k'), mutations: [{ type: 'deleteFamily', family: 'g' }, { type: 'deleteCell', family: 'cf', qualifier: bytesOf('x') }] },
      ]);
      expect(await getRow(t, 'absent')).toBeUndefined();
      expect(cells(await getRow(t, 'k'))).toEqual(['cf:q=v']);
      expect(await scanKeys(t)).toEqual(['k']);
    });
  });
}
