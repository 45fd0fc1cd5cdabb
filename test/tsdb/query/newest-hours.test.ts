/**
 * Newest-hour hints (tsdb/meta/newest-hours.ts) and /api/query/last's use of them
 * (lastPoints in tsdb/query/last-point.ts): the class's rules, then a seeded model test in
 * which writes (current, backfilled, future hours), hour compaction, row deletes made
 * outside the write path, cache drops, a moving clock and restarts interleave with lastPoints calls, each answer
 * checked against lastPoint (one reverse scan per series, which uses no hint), and a check
 * that once hints are trusted a call reads rows with one get and no scan.
 */
import { describe, expect, it, vi } from 'vitest';
import { seededRandom } from '../../helpers/model.js';
import { NEWEST_HOUR_BYTES } from '../../../tsdb/memory/catalog-memory.js';
import { NewestHours, tsuidKeyOfRowKey } from '../../../tsdb/meta/newest-hours.js';
import { lastPoint, lastPoints, seriesKeyOfTsuid } from '../../../tsdb/query/last-point.js';
import { patchBaseTime } from '../../../tsdb/schema/row-key.js';
import { latin1 } from '../../../core/api/bytes.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = Date.UTC(2026, 0, 1) / 1000;
const id = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

describe('NewestHours', () => {
  it('trusts an hour only once a read established it, and keeps the newest hour written', () => {
    const h = new NewestHours(() => false);
    const a = id('\x00\x00\x01\x00\x00\x01\x00\x00\x02');
    h.written(latin1(a), 7200);
    expect(h.trusted(a)).toBeUndefined();
    h.written(latin1(a), 3600); // a backfill does not move it back
    const token = h.beginRead();
    expect(token).toBeGreaterThanOrEqual(0);
    h.establish(a, 3600, token); // the read missed the write of hour 7200 that raced it
    expect(h.trusted(a)).toBe(7200);
    h.written(latin1(a), 10800);
    expect(h.trusted(a)).toBe(10800);
    h.forget(a);
    expect(h.trusted(a)).toBeUndefined();
    h.establish(a, 3600, h.beginRead()); // forgotten hours stay as a lower bound: too new is safe
    expect(h.trusted(a)).toBe(10800);
    h.distrustAll();
    expect(h.trusted(a)).toBeUndefined();
  });

  it('after dropping hints, trusts nothing until a read begins with no write in flight', () => {
    let inFlight = true;
    const h = new NewestHours(() => inFlight, 8 * (NEWEST_HOUR_BYTES + 2));
    const before = h.beginRead();
    for (let i = 0; i < 9; i++) h.written(`s${i}`, 3600);
    expect(h.size).toBeLessThanOrEqual(8);
    const key = id('s8');
    h.establish(key, 3600, before); // began before the drop
    expect(h.trusted(key)).toBeUndefined();
    expect(h.beginRead()).toBe(-1); // a write reported before the drop may not have landed
    h.establish(key, 3600, -1);
    expect(h.trusted(key)).toBeUndefined();
    inFlight = false;
    const after = h.beginRead();
    expect(after).toBeGreaterThanOrEqual(0);
    h.establish(key, 3600, after);
    expect(h.trusted(key)).toBe(3600);
  });

  it('keys a row by its TSUID: salt and base time left out', () => {
    const key = Uint8Array.from([9, 0, 0, 1, 0x69, 0x6e, 0x40, 0x00, 0, 0, 1, 0, 0, 2]);
    expect(tsuidKeyOfRowKey(key, 1, 3)).toBe(latin1(Uint8Array.from([0, 0, 1, 0, 0, 1, 0, 0, 2])));
  });
});

