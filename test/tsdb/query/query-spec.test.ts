/**
 * The /api/query request model (tsdb/query/query-spec.ts, query-model.ts,
 * downsample-spec.ts, query-string.ts): POST JSON as Jackson maps it, GET m=/tsuid=, and
 * OpenTSDB's validation messages, plus Grafana's two request shapes. Fixed `now` throughout.
 */
import { describe, expect, it } from 'vitest';
import { isTsdbError } from '../../../tsdb/errors.js';
import {
  groupByTagks, parseQueryJson, parseQueryString, rateOf, subQueryEcho,
} from '../../../tsdb/query/query-spec.js';
import type { MetricSubQuery, SubQuery, TsQuery } from '../../../tsdb/query/query-spec.js';

const NOW = 1_357_005_600_000; // 2013-01-01T02:00:00Z

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isTsdbError(e, 'TSDB_ILLEGAL_ARGUMENT')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

const json = (body: unknown, qs?: string): TsQuery =>
  parseQueryJson(JSON.stringify(body), NOW, qs === undefined ? {} : { queryString: new URLSearchParams(qs) });
const one = (sub: Record<string, unknown>, top: Record<string, unknown> = {}): SubQuery =>
  json({ start: '1h-ago', ...top, queries: [sub] }).queries[0]!;
const metricSub = (q: SubQuery): MetricSubQuery => {
  if (q.kind !== 'metric') throw new Error('expected a metric sub-query');
  return q;
};
const get = (qs: string): TsQuery => parseQueryString(new URLSearchParams(qs), NOW);
const filterSummary = (q: SubQuery): unknown[] => metricSub(q).filters.map((f) => [f.type, f.tagk, f.filter, f.groupBy]);

describe('Grafana requests', () => {
  it('the browser path: ms epochs, msResolution, globalAnnotations, showQuery with index', () => {
    const q = json({
      start: 1356998400000, end: 1357002000000, msResolution: true, globalAnnotations: true, showQuery: true,
      queries: [
        { metric: 'sys.cpu.user', aggregator: 'sum', downsample: '1m-avg', rate: true,
          rateOptions: { counter: true, counterMax: 65535, resetValue: 0, dropResets: false },
          filters: [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: true },
            { type: 'iliteral_or', tagk: 'dc', filter: 'lga|sjc', groupBy: false }], explicitTags: false },
        { metric: 'sys.cpu.idle', aggregator: 'avg', tags: { host: 'web01|web02' } },
      ],
    });
    expect([q.startMs, q.endMs, q.msResolution, q.globalAnnotations, q.showQuery, q.arrays]).toEqual([1356998400000, 1357002000000, true, true, true, false]);
    const [a, b] = q.queries as [SubQuery, SubQuery];
    expect(a.downsample).toMatchObject({ intervalMs: 60_000, all: false, fn: 'avg', fill: 'none', calendar: false, unit: 'm', count: 1 });
    expect(rateOf(a)).toEqual({ counter: true, counterMax: 65535, dropResets: false });
    expect(filterSummary(a)).toEqual([['wildcard', 'host', '*', true], ['iliteral_or', 'dc', 'lga|sjc', false]]);
    expect(groupByTagks(a)).toEqual(['host']);
    expect(filterSummary(b)).toEqual([['literal_or', 'host', 'web01|web02', true]]);
    expect(subQueryEcho(b)).toMatchObject({
      aggregator: 'avg', metric: 'sys.cpu.idle', index: 1, tags: { host: 'literal_or(web01|web02)' },
      filters: [{ tagk: 'host', filter: 'web01|web02', group_by: true, type: 'literal_or' }],
    });
  });

  it('the backend path: second epochs, ?arrays=true, rateOptions as floats, one query', () => {
    const q = json({
      start: 1356998400, end: 1357002000,
      queries: [{ metric: 'm', aggregator: 'sum', downsample: '1500ms-avg-nan', rate: true,
        rateOptions: { counter: true, counterMax: 65535.0, resetValue: 12.7, dropResets: true }, explicitTags: true,
        filters: [{ type: 'literal_or', tagk: 'host', filter: 'a', groupBy: false }] }],
    }, 'arrays=true');
    expect([q.startMs, q.endMs, q.arrays, q.msResolution]).toEqual([1356998400000, 1357002000000, true, false]);
    const s = q.queries[0]!;
    expect(s.downsample).toMatchObject({ intervalMs: 1500, fill: 'nan', unit: 'ms', count: 1500 });
    expect(rateOf(s)).toEqual({ counter: true, counterMax: 65535, resetValue: 12, dropResets: true });
    expect(s.explicitTags).toBe(true);
  });
});

