import { describe, expect, it } from 'vitest';
import { describeRange, formatAbsolute, isRelative, parseTime, resolveRange, shiftRange, TimeExpressionError, zoomOut, zoomOutRelative, zoomTo } from '../../ui/src/lib/time-range.js';

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);

describe('parseTime', () => {
  it('reads relative times in OpenTSDB and Grafana syntax', () => {
    expect(parseTime('1h-ago', NOW)).toBe(NOW - 3_600_000);
    expect(parseTime('now-15m', NOW)).toBe(NOW - 900_000);
    expect(parseTime('30d-ago', NOW)).toBe(NOW - 30 * 86_400_000);
    expect(parseTime('500ms-ago', NOW)).toBe(NOW - 500);
    expect(parseTime('now', NOW)).toBe(NOW);
  });

  it('tells epoch seconds from milliseconds by digit count', () => {
    expect(parseTime('1704067200', NOW)).toBe(1_704_067_200_000);
    expect(parseTime('1704067200123', NOW)).toBe(1_704_067_200_123);
    expect(parseTime('1704067200.5', NOW)).toBe(1_704_067_200_500);
  });

  it('reads absolute dates in local time and ISO with a zone', () => {
    expect(parseTime('2026/01/02-03:04:05', NOW)).toBe(new Date(2026, 0, 2, 3, 4, 5).getTime());
    expect(parseTime('2026/01/02', NOW)).toBe(new Date(2026, 0, 2).getTime());
    expect(parseTime('2026-01-02T03:04:05Z', NOW)).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseTime(formatAbsolute(NOW), NOW)).toBe(NOW);
  });

  it('rejects what it cannot read, naming the input', () => {
    for (const bad of ['yesterday', '1x-ago', '2026/13/01', '2026/01/01-25:00', '-5', 'now+1h']) {
      expect(() => parseTime(bad, NOW), bad).toThrow(TimeExpressionError);
    }
    expect(() => parseTime('yesterday', NOW)).toThrow('"yesterday"');
  });
});

describe('ranges', () => {
  it('resolves and checks order', () => {
    expect(resolveRange('1h-ago', undefined, NOW)).toEqual({ startMs: NOW - 3_600_000, endMs: NOW });
    expect(() => resolveRange('1h-ago', '2h-ago', NOW)).toThrow('must be before');
  });

  it('knows relative from absolute', () => {
    expect(isRelative('1h-ago', undefined)).toBe(true);
    expect(isRelative('now-1h', 'now')).toBe(true);
    expect(isRelative('1704067200000', undefined)).toBe(false);
    expect(isRelative('1h-ago', '1704067200000')).toBe(false);
  });

  it('zooms in to whole ms, out around the centre, and shifts', () => {
    expect(zoomTo(2000.7, 1000.2)).toEqual({ start: '1000', end: '2001' });
    expect(zoomTo(5, 5)).toEqual({ start: '5', end: '6' });
    expect(zoomOut({ startMs: 1000, endMs: 2000 }, 10_000)).toEqual({ start: '500', end: '2500' });
    expect(zoomOut({ startMs: 1000, endMs: 2000 }, 2000)).toEqual({ start: '0', end: '2000' });
    expect(shiftRange({ startMs: 1000, endMs: 2000 }, -0.5)).toEqual({ start: '500', end: '1500' });
  });

  it('keeps a relative range relative when zooming out', () => {
    expect(zoomOutRelative('1h-ago')).toBe('2h-ago');
    expect(zoomOutRelative(' now-15m ')).toBe('now-30m');
    expect(zoomOutRelative('1704067200000')).toBeUndefined();
  });

  it('describes presets and absolute ranges', () => {
    expect(describeRange('15m-ago', undefined, NOW)).toBe('Last 15m');
    expect(describeRange(String(NOW - 1000), String(NOW), NOW)).toBe(`${formatAbsolute(NOW - 1000)} → ${formatAbsolute(NOW)}`);
  });
});
