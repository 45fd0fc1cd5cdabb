import { describe, expect, it } from 'vitest';
import { formatAxisValue, formatCount, formatDurationMs, formatLegendValue, formatTimeTicks, formatTimestamp } from '../../ui/src/lib/format.js';

describe('format', () => {
  it('formats axis values with SI prefixes from 10k', () => {
    const cases: [number, string][] = [[0, '0'], [1, '1'], [1.5, '1.5'], [999, '999'], [1500, '1500'], [12_500, '12.5k'], [3_000_000, '3M'], [-250_000, '-250k'], [2.5e9, '2.5G'], [0.25, '0.25'], [0.0000012, '1.2e-6']];
    for (const [v, s] of cases) expect(formatAxisValue(v), String(v)).toBe(s);
  });

  it('formats legend values exactly enough to read', () => {
    expect(formatLegendValue(null)).toBe('—');
    expect(formatLegendValue(undefined)).toBe('—');
    expect(formatLegendValue(42)).toBe('42');
    expect(formatLegendValue(123456789)).toBe('123456789');
    expect(formatLegendValue(1 / 3)).toBe('0.333333');
    expect(formatLegendValue(42.5)).toBe('42.5');
    expect(formatLegendValue(1e-7)).toBe('1.0000e-7');
  });

  it('formats counts, durations and timestamps', () => {
    expect(formatCount(150000)).toBe('150,000');
    expect(formatCount(12)).toBe('12');
    expect(formatDurationMs(3.44)).toBe('3.4 ms');
    expect(formatDurationMs(850)).toBe('850 ms');
    expect(formatDurationMs(1234)).toBe('1.2 s');
    expect(formatTimestamp(Date.UTC(2026, 0, 2, 3, 4, 5), true)).toBe('2026-01-02 03:04:05');
    expect(formatTimestamp(Date.UTC(2026, 0, 2, 3, 4, 5, 7), true)).toBe('2026-01-02 03:04:05.007');
  });

  it('labels time ticks as precisely as their spacing needs, with the date on day changes', () => {
    const t = Date.UTC(2026, 0, 1, 23, 0, 0);
    expect(formatTimeTicks([t, t + 1_800_000, t + 3_600_000], 1_800_000, true)).toEqual(['23:00\n01-01', '23:30', '00:00\n01-02']);
    expect(formatTimeTicks([t, t + 15_000], 15_000, true)).toEqual(['23:00:00\n01-01', '23:00:15']);
    expect(formatTimeTicks([t + 250], 250, true)).toEqual(['23:00:00.250\n01-01']);
    const d = Date.UTC(2025, 11, 31);
    expect(formatTimeTicks([d, d + 86_400_000], 86_400_000, true)).toEqual(['12-31\n2025', '01-01\n2026']);
  });
});
