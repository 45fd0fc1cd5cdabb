/**
 * The put line parser (tsdb/write/put-line.ts) and the value reader (number-text.ts):
 * against a plain reference (test/helpers/put-reference.ts) on random valid and invalid
 * lines, by offset inside larger buffers, OpenTSDB's messages for bad lines, and series
 * found in the byte cache by the ranges it reads.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { isTsdbError } from '../../../tsdb/errors.js';
import { SeriesByteCache } from '../../../tsdb/catalog/series-byte-cache.js';
import { decodeLine } from '../../../tsdb/server/telnet/line-splitter.js';
import { checkName, validatePointValue, validateSeries, valueOfJson } from '../../../tsdb/write/data-point.js';
import { VALUE_OK, newNumberOut, readValue } from '../../../tsdb/write/number-text.js';
import { newPutLineFields, parsePutLine, putLinePoint, readPutLine } from '../../../tsdb/write/put-line.js';
import { newSeriesEntry } from '../../../tsdb/write/write-group.js';
import type { SeriesEntry } from '../../../tsdb/write/write-group.js';
import { refPutLine, refValue } from '../../helpers/put-reference.js';
import type { RefError, RefPoint } from '../../helpers/put-reference.js';

const seed = Number(process.env.TEST_SEED ?? 11);

/** The line's point or error as the parser gives it, shaped as the reference's. */
function parsed(line: Uint8Array, start = 0, end = line.length, wordsAt = start + 3): RefPoint | RefError {
  const f = newPutLineFields();
  const err = readPutLine(line, start, end, wordsAt, f);
  if (err !== undefined) return { error: { code: err.code, message: err.message } };
  try {
    const p = putLinePoint(line, start, end, f);
    return { metric: p.metric, timestamp: p.timestamp, value: p.value, isInt: p.isInt, ...(p.big === undefined ? {} : { big: p.big }), tags: p.tags.map(([k, v]) => [k, v]), seriesText: p.seriesText! };
  } catch (e) {
    if (!isTsdbError(e)) throw e;
    return { error: { code: e.code, message: e.message } };
  }
}

/** The reference's answer for a raw `put` line. */
function reference(line: Uint8Array): RefPoint | RefError {
  return refPutLine(decodeLine(line).slice(3));
}

function errorOf(line: string): { code: string; message: string } {
  const r = parsed(Buffer.from(line));
  if (!('error' in r)) throw new Error(`expected an error for ${line}`);
  return r.error;
}

const pointOf = (line: string) => parsePutLine(Buffer.from(line), 0, Buffer.byteLength(line), 3);

function randomValue(r: Random): string {
  switch (r.int(10)) {
    case 0: return String(r.int(1000) - 500);
    case 1: return String(r.next() * 100);
    case 2: return (r.next() * 100).toFixed(r.int(6));
    case 3: return `${r.int(10)}.${r.int(1000)}e${r.int(40) - 20}`;
    case 4: return String(2 ** 53 + r.int(100));
    case 5: return String(r.next() * 1e300);
    case 6: return `-${r.int(100)}.${'0'.repeat(r.int(20))}${r.int(9) + 1}`;
    case 7: return `${r.int(2) === 0 ? '+' : ''}${r.int(100000)}E${r.int(5)}`;
    case 8: return numberToken(r);
    default: return pick(r, ['0', '-0', '0.0', '1e3', '3.2409553039854025e-05', '9007199254740991', '123456789012345678', '.5', '5.', 'NaN', '+NaN', '-Infinity',
      'Infinityx', '1e', '1x', '--1', '1f', '1.5f', '2e3D', '1.f', '99999999999999999999', '-99999999999999999999', '9223372036854775807', '-9223372036854775808',
      '9223372036854775808', '-9223372036854775809', '00000000000000000001', '0000000000000000001', '+', '-', '.', 'e5', '1.5e+', '1e999', '-1e999', '1e-999',
      '\u0661', '0x10', '1_0', '1e0001', '12345678901234567e300', '1.7976931348623157e308', '5e-324']);
  }
}

