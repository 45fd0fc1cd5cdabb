/**
 * The OpenTSDB conformance cases (test/fixtures/opentsdb-query-cases.json: each case names
 * the OpenTSDB test it comes from; its shape is the `Case` interface below) through
 * runGroup. Storage-side
 * steps that are not the pipeline's job are done by small local helpers: seconds → ms,
 * duplicate timestamps (fix_duplicates: the newest write wins), 4-byte floats, the legacy
 * `tags` map as filters + group-by, output tags/aggregateTags, and the serializer's
 * second-resolution keys. Set HORAE_OPENTSDB_CASES to read the file from elsewhere.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runGroup, type PipelineSpec } from '../../../tsdb/query/pipeline.js';
import { seriesOf, type OutSeries, type SeriesData } from '../../../tsdb/query/series.js';

const CASES_PATH = process.env['HORAE_OPENTSDB_CASES'] ?? fileURLToPath(new URL('../../fixtures/opentsdb-query-cases.json', import.meta.url));

interface CaseSeries {
  metric: string;
  tags: Record<string, string>;
  valueType: 'i' | 'f' | 'd';
  points: Array<[number, number | string] | [number, number | string, 'i' | 'f' | 'd']>;
}
interface SubQuery {
  aggregator: string;
  metric: string;
  tags?: Record<string, string>;
  downsample?: string;
  rate?: boolean;
  rateOptions?: { counter?: boolean; counterMax?: number; resetValue?: number; dropResets?: boolean };
}
interface Expected {
  metric: string;
  tags: Record<string, string>;
  aggregateTags: string[];
  dps: Record<string, number | string>;
  valueType: 'integer' | 'double' | 'mixed';
  integerTimestamps?: string[];
}
interface Case {
  name: string;
  config: Record<string, unknown>;
  series: CaseSeries[];
  query: { start: number; end: number; msResolution?: boolean; timezone?: string; useCalendar?: boolean; queries: SubQuery[] };
  expected?: Expected[];
  expectedError?: unknown;
  tolerance: number;
}

const toMs = (t: number): number => (t <= 4294967295 ? t * 1000 : t);

/** Storage: ms timestamps, 4-byte floats, big integers, duplicates resolved or refused. */
function store(s: CaseSeries, fixDuplicates: boolean): SeriesData {
  const byTs = new Map<number, readonly [number, number | bigint, boolean]>();
  for (const p of s.points) {
    const type = p[2] ?? s.valueType;
    const ts = toMs(p[0]);
    const raw = p[1];
    const v: number | bigint = type === 'i' ? (typeof raw === 'string' ? BigInt(raw) : raw) : type === 'f' ? Math.fround(Number(raw)) : Number(raw);
    if (byTs.has(ts) && !fixDuplicates) throw new Error(`duplicate timestamp ${ts}`);
    byTs.set(ts, [ts, v, type === 'i']);
  }
  return seriesOf(s.metric, s.tags, [...byTs.values()].sort((a, b) => a[0] - b[0]));
}

/** The legacy tags map: `*` wildcard, `a|b` literal_or, regexp(…) unanchored; all group by. */
function matches(value: string | undefined, f: string): boolean {
  if (value === undefined) return false;
  if (f === '*') return true;
  const re = /^regexp\((.*)\)$/.exec(f);
  if (re !== null) return new RegExp(re[1]!).test(value);
  return f.split('|').includes(value);
}

/** Tiny `<n><unit>[c]-<fn>[-<fill>]` parser for the cases' downsample strings. */
function parseDownsample(text: string, q: Case['query']): NonNullable<PipelineSpec['downsample']> {
  const [iv, fn, fill] = text.split('-') as [string, string, string | undefined];
  const fillPolicy = (fill ?? 'none') as 'none' | 'nan' | 'null' | 'zero';
  if (iv.includes('all')) return { intervalMs: 0, all: true, fn, fill: fillPolicy, calendar: false };
  const m = /^(\d+)(ms|s|m|h|d|w|n|y)(c?)$/.exec(iv);
  if (m === null) throw new Error(`bad downsample ${text}`);
  const unitMs: Record<string, number> = { ms: 1, s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5, n: 2592e6, y: 31536e6 };
  const count = Number(m[1]);
  const calendar = m[3] === 'c' || q.useCalendar === true;
  return { intervalMs: count * unitMs[m[2]!]!, all: false, fn, fill: fillPolicy, calendar, unit: m[2]!, count, timezone: q.timezone };
}

