/**
 * Store contract, bulk part (runs when `factory.heavy` is set): tens of thousands of cells
 * with overwrites and deletes, compared against the independent model in
 * test/helpers/model.ts through full, reverse, ranged and per-region scans and gets —
 * before and after flush, major compaction and (for persistent backends) reopen. Tiny-option
 * engine configurations turn this volume into many flushes, compactions and splits.
 *
 * The seed is printed in failure messages; TEST_SEED=<n> replays one.
 */
import { describe, expect, it } from 'vitest';
import { compareBytes, toHex } from '../../core/api/bytes.js';
import type { Mutation, RowMutation, Table } from '../../core/api/store.js';
import { LatestModel, seededRandom, summarizeRows, testSeed } from '../helpers/model.js';
import { b, put, scanAll } from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';
import { expectCoverage, regionHolds } from './contract-lifecycle.js';

const ROWS = 2000;
const QUALS = 10;

/** Row keys scattered over the key space, with 0x00 and 0xff bytes, all distinct. */
function keyOf(i: number): Uint8Array {
  return b((i * 37) & 0xff, i >> 8, i & 0xff);
}

/**
 * Compares large row lists: a fast string comparison first (vitest's deep equality costs
 * ~0.2 ms per row here), then on a mismatch the first differing entry with a readable diff.
 */
function expectSameRows<T>(got: readonly T[], want: readonly T[], what: string): void {
  if (JSON.stringify(got) === JSON.stringify(want)) return;
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (JSON.stringify(got[i]) !== JSON.stringify(want[i])) {
      expect(got[i], `${what}: first difference at entry ${i} (got ${got.length} entries, want ${want.length})`).toEqual(want[i]);
    }
  }
}

