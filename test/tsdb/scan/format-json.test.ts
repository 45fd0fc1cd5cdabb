import { describe, expect, it } from 'vitest';
import { formatDps, formatQueryResults, formatValue } from '../../../tsdb/query/format-json.js';

const pts = (ts: number[], values: number[], ints: number[], nanAsNull = false) => ({
  count: ts.length, ts: Float64Array.from(ts), values: Float64Array.from(values), isInt: Uint8Array.from(ints), nanAsNull,
});

describe('query JSON', () => {
  it('prints values as OpenTSDB does: longs, Java doubles, NaN as a string or null', () => {
    expect([formatValue(3, true, false), formatValue(3, false, false), formatValue(0.5, false, false), formatValue(NaN, false, false), formatValue(NaN, false, true), formatValue(1e21, false, false)])
      .toEqual(['3', '3.0', '0.5', '"NaN"', 'null', '1.0E21']);
  });

  it('writes dps as an object by default, as pairs with arrays, in s or ms', () => {
    const p = pts([1356998400000, 1356998430500], [1, 2.5], [1, 0]);
    expect(formatDps(p, { arrays: false, msResolution: false })).toBe('{"1356998400":1,"1356998430":2.5}');
    expect(formatDps(p, { arrays: true, msResolution: true })).toBe('[[1356998400000,1],[1356998430500,2.5]]');
    const out = JSON.parse(formatQueryResults([{ metric: 'm', tags: { host: 'a' }, aggregateTags: [], points: p, query: { index: 0 } }], { arrays: false, msResolution: false }));
    expect(out).toEqual([{ metric: 'm', tags: { host: 'a' }, aggregateTags: [], query: { index: 0 }, dps: { 1356998400: 1, 1356998430: 2.5 } }]);
    expect(formatQueryResults([], { arrays: false, msResolution: false })).toBe('[]');
  });
});
