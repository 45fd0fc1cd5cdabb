/**
 * Downsampling (OpenTSDB's Downsampler): fixed buckets, `all`, the seek to the scan
 * start, every fill policy, and calendar buckets (DateTime#previousInterval) in
 * America/Denver across DST, weeks, months, an hour grid in a half-hour zone, and
 * wall-time resolution.
 */
import { describe, expect, it } from 'vitest';
import { getAggregator } from '../../../tsdb/query/aggregators.js';
import { CalendarGrid, downsample, type DownsampleSpec, Zone } from '../../../tsdb/query/downsample.js';
import { runGroup } from '../../../tsdb/query/pipeline.js';
import { seriesOf, type Points } from '../../../tsdb/query/series.js';

const T0 = 1_356_998_400_000; // 2013-01-01T00:00:00Z
const utc = (s: string): number => Date.parse(s);
const pts = (rows: Array<[number, number]>): Points => seriesOf('m', {}, rows);
const spec = (o: Partial<DownsampleSpec>): DownsampleSpec => ({ intervalMs: 10_000, all: false, fn: 'sum', fill: 'none', calendar: false, ...o });
const win = (scanStartMs: number, scanEndMs: number, queryStartMs = scanStartMs, queryEndMs = scanEndMs) => ({ scanStartMs, scanEndMs, queryStartMs, queryEndMs });
const rows = (p: Points): Array<[number, number]> => Array.from({ length: p.count }, (_, i) => [p.ts[i]!, p.values[i]!]);
const ds = (p: Points, s: DownsampleSpec, w = win(T0, T0 + 3_600_000)): Array<[number, number]> => rows(downsample(p, s, getAggregator(s.fn), w));

describe('fixed buckets', () => {
  it('bucket = ts − ts % interval, stamped at its start, values are doubles', () => {
    const p = pts([[T0 + 1000, 1], [T0 + 9999, 2], [T0 + 10_000, 4], [T0 + 35_000, 8]]);
    expect(ds(p, spec({}))).toEqual([[T0, 3], [T0 + 10_000, 4], [T0 + 30_000, 8]]);
    const out = downsample(p, spec({ fn: 'avg' }), getAggregator('avg'), win(T0, T0 + 3_600_000));
    expect(Array.from(out.isInt.subarray(0, out.count))).toEqual([0, 0, 0]);
    expect(ds(p, spec({ fn: 'count' }))).toEqual([[T0, 2], [T0 + 10_000, 1], [T0 + 30_000, 1]]);
  });

  it('skips points before the first boundary at or after the scan start (AggregationIterator seek)', () => {
    // 7m buckets do not divide the hour: the scan starts at T0, the first boundary is T0 + 180 s,
    // so the point at T0 + 60 s (bucket T0 − 240 s) is never read.
    const p = pts([[T0 + 60_000, 100], [T0 + 300_000, 1], [T0 + 420_000, 2], [T0 + 600_000, 4]]);
    expect(ds(p, spec({ intervalMs: 420_000 }))).toEqual([[T0 + 180_000, 3], [T0 + 600_000, 4]]);
  });

  it('`all`: one value over [query start, query end), stamped at the query start', () => {
    // runLongSingleTSDownsampleAllSubSet: [1356998500, 1356998600) over 1..300 every 30 s → 15.
    const p = pts(Array.from({ length: 300 }, (_, i): [number, number] => [T0 + 30_000 * (i + 1), i + 1]));
    const s = spec({ all: true, intervalMs: 0 });
    expect(ds(p, s, win(T0, T0 + 3_600_000 * 3, T0 + 100_000, T0 + 200_000))).toEqual([[T0 + 100_000, 15]]);
    expect(ds(p, { ...s, fill: 'zero' }, win(T0, T0 + 3_600_000 * 3, T0 + 100_000, T0 + 200_000))).toEqual([[T0 + 100_000, 15]]);
    expect(ds(p, s, win(T0, T0 + 3_600_000, T0 + 1, T0 + 30_000))).toEqual([]);
  });
});

