import { describe, expect, it } from 'vitest';
import { LruCache } from '../../core/cache/lru-cache.js';
import { Random } from '../../core/util/random.js';
import { testSeed, withSeed } from '../sst/helpers.js';

describe('LruCache', () => {
  it('returns what was set and counts hits and misses', () => {
    const c = new LruCache<string>(100);
    expect(c.get(1, 0)).toBeUndefined();
    c.set(1, 0, 'a', 10);
    c.set(1, 4096, 'b', 10);
    c.set(2, 0, 'c', 10);
    expect(c.get(1, 0)).toBe('a');
    expect(c.get(1, 4096)).toBe('b');
    expect(c.get(2, 0)).toBe('c');
    expect(c.get(2, 4096)).toBeUndefined();
    expect(c.stats()).toEqual({ hits: 3, misses: 2, sizeBytes: 30, capacityBytes: 100, entries: 3, evictions: 0 });
  });

  it('keeps file ids and offsets apart, including offsets beyond 2^32', () => {
    const c = new LruCache<string>(1000);
    c.set(1, 2 ** 32, 'x', 1);
    c.set(2, 0, 'y', 1);
    c.set(0, 2 ** 32 + 2 ** 32, 'z', 1); // would collide with (2, 0) in an id * 2^32 + offset scheme
    expect(c.get(1, 2 ** 32)).toBe('x');
    expect(c.get(2, 0)).toBe('y');
    expect(c.get(0, 2 ** 33)).toBe('z');
    expect(c.get(1, 0)).toBeUndefined();
  });

  it('evicts the least recently used entries by charge', () => {
    const c = new LruCache<number>(30);
    c.set(1, 1, 1, 10);
    c.set(1, 2, 2, 10);
    c.set(1, 3, 3, 10);
    c.get(1, 1); // 1 is now most recent; 2 is least recent
    c.set(1, 4, 4, 10);
    expect(c.has(1, 2)).toBe(false);
    expect([1, 3, 4].map((o) => c.has(1, o))).toEqual([true, true, true]);
    // Recency now (most recent first): 4, 1, 3. Adding 15 more evicts 3, then 1.
    c.set(1, 5, 5, 15);
    expect([1, 3, 4, 5].map((o) => c.has(1, o))).toEqual([false, false, true, true]);
    expect(c.stats()).toMatchObject({ sizeBytes: 25, entries: 2, evictions: 3 });
  });

  it('does not store a value larger than the capacity, and drops the old value at that key', () => {
    const c = new LruCache<string>(10);
    c.set(1, 0, 'small', 5);
    c.set(1, 0, 'huge', 11);
    expect(c.get(1, 0)).toBeUndefined();
    expect(c.stats()).toMatchObject({ entries: 0, sizeBytes: 0 });
    const zero = new LruCache<string>(0);
    zero.set(1, 0, 'x', 1);
    expect(zero.get(1, 0)).toBeUndefined();
  });

  it('replaces a value in place and recharges it', () => {
    const c = new LruCache<string>(100);
    c.set(1, 0, 'a', 10);
    c.set(1, 0, 'b', 30);
    expect(c.get(1, 0)).toBe('b');
    expect(c.stats()).toMatchObject({ entries: 1, sizeBytes: 30 });
  });

  it('evictFile removes exactly one file and keeps the list consistent', () => {
    const c = new LruCache<string>(1000);
    for (let i = 0; i < 10; i++) {
      c.set(1, i, `a${i}`, 1);
      c.set(2, i, `b${i}`, 2);
    }
    c.evictFile(1);
    expect(c.stats()).toMatchObject({ entries: 10, sizeBytes: 20 });
    for (let i = 0; i < 10; i++) {
      expect(c.has(1, i)).toBe(false);
      expect(c.get(2, i)).toBe(`b${i}`);
    }
    c.evictFile(3); // absent: no-op
    c.delete(2, 0);
    expect(c.has(2, 0)).toBe(false);
    c.clear();
    expect(c.stats()).toMatchObject({ entries: 0, sizeBytes: 0 });
    c.set(2, 0, 'again', 1);
    expect(c.get(2, 0)).toBe('again');
  });

  it('newId() never repeats', () => {
    const c = new LruCache<string>(1);
    const ids = new Set(Array.from({ length: 100 }, () => c.newId()));
    expect(ids.size).toBe(100);
  });

  it('matches a simple LRU model under random operations', () => {
    withSeed(testSeed(77), (rng: Random) => {
      const cap = 200;
      const c = new LruCache<number>(cap);
      // model: array ordered most-recent-first of [id, offset, value, charge]
      let model: [number, number, number, number][] = [];
      const find = (id: number, off: number): number => model.findIndex((e) => e[0] === id && e[1] === off);
      for (let op = 0; op < 20000; op++) {
        const id = rng.int(4);
        const off = rng.int(30) * 4096;
        const r = rng.int(10);
        if (r < 5) {
          const i = find(id, off);
          const got = c.get(id, off);
          if (i < 0) expect(got).toBeUndefined();
          else {
            expect(got).toBe(model[i]![2]);
            model.unshift(model.splice(i, 1)[0]!);
          }
        } else if (r < 9) {
          const charge = rng.int(40);
          const i = find(id, off);
          if (i >= 0) model.splice(i, 1);
          c.set(id, off, op, charge);
          if (charge <= cap) {
            model.unshift([id, off, op, charge]);
            let size = model.reduce((s, e) => s + e[3], 0);
            while (size > cap) size -= model.pop()![3];
          }
        } else {
          c.evictFile(id);
          model = model.filter((e) => e[0] !== id);
        }
        const st = c.stats();
        expect(st.entries).toBe(model.length);
        expect(st.sizeBytes).toBe(model.reduce((s, e) => s + e[3], 0));
      }
    });
  });
});
