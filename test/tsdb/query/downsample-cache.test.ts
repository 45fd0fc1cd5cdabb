/**
 * parseDownsample keeps the specs it parsed (query/downsample-spec.ts): a kept spec must
 * be the one a fresh parse gives for the same text and options, never another's.
 */
import { describe, expect, it } from 'vitest';
import { parseDownsample } from '../../../tsdb/query/downsample-spec.js';
import { AGGREGATOR_NAMES } from '../../../tsdb/query/query-model.js';

describe('parsed downsample specs', () => {
  it('are reused only for the same text, calendar flag, zone and aggregator set', () => {
    const plain = parseDownsample('1h-avg', { aggregators: AGGREGATOR_NAMES });
    expect(parseDownsample('1h-avg', { aggregators: AGGREGATOR_NAMES })).toBe(plain);
    expect(plain).toMatchObject({ intervalMs: 3_600_000, fn: 'avg', calendar: false, fill: 'none' });
    const cal = parseDownsample('1h-avg', { aggregators: AGGREGATOR_NAMES, useCalendar: true });
    expect(cal).toMatchObject({ calendar: true });
    expect(cal.timezone).toBeUndefined();
    const zoned = parseDownsample('1h-avg', { aggregators: AGGREGATOR_NAMES, useCalendar: true, timezone: 'Europe/Paris' });
    expect(zoned).toMatchObject({ calendar: true, timezone: 'Europe/Paris' });
    expect(parseDownsample('1h-avg-zero', { aggregators: AGGREGATOR_NAMES })).toMatchObject({ fill: 'zero' });
    // Another aggregator set: parsed against that set, even for a text parsed before.
    const onlySum = new Set(['sum']);
    expect(() => parseDownsample('1h-avg', { aggregators: onlySum })).toThrow('No such downsampling function: avg');
    expect(parseDownsample('1h-sum', { aggregators: onlySum })).toMatchObject({ fn: 'sum' });
    // Errors are not kept: the same bad text fails every time.
    for (let i = 0; i < 2; i++) expect(() => parseDownsample('1h-nope', { aggregators: AGGREGATOR_NAMES })).toThrow('No such downsampling function: nope');
    // Past the bound, specs are parsed afresh and still right.
    for (let i = 1; i <= 600; i++) expect(parseDownsample(`${i}s-max`, { aggregators: AGGREGATOR_NAMES }).intervalMs).toBe(i * 1000);
    expect(parseDownsample('1h-avg', { aggregators: AGGREGATOR_NAMES })).toMatchObject({ intervalMs: 3_600_000, calendar: false });
  });
});