/** A decimal token: full-precision doubles as printed, 14-20 significant digits, exponents, edges of 2^53. */
function numberToken(r: Random): string {
  const sign = r.int(4) === 0 ? '-' : '';
  switch (r.int(6)) {
    case 0: return sign + String(r.next() * 10 ** (r.int(12) - 4));
    case 1: return sign + (r.next() * 100).toPrecision(14 + r.int(7));
    case 2: {
      const digits = Array.from({ length: 14 + r.int(7) }, () => r.int(10)).join('');
      const dot = r.int(digits.length + 1);
      return `${sign}${digits.slice(0, dot)}.${digits.slice(dot)}${r.int(3) === 0 ? `e${r.int(40) - 20}` : ''}`;
    }
    case 3: return `${sign}${2 ** 53 + r.int(5) - 2}e-${r.int(23)}`;
    case 4: return `${sign}0.${'0'.repeat(r.int(6))}${2 ** 53 + r.int(5) - 2}`;
    default: return pick(r, ['9007199254740993e-16', '0.9007199254740993', '9007199254740991.5', '4503599627370497.5', '1.7976931348623157e308', '5e-324', '2.2250738585072014e-308']);
  }
}

function pick<T>(r: Random, xs: readonly T[]): T {
  return xs[r.int(xs.length)]!;
}

function randomTimestamp(r: Random): string {
  switch (r.int(4)) {
    case 0: return String(1356998400 + r.int(1e6));
    case 1: return String(1356998400000 + r.int(1e9));
    case 2: return `${1356998400 + r.int(1e6)}.${String(r.int(10000)).slice(0, 1 + r.int(4))}`;
    default: return pick(r, ['0', '-1', '1.5', '.5', '12a.5', '1.2.3', '1356998400.', '1356998400.12a', 'x', 'é1', '9999999999999999', '99999999999999999',
      '1234567890123456', '00001356998400', '4294967295.999', '4294967.296', '1356998400\u00ff']);
  }
}

/** A random put line's text: mostly valid, with odd words, blanks and fewer words mixed in. */
function randomLine(r: Random): string {
  const blank = (): string => pick(r, [' ', ' ', ' ', '  ', '\t', ' \r ']);
  const words = [pick(r, ['sys.cpu.user', 'm', 'caf\u00e9', 'x\u00ff', 'a:b', 'm\u{1F600}']), randomTimestamp(r), randomValue(r)];
  for (let t = r.chance(0.1) ? 0 : 1 + r.int(3); t > 0; t--) words.push(pick(r, [`host=web${r.int(5)}`, 'dc=x', 'a=b', 'a=b', 'a=c', '=x', 'x=', 'noeq', 'k=v=w', '\u00e9=\u00fc', 'h=\u{1F600}']));
  if (r.chance(0.05)) words.splice(r.int(words.length + 1));
  let line = `put${blank()}${words.join(blank())}${r.chance(0.2) ? blank() : ''}`;
  for (let m = r.chance(0.2) ? 1 + r.int(3) : 0; m > 0; m--) {
    const at = 3 + r.int(line.length - 2);
    const c = pick(r, [' ', '=', '.', '0', 'e', '\t', '-', 'x', '+']);
    line = r.chance(0.4) ? line.slice(0, at) + line.slice(at + 1) : line.slice(0, at) + c + line.slice(at);
  }
  return line;
}

/** The line as bytes; now and then with a byte that is not UTF-8 (the line is then latin1). */
function lineBytes(r: Random, line: string): Buffer {
  const b = Buffer.from(line);
  if (!r.chance(0.05)) return b;
  const at = 4 + r.int(Math.max(1, b.length - 4));
  return Buffer.concat([b.subarray(0, at), Buffer.of(0xff), b.subarray(at)]);
}

