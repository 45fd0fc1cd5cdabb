/**
 * Store contract: input validation of writes and gets. A rejected mutate() stores nothing
 * from its batch; error classes follow core/api/errors.ts (TypeError for wrong types,
 * StoreError codes for malformed data).
 */
import { describe, expect, it } from 'vitest';
import { MAX_TIMESTAMP } from '../../core/api/store.js';
import type { Mutation, RowMutation, Table } from '../../core/api/store.js';
import {
  b, bytesOf, cells, expectErrorClass, expectStoreError, getRow, put, scanKeys,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

export function validationContract(ctx: ContractContext): void {
  const caps = ctx.caps;

  async function twoFamilies(): Promise<Table> {
    return ctx.store.createTable({ name: 'vt', families: [{ name: 'cf' }, { name: 'g' }] });
  }

  /** Mutates with `bad` between two good rows; expects `code` and nothing stored. */
  async function rejectsWhole(t: Table, bad: RowMutation, code: Parameters<typeof expectStoreError>[1] | 'TypeError'): Promise<Error | undefined> {
    const rows: RowMutation[] = [
      { key: bytesOf('good1'), mutations: [put('cf', 'q', 'v')] },
      bad,
      { key: bytesOf('good2'), mutations: [put('cf', 'q', 'v')] },
    ];
    let err: Error | undefined;
    if (code === 'TypeError') await expectErrorClass(() => t.mutate(rows), TypeError);
    else err = await expectStoreError(() => t.mutate(rows), code);
    expect(await scanKeys(t)).toEqual([]);
    return err;
  }

  describe('write validation', () => {
    it('an unknown family rejects the whole batch with STORE_FAMILY_NOT_FOUND naming table and family', async () => {
      const t = await twoFamilies();
      const err = await rejectsWhole(t, { key: bytesOf('bad'), mutations: [put('cf', 'q', 'v'), put('nosuchfam', 'q', 'v')] }, 'STORE_FAMILY_NOT_FOUND');
      expect(err!.message).toContain('vt');
      expect(err!.message).toContain('nosuchfam');
      for (const m of [
        { type: 'deleteCell', family: 'zz', qualifier: b(1) },
        { type: 'deleteVersion', family: 'zz', qualifier: b(1), timestamp: 1 },
        { type: 'deleteFamily', family: 'zz' },
      ] as Mutation[]) {
        await rejectsWhole(t, { key: bytesOf('bad'), mutations: [m] }, 'STORE_FAMILY_NOT_FOUND');
      }
    });

    it('rejects empty and oversized keys with STORE_INVALID_ARGUMENT; accepts maxKeyBytes', async () => {
      const t = await twoFamilies();
      await rejectsWhole(t, { key: new Uint8Array(0), mutations: [put('cf', 'q', 'v')] }, 'STORE_INVALID_ARGUMENT');
      await rejectsWhole(t, { key: new Uint8Array(caps.maxKeyBytes + 1).fill(7), mutations: [put('cf', 'q', 'v')] }, 'STORE_INVALID_ARGUMENT');
      const longest = new Uint8Array(caps.maxKeyBytes).fill(0xab);
      await t.mutate([{ key: longest, mutations: [put('cf', 'q', 'v')] }]);
      expect(cells(await getRow(t, longest))).toEqual(['cf:q=v']);
    });

    it('rejects values over maxValueBytes with STORE_INVALID_ARGUMENT; accepts maxValueBytes', async () => {
      const t = await twoFamilies();
      const big = new Uint8Array(caps.maxValueBytes + 1);
      await rejectsWhole(t, { key: bytesOf('bad'), mutations: [put('cf', 'q', big)] }, 'STORE_INVALID_ARGUMENT');
      const max = new Uint8Array(caps.maxValueBytes).fill(3);
      await t.mutate([{ key: bytesOf('big'), mutations: [put('cf', 'q', max)] }]);
      const row = await getRow(t, 'big');
      expect(row!.cells[0]!.value.length).toBe(caps.maxValueBytes);
      expect(row!.cells[0]!.value[caps.maxValueBytes - 1]).toBe(3);
    });

    it('rejects timestamps outside integers in [0, MAX_TIMESTAMP] with STORE_INVALID_ARGUMENT', async () => {
      const t = await twoFamilies();
      for (const ts of [-1, 1.5, NaN, Infinity, (caps.maxTimestamp ?? MAX_TIMESTAMP) + 1]) {
        const q = b(1);
        for (const m of [
          put('cf', q, 'v', ts),
          { type: 'deleteVersion', family: 'cf', qualifier: q, timestamp: ts },
          { type: 'deleteCell', family: 'cf', qualifier: q, upTo: ts },
          { type: 'deleteFamily', family: 'cf', upTo: ts },
          { type: 'deleteRow', upTo: ts },
        ] as Mutation[]) {
          await rejectsWhole(t, { key: bytesOf('bad'), mutations: [m] }, 'STORE_INVALID_ARGUMENT');
        }
      }
    });

    it('rejects unknown mutation types with STORE_INVALID_ARGUMENT', async () => {
      const t = await twoFamilies();
      await rejectsWhole(t, { key: bytesOf('bad'), mutations: [{ type: 'append', family: 'cf', qualifier: b(1), value: b(1) } as unknown as Mutation] }, 'STORE_INVALID_ARGUMENT');
    });

    it('rejects non-Uint8Array keys, qualifiers and values with TypeError', async () => {
      const t = await twoFamilies();
      await rejectsWhole(t, { key: 'bad' as unknown as Uint8Array, mutations: [put('cf', 'q', 'v')] }, 'TypeError');
      await rejectsWhole(t, { key: bytesOf('bad'), mutations: [{ type: 'put', family: 'cf', qualifier: [1] as unknown as Uint8Array, value: b(1) }] }, 'TypeError');
      await rejectsWhole(t, { key: bytesOf('bad'), mutations: [{ type: 'put', family: 'cf', qualifier: b(1), value: 'v' as unknown as Uint8Array }] }, 'TypeError');
    });

    it('an aborted signal rejects a mutate with STORE_ABORTED before anything is applied', async () => {
      const t = await twoFamilies();
      const c = new AbortController();
      c.abort();
      await expectStoreError(() => t.mutate([{ key: bytesOf('k'), mutations: [put('cf', 'q', 'v')] }], { signal: c.signal }), 'STORE_ABORTED');
      expect(await scanKeys(t)).toEqual([]);
    });

    it('accepts both durabilities and an empty mutation list', async () => {
      const t = await twoFamilies();
      await t.mutate([{ key: bytesOf('a'), mutations: [put('cf', 'q', 'v')] }], { durability: 'sync' });
      await t.mutate([{ key: bytesOf('b'), mutations: [put('cf', 'q', 'v')] }], { durability: 'buffered' });
      await t.mutate([{ key: bytesOf('c'), mutations: [] }]);
      await t.mutate([]);
      expect(await scanKeys(t)).toEqual(['a', 'b']);
    });
  });

  describe('read validation', () => {
    it('get rejects non-Uint8Array keys with TypeError and empty keys with STORE_INVALID_ARGUMENT', async () => {
      const t = await twoFamilies();
      await expectErrorClass(() => t.get(['k' as unknown as Uint8Array]), TypeError);
      await expectStoreError(() => t.get([new Uint8Array(0)]), 'STORE_INVALID_ARGUMENT');
    });

    it('get rejects unknown families and bad maxVersions', async () => {
      const t = await twoFamilies();
      await expectStoreError(() => t.get([b(1)], { families: ['zz'] }), 'STORE_FAMILY_NOT_FOUND');
      await expectErrorClass(() => t.get([b(1)], { maxVersions: 0 }), RangeError);
    });

    it('get honors families, timeRange and maxVersions', async () => {
      const t = await ctx.store.createTable({ name: 'vt', families: [{ name: 'cf', maxVersions: 3 }, { name: 'g' }] });
      await t.mutate([{ key: bytesOf('k'), mutations: [put('cf', 'q', 'a', 10), put('cf', 'q', 'b', 20), put('g', 'q', 'c', 30)] }]);
      expect(cells(await getRow(t, 'k', { families: ['g'] }))).toEqual(['g:q=c']);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual(['cf:q@20=b', 'cf:q@10=a', 'g:q@30=c']);
      expect(cells(await getRow(t, 'k', { timeRange: { start: 5, end: 15 } }), true)).toEqual(['cf:q@10=a']);
      expect(await getRow(t, 'k', { timeRange: { start: 31 } })).toBeUndefined();
    });
  });
}
