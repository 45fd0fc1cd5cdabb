/**
 * RateSpan: per-second rates, the first rate against (0, 0), int64 deltas,
 * counters with counterMax / resetValue / dropResets, and non-increasing timestamps.
 */
import { describe, expect, it } from 'vitest';
import { rate } from '../../../tsdb/query/rate.js';
import { seriesOf, type Points } from '../../../tsdb/query/series.js';

const T = 1_356_998_430_000;
const LMAX = 2n ** 63n - 1n;
const pts = (rows: Array<readonly [number, number | bigint, boolean?]>): Points => seriesOf('m', {}, rows);
const rows = (p: Points): Array<[number, number]> => Array.from({ length: p.count }, (_, i) => [p.ts[i]!, p.values[i]!]);
const plain = { counter: false, dropResets: false };

describe('rate', () => {
  it('is Δv per second, the first rate taken against (t=0, v=0)', () => {
    const got = rows(rate(pts([[T, 1], [T + 30_000, 2], [T + 45_000, 5]]), plain));
    expect(got).toEqual([[T, 1 / (T / 1000)], [T + 30_000, 1 / 30], [T + 45_000, 3 / 15]]);
    expect(Array.from(rate(pts([[T, 1], [T + 1, 2]]), plain).isInt.subarray(0, 2))).toEqual([0, 0]);
  });

  it('uses ms deltas divided by 1000 and keeps negative rates without counter', () => {
    expect(rows(rate(pts([[T, 10], [T + 500, 5.5]]), plain))[1]).toEqual([T + 500, -9]);
  });

  it('computes integer deltas in int64 (values beyond 2^53 through the exact column)', () => {
    const got = rows(rate(pts([[T, LMAX - 55n], [T + 30_000, LMAX - 25n]]), plain));
    expect(got[1]).toEqual([T + 30_000, 1]);
  });

  it('counter: a decrease is a rollover, counterMax − prev + next, in int64 (runRateCounterDefault)', () => {
    const got = rows(rate(pts([[T, LMAX - 55n], [T + 30_000, LMAX - 25n], [T + 60_000, 5]]), { counter: true, dropResets: false }));
    expect(got.slice(1)).toEqual([[T + 30_000, 1], [T + 60_000, 1]]);
  });

  it('counterMax (runRateCounterMaxSet) and doubles on the rollover path', () => {
    const r = { counter: true, counterMax: 100, dropResets: false };
    expect(rows(rate(pts([[T, 45], [T + 30_000, 75], [T + 60_000, 5]]), r)).slice(1)).toEqual([[T + 30_000, 1], [T + 60_000, 1]]);
    expect(rows(rate(pts([[T, 45], [T + 30_000, 75.5, false], [T + 60_000, 5.5, false]]), r))[2]).toEqual([T + 60_000, 1]);
    expect(rows(rate(pts([[T, 45], [T + 30_000, 75], [T + 60_000, 5]]), { ...r, counterMax: 100n }))[2]).toEqual([T + 60_000, 1]);
  });

  it('resetValue turns a rollover rate above it into 0, and only on rollovers (runRateCounterAnomally)', () => {
    const r = { counter: true, counterMax: 1000, resetValue: 10, dropResets: false };
    const got = rows(rate(pts([[T, 45], [T + 1_000, 75], [T + 31_000, 5]]), r));
    expect(got.slice(1)).toEqual([[T + 1_000, 30], [T + 31_000, 0]]);
    const small = rows(rate(pts([[T, 45], [T + 30_000, 75], [T + 60_000, 60]]), { ...r, counterMax: 100 }));
    expect(small[2]).toEqual([T + 60_000, (100 - 75 + 60) / 30]);
  });

  it('dropResets: no rate for a decrease, the point becomes the next base (runRateCounterAnomallyDrop)', () => {
    const got = rows(rate(pts([[T, 45], [T + 30_000, 75], [T + 60_000, 5], [T + 90_000, 35]]), { counter: true, dropResets: true }));
    expect(got.slice(1)).toEqual([[T + 30_000, 1], [T + 90_000, 1]]);
  });

  it('refuses a timestamp that does not increase (a point at epoch 0 included)', () => {
    expect(() => rate(pts([[0, 1]]), plain)).toThrow(/strictly greater/);
    expect(rate(pts([]), plain).count).toBe(0);
  });
});