describe('readValue', () => {
  it('gives exactly the double Number() gives, from a Buffer and from a plain Uint8Array', () => {
    const r = new Random(seed);
    const out = newNumberOut();
    for (let i = 0; i < 20000; i++) {
      const tok = numberToken(r);
      const buf = Buffer.from(` ${tok} `, 'latin1');
      for (const bytes of [buf, new Uint8Array(buf)]) {
        expect(readValue(bytes, 1, bytes.length - 1, out), tok).toBe(VALUE_OK);
        expect(Object.is(out.value, Number(tok)), `${tok}: ${out.value} vs ${Number(tok)}`).toBe(true);
        expect(out.isInt, tok).toBe(false);
      }
    }
  });

  it('types every value text as the reference does', () => {
    const r = new Random(seed + 3);
    const out = newNumberOut();
    for (let i = 0; i < 30000; i++) {
      const tok = randomValue(r);
      let want;
      try {
        want = refValue(tok);
      } catch {
        want = undefined;
      }
      const bytes = Buffer.from(tok);
      const ok = readValue(bytes, 0, bytes.length, out) === VALUE_OK;
      expect(ok, tok).toBe(want !== undefined);
      if (!ok) continue;
      expect(Object.is(out.value, want!.value) && out.isInt === want!.isInt && out.big === want!.big, `${tok}: ${out.value} ${out.isInt} ${out.big}`).toBe(true);
    }
  });

  it('types values as OpenTSDB does (and as msgpack\'s strings, data-point.ts valueOfJson, do)', () => {
    const cases: Array<[string, { value: number; isInt: boolean; big?: bigint }]> = [
      ['42', { value: 42, isInt: true }], ['-7', { value: -7, isInt: true }], ['42.5', { value: 42.5, isInt: false }], ['1e3', { value: 1000, isInt: false }],
      ['3.2409553039854025e-05', { value: 3.2409553039854025e-5, isInt: false }],
      ['9223372036854775807', { value: 9223372036854775807, isInt: true, big: 9223372036854775807n }],
      // collectd's unsigned counters beyond int64 are kept as doubles
      ['18446744073709551615', { value: 18446744073709551615, isInt: false }],
    ];
    const out = newNumberOut();
    for (const [text, want] of cases) {
      expect(valueOfJson(text)).toEqual(want);
      expect(readValue(Buffer.from(text), 0, text.length, out)).toBe(VALUE_OK);
      expect({ value: out.value, isInt: out.isInt, ...(out.big === undefined ? {} : { big: out.big }) }).toEqual(want);
    }
    for (const text of ['12abc', '1.2.3']) {
      expect(readValue(Buffer.from(text), 0, text.length, out), text).not.toBe(VALUE_OK);
      expect(() => valueOfJson(text)).toThrow(/Unable to parse value to a number/);
    }
  });
});

