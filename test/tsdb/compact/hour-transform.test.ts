/**
 * On a store with row transforms (embedded), a series-hour leaves the memstore as one
 * compressed cell (tsdb/compact/hour-transform.ts): no read-back, no delete marker; late
 * points land in a second cell that reads last-write-wins and folds at compaction.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;

async function open(clock: { now: number }) {
  const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), clock: () => clock.now, maintenanceIntervalMs: 0 });
  const tsdb = await Tsdb.open(store, { now: () => clock.now, background: false });
  return { store, tsdb };
}

async function qualifiers(tsdb: Tsdb): Promise<string[][]> {
  const out: string[][] = [];
  for await (const rows of tsdb.data.scan({})) for (const r of rows) out.push(r.cells.map((c) => toHex(c.qualifier)));
  return out;
}

describe('hour transform (embedded store)', () => {
  it('flushes each series-hour as one compressed cell, folds late points at compaction, and reads last write wins', async () => {
    const clock = { now: (T0 + 7200) * 1000 };
    const { store, tsdb } = await open(clock);
    expect(tsdb.storeCompresses).toBe(true);
    const first = Array.from({ length: 720 }, (_, i) => pt('cpu', T0 + i * 10, i));
    await tsdb.ingest.write(first);
    await tsdb.data.flush();
    const q1 = await qualifiers(tsdb);
    expect(q1.map((r) => r.length)).toEqual([1, 1]);
    expect(q1.every((r) => r[0]!.length === 18 && r[0]!.startsWith('0c'))).toBe(true);
    // Late points into hour 0: a rewrite of the point at 10 s and a new one at 15 s.
    clock.now += 1000;
    await tsdb.ingest.write([pt('cpu', T0 + 10, 1000), pt('cpu', T0 + 15, 7)]);
    await tsdb.data.flush();
    expect((await qualifiers(tsdb)).map((r) => r.length).sort()).toEqual([1, 2]);
    const read = await readSeries(tsdb, 'cpu', { host: 'a' }, T0 * 1000, (T0 + 7200) * 1000);
    expect(read).toHaveLength(721);
    expect(read.slice(0, 4).map((p) => [p.ts / 1000 - T0, p.value])).toEqual([[0, 0], [10, 1000], [15, 7], [20, 2]]);
    await tsdb.data.compact({ major: true });
    expect((await qualifiers(tsdb)).map((r) => r.length)).toEqual([1, 1]);
    expect(await readSeries(tsdb, 'cpu', { host: 'a' }, T0 * 1000, (T0 + 7200) * 1000)).toEqual(read);
    await tsdb.close();
    await store.close();
  });

  it('reads nothing back to compress', async () => {
    const clock = { now: (T0 + 7200) * 1000 };
    const { store, tsdb } = await open(clock);
    for (let k = 0; k < 5; k++) {
      await tsdb.ingest.write(Array.from({ length: 100 }, (_, i) => pt('cpu', T0 + k * 100 + i, i, { host: `h${i % 10}` })));
      await tsdb.data.flush();
    }
    const before = (await tsdb.data.regions()).reduce((n, r) => n + r.stats.rowsRead, 0);
    await tsdb.compactor.runOnce({ force: true });
    const after = (await tsdb.data.regions()).reduce((n, r) => n + r.stats.rowsRead, 0);
    expect(after).toBe(before);
    const stats = await store.stats();
    expect(stats.files).toBeGreaterThan(0);
    expect((await qualifiers(tsdb)).every((r) => r.length === 1 && r[0]!.length === 18)).toBe(true);
    await tsdb.close();
    await store.close();
  });
});
