/**
 * The last-value cache's rules (tsdb/meta/last-values.ts), one by one; the randomized
 * check against the store is in test/tsdb/query/newest-hours.test.ts (lastPoints with the
 * cache on, small and large), and the write path's reports are checked here through a Tsdb.
 */
import { describe, expect, it, vi } from 'vitest';
import { latin1 } from '../../../core/api/bytes.js';
import { LAST_VALUE_BYTES } from '../../../tsdb/memory/catalog-memory.js';
import { LastValues } from '../../../tsdb/meta/last-values.js';
import { lastPoints } from '../../../tsdb/query/last-point.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const H = 3600;
const ms = (hour: number, s = 0): number => (hour * H + s) * 1000;


/** Bytes of one entry with a two-character key (meta/last-values.ts). */
const ENTRY = LAST_VALUE_BYTES + 2;

describe('LastValues', () => {
  it('drops what other servers wrote (by series, by metric); a read that began before finishes nothing', () => {
    const c = new LastValues(ENTRY * 100, 3);
    const p = { ts: ms(10, 5), value: 1, isInt: false };
    c.finish('m01a', p, 10 * H, c.begin(['m01a', 'm01b', 'm02a']));
    c.finish('m01b', p, 10 * H, 0);
    c.finish('m02a', p, 10 * H, 0);
    c.forget(['m01a']);
    expect(c.get('m01a', 10 * H)).toBeUndefined();
    expect(c.get('m01b', 10 * H)).toEqual(p);
    // A read that began before a forget does not finish the entry a later read made.
    const early = c.begin(['m02b']);
    c.forget(['m02b']);
    const late = c.begin(['m02b']);
    c.finish('m02b', p, 10 * H, early);
    expect(c.get('m02b', 10 * H)).toBeUndefined();
    c.finish('m02b', undefined, 10 * H, late);
    expect(c.get('m02b', 10 * H)).toBeNull();
    // By metric: every entry of m01, made before; one made after holds.
    const before = c.begin(['m01c']);
    c.forgetMetric('m01');
    c.finish('m01c', p, 10 * H, before);
    expect(c.get('m01b', 10 * H)).toBeUndefined();
    expect(c.get('m01c', 10 * H)).toBeUndefined();
    expect(c.get('m02a', 10 * H)).toEqual(p);
    c.finish('m01b', p, 10 * H, c.begin(['m01b']));
    expect(c.get('m01b', 10 * H)).toEqual(p);
  });

  it('answers only what a finished read left, up to the hour it read', () => {
    const c = new LastValues(ENTRY * 100);
    expect(c.get('a', 10 * H)).toBeUndefined();
    c.written('a', ms(10, 5), 1, false); // no entry: a write alone makes none
    expect(c.get('a', 10 * H)).toBeUndefined();
    const token = c.begin(['a']);
    expect(c.get('a', 10 * H)).toBeUndefined(); // loading
    c.finish('a', { ts: ms(10, 5), value: 1, isInt: false }, 10 * H, token);
    expect(c.get('a', 10 * H)).toEqual({ ts: ms(10, 5), value: 1, isInt: false });
    expect(c.get('a', 11 * H)).toBeUndefined(); // the next hour's row was not read
    c.finish('a', undefined, 11 * H, c.begin(['a'])); // refreshed: nothing newer there
    expect(c.get('a', 11 * H)).toEqual({ ts: ms(10, 5), value: 1, isInt: false });
  });

  it('keeps the newest of the read and the writes reported since the entry was made', () => {
    const c = new LastValues(ENTRY * 100);
    const token = c.begin(['a', 'b']);
    c.written('a', ms(10, 20), 7, true); // acknowledged while the read ran
    c.written('b', ms(10, 1), 8, true);
    c.finish('a', { ts: ms(10, 10), value: 2, isInt: false }, 10 * H, token);
    c.finish('b', { ts: ms(10, 10), value: 3, isInt: false }, 10 * H, token);
    expect(c.get('a', 10 * H)).toEqual({ ts: ms(10, 20), value: 7, isInt: true });
    expect(c.get('b', 10 * H)).toEqual({ ts: ms(10, 10), value: 3, isInt: false });
    c.written('b', ms(9), 4, false); // a backfill does not move it back
    c.written('b', ms(10, 10), 5, true); // a rewrite of the newest point replaces it
    expect(c.get('b', 10 * H)).toEqual({ ts: ms(10, 10), value: 5, isInt: true });
  });

  it('at an equal timestamp keeps the value written during the read', () => {
    const c = new LastValues(ENTRY * 100);
    const token = c.begin(['a']);
    c.written('a', ms(10, 10), 9, false);
    c.finish('a', { ts: ms(10, 10), value: 1, isInt: false }, 10 * H, token); // read the value before
    expect(c.get('a', 10 * H)).toEqual({ ts: ms(10, 10), value: 9, isInt: false });
  });

  it('says "no point" for a series read empty, and a future point sends reads to the store', () => {
    const c = new LastValues(ENTRY * 100);
    c.finish('a', undefined, 10 * H, c.begin(['a']));
    expect(c.get('a', 10 * H)).toBeNull();
    c.written('a', ms(12, 1), 3, false); // two hours ahead
    expect(c.get('a', 10 * H)).toBeUndefined();
    expect(c.get('a', 12 * H)).toBeUndefined(); // read up to hour 10 only
    c.finish('a', undefined, 12 * H, c.begin(['a']));
    expect(c.get('a', 12 * H)).toEqual({ ts: ms(12, 1), value: 3, isInt: false });
  });

  it('a read that began before a clear or an eviction finishes nothing', () => {
    const c = new LastValues(ENTRY * 100);
    const before = c.begin(['a']);
    c.clear();
    const after = c.begin(['a']); // a newer read: its entry missed nothing
    c.finish('a', { ts: ms(10, 1), value: 1, isInt: false }, 10 * H, before); // stale: ignored
    expect(c.get('a', 10 * H)).toBeUndefined();
    c.finish('a', { ts: ms(10, 2), value: 2, isInt: false }, 10 * H, after);
    expect(c.get('a', 10 * H)).toEqual({ ts: ms(10, 2), value: 2, isInt: false });

    // The smallest table (16 entries, ~1.1 KB): a bound that leaves no room to grow it.
    const small = new LastValues(1200);
    const t0 = small.begin(['x']);
    for (let i = 0; i < 16; i++) small.begin([`s${i}`]); // past the bound: an eighth goes, the oldest first ('x')
    expect(small.size).toBeLessThanOrEqual(16);
    expect(small.bytes).toBeLessThanOrEqual(1200);
    const t1 = small.begin(['x']);
    small.finish('x', { ts: ms(10), value: 1, isInt: false }, 10 * H, t0);
    expect(small.get('x', 10 * H)).toBeUndefined();
    small.finish('x', { ts: ms(10), value: 1, isInt: false }, 10 * H, t1);
    expect(small.get('x', 10 * H)).toEqual({ ts: ms(10), value: 1, isInt: false });
  });
});

