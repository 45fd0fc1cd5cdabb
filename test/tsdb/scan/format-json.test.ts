import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { formatQueryResultsBytes, formatValue } from '../../../tsdb/query/format-json.js';
import type { FormatOptions, OutputPoints } from '../../../tsdb/query/format-json.js';
import type { OutputSeries } from '../../../tsdb/query/format-json.js';

const text = (series: readonly OutputSeries[], opts: FormatOptions): string => formatQueryResultsBytes(series, opts).toString('utf8');

/** The `dps` value of one series' answer. */
function dpsOf(p: OutputPoints, opts: FormatOptions): string {
  const body = text([{ metric: 'm', tags: {}, aggregateTags: [], points: p }], opts);
  return body.slice(body.indexOf('"dps":') + 6, -2);
}

/** The answer written plainly, one string per point (the reference for the byte writer). */
function reference(series: readonly OutputSeries[], arrays: boolean, ms: boolean, summary?: unknown): string {
  const parts = series.map((s) => {
    const dps: string[] = [];
    for (let i = 0; i < s.points.count; i++) {
      const t = ms ? s.points.ts[i]! : Math.floor(s.points.ts[i]! / 1000);
      const v = formatValue(s.points.values[i]!, s.points.isInt[i] === 1, s.points.nanAsNull === true);
      dps.push(arrays ? `[${t},${v}]` : `"${t}":${v}`);
    }
    let head = `{"metric":${JSON.stringify(s.metric)},"tags":${JSON.stringify(s.tags)},"aggregateTags":${JSON.stringify(s.aggregateTags)}`;
    if (s.tsuids !== undefined) head += `,"tsuids":${JSON.stringify(s.tsuids)}`;
    if (s.annotations !== undefined && s.annotations.length > 0) head += `,"annotations":${JSON.stringify(s.annotations)}`;
    return `${head},"dps":${arrays ? `[${dps.join(',')}]` : `{${dps.join(',')}}`}}`;
  });
  if (summary !== undefined) parts.push(JSON.stringify({ statsSummary: summary }));
  return `[${parts.join(',')}]`;
}

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
    expect(dpsOf(p, { arrays: false, msResolution: false })).toBe('{"1356998400":1,"1356998430":2.5}');
    expect(dpsOf(p, { arrays: true, msResolution: true })).toBe('[[1356998400000,1],[1356998430500,2.5]]');
    const out = JSON.parse(text([{ metric: 'm', tags: { host: 'a' }, aggregateTags: [], points: p, query: { index: 0 } }], { arrays: false, msResolution: false }));
    expect(out).toEqual([{ metric: 'm', tags: { host: 'a' }, aggregateTags: [], query: { index: 0 }, dps: { 1356998400: 1, 1356998430: 2.5 } }]);
    expect(text([], { arrays: false, msResolution: false })).toBe('[]');
  });

  it('writes random answers byte for byte as the plain reference (shared and own timestamps, UTF-8 names)', () => {
    const rng = new Random(7);
    const names = ['cpu', 'température', '温度', 'a"b\\c', 'emoji😀'];
    for (let round = 0; round < 200; round++) {
      const series: OutputSeries[] = [];
      const shared = rng.int(2) === 0;
      const n = rng.int(40);
      for (let k = rng.int(5); k > 0; k--) {
        const count = shared ? n : rng.int(40);
        const ts = new Float64Array(count);
        const values = new Float64Array(count);
        const isInt = new Uint8Array(count);
        // Timestamps around every digit count (written as digits, not via String).
        const starts = [1356998400000, -125_000, 0, 9_000, 99_990_000, 999_999_999_000, 9_007_199_254_000_000];
        let t = (shared ? starts[round % starts.length]! : starts[rng.int(starts.length)]!) + rng.int(1000) * (shared ? 0 : 1);
        for (let i = 0; i < count; i++) {
          t += shared ? 60_000 : 1 + rng.int(100_000);
          ts[i] = t;
          const kind = rng.int(6);
          values[i] = kind === 0 ? NaN : kind === 1 ? rng.int(1 << 30) - (1 << 29) : kind === 2 ? 1e-5 * rng.int(100) : kind === 3 ? 1e8 + rng.int(1000) / 7 : rng.int(1 << 30) / 997;
          isInt[i] = kind === 1 ? 1 : 0;
        }
        series.push({
          metric: names[rng.int(names.length)]!, tags: { host: names[rng.int(names.length)]! }, aggregateTags: rng.int(2) === 0 ? [] : ['dc'],
          points: { count, ts, values, isInt, nanAsNull: rng.int(2) === 0 },
          ...(rng.int(3) === 0 ? { tsuids: ['000001000001000001'] } : {}),
          ...(rng.int(4) === 0 ? { annotations: [{ description: names[rng.int(names.length)] }] } : {}),
        });
      }
      const arrays = rng.int(2) === 0;
      const ms = rng.int(2) === 0;
      const summary = rng.int(3) === 0 ? { datapoints: rng.int(100) } : undefined;
      const bytes = formatQueryResultsBytes(series, { arrays, msResolution: ms }, summary);
      expect(bytes.toString('utf8')).toBe(reference(series, arrays, ms, summary));
      expect(JSON.parse(bytes.toString('utf8'))).toHaveLength(series.length + (summary === undefined ? 0 : 1));
    }
  });
});
