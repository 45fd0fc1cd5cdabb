import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { parsePutWords } from '../../../tsdb/write/line-parser.js';
import { newFastPut, parseNumber, parsePutFast } from '../../../tsdb/write/put-line-fast.js';
import { SeriesByteCache } from '../../../tsdb/catalog/series-byte-cache.js';
import { putWords } from '../../../tsdb/server/telnet/line-splitter.js';
import { newSeriesEntry } from '../../../tsdb/write/write-group.js';
import type { SeriesEntry } from '../../../tsdb/write/write-group.js';

const seed = Number(process.env.TEST_SEED ?? 11);

function randomValue(r: Random): string {
  switch (r.int(9)) {
    case 0: return String(r.int(1000) - 500);
    case 1: return String(r.next() * 100);
    case 2: return (r.next() * 100).toFixed(r.int(6));
    case 3: return `${r.int(10)}.${r.int(1000)}e${r.int(40) - 20}`;
    case 4: return String(2 ** 53 + r.int(100));
    case 5: return String(r.next() * 1e300);
    case 6: return `-${r.int(100)}.${'0'.repeat(r.int(20))}${r.int(9) + 1}`;
    case 7: return `${r.int(2) === 0 ? '+' : ''}${r.int(100000)}E${r.int(5)}`;
    default: return ['0', '-0', '0.0', '1e3', '3.2409553039854025e-05', '9007199254740991', '123456789012345678', '.5', '5.', 'NaN', '1e', '1x', '--1'][r.int(13)]!;
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
    default: return ['9007199254740993e-16', '0.9007199254740993', '9007199254740991.5', '4503599627370497.5', '1.7976931348623157e308', '5e-324', '2.2250738585072014e-308'][r.int(7)]!;
  }
}

describe('parseNumber', () => {
  it('gives exactly the double Number() gives, from a Buffer and from a plain Uint8Array', () => {
    const r = new Random(seed);
    const out = { value: 0, isInt: false };
    let parsed = 0;
    for (let i = 0; i < 50000; i++) {
      const tok = numberToken(r);
      const buf = Buffer.from(` ${tok} `, 'latin1');
      for (const bytes of [buf, new Uint8Array(buf)]) {
        const end = parseNumber(bytes, 1, bytes.length, out);
        if (end === -1) continue; // declined: the general parser takes it
        parsed++;
        expect(end, tok).toBe(1 + tok.length);
        expect(Object.is(out.value, Number(tok)), `${tok}: ${out.value} vs ${Number(tok)}`).toBe(true);
      }
    }
    expect(parsed).toBeGreaterThan(90000);
  });
});

