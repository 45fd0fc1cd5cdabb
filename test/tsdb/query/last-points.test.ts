/**
 * lastPoints (many series at once: one reverse scan per salt bucket and metric, per-series
 * fallback past a row budget) agrees with lastPoint (one scan per series) on every series:
 * current ones, a series that stopped long ago behind many newer rows, series of two
 * metrics, a TSUID with no data, and with a back-scan.
 */
import { describe, expect, it } from 'vitest';
import { lastPoint, lastPoints } from '../../../tsdb/query/last-point.js';
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
});
