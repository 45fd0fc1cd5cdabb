/**
 * Store contract: the atomic read-modify-write calls — increment (8-byte big-endian signed
 * counters) and checkAndPut — including their behavior under heavy concurrency.
 */
import { describe, expect, it } from 'vitest';
import { decodeInt64, encodeInt64, equalBytes } from '../../core/api/bytes.js';
import type { CellRef, Table } from '../../core/api/store.js';
import {
  bytesOf, cells, expectErrorClass, expectStoreError, getRow, put, stamps, T0, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

const KEY = bytesOf('counter');
const CELL: CellRef = { family: 'cf', qualifier: bytesOf('n') };

export function atomicContract(ctx: ContractContext): void {
  async function valueOf(t: Table, key = KEY, cell = CELL): Promise<Uint8Array | undefined> {
    const row = await getRow(t, key, { families: [cell.family] });
    return row?.cells.find((c) => equalBytes(c.qualifier, cell.qualifier))?.value;
  }

  describe('increment', () => {
    it('starts from 0 when absent, accumulates, and accepts negative deltas', async () => {
      const t = await ctx.table();
      expect(await t.increment(KEY, CELL, 5n)).toBe(5n);
      expect(await t.increment(KEY, CELL, 10n)).toBe(15n);
      expect(await t.increment(KEY, CELL, -20n)).toBe(-5n);
      expect(await t.increment(KEY, CELL, 0n)).toBe(-5n);
      expect(await valueOf(t)).toEqual(encodeInt64(-5n));
    });

    it('reads an existing 8-byte big-endian value', async () => {
      const t = await ctx.table();
      await write(t, [KEY, [put('cf', 'n', encodeInt64(1000n))]]);
      expect(await t.increment(KEY, CELL, 1n)).toBe(1001n);
      expect(decodeInt64((await valueOf(t))!)).toBe(1001n);
    });

    it('wraps around at 64 bits', async () => {
      const t = await ctx.table();
      const max = 2n ** 63n - 1n;
      await write(t, [KEY, [put('cf', 'n', encodeInt64(max))]]);
      expect(await t.increment(KEY, CELL, 1n)).toBe(-(2n ** 63n));
      expect(await t.increment(KEY, CELL, -1n)).toBe(max);
    });

    it('200 concurrent increments give the exact sum', async () => {
      const t = await ctx.table();
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => t.increment(KEY, CELL, BigInt(i + 1))));
      const total = (200n * 201n) / 2n;
      expect(decodeInt64((await valueOf(t))!)).toBe(total);
      // Each call saw a distinct prior state: the returned values are all different.
      expect(new Set(results).size).toBe(200);
      expect(results.reduce((m, v) => (v > m ? v : m), 0n)).toBe(total);
    });

    it('rejects a cell that is not 8 bytes with STORE_INVALID_ARGUMENT and leaves it', async () => {
      const t = await ctx.table();
      await write(t, [KEY, [put('cf', 'n', 'not a counter')]]);
      await expectStoreError(() => t.increment(KEY, CELL, 1n), 'STORE_INVALID_ARGUMENT');
      await write(t, [KEY, [put('cf', 'n', new Uint8Array(4))]]);
      await expectStoreError(() => t.increment(KEY, CELL, 1n), 'STORE_INVALID_ARGUMENT');
      expect(await valueOf(t)).toEqual(new Uint8Array(4));
    });

    it('rejects unknown families and bad arguments', async () => {
      const t = await ctx.table();
      await expectStoreError(() => t.increment(KEY, { family: 'nope', qualifier: bytesOf('n') }, 1n), 'STORE_FAMILY_NOT_FOUND');
      await expectErrorClass(() => t.increment(KEY, CELL, 1 as unknown as bigint), TypeError);
      await expectStoreError(() => t.increment(new Uint8Array(0), CELL, 1n), 'STORE_INVALID_ARGUMENT');
      expect(await getRow(t, KEY)).toBeUndefined();
    });

    it('the new value is the newest version even when the counter has a future timestamp', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      await write(t, [KEY, [put('cf', 'n', encodeInt64(7n), T0 + 60_000)]]);
      expect(await t.increment(KEY, CELL, 1n)).toBe(8n);
      expect(await t.increment(KEY, CELL, 1n)).toBe(9n);
      expect(decodeInt64((await valueOf(t))!)).toBe(9n);
    });

    it('a server-timestamped increment leaves other cells of the row alone', async () => {
      const t = await ctx.table();
      await write(t, [KEY, [put('cf', 'other', 'x')]]);
      await t.increment(KEY, CELL, 3n);
      expect(cells(await getRow(t, KEY))).toEqual(['cf:n=0x0000000000000003', 'cf:other=x']);
      expect(stamps(await getRow(t, KEY))![0]).toBeGreaterThanOrEqual(T0);
    });
  });

  describe('checkAndPut', () => {
    const v = (s: string): Uint8Array => bytesOf(s);

    it('applies when the cell is absent and expected is undefined; not when a value is expected', async () => {
      const t = await ctx.table();
      expect(await t.checkAndPut(KEY, CELL, v('x'), [put('cf', 'n', 'nope')])).toBe(false);
      expect(await getRow(t, KEY)).toBeUndefined();
      expect(await t.checkAndPut(KEY, CELL, undefined, [put('cf', 'n', 'first')])).toBe(true);
      expect(cells(await getRow(t, KEY))).toEqual(['cf:n=first']);
      expect(await t.checkAndPut(KEY, CELL, undefined, [put('cf', 'n', 'second')])).toBe(false);
      expect(cells(await getRow(t, KEY))).toEqual(['cf:n=first']);
    });

    it('applies when the newest value equals expected; changes nothing when it differs', async () => {
      const t = await ctx.table();
      await write(t, [KEY, [put('cf', 'n', 'a')]]);
      expect(await t.checkAndPut(KEY, CELL, v('b'), [put('cf', 'n', 'c')])).toBe(false);
      expect(await t.checkAndPut(KEY, CELL, v('a'), [put('cf', 'n', 'c'), put('cf', 'm', 'd')])).toBe(true);
      expect(cells(await getRow(t, KEY))).toEqual(['cf:m=d', 'cf:n=c']);
      expect(await t.checkAndPut(KEY, CELL, v(''), [put('cf', 'n', 'e')])).toBe(false);
      expect(cells(await getRow(t, KEY))).toEqual(['cf:m=d', 'cf:n=c']);
    });

    it('compares the newest version only', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }] });
      await write(t, [KEY, [put('cf', 'n', 'old', 1), put('cf', 'n', 'new', 2)]]);
      expect(await t.checkAndPut(KEY, CELL, v('old'), [put('cf', 'n', 'x', 3)])).toBe(false);
      expect(await t.checkAndPut(KEY, CELL, v('new'), [put('cf', 'n', 'x', 3)])).toBe(true);
      expect(stamps(await getRow(t, KEY, { maxVersions: 3 }))).toEqual([3, 2, 1]);
    });

    it('applies deletes and writes to other families of the row', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf' }, { name: 'g' }] });
      await write(t, [KEY, [put('cf', 'n', 'lock'), put('g', 'data', 'x')]]);
      expect(await t.checkAndPut(KEY, CELL, v('lock'), [
        { type: 'deleteCell', family: 'cf', qualifier: bytesOf('n') }, put('g', 'more', 'y'),
      ])).toBe(true);
      expect(cells(await getRow(t, KEY))).toEqual(['g:data=x', 'g:more=y']);
      expect(await t.checkAndPut(KEY, CELL, undefined, [{ type: 'deleteRow' }])).toBe(true);
      expect(await getRow(t, KEY)).toBeUndefined();
    });

    it('50 concurrent checkAndPuts on one absent cell: exactly one wins', async () => {
      const t = await ctx.table();
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
        t.checkAndPut(KEY, CELL, undefined, [put('cf', 'n', `w${i}`)])));
      expect(results.filter((r) => r)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(cells(await getRow(t, KEY))).toEqual([`cf:n=w${winner}`]);
    });

    it('rejects malformed mutations and unknown families before checking, applying nothing', async () => {
      const t = await ctx.table();
      await expectStoreError(() => t.checkAndPut(KEY, CELL, undefined, [put('cf', 'n', 'a'), put('nope', 'n', 'b')]), 'STORE_FAMILY_NOT_FOUND');
      await expectStoreError(() => t.checkAndPut(KEY, { family: 'nope', qualifier: bytesOf('n') }, undefined, [put('cf', 'n', 'a')]), 'STORE_FAMILY_NOT_FOUND');
      await expectStoreError(() => t.checkAndPut(KEY, CELL, undefined, [put('cf', 'n', 'a', -1)]), 'STORE_INVALID_ARGUMENT');
      await expectStoreError(() => t.checkAndPut(new Uint8Array(0), CELL, undefined, [put('cf', 'n', 'a')]), 'STORE_INVALID_ARGUMENT');
      expect(await getRow(t, KEY)).toBeUndefined();
    });
  });
}
