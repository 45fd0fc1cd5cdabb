import { describe, expect, it } from 'vitest';
import { defaultState, emptyPanel } from '../../ui/src/lib/dashboard-state.js';
import type { DashboardState } from '../../ui/src/lib/dashboard-state.js';
import { formatHash, hashPairs, parseAxisRange, parseHash } from '../../ui/src/lib/url-state.js';

describe('parseHash', () => {
  it('opens an OpenTSDB UI link as one panel with the same query', () => {
    const link = '#start=1h-ago&end=2026/01/01-12:00:00&m=sum:rate:proc.stat.cpu%7Bhost=*%7D&o=&m=avg:1m-avg:mem.free%7Bhost=web01%7D&o=axis%20x1y2&yrange=%5B0:%5D&y2range=[0:100]&ylog&key=out%20right%20top%20box&wxh=1870x747&autoreload=15';
    const { state, errors } = parseHash(link);
    expect(errors).toEqual([]);
    expect(state.start).toBe('1h-ago');
    expect(state.end).toBe('2026/01/01-12:00:00');
    expect(state.refreshSec).toBe(15);
    expect(state.panels).toHaveLength(1);
    const p = state.panels[0]!;
    expect(p.queries.map((q) => [q.aggregator, q.metric, q.axis, q.rate !== undefined, q.downsample?.interval])).toEqual([
      ['sum', 'proc.stat.cpu', 'y', true, undefined],
      ['avg', 'mem.free', 'y2', false, '1m'],
    ]);
    expect(p.queries[0]!.tags).toEqual([{ key: 'host', value: '*', groupBy: true }]);
    expect(p.yrange).toEqual({ min: 0 });
    expect(p.y2range).toEqual({ min: 0, max: 100 });
    expect(p.ylog).toBe(true);
    expect(p.y2log).toBe(false);
  });

  it('starts a new panel at each panel= key', () => {
    const { state } = parseHash('start=2h-ago&panel=CPU&m=sum:cpu&panel=Memory&m=avg:mem&m=max:swap&nokey');
    expect(state.panels.map((p) => [p.title, p.queries.map((q) => q.metric), p.nokey])).toEqual([
      ['CPU', ['cpu'], false],
      ['Memory', ['mem', 'swap'], true],
    ]);
  });

  it('reports what it could not use and keeps the rest', () => {
    const { state, errors } = parseHash('start=1h-ago&m=sum:ok.metric&m=bad&yrange=[5:1]&bogus=1&theme=pink&autoreload=x');
    expect(state.panels[0]!.queries.map((q) => q.metric)).toEqual(['ok.metric']);
    expect(state.panels[0]!.yrange).toBeUndefined();
    expect(errors).toHaveLength(5);
    expect(errors[0]).toContain('m=bad');
    expect(errors.join('\n')).toContain('bogus');
  });

  it('gives the default state for an empty hash and clamps auto-refresh to 5 s', () => {
    expect(parseHash('').state).toEqual(defaultState());
    expect(parseHash('#autoreload=1').state.refreshSec).toBe(5);
    expect(parseHash('#autoreload=0').state.refreshSec).toBe(0);
  });
});

describe('formatHash', () => {
  it('writes a lone untitled panel as OpenTSDB would, readable', () => {
    const { state } = parseHash('start=1h-ago&m=sum:rate:cpu{host=*}&o=axis x1y2&ylog');
    expect(formatHash(state)).toBe('start=1h-ago&m=sum:rate:cpu{host=*}&o=axis%20x1y2&ylog');
  });

  it('round-trips every field', () => {
    const state: DashboardState = {
      start: '1704067200000',
      end: '1704070800000',
      refreshSec: 30,
      theme: 'dark',
      panels: [
        {
          ...emptyPanel('CPU & load'),
          queries: [
            { aggregator: 'avg', metric: 'sys.cpu', tags: [{ key: 'host', value: 'a|b', groupBy: true }, { key: 'dc', value: 'wildcard(eu*)', groupBy: false }], downsample: { interval: '1m', fn: 'max', fill: 'zero' }, rate: { counter: true, counterMax: 65535, dropResets: false }, axis: 'y' },
            { aggregator: 'sum', metric: 'sys.load', tags: [], axis: 'y2' },
          ],
          ylog: true,
          y2log: true,
          yrange: { min: 0, max: 100 },
          y2range: { max: 5 },
          ylabel: 'percent #1',
          y2label: 'load',
          nokey: true,
        },
        { ...emptyPanel(''), queries: [{ aggregator: 'count', metric: 'x', tags: [], axis: 'y' }] },
      ],
    };
    expect(parseHash(formatHash(state))).toEqual({ state, errors: [] });
  });

  it('skips queries without a metric', () => {
    expect(formatHash(defaultState())).toBe('start=1h-ago');
  });
});

describe('helpers', () => {
  it('splits pairs in order and decodes them', () => {
    expect(hashPairs('#a=1&b&c=%7Bx%7D&a=2')).toEqual([['a', '1'], ['b', ''], ['c', '{x}'], ['a', '2']]);
  });

  it('reads axis ranges', () => {
    expect(parseAxisRange('[0:]')).toEqual({ min: 0 });
    expect(parseAxisRange('[:1e3]')).toEqual({ max: 1000 });
    expect(parseAxisRange('[-1.5:2]')).toEqual({ min: -1.5, max: 2 });
    expect(parseAxisRange('0:1')).toBeUndefined();
    expect(parseAxisRange('[a:1]')).toBeUndefined();
  });
});
