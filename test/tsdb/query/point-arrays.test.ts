/**
 * allocPoints carves small point arrays from a shared slab (series.ts pointBytes): every
 * allocation must be zeroed, 8-aligned, and disjoint from every other one still in use; big
 * ones get a buffer of their own.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { allocPoints } from '../../../tsdb/query/series.js';
import type { Points } from '../../../tsdb/query/series.js';

describe('allocPoints', () => {
  it('hands out zeroed, aligned arrays that never share bytes', () => {
    const rng = new Random(20261128);
    const live: Points[] = [];
    for (let i = 0; i < 3000; i++) {
      const cap = rng.int(10) === 0 ? 1 + rng.int(2000) : 1 + rng.int(200);
      const p = allocPoints(cap);
      expect(p.count).toBe(0);
      for (const a of [p.ts, p.values, p.isInt]) {
        expect(a.length).toBe(cap);
        expect(a.byteOffset % 8).toBe(0);
        expect(a.every((x) => x === 0)).toBe(true);
      }
      // Stamp every byte with this allocation's id; an overlap shows as another's id.
      p.ts.fill(i);
      p.values.fill(-i);
      p.isInt.fill(i % 251);
      live.push(p);
    }
    live.forEach((p, i) => {
      expect(p.ts.every((x) => x === i)).toBe(true);
      expect(p.values.every((x) => x === -i)).toBe(true);
      expect(p.isInt.every((x) => x === i % 251)).toBe(true);
    });
  });

  it('gives a big series a buffer of its own', () => {
    const p = allocPoints(10_000);
    expect(p.ts.buffer.byteLength).toBeGreaterThanOrEqual(10_000 * 17);
    expect(p.ts.buffer).toBe(p.isInt.buffer);
    expect(allocPoints(10).ts.buffer).not.toBe(p.ts.buffer);
  });
});
