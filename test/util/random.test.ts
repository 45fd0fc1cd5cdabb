import { describe, expect, it } from 'vitest';
import { Random } from '../../core/util/random.js';

describe('Random', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = new Random(42);
    const b = new Random(42);
    const c = new Random(43);
    const sa = Array.from({ length: 10 }, () => a.nextU32());
    expect(Array.from({ length: 10 }, () => b.nextU32())).toEqual(sa);
    expect(Array.from({ length: 10 }, () => c.nextU32())).not.toEqual(sa);
    expect(a.seed).toBe(42);
  });

  it('pins the sequence of seed 1 (tests replay seeds across versions)', () => {
    const r = new Random(1);
    expect(Array.from({ length: 4 }, () => r.nextU32())).toEqual(SEED1);
  });

  it('produces values in range with roughly uniform distribution', () => {
    const r = new Random(7);
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100000; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
      buckets[r.int(10)]++;
    }
    for (const n of buckets) expect(Math.abs(n - 10000)).toBeLessThan(600);
    const bytes = r.bytes(7);
    expect(bytes.length).toBe(7);
    expect(r.range(5, 5)).toBe(5);
    expect(r.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});

const SEED1: number[] = [2442144158,3238099751,3819917871,2104621829];