describe('the last-value cache in a Tsdb', () => {
  const T0 = Date.UTC(2026, 0, 1) / 1000;

  it('answers a repeated /api/query/last without the store, and sees each acknowledged write at once', async () => {
    const { tsdb, clock } = await openFixture({ saltBuckets: 4 }, (T0 + 2 * H) * 1000);
    await tsdb.ingest.write(['a', 'b', 'c'].map((host, i) => pt('m', T0 + H + i, i + 0.5, { host })));
    const asked = await tsdb.index.tsuids((await tsdb.metrics.getId('m'))!, 10);
    const first = await lastPoints(tsdb, asked, 0, clock.now);
    expect(first.map((p) => p?.value).sort()).toEqual([0.5, 1.5, 2.5]);
    const scan = vi.spyOn(tsdb.data, 'scan');
    const get = vi.spyOn(tsdb.data, 'get');
    expect(await lastPoints(tsdb, asked, 0, clock.now)).toEqual(first);
    await tsdb.ingest.write([pt('m', T0 + 2 * H + 7, 42, { host: 'b' })]);
    const after = await lastPoints(tsdb, asked, 0, clock.now);
    expect(scan).not.toHaveBeenCalled();
    expect(get).not.toHaveBeenCalled();
    expect(after.filter((p) => p?.value === 42 && p.isInt && p.ts === (T0 + 2 * H + 7) * 1000)).toHaveLength(1);
    expect(tsdb.lastValues!.stats()).toMatchObject({ series: 3, hits: 6, misses: 3 });
    const stats = new Map((await tsdb.statsPoints()).map((p) => [p.metric, p.value]));
    expect([stats.get('horae.query.last_cache.series'), stats.get('horae.query.last_cache.hits'), stats.get('horae.query.last_cache.misses')]).toEqual([3, 6, 3]);
    await tsdb.close();
  });

  it('forgets everything when a write fails (its rows may be stored all the same)', async () => {
    const { tsdb, clock } = await openFixture({ saltBuckets: 4 }, (T0 + 2 * H) * 1000);
    await tsdb.ingest.write([pt('m', T0 + H, 1, { host: 'a' })]);
    const asked = await tsdb.index.tsuids((await tsdb.metrics.getId('m'))!, 10);
    await lastPoints(tsdb, asked, 0, clock.now);
    expect(tsdb.lastValues!.get(latin1(asked[0]!), T0 + 2 * H)).toMatchObject({ value: 1 });
    // The store applies the write, then fails it: the point is stored but not acknowledged.
    const mutate = tsdb.data.mutate.bind(tsdb.data);
    vi.spyOn(tsdb.data, 'mutate').mockImplementationOnce(async (rows, opts) => {
      await mutate(rows, opts);
      throw new Error('disk on fire');
    });
    await expect(tsdb.ingest.write([pt('m', T0 + H + 60, 2, { host: 'a' })])).rejects.toThrow(/disk on fire/);
    expect(tsdb.lastValues!.size).toBe(0);
    expect((await lastPoints(tsdb, asked, 0, clock.now))[0]).toMatchObject({ value: 2 });
    await tsdb.close();
  });

  it('is off with horae.query.last_cache false', async () => {
    const { tsdb } = await openFixture({ queryLastCache: false });
    expect(tsdb.lastValues).toBeUndefined();
    await tsdb.close();
  });
});