export function heavyContract(ctx: ContractContext): void {
  const caps = ctx.caps;

  async function verify(t: Table, model: LatestModel, rnd: () => number, what: string): Promise<void> {
    const all = model.all();
    const full = await scanAll(t, { batchRows: 333 });
    expectSameRows(summarizeRows(full.rows), all, `${what}: full scan`);
    for (const batch of full.batches) expect(batch.length).toBeLessThanOrEqual(333);
    if (caps.reverseScan) {
      const rev = await scanAll(t, { reverse: true, batchRows: 500 });
      expectSameRows(summarizeRows(rev.rows), [...all].reverse(), `${what}: reverse scan`);
    }
    // Gets of every present key plus absent ones, in one call per chunk.
    const present = model.keyBytes();
    const absent = Array.from({ length: 200 }, (_, i) => b(0x55, 0xff, i & 0xff, i >> 8));
    const probe = [...present, ...absent];
    const got: [string, string[] | undefined][] = [];
    for (let i = 0; i < probe.length; i += 500) {
      const chunk = probe.slice(i, i + 500);
      const rows = await t.get(chunk);
      rows.forEach((row, j) => got.push([toHex(chunk[j]!), row === undefined ? undefined : summarizeRows([row])[0]![1]]));
    }
    expectSameRows(got, probe.map((k) => [toHex(k), model.expected(toHex(k))]), `${what}: gets`);
    // Random ranges.
    for (let n = 0; n < 10; n++) {
      let lo = keyOf(Math.floor(rnd() * ROWS));
      let hi = keyOf(Math.floor(rnd() * ROWS));
      if (compareBytes(lo, hi) > 0) [lo, hi] = [hi, lo];
      const [loHex, hiHex] = [toHex(lo), toHex(hi)];
      const want = all.filter(([k]) => k >= loHex && k < hiHex);
      const got = await scanAll(t, { start: lo, end: hi, batchRows: 97 });
      expectSameRows(summarizeRows(got.rows), want, `${what}: range ${loHex}..${hiHex}`);
    }
    // Regions partition the rows.
    const regions = await t.regions();
    expectCoverage(regions);
    let total = 0;
    for (const r of regions) {
      const part = await scanAll(t, { start: r.start, end: r.end });
      for (const row of part.rows) expect(regionHolds(r, row.key)).toBe(true);
      total += part.rows.length;
    }
    expect(total, `${what}: rows over all regions`).toBe(all.length);
  }

  describe.runIf(ctx.factory.heavy === true)('bulk', () => {
    it('20k cells with overwrites and deletes match a model in scans and gets', async () => {
      const seed = testSeed(20240601);
      const rnd = seededRandom(seed);
      const what = `seed ${seed}`;
      const t = await ctx.store.createTable({
        name: 'bulk', families: [{ name: 'a' }, { name: 'b' }], splitPoints: [b(0x40), b(0x80), b(0xc0)],
      });
      const model = new LatestModel();
      const value = (): Uint8Array => Uint8Array.from({ length: Math.floor(rnd() * 40) }, () => Math.floor(rnd() * 256));
      const qual = (q: number): Uint8Array => (q === 0 ? new Uint8Array(0) : b(q, 0xff - q));
      const fam = (q: number): string => (q % 3 === 0 ? 'b' : 'a');

      // Phase 1: every row, all qualifiers. Server timestamps; the clock ticks per call,
      // so later calls always win (the model's rule).
      for (let start = 0; start < ROWS; start += 250) {
        const rows: RowMutation[] = [];
        for (let i = start; i < start + 250; i++) {
          const mutations: Mutation[] = [];
          for (let q = 0; q < QUALS; q++) {
            const v = value();
            mutations.push(put(fam(q), qual(q), v));
            model.put(keyOf(i), fam(q), qual(q), v);
          }
          rows.push({ key: keyOf(i), mutations });
        }
        await t.mutate(rows);
        ctx.clock.advance(1);
      }

      // Phase 2: random overwrites and deletes, one mutation per row per call.
      for (let call = 0; call < 60; call++) {
        const used = new Set<number>();
        const rows: RowMutation[] = [];
        for (let n = 0; n < 100; n++) {
          const i = Math.floor(rnd() * (ROWS + 100)); // some keys beyond ROWS are new rows
          if (used.has(i)) continue;
          used.add(i);
          const key = keyOf(i);
          const q = Math.floor(rnd() * QUALS);
          const roll = rnd();
          let m: Mutation;
          if (roll < 0.6) {
            const v = value();
            m = put(fam(q), qual(q), v);
            model.put(key, fam(q), qual(q), v);
          } else if (roll < 0.85) {
            m = { type: 'deleteCell', family: fam(q), qualifier: qual(q) };
            model.deleteCell(key, fam(q), qual(q));
          } else if (roll < 0.93) {
            m = { type: 'deleteFamily', family: fam(q) };
            model.deleteFamily(key, fam(q));
          } else {
            m = { type: 'deleteRow' };
            model.deleteRow(key);
          }
          rows.push({ key, mutations: [m] });
        }
        await t.mutate(rows);
        ctx.clock.advance(1);
      }
      expect(model.keys().length).toBeGreaterThan(ROWS * 0.9);

      await verify(t, model, rnd, `${what}, after writes`);
      await t.flush();
      await verify(t, model, rnd, `${what}, after flush`);
      await t.compact({ major: true });
      await verify(t, model, rnd, `${what}, after major compaction`);
      if (ctx.factory.reopen !== undefined) {
        const store = await ctx.reopen();
        await verify(await store.openTable('bulk'), model, rnd, `${what}, after reopen`);
      }
    });

    it('versions of 12k cells: reads return the newest min(requested, maxVersions)', async () => {
      const seed = testSeed(7);
      const rnd = seededRandom(seed);
      const t = await ctx.store.createTable({ name: 'ver', families: [{ name: 'v', maxVersions: 3 }] });
      const ROWS_V = 400;
      const STAMPS = 10;
      // Each version once, timestamps in a shuffled order per call; value = "row.q.ts".
      const order = Array.from({ length: STAMPS }, (_, i) => (i + 1) * 1000);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const ts of order) {
        const rows: RowMutation[] = [];
        for (let r = 0; r < ROWS_V; r++) {
          rows.push({ key: b(r >> 8, r & 0xff), mutations: [0, 1, 2].map((q) => put('v', b(q), `${r}.${q}.${ts}`, ts)) });
        }
        await t.mutate(rows);
      }
      await t.mutate(Array.from({ length: 40 }, (_, n) => ({ key: b(0, n * 3), mutations: [{ type: 'deleteRow' } as Mutation] })));
      const deleted = new Set(Array.from({ length: 40 }, (_, n) => n * 3));
      const expectRow = (r: number, versions: number): string[] => [0, 1, 2].flatMap((q) =>
        [10, 9, 8].slice(0, versions).map((s) => `v:${toHex(b(q))}@${s * 1000}=${r}.${q}.${s * 1000}`));
      const check = async (what: string): Promise<void> => {
        for (const versions of [1, 2, 5]) {
          const { rows } = await scanAll(t, { maxVersions: versions, batchRows: 128 });
          const want = Array.from({ length: ROWS_V }, (_, r) => r).filter((r) => !deleted.has(r));
          expect(rows.map((row) => toHex(row.key)), `${what}: keys`).toEqual(want.map((r) => toHex(b(r >> 8, r & 0xff))));
          rows.forEach((row, idx) => {
            const got = row.cells.map((c) => `${c.family}:${toHex(c.qualifier)}@${c.timestamp}=${new TextDecoder().decode(c.value)}`);
            expect(got, `${what}: row ${want[idx]} maxVersions ${versions}`).toEqual(expectRow(want[idx]!, Math.min(versions, 3)));
          });
        }
        const got = await t.get([b(1, 0x2c)], { maxVersions: 2, timeRange: { end: 10_000 } });
        // The range drops the newest version; maxVersions then counts within the range.
        expect(got[0]!.cells.map((c) => c.timestamp), what).toEqual([9000, 8000, 9000, 8000, 9000, 8000]);
      };
      await check(`seed ${seed}`);
      await t.flush();
      await t.compact({ major: true });
      await check(`seed ${seed}, compacted`);
      if (ctx.factory.reopen !== undefined) {
        const store = await ctx.reopen();
        const again = await store.openTable('ver');
        const { rows } = await scanAll(again, { maxVersions: 5 });
        expect(rows).toHaveLength(ROWS_V - deleted.size);
        expect(rows[0]!.cells).toHaveLength(9);
      }
    });
  });
}
