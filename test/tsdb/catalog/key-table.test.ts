/**
 * The interned byte keys of per-series columns (tsdb/catalog/key-table.ts) against a Map:
 * random adds, finds and removals, with the hash narrowed so that every key collides
 * with many (and with probe runs that wrap past the end of the slots), through growth
 * and rehash, arena compaction and reuse of freed numbers; bytes() is the arrays' length
 * and stays bounded while the live keys are.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { KeyTable } from '../../../tsdb/catalog/key-table.js';

const keyOf = (n: number): Uint8Array => {
  const k = new Uint8Array(3 + (n % 7) * 6);
  new DataView(k.buffer).setUint16(0, n % 50_000);
  k[2] = n % 251;
  for (let i = 3; i < k.length; i++) k[i] = (n * 31 + i) & 0xff;
  return k;
};
const latin1 = (k: Uint8Array): string => Buffer.from(k).toString('latin1');

/** Runs random operations on a table built with `mix` against a Map; returns the table. */
function againstMap(mix: ((h: number) => number) | undefined, steps: number, keys: number, seed: number): { t: KeyTable; reused: number; maxBytes: number } {
  const r = new Random(seed);
  let capacity = 0;
  const t = new KeyTable((c) => { capacity = c; }, mix);
  const model = new Map<string, number>();
  const freed = new Set<number>();
  const owner = new Map<number, string>();
  let reused = 0;
  let maxBytes = 0;
  for (let step = 0; step < steps; step++) {
    const n = r.int(keys);
    const k = keyOf(n);
    const op = r.int(10);
    if (op < 4) {
      // Added as two ranges of a longer buffer (as a TSUID from a row key), or as a latin1 string.
      let got: number;
      if (r.chance(0.5)) {
        const row = new Uint8Array(k.length + 5);
        row.set(k.subarray(0, 3), 1);
        row.set(k.subarray(3), 8);
        got = t.add(row, 1, 4, 8, row.length);
      } else got = t.addLatin1(latin1(k));
      const had = model.get(latin1(k));
      if (had !== undefined) expect(got, `step ${step}`).toBe(had);
      else {
        expect(owner.has(got), `step ${step}: number ${got} handed out twice`).toBe(false);
        if (freed.delete(got)) reused++;
        model.set(latin1(k), got);
        owner.set(got, latin1(k));
      }
    } else if (op < 7) {
      const want = model.get(latin1(k)) ?? -1;
      expect(t.find(k, 0, k.length), `step ${step}: find ${n}`).toBe(want);
      expect(t.findLatin1(latin1(k))).toBe(want);
    } else {
      const had = model.get(latin1(k));
      if (had !== undefined) {
        t.remove(had);
        model.delete(latin1(k));
        owner.delete(had);
        freed.add(had);
        expect(t.has(had)).toBe(false);
      }
    }
    if (t.size !== model.size) expect(t.size, `step ${step}`).toBe(model.size);
    if (capacity !== 0 && capacity !== t.capacity) expect(capacity).toBe(t.capacity);
    maxBytes = Math.max(maxBytes, t.bytes());
  }
  for (const [k, n] of model) {
    expect(t.latin1Of(n)).toBe(k);
    expect(latin1(t.keyOf(n))).toBe(k);
  }
  return { t, reused, maxBytes };
}

describe('key table', () => {
  it('finds exactly what was added and not removed (random operations against a map)', () => {
    const { t, reused } = againstMap(undefined, 40_000, 4000, 11);
    expect(t.size).toBeGreaterThan(1000);
    expect(reused).toBeGreaterThan(100); // freed numbers are handed out again
  });

  it('stays right when every key collides with many, probe runs wrapping past the last slot', () => {
    // Four home slots, the last four: every run of probes wraps to the start, and a
    // removal shifts slots back across the end.
    const { t } = againstMap((h) => -1 - (h & 3), 12_000, 600, 12);
    expect(t.size).toBeGreaterThan(100);
    // Homes spread over eight low slots (runs that do not wrap, but overlap).
    againstMap((h) => h & 7, 12_000, 600, 13);
  });

  it('reuses freed numbers and compacts its arena: bytes stay bounded under churn', () => {
    const t = new KeyTable();
    let next = 0;
    const live: number[] = [];
    for (let i = 0; i < 1000; i++) live.push(t.add(keyOf(next), 0, keyOf(next++).length));
    const settled = t.bytes();
    for (let round = 0; round < 50_000; round++) {
      const victim = live.shift()!;
      t.remove(victim);
      const k = keyOf(next++);
      const n = t.add(k, 0, k.length);
      expect(n).toBe(victim); // the only free number
      live.push(n);
      expect(t.bytes()).toBeLessThanOrEqual(settled * 2);
    }
    expect(t.size).toBe(1000);
    expect(t.highWater).toBe(1000);
    const k = keyOf(next - 1);
    expect(t.find(k, 0, k.length)).toBe(live[live.length - 1]);
  });

  it('says what an add would grow by, and grows by just that', () => {
    const t = new KeyTable();
    for (let i = 0; i < 5000; i++) {
      const k = keyOf(i);
      const before = t.bytes();
      const g = t.growthBytes(k.length);
      t.add(k, 0, k.length);
      expect(t.bytes() - before, `key ${i}`).toBe(g);
    }
    t.clear();
    expect(t.size).toBe(0);
    expect(t.find(keyOf(1), 0, keyOf(1).length)).toBe(-1);
  });

  it('removes an eighth at a time, going round the numbers, telling the owner each one', () => {
    const t = new KeyTable();
    const bytes = (i: number): Uint8Array => Uint8Array.of(i, i >> 8, 7);
    for (let i = 0; i < 20; i++) t.add(bytes(i), 0, 3);
    const told: number[] = [];
    t.removeEighth((n) => {
      expect(t.has(n), 'told before the removal').toBe(true);
      told.push(n);
    });
    expect(told).toEqual([0, 1, 2]); // ceil(20 / 8)
    // Three new keys take the freed numbers; the hand goes on past them.
    const fresh = [100, 101, 102].map((i) => t.add(bytes(i), 0, 3));
    expect(fresh.sort()).toEqual([0, 1, 2]);
    t.removeEighth((n) => told.push(n));
    expect(told).toEqual([0, 1, 2, 3, 4, 5]);
    expect(t.size).toBe(17);
    for (const i of [3, 4, 5]) expect(t.find(bytes(i), 0, 3)).toBe(-1);
    for (const i of [100, 101, 102, 6]) expect(t.find(bytes(i), 0, 3)).toBeGreaterThanOrEqual(0);
  });
});