describe('fill policies', () => {
  const p = pts([[T0 + 12_000, 5], [T0 + 31_000, 7]]);
  const w = win(T0, T0 + 60_000);
  it('none: empty buckets are absent', () => {
    expect(ds(p, spec({}), w)).toEqual([[T0 + 10_000, 5], [T0 + 30_000, 7]]);
  });
  it('zero: every bucket of the scan window, 0 where empty', () => {
    expect(ds(p, spec({ fill: 'zero' }), w)).toEqual([[T0, 0], [T0 + 10_000, 5], [T0 + 20_000, 0], [T0 + 30_000, 7], [T0 + 40_000, 0], [T0 + 50_000, 0]]);
  });
  it('nan and null: NaN where empty (null only changes serialization)', () => {
    for (const fill of ['nan', 'null'] as const) {
      const got = ds(p, spec({ fill }), w);
      expect(got.map(([t]) => t)).toEqual([0, 1, 2, 3, 4, 5].map((i) => T0 + 10_000 * i));
      expect(got.map(([, v]) => v)).toEqual([NaN, 5, NaN, 7, NaN, NaN]);
    }
  });
  it('fills to the scan end: (end − start + 3600)/interval buckets (runTSDownsampleWithMissingData)', () => {
    const out = downsample(p, spec({ intervalMs: 30_000, fill: 'nan' }), getAggregator('sum'), win(T0, 1_357_045_200_000));
    expect(out.count).toBe(1560);
  });
  it('runGroup marks null-fill outputs nanAsNull; sum over {NaN, 5} is 5 and over {NaN, NaN} NaN', () => {
    const a = seriesOf('m', { h: 'a' }, [[T0 + 12_000, 5]]);
    const b = seriesOf('m', { h: 'b' }, [[T0 + 45_000, 2]]);
    const [out] = runGroup([a, b], { startMs: T0, endMs: T0 + 59_000, aggregator: 'sum', downsample: spec({ fill: 'null' }) });
    expect(out!.nanAsNull).toBe(true);
    expect(Array.from(out!.values.subarray(0, out!.count))).toEqual([NaN, 5, NaN, NaN, 2, NaN]);
    const [plain] = runGroup([a, b], { startMs: T0, endMs: T0 + 59_000, aggregator: 'sum', downsample: spec({ fill: 'nan' }) });
    expect(plain!.nanAsNull).toBeUndefined();
  });
});