describe('POST JSON', () => {
  it('validates the top level with OpenTSDB messages', () => {
    const sub = { metric: 'm', aggregator: 'sum' };
    expect(errorOf(() => json({ queries: [sub] }))).toBe('Missing start time');
    expect(errorOf(() => json({ start: '', queries: [sub] }))).toBe('Missing start time');
    expect(errorOf(() => json({ start: '1h-ago', end: '2h-ago', queries: [sub] })))
      .toBe(`End time [${NOW - 7_200_000}] must be greater than or equal to the start time [${NOW - 3_600_000}]`);
    expect(json({ start: 1356998400, end: 1356998400, queries: [sub] }).endMs).toBe(1356998400000);
    expect(json({ start: '1h-ago', queries: [sub] }).endMs).toBe(NOW);
    expect(errorOf(() => json({ start: '1h-ago' }))).toBe('Missing queries');
    expect(errorOf(() => json({ start: '1h-ago', queries: [] }))).toBe('Missing queries');
    expect(errorOf(() => parseQueryJson('', NOW))).toBe('Missing message content');
    expect(errorOf(() => parseQueryJson('{"start":', NOW))).toBe('Unable to parse the given JSON');
    expect(errorOf(() => json({ start: '1h-ago', queries: {} }))).toBe('Unable to parse the given JSON');
    expect(errorOf(() => one({ metric: 'm', aggregator: 'sum', rate: 'yes' }))).toBe('Unable to parse the given JSON');
  });

  it('validates sub-queries: aggregator names are case-sensitive', () => {
    expect(errorOf(() => one({ metric: 'm' }))).toBe('Missing the aggregation function');
    expect(errorOf(() => one({ metric: 'm', aggregator: 'Sum' }))).toBe('No such aggregation function: Sum');
    expect(errorOf(() => one({ aggregator: 'sum' }))).toBe('Missing the metric or tsuids, provide at least one');
    expect(one({ metric: 'm', aggregator: 'squareSum' }).aggregator).toBe('squareSum');
  });

  it('maps leniently, as Jackson does', () => {
    const q = json({
      start: 1356998400, end: '2013/01/01-01:00', ms: 'true', showTSUIDs: 1, unknown: { x: 1 },
      queries: [{ metric: 'm', aggregator: 'sum', rate: 'true', explicitTags: 'false', tags: [], index: 7 }],
    });
    expect([q.startMs, q.endMs, q.msResolution, q.showTSUIDs, q.queries[0]!.rate, q.queries[0]!.explicitTags, q.queries[0]!.index])
      .toEqual([1356998400000, 1357002000000, true, true, true, false, 0]);
    expect(parseQueryJson(new TextEncoder().encode('{"start":"1h-ago","queries":[{"metric":"m","aggregator":"sum"}]}'), NOW).startMs).toBe(NOW - 3_600_000);
  });

  it('lets the later of tags and filters win; tsuids take precedence', () => {
    const filters = [{ type: 'regexp', tagk: 'host', filter: 'web.*' }];
    expect(filterSummary(one({ metric: 'm', aggregator: 'sum', filters, tags: { dc: '*' } }))).toEqual([['wildcard', 'dc', '*', true]]);
    expect(filterSummary(one({ metric: 'm', aggregator: 'sum', tags: { dc: '*' }, filters }))).toEqual([['regexp', 'host', 'web.*', false]]);
    const t = one({ metric: 'm', aggregator: 'sum', tsuids: ['000001000001000001'], filters });
    expect(t).toMatchObject({ kind: 'tsuids', tsuids: ['000001000001000001'] });
    expect(errorOf(() => one({ metric: 'm', aggregator: 'sum', filters: [{ type: 'glob', tagk: 'host', filter: 'a' }] })))
      .toBe('Could not find a tag value filter of the type: glob');
  });

  it('drops duplicate sub-queries before numbering them', () => {
    const a = { metric: 'm', aggregator: 'sum', tags: { host: 'a' } };
    const q = json({ start: '1h-ago', queries: [a, a, { ...a, aggregator: 'max' }] });
    expect(q.queries.map((s) => [s.aggregator, s.index])).toEqual([['sum', 0], ['max', 1]]);
  });

  it('checks histogram queries and sorts percentiles', () => {
    expect(one({ metric: 'm', aggregator: 'sum', percentiles: [99.9, 50] }).percentiles).toEqual([50, 99.9]);
    expect(errorOf(() => one({ metric: 'm', aggregator: 'avg', percentiles: [50] })))
      .toBe('Only NONE or SUM aggregation function supported for histogram query');
    expect(errorOf(() => one({ metric: 'm', aggregator: 'sum', downsample: '1m-avg', showHistogramBuckets: true })))
      .toBe('Only SUM downsampling aggregation supported for histogram query');
    expect(errorOf(() => one({ metric: 'm', aggregator: 'none', percentiles: [101] }))).toBe('Invalid percentile parameters: 101.0');
    expect(one({ metric: 'm', aggregator: 'sum', rollupUsage: 'rollup_raw' }).rollupUsage).toBe('ROLLUP_RAW');
    expect(one({ metric: 'm', aggregator: 'sum', rollupUsage: 'whatever' }).rollupUsage).toBe('ROLLUP_NOFALLBACK');
  });

  it('gives rate defaults through rateOf', () => {
    expect(rateOf(one({ metric: 'm', aggregator: 'sum', rate: true }))).toEqual({ counter: false, dropResets: false });
    expect(rateOf(one({ metric: 'm', aggregator: 'sum', rateOptions: { counter: true } }))).toBeUndefined();
  });
});

