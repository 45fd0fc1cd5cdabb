/**
 * The limiter's series-per-metric counts are bounded in bytes (charged to the catalog's
 * budget: tsdb/limits/series-limiter.ts): with room for two metrics' counts and batches
 * spanning many metrics, every series past a metric's limit is refused and none below
 * it, as the index's counts say (a count that went is read again), and the counts' bytes
 * stay within the bound.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { METRIC_COUNT_BYTES, SeriesLimiter } from '../../../tsdb/limits/series-limiter.js';

const LIMIT = 5;

describe('the limiter per-metric counts', () => {
  it('refuse exactly past the limit with room for two counts', async () => {
    const r = new Random(3);
    /** The index: series per metric (latin1 of the metric UID). */
    const index = new Map<string, Set<string>>();
    const maxBytes = 2 * (METRIC_COUNT_BYTES + 3);
    const lim = new SeriesLimiter({ newPerHour: 0, newPerDay: 0, perMetric: LIMIT }, {
      metricWidth: 3, now: () => 0, maxBytes,
      countSeries: async (m, upTo) => {
        await new Promise((res) => setTimeout(res, r.int(3)));
        return Math.min(upTo, index.get(Buffer.from(m).toString('latin1'))?.size ?? 0);
      },
    });
    let refused = 0;
    for (let round = 0; round < 60; round++) {
      const batch: Uint8Array[] = [];
      for (let i = 0; i < 12; i++) batch.push(Uint8Array.of(0, 0, r.int(12), 0, 0, 1, 0, 0, r.int(40)));
      const known = (t: Uint8Array): boolean => index.get(Buffer.from(t.subarray(0, 3)).toString('latin1'))?.has(Buffer.from(t).toString('latin1')) ?? false;
      const fresh = batch.filter((t) => !known(t)); // the catalog asks only about series new to the index
      const out = await lim.admit(fresh);
      const counted = new Map<string, number>();
      const firsts = new Map<string, number>();
      for (let i = 0; i < fresh.length; i++) {
        const t = fresh[i]!;
        const m = Buffer.from(t.subarray(0, 3)).toString('latin1');
        const k = Buffer.from(t).toString('latin1');
        const first = firsts.get(k);
        if (first !== undefined) {
          expect(out[i]).toBe(out[first]);
          continue;
        }
        firsts.set(k, i);
        const have = (index.get(m)?.size ?? 0) + (counted.get(m) ?? 0);
        expect(out[i] === undefined, `round ${round}: metric ${t[2]} with ${have} series`).toBe(have < LIMIT);
        if (out[i] === undefined) counted.set(m, (counted.get(m) ?? 0) + 1);
        else refused++;
      }
      // Recorded: the index holds the admitted ones.
      for (let i = 0; i < fresh.length; i++) {
        if (out[i] !== undefined) continue;
        const m = Buffer.from(fresh[i]!.subarray(0, 3)).toString('latin1');
        if (!index.has(m)) index.set(m, new Set());
        index.get(m)!.add(Buffer.from(fresh[i]!).toString('latin1'));
      }
      expect(lim.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(refused).toBeGreaterThan(50);
  });
});
