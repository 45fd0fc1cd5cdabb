/**
 * The last-value cache in columns (tsdb/meta/last-values.ts over catalog/key-table.ts)
 * against the truth, with many more series than the bound holds: an answer is never
 * another series' point (a dropped entry's number handed to a new series must not carry
 * its point, its big integer or its covered hour), through growth, drops and reuse of
 * freed numbers; bytes never pass the bound.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { LastValues } from '../../../tsdb/meta/last-values.js';
import type { LastPoint } from '../../../tsdb/meta/last-values.js';

const HOUR = 500_000 * 3600;
const key = (n: number): string => `m${String.fromCharCode(n % 7)}\u0001${'x'.repeat(n % 5)}${n}`;

describe('last values in columns', () => {
  it.each([[1 << 30], [8 * 1024]])('never answer a wrong point, with a bound of %i bytes', (bound) => {
    const r = new Random(bound);
    const c = new LastValues(bound, 2);
    /** The store: each series' newest point (absent: none). */
    const truth = new Map<number, LastPoint>();
    let hits = 0;
    const begun = new Set<number>();
    for (let step = 0; step < 30_000; step++) {
      const n = r.int(2000);
      const k = key(n);
      const op = r.int(10);
      if (op < 3) {
        // A write acknowledged: the store has it, and the cache hears of it.
        const old = truth.get(n);
        const ts = (old?.ts ?? HOUR * 1000) + r.int(3) * 1000;
        const p: LastPoint = r.chance(0.1) ? { ts, value: 2 ** 60, isInt: true, big: 2n ** 60n + BigInt(n) } : { ts, value: n + step / 1e6, isInt: r.chance(0.5) };
        truth.set(n, p);
        c.written(k, p.ts, p.value, p.isInt, p.big);
      } else if (op < 6) {
        // A read of the store through a loading entry.
        const token = c.begin([k]);
        begun.add(n);
        c.finish(k, truth.get(n), HOUR, token);
      } else {
        const got = c.get(k, HOUR);
        if (got === undefined) continue;
        hits++;
        expect(got, `step ${step}: series ${n}`).toEqual(truth.get(n) ?? null);
      }
      expect(c.bytes).toBeLessThanOrEqual(bound);
    }
    expect(hits).toBeGreaterThan(bound > 1e9 ? 1000 : 200);
    if (bound > 1e9) expect(c.size).toBe(begun.size);
  });
});
