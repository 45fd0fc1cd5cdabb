import { describe, expect, it } from 'vitest';
import { formatBaseHour, formatHint, formatKey, formatKeyRange, printableKey, shortHex } from '../../ui/src/lib/ops-key-range.js';
import { historyToAligned } from '../../ui/src/lib/ops-history.js';
import { formatAge, formatBytes, formatPercent, formatRate } from '../../ui/src/lib/ops-format.js';

describe('key ranges', () => {
  it('names the table ends and formats data-table hints', () => {
    expect(formatKeyRange({ start: '', end: '01', endHint: { salt: 1 } })).toBe('(table start) → bucket 1');
    expect(formatKeyRange({ start: '13', end: '', startHint: { salt: 19 } })).toBe('bucket 19 → (table end)');
    expect(formatHint({ salt: 3, metricUid: '000001', metric: 'sys.cpu.user', baseTimeSec: 1767225600 })).toBe('bucket 3 · sys.cpu.user · 2026-01-01 00:00Z');
    expect(formatHint({ salt: 3, metricUid: '00000a' })).toBe('bucket 3 · metric #00000a');
    expect(formatHint({})).toBeUndefined();
    expect(formatBaseHour(3600)).toBe('1970-01-01 01:00Z');
  });

  it('shows printable keys as text and others as short hex', () => {
    expect(printableKey('7379732e637075')).toBe('sys.cpu');
    expect(printableKey('00')).toBeUndefined();
    expect(printableKey('')).toBeUndefined();
    expect(formatKey('7379732e637075', 'start')).toBe('"sys.cpu"');
    expect(formatKey('0001ff', 'end')).toBe('0001ff');
    expect(shortHex('00'.repeat(20))).toBe(`${'00'.repeat(12)}… (20 B)`);
    expect(formatKey('00'.repeat(12), 'start')).toBe('00'.repeat(12));
  });
});

describe('operator formatting', () => {
  it('formats bytes, rates, percentages and ages', () => {
    expect([0, 512, 1536, 10 * 1024 * 1024 + 1, 5 * 2 ** 40].map(formatBytes)).toEqual(['0 B', '512 B', '1.50 KiB', '10.0 MiB', '5.00 TiB']);
    expect([12_500, 0, null, 2.5].map(formatRate)).toEqual(['12.5k/s', '0/s', '—', '2.5/s']);
    expect([0.975, 1, 0, null, 0.05].map(formatPercent)).toEqual(['97.5%', '100%', '0%', '—', '5.00%']);
    expect([999, 45_000, 12 * 60_000, 3 * 3600_000 + 5 * 60_000, 52 * 3600_000].map(formatAge)).toEqual(['0 s', '45 s', '12 min', '3 h 05 min', '2 d 4 h']);
  });
});

describe('historyToAligned', () => {
  it('turns the server history into uPlot columns with x in seconds', () => {
    const h = { intervalMs: 5000, timesMs: [5000, 10_000], rates: { points: [1, 2], queries: [null, 0.2], cellsWritten: [0, 0], rowsRead: [0, 0] } };
    expect(historyToAligned(h, ['points', 'queries'])).toEqual([[5, 10], [1, 2], [null, 0.2]]);
  });
});
