import { describe, expect, it } from 'vitest';
import { DEFAULT_WIDTHS, validateWidths } from '../../../tsdb/schema/widths.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';

const w = (o: Partial<SchemaWidths>): SchemaWidths => ({ ...DEFAULT_WIDTHS, ...o });

describe('schema widths', () => {
  it('defaults to 3-byte UIDs, 1 salt byte and 20 buckets', () => {
    expect(DEFAULT_WIDTHS).toEqual({ metric: 3, tagk: 3, tagv: 3, saltWidth: 1, saltBuckets: 20 });
    expect(validateWidths(DEFAULT_WIDTHS)).toBe(DEFAULT_WIDTHS);
    expect(Object.isFrozen(DEFAULT_WIDTHS)).toBe(true);
  });

  it('accepts the edges of every range', () => {
    for (const ok of [
      w({ metric: 1, tagk: 1, tagv: 1 }), w({ metric: 8, tagk: 8, tagv: 8 }),
      w({ saltWidth: 0, saltBuckets: 1 }), w({ saltWidth: 0, saltBuckets: 5000 }),
      w({ saltWidth: 1, saltBuckets: 256 }), w({ saltWidth: 2, saltBuckets: 65536 }),
      w({ saltWidth: 8, saltBuckets: 0x7fffffff }), w({ saltWidth: 4, saltBuckets: 1 }),
    ]) expect(() => validateWidths(ok)).not.toThrow();
  });

  it.each([
    [{ metric: 0 }, /metric must be an integer in 1\.\.8, got 0/],
    [{ metric: 9 }, /metric/],
    [{ tagk: 2.5 }, /tagk/],
    [{ tagv: -1 }, /tagv/],
    [{ saltWidth: 9 }, /saltWidth must be an integer in 0\.\.8/],
    [{ saltWidth: -1 }, /saltWidth/],
    [{ saltBuckets: 0 }, /saltBuckets/],
    [{ saltBuckets: Number.NaN }, /saltBuckets/],
    [{ saltWidth: 1, saltBuckets: 257 }, /257 salt buckets do not fit in 1 salt byte/],
    [{ saltWidth: 2, saltBuckets: 65537 }, /do not fit in 2 salt byte/],
  ] as const)('rejects %j', (bad, message) => {
    expect(() => validateWidths(w(bad))).toThrow(RangeError);
    expect(() => validateWidths(w(bad))).toThrow(message);
  });
});
