import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { SeriesByteCache, rangeEqual } from '../../../tsdb/catalog/series-byte-cache.js';
import { BYTE_SLOT_BYTES } from '../../../tsdb/memory/catalog-memory.js';

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

describe('series byte cache: lookups', () => {
  it('finds exactly the series of the bytes, with and without the tags-as-before hint', () => {
    const r = new Random(seed + 1);
    const metrics = ['cpu.user', 'cpu.sys', 'cpu.usr', 'mem', 'cpu.user.x'];
    const tagSets = ['host=a dc=x', 'host=b dc=x', 'host=a dc=y', 'host=a dc=x rack=1', 'host=aa dc=x'];
    const cache = new SeriesByteCache<string>(1000 * (BYTE_SLOT_BYTES + 32)); // room for every key: nothing evicted
    const known = new Set<string>();
    // A client's order, repeated, and changed now and then: runs of one tag set with
    // several metrics, a series twice in a row (points at two timestamps), same-length
    // tag sets that differ, so that a predicted series can share the metric but not the tags.
    let order: [string, string][] = [];
    const reorder = (): void => {
      order = [];
      let t = tagSets[0]!;
      for (let i = 0; i < 20; i++) {
        if (r.chance(0.4)) t = tagSets[r.int(tagSets.length)]!;
        const m = metrics[r.chance(0.5) ? 0 : r.int(metrics.length)]!;
        order.push([m, t]);
        if (r.chance(0.2)) order.push([m, t]);
      }
    };
    reorder();
    let prev: { tags: string; hit: boolean } | undefined;
    let hinted = 0;
    for (let round = 0; round < 200; round++) {
      if (r.chance(0.2)) reorder();
      for (const [m, t] of order) {
        const line = Buffer.from(`put ${m} 1 1 ${t}`);
        const ms = 4;
        const me = ms + m.length;
        const ts = me + 5;
        const te = line.length;
        const hint = prev !== undefined && prev.hit && prev.tags === t;
        const got = cache.get(line, ms, me, ts, te, hint);
        const want = `${m} ${t}`;
        if (known.has(want)) {
          expect(got, `${want}, hint ${hint}`).toBe(want);
          if (hint) hinted++;
          prev = { tags: t, hit: true };
        } else {
          expect(got, want).toBeUndefined();
          prev = { tags: t, hit: false };
          if (r.chance(0.5)) {
            cache.set(line, ms, me, ts, te, want);
            known.add(want);
            prev = undefined; // set looks up too: it is the previous lookup now
          }
        }
      }
    }
    expect(hinted).toBeGreaterThan(1000);
  });
});

describe('series byte cache: its bound', () => {
  it('stays within its bytes and drops only what was not hit since the last rotation', () => {
    const bound = 64 * (BYTE_SLOT_BYTES + 16);
    const cache = new SeriesByteCache<number>(bound);
    const line = (i: number): [Buffer, number, number, number, number] => {
      const b = Buffer.from(`m h=${String(i).padStart(10, '0')}`);
      return [b, 0, 1, 2, b.length];
    };
    for (let i = 0; i < 8; i++) cache.set(...line(i), i); // hot: hit after every insert below
    let least = Infinity;
    for (let i = 8; i < 5000; i++) {
      cache.set(...line(i), i);
      for (let h = 0; h < 8; h++) expect(cache.get(...line(h))).toBe(h);
      expect(cache.bytes).toBeLessThanOrEqual(bound + 2 * (BYTE_SLOT_BYTES + 16));
      if (i > 200) least = Math.min(least, cache.size);
    }
    // Never emptied: at least the hot keys and half the bound's worth stay at every step.
    expect(least).toBeGreaterThanOrEqual(32);
  });
});