describe('downsample specs', () => {
  const ds = (spec: string, top: Record<string, unknown> = {}): SubQuery['downsample'] =>
    one({ metric: 'm', aggregator: 'sum', downsample: spec }, top).downsample;

  it('parses interval, function and fill policy', () => {
    expect(ds('1m-avg')).toEqual({ intervalMs: 60_000, all: false, fn: 'avg', fill: 'none', calendar: false, unit: 'm', count: 1, text: '1m-avg' });
    expect(ds('1M-avg')!.intervalMs).toBe(60_000);
    expect(ds('0all-sum')).toEqual({ intervalMs: 0, all: true, fn: 'sum', fill: 'none', calendar: false, text: '0all-sum' });
    expect(ds('all-count')!.all).toBe(true);
    expect(ds('1dc-sum-nan')).toMatchObject({ intervalMs: 86_400_000, calendar: true, unit: 'd', count: 1, fill: 'nan' });
    expect(ds('10m-max-NULL')!.fill).toBe('null');
    expect(ds('1h-min-Zero-')!.fill).toBe('zero');
  });

  it('rejects bad specs with OpenTSDB messages', () => {
    const bad = (spec: string): string => errorOf(() => ds(spec));
    expect(bad('1m')).toBe("Invalid downsampling specifier '1m': must provide at least interval and function");
    expect(bad('1m-avg-nan-x')).toBe("Invalid downsampling specifier '1m-avg-nan-x': must consist of interval, function, and optional fill policy");
    expect(bad('1m-Avg')).toBe('No such downsampling function: Avg');
    expect(bad('1m-none')).toBe('cannot use the NONE aggregator for downsampling');
    expect(bad('1m-avg-lerp')).toBe('Unrecognized fill policy: lerp');
    expect(bad('0m-avg')).toBe('Zero or negative duration: 0m');
    expect(bad('1x-avg')).toBe('Invalid duration (suffix): 1x');
  });

  it('applies useCalendar and the timezone to calendar specs', () => {
    expect(ds('1h-avg', { useCalendar: true })).toMatchObject({ calendar: true, unit: 'h', count: 1 });
    expect(ds('0all-sum', { useCalendar: true })!.calendar).toBe(false);
    expect(ds('1dc-sum', { timezone: 'America/Denver' })).toMatchObject({ calendar: true, timezone: 'America/Denver' });
    expect(ds('1d-sum', { timezone: 'America/Denver' })!.timezone).toBeUndefined();
    expect(errorOf(() => ds('1dc-sum', { timezone: 'Mars/Olympus' }))).toBe('Invalid timezone name: Mars/Olympus');
    expect(json({ start: '2013/01/01', end: '2013/01/02', timezone: 'America/Denver', queries: [{ metric: 'm', aggregator: 'sum' }] }).startMs)
      .toBe(1_357_023_600_000);
  });
});

