/**
 * lastPoints (many series at once: one reverse scan per salt bucket and metric, per-series
 * fallback past a row budget) agrees with lastPoint (one scan per series) on every series:
 * current ones, a series that stopped long ago behind many newer rows, series of two
 * metrics, a TSUID with no data, and with a back-scan.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import { lastPoint, lastPoints } from '../../../tsdb/query/last-point.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = Date.UTC(2026, 0, 1) / 1000;

describe('lastPoints', () => {
  it('finds the newest point of each series as the per-series scan does', async () => {
    const { tsdb } = await openFixture({ saltBuckets: 4 }, (T0 + 48 * 3600) * 1000);
    const points = [];
    // 30 hosts written every 10 min for 40 h, on two metrics; host h0 (on both) stops after hour 1.
    for (let h = 0; h < 30; h++) {
      for (let t = 0; t < 40 * 3600; t += 600) {
        if (h === 0 && t > 3600) break;
        points.push(pt('m1', T0 + t, h * 1000 + t / 600, { host: `h${h}` }));
        if (h % 3 === 0) points.push(pt('m2', T0 + t + 5, h + t / 7, { host: `h${h}` }));
      }
    }
    const outcomes = await tsdb.ingest.write(points);
    expect(outcomes.every((o) => o === undefined)).toBe(true);
    const ids = [
      ...(await tsdb.index.tsuids((await tsdb.metrics.getId('m1'))!, 1000)),
      ...(await tsdb.index.tsuids((await tsdb.metrics.getId('m2'))!, 1000)),
    ];
    expect(ids).toHaveLength(40);
    const none = Uint8Array.from([...ids[0]!.subarray(0, 3), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const asked = [...ids, none];
    const now = (T0 + 48 * 3600) * 1000;
    const got = await lastPoints(tsdb, asked, 0, now);
    const want = await Promise.all(asked.map((t) => lastPoint(tsdb, t, 0, now)));
    expect(got).toEqual(want);
    expect(got[got.length - 1]).toBeUndefined();
    expect(got.filter((p) => p !== undefined)).toHaveLength(40);
    // the stale series is found behind ~39 hours of newer rows
    const stale = got.find((p) => p !== undefined && p.ts === (T0 + 3600) * 1000);
    expect(stale?.value).toBe(6);
    // with a back-scan of 10 hours the stale series has no point
    const scanned = await lastPoints(tsdb, asked, 10, now);
    expect(scanned).toEqual(await Promise.all(asked.map((t) => lastPoint(tsdb, t, 10, now))));
    expect(scanned.filter((p) => p !== undefined)).toHaveLength(38); // h0 of m1 and of m2 stopped at hour 1
  });

  // The reads borrow their values: on the embedded store those are views of SST blocks and
  // memstore slabs, valid only until the next call into the store. Compressed hours in
  // files, loose cells in a memstore, and each series' answer checked against its input.
  it('answers from borrowed values of files and memstores on the embedded store', async () => {
    const clock = { now: (T0 + 30 * 3600) * 1000 };
    const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), clock: () => clock.now, maintenanceIntervalMs: 0 });
    const tsdb = await Tsdb.open(store, { config: { saltBuckets: 4 }, now: () => clock.now, background: false });
    try {
      const newest = new Map<string, { ts: number; value: number }>();
      const write = async (hours: number, from: number): Promise<void> => {
        const points = [];
        for (let h = 0; h < 24; h++) {
          for (let t = from; t < from + hours * 3600; t += 60 + h) {
            const value = h * 100_000 + t / 60 + 0.25;
            points.push(pt('m', T0 + t, value, { host: `h${h}` }));
            newest.set(`h${h}`, { ts: (T0 + t) * 1000, value });
          }
        }
        expect((await tsdb.ingest.write(points)).every((o) => o === undefined)).toBe(true);
      };
      await write(20, 0);
      await tsdb.compactor.runOnce({ force: true, sweep: true });
      await tsdb.data.flush();
      await write(1, 20 * 3600); // the newest hour: loose cells, in the memstore
      const ids = await tsdb.index.tsuids((await tsdb.metrics.getId('m'))!, 1000);
      const names = await Promise.all(ids.map(async (t) => (await tsdb.tagvs.getName(t.subarray(6, 9)))!));
      const check = async (): Promise<void> => {
        const got = await lastPoints(tsdb, ids, 0, clock.now);
        expect(got.map((p) => p && { ts: p.ts, value: p.value })).toEqual(names.map((n) => newest.get(n)));
      };
      await check(); // scans (no trusted hints yet)
      await check(); // one batched get of the hinted rows
      await tsdb.compactor.runOnce({ force: true, sweep: true });
      await tsdb.data.flush();
      await check(); // every newest hour a compressed cell in a file
    } finally {
      await tsdb.close();
      await store.close();
    }
  });
});
