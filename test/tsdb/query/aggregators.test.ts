/**
 * Every aggregator of OpenTSDB's registry (Aggregators.java): the double path with its NaN
 * rules, the long path (integer division, truncating casts, int64 wrap through runBig),
 * the percentile estimators over 1..1000 (TestAggregators#testPercentiles) and the names
 * as /api/aggregators lists them.
 */
import { describe, expect, it } from 'vitest';
import { AGGREGATOR_NAMES, getAggregator, isAggregator, LEGACY, LERP, MAX, MIN, percentileOfSorted, PREV, R_3, R_7, ZIM } from '../../../tsdb/query/aggregators.js';

const d = (name: string, ...vs: number[]): number => getAggregator(name).runDouble(Float64Array.from(vs), 0, vs.length);
const l = (name: string, ...vs: number[]): number => getAggregator(name).runLong(Float64Array.from(vs), 0, vs.length);
const big = (name: string, ...vs: bigint[]): bigint => getAggregator(name).runBig(vs);
const LMAX = 2n ** 63n - 1n;

describe('registry', () => {
  it('has the 35 names, case-sensitive, in Java HashMap order', () => {
    expect(AGGREGATOR_NAMES.length).toBe(35);
    expect(new Set(AGGREGATOR_NAMES).size).toBe(35);
    for (const n of ['sum', 'min', 'max', 'avg', 'none', 'median', 'mult', 'dev', 'diff', 'count', 'zimsum', 'mimmin', 'mimmax', 'first', 'last', 'pfsum', 'squareSum', 'p999', 'p50', 'ep999r3', 'ep50r3', 'ep999r7', 'ep50r7']) {
      expect(isAggregator(n), n).toBe(true);
    }
    expect(isAggregator('Sum')).toBe(false);
    expect(isAggregator('multiply')).toBe(false);
    expect(isAggregator('squaresum')).toBe(false);
    // Buckets (h ^ h>>>16) & 63 of String#hashCode: mult is 3, p90 6, zimsum 7; sum and p50 share 10.
    expect(AGGREGATOR_NAMES.slice(0, 6)).toEqual(['mult', 'p90', 'zimsum', 'mimmax', 'sum', 'p50']);
    expect(AGGREGATOR_NAMES[AGGREGATOR_NAMES.length - 1]).toBe('first');
    expect(() => getAggregator('bogus')).toThrow(/No such aggregator: bogus/);
  });

  it('interpolations', () => {
    const interp = (n: string): number => getAggregator(n).interpolation;
    for (const n of ['sum', 'min', 'max', 'avg', 'dev', 'median', 'mult', 'diff', 'p95', 'ep99r7']) expect(interp(n), n).toBe(LERP);
    for (const n of ['zimsum', 'count', 'first', 'last', 'squareSum', 'none']) expect(interp(n), n).toBe(ZIM);
    expect(interp('mimmin')).toBe(MAX);
    expect(interp('mimmax')).toBe(MIN);
    expect(interp('pfsum')).toBe(PREV);
  });
});

describe('double path', () => {
  it('sum family skips NaN; all NaN is NaN', () => {
    for (const n of ['sum', 'zimsum', 'pfsum']) {
      expect(d(n, 1.5, NaN, 2)).toBe(3.5);
      expect(d(n, NaN, NaN)).toBeNaN();
    }
  });
  it('min, max, avg, count, squareSum, median', () => {
    expect(d('min', NaN, 3, -1.5, 2)).toBe(-1.5);
    expect(d('mimmin', 4, 2)).toBe(2);
    expect(d('max', 3, NaN, 7.25)).toBe(7.25);
    expect(d('mimmax', -3, -2)).toBe(-2);
    expect(d('min', NaN)).toBeNaN();
    expect(d('max', NaN, NaN)).toBeNaN();
    expect(d('avg', 1, 2, NaN, 4)).toBeCloseTo(7 / 3, 12);
    expect(d('avg', NaN)).toBeNaN();
    expect(d('count', 1, NaN, 0, 5)).toBe(3);
    expect(d('count', NaN)).toBe(0);
    expect(d('squareSum', 1, NaN, -2, 3)).toBe(14);
    // TestAggregators#testMedian (double): upper median, no averaging.
    expect(d('median', 5.1, 2.434, -1.99, 400.69487, 3.15168, -42)).toBe(3.15168);
    expect(d('median', 1, NaN, 2)).toBe(2);
  });
  it('dev is the population deviation (Welford); 0 for one value', () => {
    expect(d('dev', 2, 4, 4, 4, 5, 5, 7, 9)).toBeCloseTo(2, 12);
    expect(d('dev', 3)).toBe(0);
    expect(d('dev', NaN, 1, NaN, 3)).toBeCloseTo(1, 12);
    expect(d('dev', NaN)).toBeNaN();
  });
  it('mult propagates NaN; diff is last − first with the first skipping NaN', () => {
    expect(d('mult', 1.5, 2, -3)).toBe(-9);
    expect(d('mult', 2, NaN)).toBeNaN();
    expect(d('diff', NaN, 2, 5, 10)).toBe(8);
    expect(d('diff', 4)).toBe(0);
    expect(d('first', NaN, 2)).toBeNaN();
    expect(d('last', 2, 3.5)).toBe(3.5);
  });
  it('none accepts exactly one value', () => {
    expect(d('none', 4.5)).toBe(4.5);
    expect(() => d('none', 1, 2)).toThrow(/More than one value/);
  });
  it('percentiles use the LEGACY estimate whatever the name says', () => {
    const vs = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(d('p50', ...vs)).toBe(500.5);
    expect(d('ep50r3', ...vs)).toBe(500.5);
    expect(d('ep50r7', ...vs)).toBe(500.5);
    expect(d('p999', ...vs)).toBeCloseTo(999.999, 9);
    expect(d('p95', 3, NaN, 1, 2)).toBe(3); // NaN removed; pos 3.8 >= 3 → max
    expect(d('p50', NaN)).toBeNaN();
  });
});

