/**
 * A write's rows are grouped by region before they are encoded (core/lsm/region.ts
 * groupByRegion, core/lsm/engine.ts write), so each region's entries lie back to back in
 * the batch and enter its memstore as one run (Memstore.addRun). The grouping is a stable
 * counting sort: rows of one region keep their order, so two mutations of one row in one
 * write still apply in the order given.
 */
import { describe, expect, it } from 'vitest';
import { toHex, utf8 } from '../../core/api/bytes.js';
import type { RowMutation } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { Region, TableState } from '../../core/lsm/region.js';
import { Random } from '../../core/util/random.js';

const SPLITS = [0x10, 0x20, 0x30, 0x80].map((b) => new Uint8Array([b]));

function table(): TableState {
  const t = new TableState(1, { name: 't', families: [{ name: 'f' }] });
  const bounds = [new Uint8Array(0), ...SPLITS, new Uint8Array(0)];
  for (let i = 0; i + 1 < bounds.length; i++) t.regions.push(new Region(i + 1, t, bounds[i]!, bounds[i + 1]!, [], 0, 0));
  return t;
}

function put(key: Uint8Array, value: string): RowMutation {
  return { key, mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(value) }] };
}

describe('rows grouped by region', () => {
  it('groupByRegion is a stable grouping in region order, with each row\'s region index', () => {
    const t = table();
    const rnd = new Random(7);
    const rows = Array.from({ length: 400 }, (_, i) => put(new Uint8Array([rnd.range(0, 256), rnd.range(0, 4)]), `v${i}`));
    const { rows: out, regionIndex } = t.groupByRegion(rows);
    expect(out).not.toBe(rows);
    expect(out.length).toBe(rows.length);
    expect(new Set(out)).toEqual(new Set(rows));
    for (let i = 0; i < out.length; i++) {
      expect(regionIndex[i]).toBe(t.regionIndexFor(out[i]!.key));
      expect(t.regions[regionIndex[i]!]).toBe(t.regionFor(out[i]!.key));
      if (i > 0) expect(regionIndex[i]!).toBeGreaterThanOrEqual(regionIndex[i - 1]!);
    }
    // Stable: within a region, the input order.
    for (let r = 0; r < t.regions.length; r++) {
      const want = rows.filter((row) => t.regionIndexFor(row.key) === r);
      expect(out.filter((_, i) => regionIndex[i] === r)).toEqual(want);
    }
    expect(new Set(regionIndex).size).toBe(t.regions.length);
  });

  it('rows already in region order come back as they are', () => {
    const t = table();
    const rows = [0x01, 0x11, 0x11, 0x25, 0x90].map((b, i) => put(new Uint8Array([b]), `v${i}`));
    const { rows: out, regionIndex } = t.groupByRegion(rows);
    expect(out).toBe(rows);
    expect([...regionIndex]).toEqual([0, 1, 1, 2, 4]);
  });

  it('a write of rows in mixed region order stores every row, and two puts of one cell keep their order', async () => {
    const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0, autoSplit: false });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }], splitPoints: SPLITS });
    const rnd = new Random(3);
    const keys = Array.from({ length: 300 }, () => new Uint8Array([rnd.range(0, 256), rnd.range(0, 256), rnd.range(0, 256)]));
    const rows: RowMutation[] = keys.map((k, i) => put(k, `a${i}`));
    // The same cells again, later in the same write: these values win.
    for (let i = 0; i < keys.length; i += 3) rows.push(put(keys[i]!, `b${i}`));
    await t.mutate(rows, { durability: 'sync' });
    const expectValue = (i: number): string => (i % 3 === 0 ? `b${i}` : `a${i}`);
    const check = async (): Promise<void> => {
      const got = await t.get(keys);
      expect(got.map((r) => (r === undefined ? undefined : Buffer.from(r.cells[0]!.value).toString()))).toEqual(keys.map((_, i) => expectValue(i)));
    };
    await check();
    const regions = store.engine.tables.get('t')!.regions;
    expect(regions.length).toBe(SPLITS.length + 1);
    expect(regions.reduce((n, r) => n + r.active.count, 0)).toBe(rows.length);
    // Each region's memstore holds exactly its own rows.
    for (const r of regions) {
      const mine = new Set(keys.filter((k) => store.engine.tables.get('t')!.regionFor(k) === r).map(toHex));
      expect(r.active.count).toBe(rows.filter((row) => mine.has(toHex(row.key))).length);
    }
    // And after a flush, from the files.
    await t.flush();
    expect(regions.every((r) => r.active.count === 0 && r.files.length === 1)).toBe(true);
    await check();
    await store.close();
  });
});
