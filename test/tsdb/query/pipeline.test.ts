/**
 * runGroup end to end: scan bounds, the serializer's trim, the
 * active window, interpolation kinds, the integer/double typing with look-ahead, rate
 * aggregation without interpolation, int64 wrap-around, `none`, and errors.
 */
import { describe, expect, it } from 'vitest';
import { runGroup, scanWindow, type PipelineSpec } from '../../../tsdb/query/pipeline.js';
import { seriesOf, type OutSeries, type SeriesData } from '../../../tsdb/query/series.js';

const S = 1_356_998_400_000;
const LMAX = 2n ** 63n - 1n;
const ser = (tag: string, rows: Array<readonly [number, number | bigint, boolean?]>): SeriesData => seriesOf('m', { h: tag }, rows);
const q = (o: Partial<PipelineSpec>): PipelineSpec => ({ startMs: S, endMs: S + 3_600_000, aggregator: 'sum', ...o });
const rows = (o: OutSeries): Array<[number, number, number]> => Array.from({ length: o.count }, (_, i) => [o.ts[i]!, o.values[i]!, o.isInt[i]!]);
const one = (series: SeriesData[], spec: PipelineSpec): Array<[number, number, number]> => rows(runGroup(series, spec)[0]!);

describe('scan window (TsdbQuery#getScanStartTimeSeconds / getScanEndTimeSeconds)', () => {
  const ds = (intervalMs: number) => ({ intervalMs, all: false, fn: 'sum', fill: 'none' as const, calendar: false });
  it('matches the OpenTSDB test vectors', () => {
    expect(scanWindow(1_356_998_400_000, 1_357_041_600_000, ds(60_000))).toEqual({ startMs: 1_356_998_400_000, endMs: 1_357_045_200_000 });
    expect(scanWindow(1_427_372_347_000, 1_427_415_547_000, ds(900_000))).toEqual({ startMs: 1_427_371_200_000, endMs: 1_427_418_000_000 });
    expect(scanWindow(1_427_372_347_000, 1_427_415_547_000, ds(86_400_000))).toEqual({ startMs: 1_427_328_000_000, endMs: 1_427_500_800_000 });
    expect(scanWindow(1_356_998_400_000, 1_357_001_900_000)).toEqual({ startMs: 1_356_998_400_000, endMs: 1_357_002_000_000 });
    expect(scanWindow(1_356_998_400_000, 1_357_001_998_999)).toEqual({ startMs: 1_356_998_400_000, endMs: 1_357_002_000_000 });
    // end_ms/1000 + 1 reaches the next hour in the hour's last second: one more hour is scanned.
    expect(scanWindow(1_356_998_400_000, 1_357_001_999_999)).toEqual({ startMs: 1_356_998_400_000, endMs: 1_357_005_600_000 });
  });
});