describe('calendar', () => {
  const denver = (o: Partial<DownsampleSpec> = {}): DownsampleSpec => spec({ calendar: true, unit: 'd', count: 1, intervalMs: 86_400_000, timezone: 'America/Denver', ...o });

  it('TestDownsampler#testDownsampler_calendar: 1dc-sum in Denver → 2012-12-31 00:00 −07:00', () => {
    const p = pts([5, 15, 25, 35, 45, 55].map((m, i): [number, number] => [T0 + m * 60_000, 2 ** i]));
    expect(ds(p, denver(), win(utc('2012-12-30T00:00:00Z'), T0 + 7_200_000))).toEqual([[1_356_937_200_000, 63]]);
    // Through the pipeline, with a query starting at that local midnight.
    const [out] = runGroup([seriesOf('m', {}, rows(p))], { startMs: 1_356_937_200_000, endMs: T0 + 3_600_000, aggregator: 'sum', downsample: denver() });
    expect(rows(out!)).toEqual([[1_356_937_200_000, 63]]);
  });

  it('days follow local midnight across the spring-forward day (a 23-hour bucket)', () => {
    const start = utc('2013-03-09T07:00:00Z');
    const hourly = pts(Array.from({ length: 72 }, (_, i): [number, number] => [start + i * 3_600_000, 1]));
    expect(ds(hourly, denver({ fn: 'count' }), win(start, start + 72 * 3_600_000))).toEqual([
      [utc('2013-03-09T07:00:00Z'), 24],
      [utc('2013-03-10T07:00:00Z'), 23],
      [utc('2013-03-11T06:00:00Z'), 24],
      [utc('2013-03-12T06:00:00Z'), 1],
    ]);
  });

  it('fills the calendar grid from previousInterval(scan start) to previousInterval(scan end)', () => {
    const p = pts([[utc('2013-03-10T12:00:00Z'), 4]]);
    const got = ds(p, denver({ fill: 'zero' }), win(utc('2013-03-09T07:00:00Z'), utc('2013-03-12T06:00:00Z')));
    expect(got).toEqual([[utc('2013-03-09T07:00:00Z'), 0], [utc('2013-03-10T07:00:00Z'), 4], [utc('2013-03-11T06:00:00Z'), 0]]);
  });

  it('weeks start on Sunday (US locale) and step 7·N days; months and 2-day buckets count from Jan 1', () => {
    const wed = utc('2013-01-09T12:00:00Z');
    const p = pts([[wed, 1]]);
    const w = win(utc('2012-12-01T00:00:00Z'), utc('2013-06-01T00:00:00Z'));
    expect(ds(p, denver({ unit: 'w' }), w)).toEqual([[utc('2013-01-06T07:00:00Z'), 1]]);
    expect(ds(p, denver({ unit: 'w', timezone: 'UTC' }), w)).toEqual([[utc('2013-01-06T00:00:00Z'), 1]]);
    expect(ds(pts([[utc('2013-03-15T00:00:00Z'), 1], [utc('2013-04-20T00:00:00Z'), 2]]), denver({ unit: 'n', count: 2, timezone: 'UTC' }), w))
      .toEqual([[utc('2013-03-01T00:00:00Z'), 3]]);
    expect(ds(pts([[utc('2013-02-15T00:00:00Z'), 1]]), denver({ unit: 'n', timezone: 'UTC' }), w)).toEqual([[utc('2013-02-01T00:00:00Z'), 1]]);
    expect(ds(pts([[utc('2013-01-04T05:00:00Z'), 1]]), denver({ count: 2, timezone: 'UTC' }), w)).toEqual([[utc('2013-01-03T00:00:00Z'), 1]]);
  });

  it('hours: 24 % N anchors at local midnight, otherwise at the first of the month', () => {
    const kolkata = denver({ unit: 'h', count: 1, timezone: 'Asia/Kolkata' });
    const w = win(utc('2012-12-01T00:00:00Z'), utc('2013-02-01T00:00:00Z'));
    expect(ds(pts([[utc('2013-01-02T00:10:00Z'), 1]]), kolkata, w)).toEqual([[utc('2013-01-01T23:30:00Z'), 1]]);
    expect(ds(pts([[utc('2013-01-02T03:00:00Z'), 1]]), denver({ unit: 'h', count: 7, timezone: 'UTC' }), w)).toEqual([[utc('2013-01-01T21:00:00Z'), 1]]);
  });

  it('rejects unknown units and zones', () => {
    expect(() => new CalendarGrid(denver({ unit: 'x' }))).toThrow(/Invalid calendar/);
    expect(() => new CalendarGrid(denver({ timezone: 'Mars/Olympus' }))).toThrow(/Invalid timezone/);
  });

  it('wall times in a DST gap or overlap resolve with the standard offset (GregorianCalendar)', () => {
    const z = new Zone('America/Denver');
    const wall = (s: string): number => utc(`${s}Z`);
    expect(z.fromWall(wall('2013-03-10T02:30:00'))).toBe(utc('2013-03-10T09:30:00Z')); // 03:30 MDT
    expect(z.fromWall(wall('2013-11-03T01:30:00'))).toBe(utc('2013-11-03T08:30:00Z')); // the MST occurrence
    expect(z.fromWall(wall('2013-07-01T00:00:00'))).toBe(utc('2013-07-01T06:00:00Z'));
    expect(z.offset(utc('2013-07-01T06:00:00Z'))).toBe(-6 * 3_600_000);
    expect(new Zone('UTC').offset(T0)).toBe(0);
  });
});