describe('put line parser', () => {
  it('answers every random line, valid or not, as the reference does', () => {
    const r = new Random(seed);
    let points = 0;
    let errors = 0;
    for (let i = 0; i < 20000; i++) {
      const bytes = lineBytes(r, randomLine(r));
      const want = reference(bytes);
      expect(parsed(bytes), JSON.stringify(bytes.toString('latin1'))).toEqual(want);
      if ('error' in want) errors++;
      else points++;
    }
    expect(points).toBeGreaterThan(4000);
    expect(errors).toBeGreaterThan(4000);
  });

  it('parses metric, timestamp, value and tags (collectd spacing)', () => {
    const p = pointOf('put load.load.shortterm 1795257422 2.50244140625 fqdn=collectd-test  env=test ');
    expect(p).toMatchObject({ metric: 'load.load.shortterm', timestamp: 1795257422, value: 2.50244140625, isInt: false });
    expect(p.tags).toEqual([['fqdn', 'collectd-test'], ['env', 'test']]);
    expect(p.seriesText).toBe('load.load.shortterm fqdn=collectd-test env=test');
  });

  it('reads s, ms and fractional-second timestamps', () => {
    const ts = (t: string): number => pointOf(`put m ${t} 1 a=b`).timestamp;
    expect(ts('1356998400')).toBe(1356998400);
    expect(ts('1356998400123')).toBe(1356998400123);
    expect(ts('1356998400.5')).toBe(1356998400500);
    expect(ts('1356998400.123')).toBe(1356998400123);
    expect(errorOf('put m notatime 1 a=b')).toEqual({ code: 'TSDB_INVALID_VALUE', message: "Invalid character 'n' in notatime" });
    expect(errorOf('put m 1.2345 1 a=b').code).toBe('TSDB_INVALID_VALUE');
  });

  it('rejects bad lines with OpenTSDB messages', () => {
    expect(errorOf('put m')).toEqual({ code: 'TSDB_ILLEGAL_ARGUMENT', message: 'not enough arguments (need least 4, got 1)' });
    expect(errorOf('put')).toEqual({ code: 'TSDB_ILLEGAL_ARGUMENT', message: 'not enough arguments (need least 4, got 0)' });
    expect(errorOf('put m x 1')).toEqual({ code: 'TSDB_ILLEGAL_ARGUMENT', message: 'not enough arguments (need least 4, got 3)' });
    expect(errorOf('put m 1356998400 1 host')).toEqual({ code: 'TSDB_ILLEGAL_ARGUMENT', message: 'invalid tag: host' });
    expect(errorOf('put m 1356998400 1 =x').message).toBe('invalid tag: =x');
    expect(errorOf('put m 1356998400 1 a=b a=c').message).toBe('duplicate tag: a=c, tags={a=b}');
    expect(pointOf('put m 1356998400 1 a=b a=b').tags).toEqual([['a', 'b']]);
    expect(errorOf('put m 1356998400 1x a=b')).toEqual({ code: 'TSDB_INVALID_VALUE', message: 'Unable to parse value to a number: 1x' });
    expect(errorOf('put m 12a.5 1 a=b').message).toBe("Invalid character 'a' in 12a");
    expect(errorOf('put m 123456789012345678 1 a=b').message).toBe('Invalid timestamp: 123456789012345678');
    expect(errorOf('put m 1356998400.1234 1 a=b').message).toBe('Invalid timestamp: 1356998400.1234');
    expect(errorOf('put m 1.5 1 a=b').message).toBe('Invalid timestamp: 1.5');
    expect(errorOf('put m 1356998400 1e999 a=b').message).toBe('Unable to parse value to a number: 1e999');
    // A line that is not UTF-8 is latin1, each byte a character.
    expect(errorOf('put m 13569\u00ff98400 1 a=b').message).toBe("Invalid character '\u00ff' in 13569\u00ff98400");
    const latin1 = Buffer.from('put m 13569\u00ff98400 1 a=b', 'latin1');
    expect(parsed(latin1)).toEqual({ error: { code: 'TSDB_INVALID_VALUE', message: "Invalid character '\u00ff' in 13569\u00ff98400" } });
  });

  it('reads what the fast path of before declined: fractions, longs, NaN, long exponents', () => {
    expect(pointOf('put m 1356998400.5 1 a=b').timestamp).toBe(1356998400500);
    expect(pointOf('put m 1356998400 9223372036854775807 a=b')).toMatchObject({ isInt: true, big: 9223372036854775807n });
    expect(pointOf('put m 1356998400 NaN a=b').value).toBeNaN();
    expect(pointOf('put m 1356998400 1e0300 a=b').value).toBe(1e300);
    expect(pointOf('put m 99999999999999 1 a=b').timestamp).toBe(99999999999999);
  });

  it('validates names, tag counts, timestamps and values', () => {
    const p = pointOf('put sys.cpu 1356998400 1 host=web01');
    expect(() => validateSeries(p, 8, '')).not.toThrow();
    expect(() => validateSeries({ ...p, metric: 'bad metric' }, 8, '')).toThrow('Invalid metric name ("bad metric"): illegal character:  ');
    expect(() => validateSeries({ ...p, tags: [['h:x', 'v']] }, 8, '')).toThrow('Invalid tag name ("h:x"): illegal character: :');
    expect(() => validateSeries({ ...p, tags: [['h:x', 'v']] }, 8, ':')).not.toThrow();
    expect(() => checkName('metric name', 'température.öl', '')).not.toThrow();
    const nine = Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'] as const);
    expect(() => validateSeries({ ...p, tags: nine }, 8, '')).toThrow(/^Too many tags: 9 maximum allowed: 8, tags: \{k0=v, /);
    expect(() => validateSeries({ ...p, tags: [] }, 8, '')).toThrow('Need at least one tag (metric=sys.cpu, tags={})');
    expect(() => validatePointValue({ ...p, value: NaN })).toThrow(/^value is NaN or Infinite/);
    expect(() => validatePointValue({ ...p, timestamp: 0 })).toThrow(/^bad timestamp=0/);
    expect(() => validatePointValue({ ...p, timestamp: 99999999999999 })).toThrow(/^bad timestamp/);
  });

  it('reads an import line (no `put`) as the words of a put line', () => {
    const line = Buffer.from('sys.cpu 1356998400 1.5 host=a');
    expect(parsePutLine(line, 0, line.length, 0)).toMatchObject({ metric: 'sys.cpu', timestamp: 1356998400, value: 1.5, tags: [['host', 'a']] });
  });

  it('finds series by their bytes, never by hash alone', () => {
    const cache = new SeriesByteCache<SeriesEntry>(3);
    const entry = (n: number): SeriesEntry => newSeriesEntry(Uint8Array.of(n));
    const a = Buffer.from('put m 1 1 host=a');
    const b = Buffer.from('put m 1 1 host=b');
    const fa = newPutLineFields();
    const fb = newPutLineFields();
    readPutLine(a, 0, a.length, 3, fa);
    readPutLine(b, 0, b.length, 3, fb);
    cache.set(a, fa.metricStart, fa.metricEnd, fa.tagsStart, fa.tagsEnd, entry(1));
    expect(cache.get(a, fa.metricStart, fa.metricEnd, fa.tagsStart, fa.tagsEnd)?.template).toEqual(Uint8Array.of(1));
    expect(cache.get(b, fb.metricStart, fb.metricEnd, fb.tagsStart, fb.tagsEnd)).toBeUndefined();
    cache.set(b, fb.metricStart, fb.metricEnd, fb.tagsStart, fb.tagsEnd, entry(2));
    expect(cache.size).toBe(2);
    for (let i = 0; i < 3; i++) {
      const c = Buffer.from(`put m 1 1 host=c${i}`);
      readPutLine(c, 0, c.length, 3, fa);
      cache.set(c, fa.metricStart, fa.metricEnd, fa.tagsStart, fa.tagsEnd, entry(3 + i));
    }
    expect(cache.size).toBeLessThanOrEqual(3);
  });

  it('parses a line inside a larger buffer by offset exactly as the line alone, mangled lines too', () => {
    const r = new Random(seed + 1);
    const junk = '0123456789 .e-+=\t\rxput\u00ff';
    let points = 0;
    for (let i = 0; i < 10000; i++) {
      const bytes = lineBytes(r, randomLine(r));
      // The same bytes with digits, blanks and dots around them, which must not be read.
      const before = Buffer.from(Array.from({ length: r.int(20) }, () => junk[r.int(junk.length)]!).join(''), 'latin1');
      const after = Buffer.from(Array.from({ length: r.int(20) }, () => junk[r.int(junk.length)]!).join(''), 'latin1');
      const big = Buffer.concat([before, bytes, after]);
      const s0 = before.length;
      const alone = newPutLineFields();
      const inside = newPutLineFields();
      const errAlone = readPutLine(bytes, 0, bytes.length, 3, alone);
      const errInside = readPutLine(big, s0, s0 + bytes.length, s0 + 3, inside);
      expect(errInside?.message, JSON.stringify(bytes.toString('latin1'))).toBe(errAlone?.message);
      expect(parsed(big, s0, s0 + bytes.length)).toEqual(parsed(bytes));
      if (errAlone !== undefined) continue;
      points++;
      expect([inside.metricStart - s0, inside.metricEnd - s0, inside.tagsStart - s0, inside.tagsEnd - s0]).toEqual([alone.metricStart, alone.metricEnd, alone.tagsStart, alone.tagsEnd]);
    }
    expect(points).toBeGreaterThan(3000);
  });

  it('finds a series by the same bytes at any offset of any buffer, and only by them', () => {
    const r = new Random(seed + 2);
    const cache = new SeriesByteCache(1 << 30); // bytes: room for every series (nothing evicted)
    const f = newPutLineFields();
    const names: string[] = [];
    for (let i = 0; i < 3000; i++) names.push(`m${r.int(5)}.x ${1 + r.int(100)} 1 host=h${i % 700} dc=d${r.int(3)}${'k=v'.repeat(r.int(3))}`);
    const byName = new Map<string, SeriesEntry>();
    for (let i = 0; i < 20000; i++) {
      const name = names[r.int(names.length)]!;
      const pad = ' '.repeat(r.int(9));
      const line = Buffer.from(`${pad}put ${name}${' '.repeat(r.int(3))}`);
      expect(readPutLine(line, pad.length, line.length, pad.length + 3, f)).toBeUndefined();
      const key = line.toString('latin1', f.metricStart, f.metricEnd) + ' ' + line.toString('latin1', f.tagsStart, f.tagsEnd);
      const got = cache.get(line, f.metricStart, f.metricEnd, f.tagsStart, f.tagsEnd);
      expect(got).toBe(byName.get(key));
      if (got === undefined) {
        const e = newSeriesEntry(Buffer.from(key));
        cache.set(line, f.metricStart, f.metricEnd, f.tagsStart, f.tagsEnd, e);
        byName.set(key, e);
      }
    }
    expect(cache.size).toBe(byName.size);
  });
});