describe('aggregation across series', () => {
  it('runEndTime: the engine aggregates whole hours, the output is trimmed to [start, end]', () => {
    const a = ser('a', Array.from({ length: 300 }, (_, i) => [S + 30_000 * (i + 1), i + 1] as const));
    const got = one([a], q({ endMs: 1_357_001_900_000 }));
    expect(got.length).toBe(116);
    expect(got[115]).toEqual([1_357_001_880_000, 116, 1]);
  });

  it('a series contributes only between its first and last point (testAggregate_doubleSpans)', () => {
    const a = ser('a', [[S, 40], [S + 10_000, 50], [S + 30_000, 70]]);
    const b = ser('b', [[S + 10_000, 37], [S + 20_000, 48]]);
    expect(one([a, b], q({}))).toEqual([[S, 40, 1], [S + 10_000, 87, 1], [S + 20_000, 108, 1], [S + 30_000, 70, 1]]);
  });

  it('integer LERP truncates toward zero; double LERP does not', () => {
    const up = ser('a', [[S, 300], [S + 30_000, 299]]);
    const mid = ser('b', [[S + 15_000, 1]]);
    expect(one([up, mid], q({}))[1]).toEqual([S + 15_000, 301, 1]); // 300 + (15000·−1)/30000 = 300
    const upD = ser('a', [[S, 300.5, false], [S + 30_000, 299.5, false]]);
    expect(one([upD, mid], q({}))[1]).toEqual([S + 15_000, 301, 0]);
  });

  it('ZIM, MAX, MIN and PREV interpolations', () => {
    const a = ser('a', [[S, 1], [S + 20_000, 3]]);
    const b = ser('b', [[S + 10_000, 5]]);
    expect(one([a, b], q({ aggregator: 'zimsum' }))[1]).toEqual([S + 10_000, 5, 1]);
    expect(one([a, b], q({ aggregator: 'count' }))[1]).toEqual([S + 10_000, 2, 1]);
    expect(one([a, b], q({ aggregator: 'mimmin' }))[1]).toEqual([S + 10_000, 5, 1]);
    expect(one([a, b], q({ aggregator: 'mimmax' }))[1]).toEqual([S + 10_000, 5, 1]);
    expect(one([a, b], q({ aggregator: 'pfsum' }))[1]).toEqual([S + 10_000, 6, 1]);
    expect(one([a, b], q({ aggregator: 'sum' }))[1]).toEqual([S + 10_000, 7, 1]);
    const aD = ser('a', [[S, 1.5, false], [S + 20_000, 3.5, false]]);
    expect(one([aD, b], q({ aggregator: 'mimmax' }))[1]).toEqual([S + 10_000, 5, 0]);
    expect(one([aD, b], q({ aggregator: 'mimmin' }))[1]).toEqual([S + 10_000, 5, 0]);
  });

  it('an output is an integer only if every current and look-ahead point is (runMixedSingleTS)', () => {
    const mixed = ser('a', [[S, 1], [S + 1000, 2.5, false], [S + 2000, 3], [S + 3000, 4.5, false], [S + 4000, 5]]);
    expect(one([mixed], q({})).map((r) => r[2])).toEqual([0, 0, 0, 0, 1]);
    // A float series that has not started yet still makes the outputs doubles.
    const ints = ser('a', [[S, 1], [S + 1000, 2], [S + 5000, 3]]);
    const late = ser('b', [[S + 4000, 1.5, false]]);
    expect(one([ints, late], q({})).map((r) => r[2])).toEqual([0, 0, 0, 1]);
  });

  it('with rate, a series without a point contributes its previous rate, never interpolated', () => {
    const a = ser('a', [[S + 10_000, 0], [S + 20_000, 10], [S + 40_000, 30]]);
    const b = ser('b', [[S + 30_000, 0], [S + 50_000, 40]]);
    const got = one([a, b], q({ rate: { counter: false, dropResets: false } }));
    const firstB = 0 / ((S + 30_000) / 1000); // b's rate against (0, 0)
    expect(got).toEqual([[S + 20_000, 1 + firstB, 0], [S + 40_000, 1 + firstB, 0], [S + 50_000, 2, 0]]);
  });

  it('sums integers as Java longs: exact beyond 2^53 and wrapping at 2^63', () => {
    const a = ser('a', [[S, LMAX - 1n], [S + 10_000, 4]]);
    const b = ser('b', [[S, 3], [S + 10_000, 2n ** 60n + 1n]]);
    const out = runGroup([a, b], q({}))[0]!;
    expect(out.exact?.[0]).toBe(-(2n ** 63n) + 1n);
    expect(out.values[0]).toBe(-(2 ** 63));
    expect(out.exact?.[1]).toBe(2n ** 60n + 5n);
    expect(Array.from(out.isInt)).toEqual([1, 1]);
    const avg = runGroup([a, b], q({ aggregator: 'avg' }))[0]!;
    expect(avg.values[0]).toBe(Number((-(2n ** 63n) + 1n) / 2n));
  });

  it('`none` returns each series on its own, in input order', () => {
    const a = ser('a', [[S, 1]]);
    const b = ser('b', [[S, 2.5, false], [S + 1000, 3.5, false]]);
    const outs = runGroup([a, b], q({ aggregator: 'none' }));
    expect(outs.map(rows)).toEqual([[[S, 1, 1]], [[S, 2.5, 0], [S + 1000, 3.5, 0]]]);
  });

  it('downsamples before LERP: gaps between buckets are interpolated as doubles', () => {
    const a = ser('a', [[S + 1000, 10], [S + 61_000, 30]]);
    const b = ser('b', [[S + 30_000, 1], [S + 31_000, 3]]);
    const ds = { intervalMs: 10_000, all: false, fn: 'avg', fill: 'none' as const, calendar: false };
    expect(one([a, b], q({ downsample: ds }))).toEqual([[S, 10, 0], [S + 30_000, 22, 0], [S + 60_000, 30, 0]]);
  });

  it('edge cases and errors', () => {
    expect(runGroup([], q({}))).toEqual([]);
    expect(runGroup([ser('a', [[S - 10_000_000, 1]])], q({}))[0]!.count).toBe(0);
    expect(() => runGroup([], q({ aggregator: 'nope' }))).toThrow(/No such aggregator/);
    const badDs = { intervalMs: 10_000, all: false, fn: 'none', fill: 'none' as const, calendar: false };
    expect(() => runGroup([], q({ downsample: badDs }))).toThrow(/NONE/);
    expect(() => runGroup([], q({ endMs: S - 1 }))).toThrow(/End time/);
    const huge = ser('a', [[S, Number.MAX_VALUE, false]]);
    expect(() => runGroup([huge, ser('b', [[S, Number.MAX_VALUE, false]])], q({}))).toThrow(/Infinity/);
  });
});
