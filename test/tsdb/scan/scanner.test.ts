import { describe, expect, it } from 'vitest';
import { isTsdbError } from '../../../tsdb/errors.js';
import { seriesKeyOfTsuid } from '../../../tsdb/query/last-point.js';
import { scanSeries, tsuidHex } from '../../../tsdb/query/scanner.js';
import { rowKeyWithBaseTime, tsuidTagPairs } from '../../../tsdb/schema/row-key.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;

describe('scanSeries', () => {
  it('finds every series of a metric across salt buckets and hours, points in order and in range', async () => {
    const { tsdb, clock } = await openFixture({}, (T0 + 5 * 3600) * 1000);
    const pts: IncomingPoint[] = [];
    for (let h = 0; h < 12; h++) for (let i = 0; i < 30; i++) pts.push(pt('cpu', T0 + i * 600, h * 1000 + i, { host: `h${h}`, dc: h % 2 === 0 ? 'a' : 'b' }));
    pts.push(pt('other', T0, 1, { host: 'h0' }));
    await tsdb.ingest.write(pts);
    // compress half the hours, so the scan reads both kinds of rows
    clock.now = (T0 + 3 * 3600) * 1000;
    await tsdb.compactor.runOnce({ force: true });
    const metricUid = (await tsdb.metrics.getId('cpu'))!;
    const all = await scanSeries(tsdb, { metricUid, startMs: T0 * 1000, endMs: (T0 + 5 * 3600) * 1000 });
    expect(all).toHaveLength(12);
    const hosts = new Set<string>();
    for (const s of all) {
      expect(s.count).toBe(30);
      const [[k, v]] = tsuidTagPairs(tsdb.widths, s.tsuid).filter(([kk]) => tsuidHex(kk) === tsuidHex((tsdb.tagks.cachedId('host'))!));
      hosts.add((await tsdb.tagvs.getName(v!))!);
      expect(k).toBeDefined();
      for (let i = 1; i < s.count; i++) expect(s.ts[i]! > s.ts[i - 1]!).toBe(true);
    }
    expect(hosts.size).toBe(12);
    const window = await scanSeries(tsdb, { metricUid, startMs: (T0 + 3600) * 1000, endMs: (T0 + 7200) * 1000 });
    for (const s of window) {
      expect(s.count).toBe(7); // 3600..7200 s at 600 s steps, both ends inclusive
      expect(s.ts[0]).toBe((T0 + 3600) * 1000);
    }
  });

  it('stops with TSDB_TOO_LARGE past its limits', async () => {
    const { tsdb } = await openFixture();
    await tsdb.ingest.write(Array.from({ length: 50 }, (_, i) => pt('m', T0 + i, i, { host: `h${i % 5}` })));
    const metricUid = (await tsdb.metrics.getId('m'))!;
    const tooMany = await scanSeries(tsdb, { metricUid, startMs: T0 * 1000, endMs: (T0 + 100) * 1000, maxSeries: 3 }).catch((e: unknown) => e);
    expect(isTsdbError(tooMany, 'TSDB_TOO_LARGE')).toBe(true);
    const tooBig = await scanSeries(tsdb, { metricUid, startMs: T0 * 1000, endMs: (T0 + 100) * 1000, maxPoints: 20 }).catch((e: unknown) => e);
    expect(isTsdbError(tooBig, 'TSDB_TOO_LARGE')).toBe(true);
    expect((await scanSeries(tsdb, { metricUid, startMs: T0 * 1000, endMs: (T0 + 100) * 1000 })).length).toBe(5);
  });

  it.each([1, 3])('puts each row in its own series while a bucket\'s series come and go hour by hour (%i salt buckets)', async (saltBuckets) => {
    // Series i has a row in hour h unless (i + h) % 4 === 0 (gaps), and exists from hour
    // i % 5 on (series appear late): the scanner's guess of the next row's series (the one
    // after the last row's) is wrong at every gap and at every new series. Pairs of series
    // differ in their first tag only, or in their last only.
    const { tsdb } = await openFixture({ saltBuckets }, (T0 + 9 * 3600) * 1000);
    const want = new Map<string, number[]>();
    const pts: IncomingPoint[] = [];
    for (let i = 0; i < 24; i++) {
      const host = `h${i % 6}`;
      const dc = `d${Math.floor(i / 6)}`;
      const got: number[] = [];
      for (let h = i % 5; h < 8; h++) {
        if ((i + h) % 4 === 0) continue;
        for (let k = 0; k < 3; k++) {
          const v = i * 1000 + h * 10 + k;
          pts.push(pt('cpu', T0 + h * 3600 + k * 60, v, { host, dc }));
          got.push(v);
        }
      }
      want.set(`${host} ${dc}`, got);
    }
    await tsdb.ingest.write(pts);
    const metricUid = (await tsdb.metrics.getId('cpu'))!;
    const nameOf = async (s: { tsuid: Uint8Array }): Promise<string> => {
      const tag = async (k: string): Promise<string> => {
        const uid = tsuidHex(tsdb.tagks.cachedId(k)!);
        return (await tsdb.tagvs.getName(tsuidTagPairs(tsdb.widths, s.tsuid).find(([kk]) => tsuidHex(kk) === uid)![1]))!;
      };
      return `${await tag('host')} ${await tag('dc')}`;
    };
    const window = { metricUid, startMs: T0 * 1000, endMs: (T0 + 8 * 3600) * 1000 };
    const scanned = await scanSeries(tsdb, window);
    expect(scanned).toHaveLength(24);
    for (const s of scanned) expect(Array.from(s.values.subarray(0, s.count)), await nameOf(s)).toEqual(want.get(await nameOf(s)));
    // The same rows through exact gets: a series' hours one after the other.
    const keys = scanned.flatMap((s) => Array.from({ length: 8 }, (_, h) => rowKeyWithBaseTime(tsdb.widths, seriesKeyOfTsuid(tsdb, s.tsuid), T0 + h * 3600)));
    const got = await scanSeries(tsdb, { ...window, keys });
    expect(got.map((s) => tsuidHex(s.tsuid))).toEqual(scanned.map((s) => tsuidHex(s.tsuid)));
    for (const s of got) expect(Array.from(s.values.subarray(0, s.count)), await nameOf(s)).toEqual(want.get(await nameOf(s)));
  });
});
