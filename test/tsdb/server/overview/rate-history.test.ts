import { describe, expect, it } from 'vitest';
import { RateHistory } from '../../../../tsdb/server/overview/rate-history.js';

describe('RateHistory', () => {
  it('turns cumulative counters into per-second rates, the first record being the baseline', () => {
    const h = new RateHistory(['a', 'b'], 10);
    h.record(1000, { a: 0, b: 10 });
    expect(h.columns()).toEqual({ timesMs: [], rates: { a: [], b: [] } });
    h.record(3000, { a: 50, b: 10 });
    h.record(3500, { a: 60, b: 12 });
    expect(h.columns()).toEqual({ timesMs: [3000, 3500], rates: { a: [25, 20], b: [0, 4] } });
    expect(h.lastRecordMs).toBe(3500);
  });

  it('gives null, never a negative rate, when a counter went down or is missing', () => {
    const h = new RateHistory(['a', 'b'], 10);
    h.record(0, { a: 100, b: 1 });
    h.record(1000, { a: 40, b: 2 });
    h.record(2000, { a: 50 });
    h.record(3000, { a: 60, b: 5 });
    expect(h.columns().rates).toEqual({ a: [null, 10, 10], b: [1, null, null] });
  });

  it('ignores a record whose time does not advance', () => {
    const h = new RateHistory(['a'], 10);
    h.record(1000, { a: 0 });
    h.record(1000, { a: 5 });
    h.record(500, { a: 7 });
    h.record(2000, { a: 10 });
    expect(h.columns()).toEqual({ timesMs: [2000], rates: { a: [10] } });
  });

  it('keeps the newest `capacity` samples, oldest first', () => {
    const h = new RateHistory(['n'], 3);
    for (let i = 0; i <= 7; i++) h.record(i * 1000, { n: i * i });
    expect(h.length).toBe(3);
    expect(h.columns()).toEqual({ timesMs: [5000, 6000, 7000], rates: { n: [9, 11, 13] } });
  });

  it('refuses a capacity below one', () => {
    expect(() => new RateHistory(['a'], 0)).toThrow(RangeError);
  });
});