describe('lastPoints with newest-hour hints', () => {
  // Also with the last-value cache (meta/last-values.ts) off, and so small that it evicts.
  it.each([[0], [5], [1_000_000]])('answers as the per-series scan does under random writes, backfills, future rows, compaction and deletes (last-value cache of %i series; 5: the smallest catalog budget)', async (cacheSeries) => {
    for (const seed of [1, 2, 3]) {
      const r = seededRandom(seed);
      const config = { saltBuckets: 4, queryLastCache: cacheSeries > 0, ...(cacheSeries === 5 ? { catalogMemoryBytes: 16 * 1024 } : {}) };
      const fixture = await openFixture(config, (T0 + 30 * 3600 + 1800) * 1000);
      const { clock } = fixture;
      let tsdb = fixture.tsdb;
      const hourNow = (): number => Math.floor(clock.now / 3_600_000) - T0 / 3600;
      expect(tsdb.newestHours).toBeDefined();
      const hosts = Array.from({ length: 12 }, (_, i) => `h${i}`);
      await tsdb.ingest.write([pt('m', T0 + 25 * 3600, 1, { host: hosts[0]! })]);
      const metricId = async (): Promise<Uint8Array> => (await tsdb.metrics.getId('m'))!;
      let calls = 0;
      for (let step = 0; step < 80; step++) {
        const op = r();
        const nowHours = hourNow();
        if (op < 0.45) {
          // writes: mostly the current hours, some backfill, a few in the future
          const points = [];
          for (let k = 0; k < 1 + Math.floor(r() * 20); k++) {
            const u = r();
            const hour = u < 0.7 ? nowHours - Math.floor(r() * 3) : u < 0.9 ? Math.floor(r() * nowHours) : nowHours + 1 + Math.floor(r() * 3);
            // Few timestamps, so points are rewritten: with other values, or as integers.
            const ts = T0 + hour * 3600 + Math.floor(r() * 36) * 100;
            const v = r();
            const host = { host: hosts[Math.floor(r() * hosts.length)]! };
            if (v < 0.05) points.push({ ...pt('m', ts, 2 ** 62, host, true), big: 2n ** 62n + 1n });
            else points.push(pt('m', ts, v < 0.3 ? Math.floor(v * 20) : Math.round(r() * 1000) / 10, host));
          }
          // concurrently with a read, half of the time
          const [outcomes] = await Promise.all([tsdb.ingest.write(points), r() < 0.5 ? lastPoints(tsdb, await tsdb.index.tsuids(await metricId(), 100), 0, clock.now) : undefined]);
          expect(outcomes.every((o) => o === undefined)).toBe(true);
        } else if (op < 0.55) {
          await tsdb.compactor.runOnce({ force: true, sweep: true });
        } else if (op < 0.65) {
          // rows removed outside the write path (as DELETE /api/query or TTL would)
          const all = await tsdb.index.tsuids(await metricId(), 100);
          const t = all[Math.floor(r() * all.length)];
          if (t !== undefined) {
            const template = seriesKeyOfTsuid(tsdb, t);
            const hour = r() < 0.7 ? nowHours - Math.floor(r() * 2) : Math.floor(r() * nowHours);
            await tsdb.data.mutate([{ key: patchBaseTime(template, tsdb.widths.saltWidth + tsdb.widths.metric, T0 + hour * 3600), mutations: [{ type: 'deleteRow' }] }]);
            await tsdb.rowsDeleted([t]); // as DELETE /api/query does (the last-value cache forgets)
          }
        } else if (op < 0.68) {
          tsdb.dropCaches();
        } else if (op < 0.74) {
          clock.now += 3_600_000; // rows written in the future become current
        } else if (op < 0.77) {
          // a restart: the hints start empty over the rows already stored
          const store = tsdb.store;
          await tsdb.close();
          tsdb = await Tsdb.open(store, { config, now: () => clock.now, background: false });
        } else {
          const metric = await tsdb.metrics.getId('m');
          if (metric === undefined) continue;
          const asked = await tsdb.index.tsuids(metric, 100);
          // Mostly without a back-scan (the hints and the cache), sometimes with one (the
          // cache answers those it holds from the hours the back-scan reads).
          const backScan = [0, 0, 0, 1, 3][Math.floor(r() * 5)]!;
          const got = await lastPoints(tsdb, asked, backScan, clock.now);
          const want = await Promise.all(asked.map((t) => lastPoint(tsdb, t, backScan, clock.now)));
          expect(got, `seed ${seed} step ${step} back-scan ${backScan}`).toEqual(want);
          calls++;
        }
      }
      expect(calls).toBeGreaterThan(5);
      await tsdb.close();
    }
  });

  it('reads trusted series with one get and no scan', async () => {
    const { tsdb, clock } = await openFixture({ saltBuckets: 4, queryLastCache: false }, (T0 + 10 * 3600) * 1000);
    const points = [];
    for (let h = 0; h < 20; h++) for (let t = 0; t < 10 * 3600; t += 300) points.push(pt('m', T0 + t, h + t / 1000, { host: `h${h}` }));
    await tsdb.ingest.write(points);
    const asked = await tsdb.index.tsuids((await tsdb.metrics.getId('m'))!, 100);
    const want = await Promise.all(asked.map((t) => lastPoint(tsdb, t, 0, clock.now)));
    expect(await lastPoints(tsdb, asked, 0, clock.now)).toEqual(want); // establishes the hints
    const scan = vi.spyOn(tsdb.data, 'scan');
    const get = vi.spyOn(tsdb.data, 'get');
    expect(await lastPoints(tsdb, asked, 0, clock.now)).toEqual(want);
    expect(scan).not.toHaveBeenCalled();
    expect(get).toHaveBeenCalledTimes(1);
    // a newer hour written by the write path is read through the hint at once
    await tsdb.ingest.write([pt('m', T0 + 10 * 3600 + 5, 42.5, { host: 'h3' })]);
    clock.now += 3600 * 1000;
    const after = await lastPoints(tsdb, asked, 0, clock.now);
    expect(scan).not.toHaveBeenCalled();
    expect(after.filter((p) => p?.value === 42.5)).toHaveLength(1);
    expect(after).toEqual(await Promise.all(asked.map((t) => lastPoint(tsdb, t, 0, clock.now))));
    await tsdb.close();
  });
});
