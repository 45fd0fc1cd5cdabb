/**
 * Series created in batches (tsdb/write/series-creation.ts): the new series of a call,
 * and of the calls that arrive while a batch runs, get their names and index rows in a
 * few store calls — one increment per kind, one index write — not three synced writes per
 * new name and one index write per series; their points are stored and their series
 * listed once the calls resolve; errors stay per series.
 */
import { describe, expect, it, vi } from 'vitest';
import { readSeries } from '../../../tsdb/query/series-reader.js';
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
});
