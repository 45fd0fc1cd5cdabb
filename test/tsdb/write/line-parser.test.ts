import { describe, expect, it } from 'vitest';
import { isTsdbError } from '../../../tsdb/errors.js';
import { checkName, parseValue, validatePointValue, validateSeries } from '../../../tsdb/write/data-point.js';
import { parsePutWords, parseTimestamp } from '../../../tsdb/write/line-parser.js';

const words = (s: string): string[] => s.split(/\s+/).filter((w) => w !== '');

function errorOf(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isTsdbError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected an error');
}

describe('put line parsing', () => {
  it('parses metric, timestamp, value and tags (collectd spacing)', () => {
    const p = parsePutWords(words('load.load.shortterm 1795257422 2.50244140625 fqdn=collectd-test  env=test '));
    expect(p).toMatchObject({ metric: 'load.load.shortterm', timestamp: 1795257422, value: 2.50244140625, isInt: false });
    expect(p.tags).toEqual([['fqdn', 'collectd-test'], ['env', 'test']]);
    expect(p.seriesText).toBe('load.load.shortterm fqdn=collectd-test env=test');
  });

  it('types values as OpenTSDB does', () => {
    expect(parseValue('42')).toEqual({ value: 42, isInt: true });
    expect(parseValue('-7')).toEqual({ value: -7, isInt: true });
    expect(parseValue('42.5')).toEqual({ value: 42.5, isInt: false });
    expect(parseValue('1e3')).toEqual({ value: 1000, isInt: false });
    expect(parseValue('3.2409553039854025e-05').value).toBe(3.2409553039854025e-5);
    expect(parseValue('9223372036854775807')).toEqual({ value: 9223372036854775807, isInt: true, big: 9223372036854775807n });
    // collectd's unsigned counters beyond int64 are kept as doubles
    expect(parseValue('18446744073709551615')).toEqual({ value: 18446744073709551615, isInt: false });
    expect(errorOf(() => parseValue('12abc')).code).toBe('TSDB_INVALID_VALUE');
    expect(errorOf(() => parseValue('1.2.3')).code).toBe('TSDB_INVALID_VALUE');
  });

  it('reads s, ms and fractional-second timestamps', () => {
    expect(parseTimestamp('1356998400')).toBe(1356998400);
    expect(parseTimestamp('1356998400123')).toBe(1356998400123);
    expect(parseTimestamp('1356998400.5')).toBe(1356998400500);
    expect(parseTimestamp('1356998400.123')).toBe(1356998400123);
    expect(errorOf(() => parseTimestamp('notatime'))).toEqual({ code: 'TSDB_INVALID_VALUE', message: "Invalid character 'n' in notatime" });
    expect(errorOf(() => parseTimestamp('1.2345')).code).toBe('TSDB_INVALID_VALUE');
  });

  it('rejects bad lines with OpenTSDB messages', () => {
    expect(errorOf(() => parsePutWords(['m']))).toEqual({ code: 'TSDB_ILLEGAL_ARGUMENT', message: 'not enough arguments (need least 4, got 1)' });
    expect(errorOf(() => parsePutWords(words('m 1356998400 1 host')))).toEqual({ code: 'TSDB_ILLEGAL_ARGUMENT', message: 'invalid tag: host' });
    expect(errorOf(() => parsePutWords(words('m 1356998400 1 =x'))).message).toBe('invalid tag: =x');
    expect(errorOf(() => parsePutWords(words('m 1356998400 1 a=b a=c'))).message).toBe('duplicate tag: a=c, tags={a=b}');
    expect(parsePutWords(words('m 1356998400 1 a=b a=b')).tags).toEqual([['a', 'b']]);
  });

  it('validates names, tag counts, timestamps and values', () => {
    const p = parsePutWords(words('sys.cpu 1356998400 1 host=web01'));
    expect(() => validateSeries(p, 8, '')).not.toThrow();
    expect(errorOf(() => validateSeries({ ...p, metric: 'bad metric' }, 8, '')).message).toBe('Invalid metric name ("bad metric"): illegal character:  ');
    expect(errorOf(() => validateSeries({ ...p, tags: [['h:x', 'v']] }, 8, '')).message).toBe('Invalid tag name ("h:x"): illegal character: :');
    expect(() => validateSeries({ ...p, tags: [['h:x', 'v']] }, 8, ':')).not.toThrow();
    expect(() => checkName('metric name', 'température.öl', '')).not.toThrow();
    const nine = Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'] as const);
    expect(errorOf(() => validateSeries({ ...p, tags: nine }, 8, '')).message).toMatch(/^Too many tags: 9 maximum allowed: 8, tags: \{k0=v, /);
    expect(errorOf(() => validateSeries({ ...p, tags: [] }, 8, '')).message).toBe('Need at least one tag (metric=sys.cpu, tags={})');
    expect(errorOf(() => validatePointValue({ ...p, value: NaN })).message).toMatch(/^value is NaN or Infinite/);
    expect(errorOf(() => validatePointValue({ ...p, timestamp: 0 })).message).toMatch(/^bad timestamp=0/);
    expect(errorOf(() => validatePointValue({ ...p, timestamp: 99999999999999 })).message).toMatch(/^bad timestamp/);
  });
});
