/**
 * Churn: an active set of series replaced a slice at a time for half a day of the fake
 * clock. The series index's in-memory copy follows the active set (its own byte
 * accounting stays flat once the set is stable) while every series ever written stays on
 * disk: a tag-filtered query finds a long-dead series through its postings, and writing
 * it again reads its index row instead of recording it anew.
 */
import { describe, expect, it } from 'vitest';
import { executeQuery } from '../../../tsdb/query/execute.js';
import { parseQueryJson } from '../../../tsdb/query/query-spec.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const ACTIVE = 300;
const REPLACED = 60;
const PERIOD = 10 * MIN;
const ROUNDS = 72;

describe('series churn', () => {
  it('keeps the index copy flat while dead series stay on disk', async () => {
    const T0 = Date.UTC(2026, 0, 1);
    const { tsdb, clock } = await openFixture({ indexIdleMs: 2 * HOUR, saltBuckets: 4, catalogMemoryBytes: 512 * 1024 }, T0);
    try {
      let first = 0;
      const bytes: number[] = [];
      const held: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        clock.now = T0 + round * PERIOD;
        const pts = [];
        for (let i = first; i < first + ACTIVE; i++) pts.push(pt('churn.m', clock.now, round, { host: `h${i}`, dc: `dc${i % 3}` }));
        const outcomes = await tsdb.ingest.write(pts);
        expect(outcomes.every((o) => o === undefined)).toBe(true);
        const s = tsdb.index.stats();
        bytes.push(s.bytes);
        held.push(s.series);
        first += REPLACED;
      }
      if (process.env.CHURN_VERBOSE !== undefined) console.log(JSON.stringify({ bytes, held }));
      const everWritten = first - REPLACED + ACTIVE;
      expect(everWritten).toBe(4560);
      // Held: the active set and the series dead for less than idle_ms plus an hour (a
      // series counts as written at its first point of each hour).
      const mostHeld = ACTIVE + REPLACED * ((3 * HOUR) / PERIOD);
      for (let r = 24; r < ROUNDS; r++) expect(held[r]!, `round ${r}`).toBeLessThanOrEqual(mostHeld);
      // Flat: the second half of the run never needs more bytes than the quarter after the warm-up.
      const warm = Math.max(...bytes.slice(18, 36));
      expect(Math.max(...bytes.slice(36))).toBeLessThanOrEqual(warm);
      expect(tsdb.index.stats().aged).toBeGreaterThan(3000);
      // /api/stats reports the same accounting.
      const stats = await tsdb.statsPoints();
      const stat = (m: string, why?: string): number | undefined => stats.find((p) => p.metric === m && (why === undefined || p.tags.why === why))?.value;
      expect(stat('horae.index.bytes')).toBe(tsdb.index.stats().bytes);
      expect(stat('horae.index.left', 'idle')).toBe(tsdb.index.stats().aged);

      // h0 died eleven hours ago: out of memory, found on disk by a tag-filtered query.
      const q = parseQueryJson({ start: T0, end: T0 + HOUR, queries: [{ metric: 'churn.m', aggregator: 'sum', tags: { host: 'h0' } }] }, clock.now);
      const run = await executeQuery(tsdb, q, { maxSeries: 1000, maxPoints: 1_000_000 });
      expect(run.series.map((s) => s.tags)).toEqual([{ host: 'h0', dc: 'dc0' }]);
      const before = tsdb.catalog.limiter.stats().newLastDay;
      clock.now += MIN;
      expect(await tsdb.ingest.write([pt('churn.m', clock.now, 5, { host: 'h0', dc: 'dc0' })])).toEqual([undefined]);
      expect(tsdb.catalog.limiter.stats().newLastDay, 'h0 is not new').toBe(before);
    } finally {
      await tsdb.close();
    }
  }, 120_000);
});