describe('GET m= and tsuid=', () => {
  it('requires start and a sub-query', () => {
    expect(errorOf(() => get('m=sum:m'))).toBe('Missing parameter <code>start</code>');
    expect(errorOf(() => get('start=&m=sum:m'))).toBe('Missing parameter <code>start</code>');
    expect(errorOf(() => get('start=1h-ago'))).toBe('Missing sub queries');
    expect(errorOf(() => get('start=1h-ago&m=sum'))).toBe('Invalid parameter m=sum (not enough :-separated parts)');
    expect(errorOf(() => get('start=1h-ago&m=a:b:c:d:e:f'))).toBe('Invalid parameter m=a:b:c:d:e:f (too many :-separated parts)');
  });

  it('reads the options of the m= grammar', () => {
    const q = get('start=2h-ago&end=1h-ago&m=' + encodeURIComponent('sum:1m-avg:rate{counter,,1000}:explicit_tags:sys.cpu.user'));
    const s = q.queries[0]!;
    expect([q.startMs, q.endMs, s.aggregator, s.downsample?.text, s.rate, s.explicitTags]).toEqual([NOW - 7_200_000, NOW - 3_600_000, 'sum', '1m-avg', true, true]);
    expect(s.rateOptions).toEqual({ counter: true, resetValue: 1000, dropResets: false });
    const d = get('start=1h-ago&m=' + encodeURIComponent('sum:rate{dropcounter,65535}:percentiles[99, 50]:show-histogram-buckets:m')).queries[0]!;
    expect([d.rateOptions, d.percentiles, d.showHistogramBuckets]).toEqual([{ counter: true, counterMax: 65535, dropResets: true }, [50, 99], true]);
    const e = get('start=1h-ago&m=' + encodeURIComponent('sum:pre-agg:rollup_raw:bogus:m')).queries[0]!;
    expect([e.preAggregate, e.rollupUsage]).toEqual([true, 'ROLLUP_RAW']);
    expect(get('start=1h-ago&m=sum:rate:m').queries[0]!.rateOptions).toBeUndefined();
  });

  it('rejects bad rate specs with OpenTSDB messages', () => {
    const rate = (r: string): string => errorOf(() => get(`start=1h-ago&m=${encodeURIComponent(`sum:${r}:m`)}`));
    expect(rate('rate{')).toBe('Invalid rate options specification: rate{');
    expect(rate('rate{counter,x}')).toBe("Max value of counter was not a number, received 'x'");
    expect(rate('rate{counter,1,y}')).toBe("Reset value of counter was not a number, received 'y'");
    expect(rate('rate{a,b,c,d}')).toBe('Incorrect number of values in rate options specification, must be counter[,counter max value,reset value], recieved: 4 parts');
  });

  it('reads group-by and non-group-by filter sets', () => {
    const m = (spec: string): SubQuery => get(`start=1h-ago&m=${encodeURIComponent(`sum:${spec}`)}`).queries[0]!;
    const s = m('sys.cpu{host=*,dc=lga|sjc}{rack=regexp(r[0-9]+),os=lin*}');
    expect(metricSub(s).metric).toBe('sys.cpu');
    expect(filterSummary(s)).toEqual([
      ['regexp', 'rack', 'r[0-9]+', false], ['wildcard', 'os', 'lin*', false],
      ['wildcard', 'host', '*', true], ['literal_or', 'dc', 'lga|sjc', true],
    ]);
    expect(filterSummary(m('m{}{host=web01}'))).toEqual([['literal_or', 'host', 'web01', false]]);
    expect(filterSummary(m('m{host=web01}{host=web01}'))).toEqual([['literal_or', 'host', 'web01', true]]);
    expect(filterSummary(m('m{}'))).toEqual([]);
    expect(errorOf(() => m('m{host}'))).toBe("When parsing tag 'host': invalid tag: host");
    expect(errorOf(() => m('m{host=web01'))).toBe("Missing '}' at the end of: m{host=web01");
    expect(errorOf(() => m('m{host=foo(x)}'))).toBe("When parsing tag 'host=foo(x)': Could not find a tag value filter of the type: foo");
  });

  it('reads flags by presence, tsuid= before m=, drops duplicates, ignores timezone', () => {
    const q = get('start=2013/01/01&timezone=America/Denver&ms=false&arrays&show_query&no_annotations&global_annotations' +
      '&m=sum:a&m=sum:a&m=max:b&tsuid=' + encodeURIComponent('sum:1h-avg:000001000001000001,000001000001000002'));
    expect([q.startMs, q.msResolution, q.arrays, q.showQuery, q.noAnnotations, q.globalAnnotations, q.showTSUIDs])
      .toEqual([1_356_998_400_000, true, true, true, true, true, false]);
    expect(q.queries.map((s) => [s.kind, s.index, s.aggregator])).toEqual([['tsuids', 0, 'sum'], ['metric', 1, 'sum'], ['metric', 2, 'max']]);
    expect(q.queries[0]).toMatchObject({ tsuids: ['000001000001000001', '000001000001000002'] });
    const r = parseQueryString({ start: ['2h-ago', '1h-ago'], m: ['sum:a', 'avg:b'] }, NOW);
    expect([r.startMs, r.queries.length]).toEqual([NOW - 3_600_000, 2]);
  });
});
