import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { parsePutWords } from '../../../tsdb/write/line-parser.js';
import { newFastPut, parsePutFast } from '../../../tsdb/write/put-line-fast.js';
import { SeriesByteCache } from '../../../tsdb/write/series-byte-cache.js';
import { putWords } from '../../../tsdb/server/telnet/line-splitter.js';
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
    const cache = new SeriesByteCache(3);
    const entry = (n: number): SeriesEntry => ({ template: Uint8Array.of(n), lastBase: 0, dirty: undefined, groupId: 0, points: [] });
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
});
