/**
 * Store contract: table lifecycle (create, open, list, drop), isolation between tables,
 * and rejection of bad names and specs.
 */
import { describe, expect, it } from 'vitest';
import type { TableSpec } from '../../core/api/store.js';
import {
  b, cells, expectErrorClass, expectStoreError, getRow, put, scanKeys, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

export function tableContract(ctx: ContractContext): void {
  describe('tables', () => {
    it('a fresh store has no tables', async () => {
      expect(await ctx.store.listTables()).toEqual([]);
    });

    it('createTable returns a table with its name and spec', async () => {
      const t = await ctx.store.createTable({
        name: 'metrics',
        families: [{ name: 't', maxVersions: 3 }, { name: 'x', ttlMs: 1000 }],
        splitPoints: [b(0x10)],
      });
      expect(t.name).toBe('metrics');
      expect(t.spec.name).toBe('metrics');
      expect(t.spec.families.map((f) => [f.name, f.maxVersions ?? 1, f.ttlMs])).toEqual([['t', 3, undefined], ['x', 1, 1000]]);
      expect(t.spec.splitPoints).toEqual([b(0x10)]);
      expect(await ctx.store.listTables()).toEqual(['metrics']);
    });

    it('openTable returns a handle on the same data', async () => {
      const t1 = await ctx.table();
      await write(t1, ['k', [put('cf', 'q', 'v1')]]);
      const t2 = await ctx.store.openTable('t');
      expect(t2.name).toBe('t');
      expect(t2.spec.families.map((f) => f.name)).toEqual(['cf']);
      expect(cells(await getRow(t2, 'k'))).toEqual(['cf:q=v1']);
      await write(t2, ['k', [put('cf', 'q', 'v2')]]);
      expect(cells(await getRow(t1, 'k'))).toEqual(['cf:q=v2']);
    });

    it('listTables is sorted in byte order', async () => {
      for (const name of ['b', 'a.b', 'C', '_', 'a', '0']) {
        await ctx.store.createTable({ name, families: [{ name: 'f' }] });
      }
      expect(await ctx.store.listTables()).toEqual(['0', 'C', '_', 'a', 'a.b', 'b']);
    });

    it('createTable of an existing table rejects with STORE_TABLE_EXISTS and keeps its data', async () => {
      const t = await ctx.table();
      await write(t, ['k', [put('cf', 'q', 'v')]]);
      await expectStoreError(() => ctx.store.createTable({ name: 't', families: [{ name: 'cf' }] }), 'STORE_TABLE_EXISTS');
      expect(cells(await getRow(t, 'k'))).toEqual(['cf:q=v']);
    });

    it('createTable with ifNotExists returns the existing table unchanged', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 2 }] });
      await write(t, ['k', [put('cf', 'q', 'v')]]);
      const again = await ctx.store.createTable(
        { name: 't', families: [{ name: 'other' }] }, { ifNotExists: true });
      expect(again.spec.families.map((f) => [f.name, f.maxVersions])).toEqual([['cf', 2]]);
      expect(cells(await getRow(again, 'k'))).toEqual(['cf:q=v']);
      expect(await ctx.store.listTables()).toEqual(['t']);
    });

    it('setFamilyTransform checks its arguments, and is refused where the store has no row transforms', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf' }] });
      await write(t, ['k', [put('cf', 'q', 'v')]]);
      await expectStoreError(() => ctx.store.setFamilyTransform('t', 'cf', 'bad name'), 'STORE_INVALID_ARGUMENT');
      await expectStoreError(() => ctx.store.setFamilyTransform('t', 'c f', 'x'), 'STORE_INVALID_ARGUMENT');
      if (ctx.store.capabilities.rowTransforms === true) {
        await expectStoreError(() => ctx.store.setFamilyTransform('nope', 'cf', 'x'), 'STORE_TABLE_NOT_FOUND');
        await expectStoreError(() => ctx.store.setFamilyTransform('t', 'other', 'x'), 'STORE_FAMILY_NOT_FOUND');
      } else {
        await expectStoreError(() => ctx.store.setFamilyTransform('t', 'cf', 'x'), 'STORE_NOT_SUPPORTED');
      }
      expect(cells(await getRow(t, 'k'))).toEqual(['cf:q=v']);
    });

    it('openTable and dropTable of a missing table reject with STORE_TABLE_NOT_FOUND', async () => {
      await expectStoreError(() => ctx.store.openTable('nope'), 'STORE_TABLE_NOT_FOUND');
      await expectStoreError(() => ctx.store.dropTable('nope'), 'STORE_TABLE_NOT_FOUND');
    });

    it('dropTable deletes the table and its data; old handles fail', async () => {
      const t = await ctx.table();
      await ctx.store.createTable({ name: 'keep', families: [{ name: 'cf' }] });
      await write(t, ['k', [put('cf', 'q', 'v')]]);
      await ctx.store.dropTable('t');
      expect(await ctx.store.listTables()).toEqual(['keep']);
      await expectStoreError(() => ctx.store.openTable('t'), 'STORE_TABLE_NOT_FOUND');
      await expectStoreError(() => t.get([b(1)]), 'STORE_TABLE_NOT_FOUND');
      await expectStoreError(() => write(t, ['k', [put('cf', 'q', 'v')]]), 'STORE_TABLE_NOT_FOUND');
      await expectStoreError(() => scanKeys(t), 'STORE_TABLE_NOT_FOUND');
      await expectStoreError(() => ctx.store.dropTable('t'), 'STORE_TABLE_NOT_FOUND');
      const fresh = await ctx.table();
      expect(await scanKeys(fresh)).toEqual([]);
    });

    it('tables are isolated from each other', async () => {
      const t1 = await ctx.store.createTable({ name: 't1', families: [{ name: 'cf' }] });
      const t2 = await ctx.store.createTable({ name: 't2', families: [{ name: 'cf' }] });
      await write(t1, ['k', [put('cf', 'q', 'one')]], ['only1', [put('cf', 'q', 'x')]]);
      await write(t2, ['k', [put('cf', 'q', 'two')]]);
      expect(cells(await getRow(t1, 'k'))).toEqual(['cf:q=one']);
      expect(cells(await getRow(t2, 'k'))).toEqual(['cf:q=two']);
      expect(await scanKeys(t2)).toEqual(['k']);
      await t1.mutate([{ key: b(0x6b), mutations: [{ type: 'deleteRow' }] }]);
      expect(cells(await getRow(t2, 'k'))).toEqual(['cf:q=two']);
    });

    it('accepts names at the limits of the patterns', async () => {
      const name = 'A-z_0.9'.padEnd(128, 'x');
      const t = await ctx.store.createTable({ name, families: [{ name: 'F-a_1.'.padEnd(64, 'y') }] });
      expect(t.name).toBe(name);
      expect(await ctx.store.listTables()).toEqual([name]);
    });

    it('rejects bad table names with STORE_INVALID_ARGUMENT and creates nothing', async () => {
      for (const name of ['', 'x'.repeat(129), 'a/b', 'a b', 'a:b', 'tåble', 'a\u0000']) {
        await expectStoreError(() => ctx.store.createTable({ name, families: [{ name: 'cf' }] }), 'STORE_INVALID_ARGUMENT');
      }
      await expectErrorClass(() => ctx.store.createTable({ name: 42 as unknown as string, families: [{ name: 'cf' }] }), TypeError);
      expect(await ctx.store.listTables()).toEqual([]);
    });

    it('rejects malformed table specs with STORE_INVALID_ARGUMENT and creates nothing', async () => {
      const bad: TableSpec[] = [
        { name: 't', families: [] },
        { name: 't', families: [{ name: 'cf' }, { name: 'cf' }] },
        { name: 't', families: [{ name: '' }] },
        { name: 't', families: [{ name: 'a:b' }] },
        { name: 't', families: [{ name: 'x'.repeat(65) }] },
        { name: 't', families: [{ name: 'cf', maxVersions: 0 }] },
        { name: 't', families: [{ name: 'cf', maxVersions: -1 }] },
        { name: 't', families: [{ name: 'cf', maxVersions: 1.5 }] },
        { name: 't', families: [{ name: 'cf', ttlMs: 0 }] },
        { name: 't', families: [{ name: 'cf', ttlMs: -5 }] },
        { name: 't', families: [{ name: 'cf' }], splitPoints: [b(2), b(1)] },
        { name: 't', families: [{ name: 'cf' }], splitPoints: [b(1), b(1)] },
        { name: 't', families: [{ name: 'cf' }], splitPoints: [new Uint8Array(0)] },
      ];
      for (const spec of bad) {
        await expectStoreError(() => ctx.store.createTable(spec), 'STORE_INVALID_ARGUMENT');
      }
      expect(await ctx.store.listTables()).toEqual([]);
    });
  });
}
