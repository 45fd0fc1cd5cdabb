/**
 * Series created in batches (tsdb/write/series-creation.ts): the new series of a call,
 * and of the calls that arrive while a batch runs, get their names and index rows in a
 * few store calls — one increment per kind, one index write — not three synced writes per
 * new name and one index write per series; their points are stored and their series
 * listed once the calls resolve; errors stay per series.
 */
import { describe, expect, it, vi } from 'vitest';
import { openEmbeddedStore, openMemoryStore } from '../../../core/index.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import { ControlledFs } from '../../wal/wal-helpers.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1_356_998_400;

describe('batched series creation', () => {
  it('creates a call\'s 200 new series with one increment per kind and one index write', async () => {
    const { tsdb } = await openFixture({}, (T0 + 3600) * 1000);
    const increment = vi.spyOn(tsdb.uid, 'increment');
    const meta = vi.spyOn((tsdb.index as unknown as { table: { mutate: (...a: unknown[]) => Promise<void> } }).table, 'mutate');
    const points = Array.from({ length: 200 }, (_, i) => pt('m', T0, i, { host: `h${i}`, dc: `d${i % 4}` }));
    expect((await tsdb.ingest.write(points)).every((o) => o === undefined)).toBe(true);
    expect(increment).toHaveBeenCalledTimes(3); // metric, tagk, tagv: one block each
    expect(meta).toHaveBeenCalledTimes(1);
    expect((await tsdb.index.ofMetric((await tsdb.metrics.getId('m'))!)).length).toBe(200);
    expect((await readSeries(tsdb, 'm', { host: 'h7', dc: 'd3' }, T0 * 1000, (T0 + 1) * 1000)).map((p) => p.value)).toEqual([7]);
    await tsdb.close();
  });

  it('batches the calls that arrive while a batch runs, and keeps errors per series', async () => {
    const { tsdb } = await openFixture({ autoCreateTagks: false }, (T0 + 3600) * 1000);
    await tsdb.tagks.getOrCreateId('host'); // the one tag key that exists
    await tsdb.ingest.write([pt('m', T0, 0, { host: 'h' })]);
    const increment = vi.spyOn(tsdb.uid, 'increment');
    const calls = Array.from({ length: 20 }, (_, c) => tsdb.ingest.write([
      pt('m', T0 + 1, c, { host: `c${c}` }),
      pt('m', T0 + 1, c, { nokey: `c${c}` }),
    ]));
    const out = await Promise.all(calls);
    for (const o of out) {
      expect(o[0]).toBeUndefined();
      expect(o[1]?.message).toBe("No such name for 'tagk': 'nokey'");
    }
    // The first call's batch, then one for the 19 that came while it ran: two tagv blocks.
    expect(increment.mock.calls.length).toBeLessThanOrEqual(2);
    expect(tsdb.ingest.stats().seriesCreated).toBe(21);
    await tsdb.close();
  });

  it('counts a series once as created: known series dropped from the in-memory entries, or written after a restart, count as readmitted', async () => {
    // The smallest catalog budget (a few entries): 100 series written three times over cycle through the entries
    // (every later write of a series finds it dropped), as 1 M series do with a 1 M cache.
    const now = (): number => (T0 + 3600) * 1000;
    const store = await openMemoryStore({ clock: now });
    const tsdb = await Tsdb.open(store, { config: { catalogMemoryBytes: 16 * 1024 }, now, background: false });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 100; i += 10) {
        const batch = Array.from({ length: 10 }, (_, j) => pt('m', T0 + round, i + j, { host: `h${i + j}` }));
        expect((await tsdb.ingest.write(batch)).every((o) => o === undefined)).toBe(true);
      }
    }
    const s = tsdb.ingest.stats();
    expect(s.seriesCreated).toBe(100);
    expect(s.seriesReadmitted).toBe(200);
    const stats = Object.fromEntries((await tsdb.statsPoints()).map((p) => [p.metric, p.value]));
    expect(stats['horae.ingest.series_created']).toBe(100);
    expect(stats['horae.ingest.series_readmitted']).toBe(200);
    expect((await tsdb.index.ofMetric((await tsdb.metrics.getId('m'))!)).length).toBe(100);
    await tsdb.close();
    // After a restart every series is known: written again, none is created.
    const again = await Tsdb.open(store, { now, background: false });
    expect((await again.ingest.write([pt('m', T0 + 5, 1, { host: 'h1' }), pt('m', T0 + 5, 1, { host: 'new' })])).every((o) => o === undefined)).toBe(true);
    expect(again.ingest.stats()).toMatchObject({ seriesCreated: 1, seriesReadmitted: 1 });
    await again.close();
    await store.close();
  });

  it('makes a batch of new series with new tag values durable in two fsyncs, of known names in one', async () => {
    // The embedded store on a file system that counts fsyncs (WAL rounds; nothing is
    // flushed here). Before: increment, reverse and forward check-and-puts, postings and
    // index rows each took a synced round of their own.
    const fs = new ControlledFs();
    await fs.mkdir('/db');
    const store = await openEmbeddedStore({ dir: '/db', fs, maintenanceIntervalMs: 0, backgroundThreads: 0 });
    const now = (): number => (T0 + 3600) * 1000;
    const tsdb = await Tsdb.open(store, { now, background: false });
    const write = async (points: IncomingPoint[]): Promise<number> => {
      const before = fs.syncs;
      expect((await tsdb.ingest.write(points)).every((o) => o === undefined)).toBe(true);
      return fs.syncs - before;
    };
    // A new metric, tag keys and values: one round per kind's increment (one counter row,
    // one after the other), one for the rest of the names and the series, one for the points.
    expect(await write(Array.from({ length: 200 }, (_, i) => pt('m', T0, i, { host: `h${i}`, dc: 'x' })))).toBe(5);
    // 200 new series, 200 new tag values (a fleet growing): increment, series, points.
    expect(await write(Array.from({ length: 200 }, (_, i) => pt('m', T0, i, { host: `n${i}`, dc: 'x' })))).toBe(3);
    // 200 new series of known names: the series in one round, the points in another.
    expect(await write(Array.from({ length: 200 }, (_, i) => pt('m', T0, i, { host: `h${i}` })))).toBe(2);
    // Known series: the points only.
    expect(await write(Array.from({ length: 200 }, (_, i) => pt('m', T0 + 1, i, { host: `h${i}` })))).toBe(1);
    expect(tsdb.ingest.stats().seriesCreated).toBe(600);
    await tsdb.close();
    await store.close();
    // All of it is there after a reopen (durable, not only applied).
    const again = await openEmbeddedStore({ dir: '/db', fs, maintenanceIntervalMs: 0, backgroundThreads: 0 });
    const t2 = await Tsdb.open(again, { now, background: false });
    expect((await readSeries(t2, 'm', { host: 'h7' }, T0 * 1000, (T0 + 2) * 1000)).map((p) => p.value)).toEqual([7, 7]);
    expect((await t2.index.ofMetric((await t2.metrics.getId('m'))!)).length).toBe(600);
    expect((await readSeries(t2, 'm', { host: 'n9', dc: 'x' }, T0 * 1000, (T0 + 2) * 1000)).map((p) => p.value)).toEqual([9]);
    await t2.close();
    await again.close();
  });
});