interface Output {
  metric: string;
  tags: Record<string, string>;
  aggregateTags: string[];
  out: OutSeries;
}

function runCase(c: Case): Output[] {
  const fix = c.config['tsd.storage.fix_duplicates'] === true;
  const stored = c.series.map((s) => store(s, fix));
  const results: Output[] = [];
  for (const sq of c.query.queries) {
    const filters = Object.entries(sq.tags ?? {});
    const matching = stored.filter((s) => s.metric === sq.metric && filters.every(([k, f]) => matches(s.tags[k], f)));
    const spec: PipelineSpec = {
      startMs: toMs(c.query.start),
      endMs: toMs(c.query.end),
      aggregator: sq.aggregator,
      downsample: sq.downsample === undefined ? undefined : parseDownsample(sq.downsample, c.query),
      rate: sq.rate === true ? { counter: sq.rateOptions?.counter ?? false, counterMax: sq.rateOptions?.counterMax, resetValue: sq.rateOptions?.resetValue, dropResets: sq.rateOptions?.dropResets ?? false } : undefined,
    };
    const groups = new Map<string, SeriesData[]>();
    for (const s of matching) {
      const key = sq.aggregator === 'none' ? String(groups.size) : filters.map(([k]) => s.tags[k]).join('\0');
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    for (const members of groups.values()) {
      const outs = runGroup(members, spec);
      const parts = sq.aggregator === 'none' ? members.map((m) => [m]) : [members];
      outs.forEach((out, i) => {
        const spans = parts[i]!;
        const tags: Record<string, string> = {};
        const aggregateTags: string[] = [];
        for (const k of new Set(spans.flatMap((s) => Object.keys(s.tags)))) {
          const vals = new Set(spans.map((s) => s.tags[k]).filter((v) => v !== undefined));
          if (vals.size === 1) tags[k] = [...vals][0]!;
          else aggregateTags.push(k);
        }
        results.push({ metric: sq.metric, tags, aggregateTags: aggregateTags.sort(), out });
      });
    }
  }
  return results;
}

const cases: Case[] = existsSync(CASES_PATH) ? (JSON.parse(readFileSync(CASES_PATH, 'utf8')) as Case[]) : [];

describe('OpenTSDB conformance cases', () => {
  it('the case file is present and holds the 15 cases', () => {
    expect(existsSync(CASES_PATH), `missing ${CASES_PATH} (set HORAE_OPENTSDB_CASES)`).toBe(true);
    expect(cases.length).toBe(15);
  });

  for (const c of cases) {
    it(c.name, () => {
      expect(c.expectedError).toBeUndefined();
      const got = runCase(c);
      const expected = c.expected ?? [];
      expect(got.length).toBe(expected.length);
      for (const e of expected) {
        const g = got.find((o) => o.metric === e.metric && JSON.stringify(o.tags) === JSON.stringify(e.tags));
        expect(g, `output ${e.metric} ${JSON.stringify(e.tags)}`).toBeDefined();
        expect(g!.aggregateTags).toEqual([...e.aggregateTags].sort());
        const out = g!.out;
        const keys: string[] = [];
        for (let i = 0; i < out.count; i++) keys.push(String(c.query.msResolution === true ? out.ts[i]! : Math.floor(out.ts[i]! / 1000)));
        expect(keys).toEqual(Object.keys(e.dps));
        const ints = new Set(e.integerTimestamps ?? []);
        // runFloatAndIntSameTSFix: the float that won the duplicate is emitted as a double.
        if (e.valueType === 'mixed' && out.count > 0) expect(out.isInt[0]).toBe(0);
        keys.forEach((k, i) => {
          const want = e.dps[k]!;
          const v = out.values[i]!;
          if (want === 'NaN') expect(v, `${k}`).toBeNaN();
          else if (c.tolerance === 0) expect(v, `${k}`).toBe(want);
          else expect(Math.abs(v - Number(want)), `${k}: ${v} vs ${want}`).toBeLessThanOrEqual(c.tolerance);
          if (e.valueType === 'integer') expect(out.isInt[i], `${k} is an integer`).toBe(1);
          if (e.valueType === 'double') expect(out.isInt[i], `${k} is a double`).toBe(0);
          if (ints.has(k)) expect(out.isInt[i], `${k} is an integer`).toBe(1);
        });
      }
    });
  }
});