describe('put line fast path', () => {
  it('agrees with the general parser on every line it accepts', () => {
    const r = new Random(seed);
    const fast = newFastPut();
    let accepted = 0;
    for (let i = 0; i < 20000; i++) {
      const ts = r.int(3) === 0 ? String(1356998400000 + r.int(1e9)) : String(1356998400 + r.int(1e6));
      const sp = (): string => (r.int(5) === 0 ? '  ' : ' ');
      const line = `put${sp()}sys.cpu.user${sp()}${ts}${sp()}${randomValue(r)}${sp()}host=web${r.int(5)}${sp()}dc=x${r.int(3) === 0 ? ' \r' : ''}`;
      const bytes = Buffer.from(line.replace(/\r$/, ''));
      let general;
      try {
        general = parsePutWords(putWords(bytes));
      } catch {
        general = undefined;
      }
      if (!parsePutFast(bytes, 0, bytes.length, fast)) continue;
      accepted++;
      expect(general, line).toBeDefined();
      expect(Object.is(fast.value, general!.value), `${line}: ${fast.value} vs ${general!.value}`).toBe(true);
      expect(fast.isInt, line).toBe(general!.isInt);
      expect(fast.timestamp, line).toBe(general!.timestamp);
      expect(bytes.toString('latin1', fast.metricStart, fast.metricEnd)).toBe(general!.metric);
      expect(bytes.toString('latin1', fast.tagsStart, fast.tagsEnd).split(/\s+/)).toEqual(general!.tags.map(([k, v]) => `${k}=${v}`));
    }
    expect(accepted).toBeGreaterThan(10000);
  });

  it('declines what it cannot do exactly, and lines that are not points', () => {
    const fast = newFastPut();
    for (const line of ['put m 1356998400.5 1 a=b', 'put m 1356998400 9223372036854775807 a=b', 'put m 1356998400 NaN a=b', 'put m 1356998400 1', 'put m x 1 a=b', 'put m 0 1 a=b', 'put m 99999999999999 1 a=b']) {
      expect(parsePutFast(Buffer.from(line), 0, line.length, fast), line).toBe(false);
    }
  });

  it('finds series by their bytes, never by hash alone', () => {
    const cache = new SeriesByteCache<SeriesEntry>(3);
    const entry = (n: number): SeriesEntry => newSeriesEntry(Uint8Array.of(n));
    const a = Buffer.from('put m 1 1 host=a');
    const b = Buffer.from('put m 1 1 host=b');
    const fa = newFastPut();
    const fb = newFastPut();
    parsePutFast(a, 0, a.length, fa);
    parsePutFast(b, 0, b.length, fb);
    cache.set(a, fa.metricStart, fa.metricEnd, fa.tagsStart, fa.tagsEnd, entry(1));
    expect(cache.get(a, fa.metricStart, fa.metricEnd, fa.tagsStart, fa.tagsEnd)?.template).toEqual(Uint8Array.of(1));
    expect(cache.get(b, fb.metricStart, fb.metricEnd, fb.tagsStart, fb.tagsEnd)).toBeUndefined();
    cache.set(b, fb.metricStart, fb.metricEnd, fb.tagsStart, fb.tagsEnd, entry(2));
    expect(cache.size).toBe(2);
    for (let i = 0; i < 3; i++) {
      const c = Buffer.from(`put m 1 1 host=c${i}`);
      parsePutFast(c, 0, c.length, fa);
      cache.set(c, fa.metricStart, fa.metricEnd, fa.tagsStart, fa.tagsEnd, entry(3 + i));
    }
    expect(cache.size).toBeLessThanOrEqual(3);
  });

  it('parses a line inside a larger buffer by offset exactly as the line alone, mangled lines too', () => {
    const r = new Random(seed + 1);
    const fast = newFastPut();
    const alone = newFastPut();
    const junk = '0123456789 .e-+=\t\rxput';
    let accepted = 0;
    for (let i = 0; i < 20000; i++) {
      let line = `put sys.cpu.user ${1356998400 + r.int(1e6)} ${randomValue(r)} host=web${r.int(5)} dc=x`;
      // Mangle: delete, duplicate or replace a few characters (spaces, digits and dots included).
      for (let m = r.int(3); m > 0; m--) {
        const at = r.int(line.length);
        const c = junk[r.int(junk.length)]!;
        line = r.chance(0.3) ? line.slice(0, at) + line.slice(at + 1) : r.chance(0.5) ? line.slice(0, at) + c + line.slice(at) : line.slice(0, at) + c + line.slice(at + 1);
      }
      // The session sends only lines of `put` and a blank here (isPutLine).
      if (!/^put[ \t]/.test(line)) continue;
      const bytes = Buffer.from(line, 'latin1');
      // The same bytes with digits, blanks and dots around them, which must not be read.
      const before = Buffer.from(Array.from({ length: r.int(20) }, () => junk[r.int(junk.length)]!).join(''), 'latin1');
      const after = Buffer.from(Array.from({ length: r.int(20) }, () => junk[r.int(junk.length)]!).join(''), 'latin1');
      const big = Buffer.concat([before, bytes, after]);
      const s0 = before.length;
      const okAlone = parsePutFast(bytes, 0, bytes.length, alone);
      const ok = parsePutFast(big, s0, s0 + bytes.length, fast);
      expect(ok, JSON.stringify(line)).toBe(okAlone);
      if (!ok) continue;
      accepted++;
      expect([fast.metricStart - s0, fast.metricEnd - s0, fast.tagsStart - s0, fast.tagsEnd - s0], line)
        .toEqual([alone.metricStart, alone.metricEnd, alone.tagsStart, alone.tagsEnd]);
      expect(Object.is(fast.value, alone.value) && fast.isInt === alone.isInt && fast.timestamp === alone.timestamp, line).toBe(true);
      // What it accepts and the general parser accepts too, both read the same way (names are
      // validated later, by the general path, before a series is cached).
      let general;
      try {
        general = parsePutWords(putWords(bytes));
      } catch {
        continue;
      }
      expect(Object.is(fast.value, general.value) && fast.isInt === general.isInt && fast.timestamp === general.timestamp, line).toBe(true);
    }
    expect(accepted).toBeGreaterThan(5000);
  });

  it('finds a series by the same bytes at any offset of any buffer, and only by them', () => {
    const r = new Random(seed + 2);
    const cache = new SeriesByteCache(1 << 30); // bytes: room for every series (nothing evicted)
    const fast = newFastPut();
    const names: string[] = [];
    for (let i = 0; i < 3000; i++) names.push(`m${r.int(5)}.x ${1 + r.int(100)} 1 host=h${i % 700} dc=d${r.int(3)}${'k=v'.repeat(r.int(3))}`);
    const byName = new Map<string, SeriesEntry>();
    for (let i = 0; i < 20000; i++) {
      const name = names[r.int(names.length)]!;
      const pad = ' '.repeat(r.int(9));
      const line = Buffer.from(`${pad}put ${name}${' '.repeat(r.int(3))}`);
      expect(parsePutFast(line, pad.length, line.length, fast)).toBe(true);
      const key = line.toString('latin1', fast.metricStart, fast.metricEnd) + ' ' + line.toString('latin1', fast.tagsStart, fast.tagsEnd);
      const got = cache.get(line, fast.metricStart, fast.metricEnd, fast.tagsStart, fast.tagsEnd);
      expect(got).toBe(byName.get(key));
      if (got === undefined) {
        const e = newSeriesEntry(Buffer.from(key));
        cache.set(line, fast.metricStart, fast.metricEnd, fast.tagsStart, fast.tagsEnd, e);
        byName.set(key, e);
      }
    }
    expect(cache.size).toBe(byName.size);
  });
});
