/**
 * Store contract: borrowed values (ReadOptionsBase.borrowValues). A read that borrows
 * returns what a plain read returns, and a scan's borrowed values keep their bytes until
 * the iteration asks for the next batch, whatever is written, flushed or compacted while
 * the consumer holds the batch.
 */
import { describe, expect, it } from 'vitest';
import type { Mutation, Row, Table } from '../../core/api/store.js';
import { bytesOf, cells, expectErrorClass, fmt, scanAll } from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

const ROWS = 90;

function keyOf(i: number): string {
  return `b${String(i).padStart(3, '0')}`;
}

/** A value of `len` bytes that names its row and generation in every byte. */
function valueOf(i: number, gen: number, len: number): Uint8Array {
  const v = new Uint8Array(len);
  for (let j = 0; j < len; j++) v[j] = (i * 31 + gen * 7 + j) & 0xff;
  return v;
}

/** Sizes from a few bytes to several KiB (bigger than a tiny store's blocks). */
function lengthOf(i: number): number {
  return [3, 40, 65, 300, 1500, 5000][i % 6]!;
}

function rowWrite(i: number, gen: number): { key: Uint8Array; mutations: Mutation[] } {
  const len = lengthOf(i);
  const mutations: Mutation[] = [
    { type: 'put', family: 'cf', qualifier: bytesOf('a'), value: valueOf(i, gen, len) },
    { type: 'put', family: 'cf', qualifier: bytesOf('b'), value: valueOf(i, gen + 100, len >> 1) },
  ];
  if (i % 5 === 0) mutations.push({ type: 'deleteCell', family: 'cf', qualifier: bytesOf('b') });
  return { key: bytesOf(keyOf(i)), mutations };
}

/** Rows in files (flushed) and in memory, some overwritten, some cells deleted. */
async function filled(ctx: ContractContext): Promise<Table> {
  const t = await ctx.table({ families: [{ name: 'cf', maxVersions: 2 }] });
  await t.mutate(Array.from({ length: ROWS }, (_, i) => rowWrite(i, 0)));
  await t.flush();
  await t.mutate(Array.from({ length: ROWS / 3 }, (_, j) => rowWrite(3 * j, 1)));
  return t;
}

/** Rows rendered in full (keys, cells with timestamps and values). */
function render(rows: readonly (Row | undefined)[]): (string[] | undefined)[] {
  return rows.map((r) => (r === undefined ? undefined : [fmt(r.key), ...cells(r, true)!]));
}

export function borrowContract(ctx: ContractContext): void {
  describe('borrowed values', () => {
    it('a borrowing scan returns a plain scan\'s rows, each batch intact until the next is asked for', async () => {
      const t = await filled(ctx);
      const plain = render((await scanAll(t, { maxVersions: 2 })).rows);
      const got: (string[] | undefined)[] = [];
      let gen = 10;
      for await (const batch of t.scan({ maxVersions: 2, batchRows: 7, borrowValues: true })) {
        // Rewrite the batch's rows and move every file while the batch is held.
        await t.mutate(batch.map((r) => rowWrite(Number(fmt(r.key).slice(1)), gen++)));
        await t.flush();
        await t.compact({ major: true });
        got.push(...render(batch));
      }
      expect(got).toEqual(plain);
    });

    it.runIf(ctx.caps.reverseScan)('a borrowing reverse scan returns a plain reverse scan\'s rows', async () => {
      const t = await filled(ctx);
      const plain = render((await scanAll(t, { reverse: true, batchRows: 4 })).rows);
      expect(render((await scanAll(t, { reverse: true, batchRows: 4, borrowValues: true })).rows)).toEqual(plain);
    });

    it('a borrowing get returns a plain get\'s rows', async () => {
      const t = await filled(ctx);
      const keys = [...Array.from({ length: ROWS }, (_, i) => bytesOf(keyOf(i))), bytesOf('absent')];
      const plain = render(await t.get(keys, { maxVersions: 2 }));
      expect(render(await t.get(keys, { maxVersions: 2, borrowValues: true }))).toEqual(plain);
    });

    it('borrowValues must be a boolean', async () => {
      const t = await ctx.table();
      await expectErrorClass(() => t.get([bytesOf('k')], { borrowValues: 1 as unknown as boolean }), TypeError);
      await expectErrorClass(() => scanAll(t, { borrowValues: 'yes' as unknown as boolean }), TypeError);
    });
  });
}
