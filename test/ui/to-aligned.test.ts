import { describe, expect, it } from 'vitest';
import { emptyQuery } from '../../ui/src/lib/dashboard-state.js';
import type { SubQuery } from '../../ui/src/lib/dashboard-state.js';
import { buildQueryBody, sentQueryIndexes, toApiFilter } from '../../ui/src/lib/query-request.js';
import { countPoints, isColumnarResult, seriesLabel, toPanelData } from '../../ui/src/lib/to-aligned.js';

describe('toPanelData', () => {
  it('hands the columns over as they are, names series and maps them to queries', () => {
    const ts = [1000, 2000, 3000];
    const a = [1, null, 3];
    const b = [null, 5, 6];
    const queries: SubQuery[] = [emptyQuery(''), { ...emptyQuery('cpu'), axis: 'y2' }, emptyQuery('mem')];
    const sent = sentQueryIndexes(queries);
    expect(sent).toEqual([1, 2]);
    const r = toPanelData(
      { timestamps: ts, series: [{ metric: 'cpu', tags: { host: 'a', dc: 'x' }, aggregateTags: [], index: 0, values: a }, { metric: 'mem', tags: {}, aggregateTags: ['host'], index: 1, values: b }] },
      queries,
      sent,
    );
    expect(r.data[0]).toBe(ts);
    expect(r.data[1]).toBe(a);
    expect(r.data[2]).toBe(b);
    expect(r.series.map((s) => [s.label, s.axis, s.queryIndex])).toEqual([
      ['cpu{dc=x,host=a}', 'y2', 1],
      ['mem', 'y', 2],
    ]);
    expect(countPoints(r.data)).toBe(4);
  });

  it('tells same-named series of different sub-queries apart by aggregator', () => {
    const queries: SubQuery[] = [{ ...emptyQuery('m'), aggregator: 'min' }, { ...emptyQuery('m'), aggregator: 'max' }];
    const r = toPanelData({ timestamps: [1], series: [{ metric: 'm', tags: {}, aggregateTags: [], index: 0, values: [1] }, { metric: 'm', tags: {}, aggregateTags: [], index: 1, values: [2] }] }, queries, [0, 1]);
    expect(r.series.map((s) => s.label)).toEqual(['min:m', 'max:m']);
  });

  it('recognises a columnar result', () => {
    expect(isColumnarResult({ timestamps: [], series: [] })).toBe(true);
    expect(isColumnarResult([])).toBe(false);
    expect(isColumnarResult({ error: { message: 'x' } })).toBe(false);
    expect(seriesLabel('m', {})).toBe('m');
  });
});

describe('buildQueryBody', () => {
  it('builds one POST body for the panel', () => {
    const q: SubQuery = {
      aggregator: 'avg',
      metric: ' if.bytes ',
      tags: [{ key: 'host', value: '*', groupBy: true }, { key: 'dc', value: 'eu|us', groupBy: false }, { key: '', value: 'x', groupBy: false }],
      downsample: { interval: '1m', fn: 'max', fill: 'none' },
      rate: { counter: true, counterMax: 100, dropResets: true },
      axis: 'y',
    };
    expect(buildQueryBody([q, emptyQuery('')], 1, 2)).toEqual({
      start: 1,
      end: 2,
      msResolution: true,
      showQuery: true,
      queries: [
        {
          aggregator: 'avg',
          metric: 'if.bytes',
          filters: [
            { type: 'wildcard', tagk: 'host', filter: '*', groupBy: true },
            { type: 'literal_or', tagk: 'dc', filter: 'eu|us', groupBy: false },
          ],
          downsample: '1m-max',
          rate: true,
          rateOptions: { counter: true, counterMax: 100, dropResets: true },
        },
      ],
    });
    expect(buildQueryBody([emptyQuery('')], 1, 2)).toBeUndefined();
  });

  it('maps typed filters', () => {
    expect(toApiFilter({ key: 'h', value: 'regexp(web.*)', groupBy: false })).toEqual({ type: 'regexp', tagk: 'h', filter: 'web.*', groupBy: false });
    expect(toApiFilter({ key: 'h', value: '', groupBy: true })).toEqual({ type: 'wildcard', tagk: 'h', filter: '*', groupBy: true });
  });
});
