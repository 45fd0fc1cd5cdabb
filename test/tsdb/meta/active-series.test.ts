/**
 * The series index's in-memory copy (meta/active-series.ts) against a plain set: it holds
 * exactly what was added and not removed while nothing ages and the bytes suffice; it
 * never holds what was not added; its byte accounting never passes the bound, and past
 * it the least recently seen go first; a series not seen for idle_ms leaves, and the
 * arrays shrink after it.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { ActiveSeries } from '../../../tsdb/meta/active-series.js';

const tsuid = (n: number, tags = 1 + (n % 3)): Uint8Array => {
  const out = new Uint8Array(3 + tags * 6);
  out[2] = 1 + (n % 5);
  for (let t = 0; t < tags; t++) new DataView(out.buffer).setUint32(3 + t * 6 + 2, n * 7 + t);
  return out;
};

/** A data row key of `t` with a 1-byte salt and a base time. */
const rowKey = (t: Uint8Array, salt: number, base: number): Uint8Array => {
  const k = new Uint8Array(t.length + 5);
  k[0] = salt;
  k.set(t.subarray(0, 3), 1);
  new DataView(k.buffer).setUint32(4, base);
  k.set(t.subarray(3), 8);
  return k;
};

describe('active series', () => {
  it('holds exactly what was added and not removed (random operations against a set)', () => {
    const r = new Random(77);
    const a = new ActiveSeries({ maxBytes: 64 * 1024 * 1024, idleMs: 0 });
    const model = new Set<string>();
    for (let step = 0; step < 20_000; step++) {
      const n = r.int(3000);
      const t = tsuid(n);
      const op = r.int(10);
      if (op < 4) {
        a.add(t, step);
        model.add(toHex(t));
      } else if (op < 6) {
        a.written(rowKey(t, r.int(20), 1_700_000_000 + r.int(100) * 3600), 1, 3, step);
        model.add(toHex(t));
      } else if (op < 9) {
        expect(a.has(t, step), `step ${step}: ${toHex(t)}`).toBe(model.has(toHex(t)));
      } else if (r.chance(0.02)) {
        const m = 1 + r.int(5);
        a.removeIf((x) => x[2] === m);
        for (const k of [...model]) if (k.startsWith(`0000${m.toString(16).padStart(2, '0')}`)) model.delete(k);
      }
      expect(a.size).toBe(model.size);
    }
    expect(model.size).toBeGreaterThan(1000);
  });

  it('stays within its bytes, dropping the least recently seen', () => {
    const max = 256 * 1024;
    const a = new ActiveSeries({ maxBytes: max, idleMs: 0 });
    let evictedSeen = 0;
    for (let i = 0; i < 50_000; i++) {
      a.add(tsuid(i, 2), i * 1000);
      // Series 0 is seen again and again: it is never the least recently seen.
      if (!a.has(tsuid(0, 2), i * 1000)) expect.fail(`series 0 left at ${i}`);
      if (a.bytes() > max) expect.fail(`${a.bytes()} bytes at ${i}`);
    }
    evictedSeen = a.stats().evicted;
    expect(evictedSeen).toBeGreaterThan(10_000);
    expect(a.size).toBeGreaterThan(1000);
    // The newest are held; the oldest went.
    expect(a.has(tsuid(49_999, 2), 50_000_000)).toBe(true);
    expect(a.has(tsuid(5, 2), 50_000_000)).toBe(false);
  });

  it('ages out series not seen for idle_ms and shrinks after them', () => {
    const hour = 3_600_000;
    const a = new ActiveSeries({ maxBytes: 64 * 1024 * 1024, idleMs: hour });
    for (let i = 0; i < 20_000; i++) a.add(tsuid(i), 0);
    const full = a.bytes();
    // Half of them written again half an hour later.
    for (let i = 0; i < 20_000; i += 2) a.add(tsuid(i), hour / 2);
    expect(a.has(tsuid(99_999), hour - 1000)).toBe(false); // a sweep: none idle for an hour yet
    expect(a.size).toBe(20_000);
    expect(a.has(tsuid(1), hour + 120_000)).toBe(false); // idle for over an hour: swept
    expect(a.size).toBe(10_000);
    expect(a.stats().aged).toBe(10_000);
    expect(a.has(tsuid(2), hour + 120_000)).toBe(true);
    // The rest, seen last at half past (and tsuid(2) just now): gone an hour later.
    expect(a.has(tsuid(4), 2 * hour + 200_000)).toBe(false);
    expect(a.size).toBe(0);
    expect(a.bytes()).toBeLessThan(full / 50);
  });
});
