import { describe, expect, it } from 'vitest';
import { HOT_SKEW, bucketWrites, heat, isHot, writeShares } from '../../ui/src/lib/ops-hotspot.js';

describe('writeShares', () => {
  it('marks the one part taking the writes among evenly idle ones', () => {
    const s = writeShares([0, 0, 1000, 0, 0]);
    expect(s.map((x) => x.hot)).toEqual([false, false, true, false, false]);
    expect(s[2]).toEqual({ writes: 1000, share: 1, skew: 5, hot: true });
  });

  it('marks nothing when writes are spread evenly or nothing was written', () => {
    expect(writeShares(Array(20).fill(50)).some((x) => x.hot)).toBe(false);
    expect(writeShares([0, 0, 0]).map((x) => [x.share, x.hot])).toEqual([[0, false], [0, false], [0, false]]);
    expect(writeShares([])).toEqual([]);
  });

  it('marks a part taking most writes, or HOT_SKEW times its fair share', () => {
    expect(writeShares([60, 40]).map((x) => x.hot)).toEqual([true, false]);
    expect(writeShares([50, 50]).map((x) => x.hot)).toEqual([false, false]);
    // 20 buckets: 20% of the writes is 4x the fair 5%.
    const twenty = [20, ...Array(19).fill(80 / 19)];
    expect(writeShares(twenty)[0]!.hot).toBe(true);
    expect(writeShares([19, ...Array(19).fill(81 / 19)])[0]!.hot).toBe(false);
    expect(HOT_SKEW).toBe(4);
  });

  it('never marks a single part', () => {
    expect(isHot(1, 1)).toBe(false);
    expect(writeShares([5])[0]!.hot).toBe(false);
  });
});

describe('bucketWrites', () => {
  it('adds regions up per salt bucket; the first region (no salt) is bucket 0', () => {
    const regions = [
      { salt: undefined, writes: 1 },
      { salt: 1, writes: 2 },
      { salt: 1, writes: 3 }, // a split inside bucket 1
      { salt: 3, writes: 4 },
      { salt: 9, writes: 100 }, // beyond the buckets: ignored
    ];
    expect(bucketWrites(regions, 4)).toEqual([1, 5, 0, 4]);
  });
});

describe('heat', () => {
  it('is 0 without writes, calm up to the fair share, rises with the skew and is 1 from HOT_SKEW', () => {
    const share = (writes: number, skew: number) => ({ writes, share: 0, skew, hot: false });
    expect(heat(share(0, 0))).toBe(0);
    expect(heat(share(1, 0.5))).toBe(0.1);
    expect(heat(share(1, 1))).toBe(0.1);
    expect(heat(share(1, 2.5))).toBeCloseTo(0.55);
    expect(heat(share(9, HOT_SKEW))).toBe(1);
    expect(heat(share(9, 8))).toBe(1);
  });
});