describe('long path', () => {
  it('avg divides as Java longs (truncation toward zero)', () => {
    expect(l('avg', 300, 1)).toBe(150);
    expect(l('avg', -3, -4)).toBe(-3);
    expect(l('avg', 7)).toBe(7);
  });
  it('dev and percentiles are truncated casts; count counts every value', () => {
    expect(l('dev', 1, 2, 3, 4)).toBe(1); // sqrt(1.25)
    expect(l('dev', 9)).toBe(0);
    expect(l('count', 0, 0, 3)).toBe(3);
    expect(l('median', 5, 2, -1, 400, 3, -42)).toBe(3);
    expect(l('diff', 10, 7, 3)).toBe(-7);
    expect(l('first', 4, 5)).toBe(4);
    expect(l('last', 4, 5)).toBe(5);
    expect(l('squareSum', 3, -4)).toBe(25);
    expect(l('mult', 3, -4, 5)).toBe(-60);
    expect(l('p50', -1, -2)).toBe(-1); // -1.5 truncates toward zero
  });
  it('TestAggregators#testPercentiles: 1..1000 gives 500/750/900/950/990/999 for every family', () => {
    const vs = Array.from({ length: 1000 }, (_, i) => i + 1);
    const want: Record<string, number> = { '50': 500, '75': 750, '90': 900, '95': 950, '99': 990, '999': 999 };
    for (const [p, v] of Object.entries(want)) {
      for (const name of [`p${p}`, `ep${p}r3`, `ep${p}r7`]) expect(l(name, ...vs), name).toBe(v);
    }
  });
  it('estimators: LEGACY p(n+1), R_3 rint(n·p) (half to even), R_7 1+(n−1)p', () => {
    const s = Float64Array.from([10, 20, 30, 40]);
    expect(percentileOfSorted(s, 50, LEGACY)).toBe(25); // pos 2.5
    expect(percentileOfSorted(s, 50, R_7)).toBe(25); // pos 2.5
    expect(percentileOfSorted(s, 50, R_3)).toBe(20); // rint(2) = 2
    expect(percentileOfSorted(s, 62.5, R_3)).toBe(20); // rint(2.5) = 2, not 3
    expect(percentileOfSorted(s, 87.5, R_3)).toBe(40); // rint(3.5) = 4
    expect(percentileOfSorted(s, 10, R_3)).toBe(10); // p <= 0.5/n → min
    expect(percentileOfSorted(s, 10, LEGACY)).toBe(10); // pos 0.5 < 1
    expect(percentileOfSorted(s, 99, LEGACY)).toBe(40); // pos 4.95 >= n
    expect(percentileOfSorted(s, 100, R_7)).toBe(40);
  });
  it('runLong reports NaN when a partial result leaves ±2^53; runBig wraps like Java longs', () => {
    expect(l('sum', 2 ** 52, 2 ** 52)).toBeNaN();
    expect(l('mult', 2 ** 30, 2 ** 30)).toBeNaN();
    expect(big('sum', LMAX, 1n)).toBe(-(2n ** 63n));
    expect(big('zimsum', LMAX - 25n, 30n)).toBe(-(2n ** 63n) + 4n);
    expect(big('avg', LMAX, LMAX)).toBe(-1n); // the sum wraps to -2, then / 2
    expect(big('mult', 2n ** 32n, 2n ** 32n)).toBe(0n);
    expect(big('diff', -LMAX, LMAX)).toBe(-2n);
    expect(big('squareSum', 2n ** 32n)).toBe(0n);
    expect(big('min', 5n, LMAX)).toBe(5n);
    expect(big('median', 3n, 1n, 2n, LMAX)).toBe(3n);
    expect(big('p999', LMAX, LMAX)).toBe(LMAX); // (long) 2^63 saturates
    expect(big('count', 1n, 2n)).toBe(2n);
  });
});

describe('oneIsValue', () => {
  it('holds for every aggregator that claims it: one value in, the same double out', () => {
    const values = [1, -1, 0.1, -2.5, 1e-310, -1e-310, 1.7976931348623157e308, -1.7976931348623157e308, 123456.789, 2 ** 53 + 2, Math.PI];
    const claimed = AGGREGATOR_NAMES.filter((n) => getAggregator(n).oneIsValue);
    expect(claimed.length).toBe(30); // 35 but count, dev, diff, mult, squareSum
    for (const name of claimed) {
      for (const v of values) expect(Object.is(d(name, v), v), `${name}(${v})`).toBe(true);
    }
    for (const name of ['count', 'dev', 'diff', 'squareSum']) expect(getAggregator(name).oneIsValue, name).toBe(false);
  });
});
