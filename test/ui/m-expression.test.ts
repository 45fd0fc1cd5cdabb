import { describe, expect, it } from 'vitest';
import { formatMExpression, MExpressionError, parseMExpression } from '../../ui/src/lib/m-expression.js';

describe('parseMExpression', () => {
  it('reads aggregator and metric', () => {
    expect(parseMExpression('sum:sys.cpu.user')).toEqual({ aggregator: 'sum', metric: 'sys.cpu.user', tags: [], axis: 'y' });
  });

  it('reads rate, counter options and downsample in either order', () => {
    const api = parseMExpression('avg:rate{counter,1000,5}:1m-max-nan:if.bytes{host=*}');
    const gwt = parseMExpression('avg:1m-max-nan:rate{counter,1000,5}:if.bytes{host=*}');
    expect(api).toEqual(gwt);
    expect(api.rate).toEqual({ counter: true, dropResets: false, counterMax: 1000, resetValue: 5 });
    expect(api.downsample).toEqual({ interval: '1m', fn: 'max', fill: 'nan' });
    expect(parseMExpression('sum:rate{dropcounter,,}:m').rate).toEqual({ counter: true, dropResets: true });
    expect(parseMExpression('sum:rate:m').rate).toEqual({ counter: false, dropResets: false });
    expect(parseMExpression('sum:0all-sum:m').downsample).toEqual({ interval: '0all', fn: 'sum', fill: 'none' });
  });

  it('splits group-by and plain filters, keeping commas and colons inside a filter', () => {
    const q = parseMExpression('sum:m{host=*,dc=a|b}{env=regexp(p(r,o)d:1)}');
    expect(q.tags).toEqual([
      { key: 'host', value: '*', groupBy: true },
      { key: 'dc', value: 'a|b', groupBy: true },
      { key: 'env', value: 'regexp(p(r,o)d:1)', groupBy: false },
    ]);
  });

  it('rejects bad input with the offending text', () => {
    for (const bad of ['sys.cpu', 'sum:', 'sum:x:m', 'sum:m{host}', 'sum:m{a=b', 'sum:1m:m', 'sum:rate{bogus}:m', 's-um:m', 'sum:m{a=b}x', 'sum:m{a=1}{b=2}{c=3}']) {
      expect(() => parseMExpression(bad), bad).toThrow(MExpressionError);
    }
    expect(() => parseMExpression('sum:1m:m')).toThrow('sum:1m:m');
  });
});

describe('formatMExpression', () => {
  it('round-trips through parse', () => {
    for (const m of ['sum:m', 'avg:rate:1m-avg:m{host=*}', 'max:rate{counter,100,}:m{a=b}{c=d|e}', 'sum:rate{dropcounter,,}:10s-sum-zero:m{}{c=wildcard(x*)}', 'min:1h-p99:a.b']) {
      expect(formatMExpression(parseMExpression(m))).toBe(m);
    }
  });
});
