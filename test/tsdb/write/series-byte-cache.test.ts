import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { rangeEqual } from '../../../tsdb/write/series-byte-cache.js';

const seed = Number(process.env.TEST_SEED ?? 12);
const viewOf = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

describe('series byte cache: rangeEqual', () => {
  it('finds a difference in any one byte, at every length and offset', () => {
    const r = new Random(seed);
    let compared = 0;
    for (let n = 0; n <= 40; n++) {
      for (const [ao, bo] of [[0, 0], [1, 3], [5, 2], [7, 7]] as const) {
        const a = new Uint8Array(ao + n + 5);
        const b = new Uint8Array(bo + n + 9);
        for (let i = 0; i < n; i++) a[ao + i] = b[bo + i] = r.int(256);
        // Bytes around the ranges differ: they must not be read as part of them.
        a.fill(1, 0, ao).fill(1, ao + n);
        b.fill(2, 0, bo).fill(2, bo + n);
        expect(rangeEqual(a, viewOf(a), ao, b, viewOf(b), bo, n)).toBe(true);
        for (let d = 0; d < n; d++) {
          const keep = b[bo + d]!;
          b[bo + d] = keep ^ (1 << r.int(8));
          expect(rangeEqual(a, viewOf(a), ao, b, viewOf(b), bo, n), `n ${n} byte ${d}`).toBe(false);
          b[bo + d] = keep;
          compared++;
        }
      }
    }
    expect(compared).toBe(4 * (40 * 41) / 2);
  });
});
