/**
 * aggregate() of a group of one all-double series takes a shortcut (aggregateOneDoubleSeries):
 * it must answer exactly as the general look-ahead loop, which a second, empty series in
 * the group forces (an empty series never becomes active, so the answer is the same).
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { aggregate } from '../../../tsdb/query/aggregate.js';
import { AGGREGATOR_NAMES, getAggregator } from '../../../tsdb/query/aggregators.js';
import { allocPoints } from '../../../tsdb/query/series.js';
import type { Points } from '../../../tsdb/query/series.js';

const BASE = 1_356_998_400_000;

/** Values a one-series group must answer as a group of several does: ±0, NaN, ±Infinity (which fails the query). */
const SPECIAL = [0, -0, NaN, Infinity, -Infinity];

function randomSeries(r: Random, ints: boolean, special = 0.1): Points {
  const n = r.int(40);
  const p = allocPoints(n);
  let t = BASE + r.int(100_000);
  for (let i = 0; i < n; i++) {
    t += r.chance(0.1) ? 0 : 1 + r.int(20_000); // repeated timestamps too
    p.ts[i] = t;
    const kind = r.int(10);
    p.values[i] = r.chance(special) ? SPECIAL[r.int(SPECIAL.length)]! : kind === 1 ? r.int(100) : kind === 2 ? -r.int(1_000_000) / 7 : (r.int(2_000_000) - 1_000_000) / 64;
    p.isInt[i] = ints && r.chance(0.1) ? 1 : 0;
    if (p.isInt[i] === 1) p.values[i] = Math.round(p.values[i]!) || 0;
  }
  p.count = n;
  return p;
}

describe('aggregate of one series', () => {
  it('answers as the general loop for every aggregator, window and end', () => {
    const r = new Random(20261127);
    const empty = allocPoints(0);
    let compared = 0;
    let failures = 0;
    for (let round = 0; round < 400; round++) {
      // Some series with no special value at all.
      const p = randomSeries(r, round % 4 === 0, round % 3 === 0 ? 0 : 0.03);
      const first = p.count > 0 ? p.ts[0]! : BASE;
      const emitFrom = first + r.int(200_000) - 50_000;
      const emitTo = emitFrom + r.int(600_000);
      const endMs = r.chance(0.3) ? emitFrom + r.int(600_000) : emitTo;
      const o = { rate: false, endMs, emitFrom, emitTo };
      for (const name of AGGREGATOR_NAMES) {
        if (name === 'none') continue;
        const agg = getAggregator(name);
        const where = `round ${round}, ${name}`;
        const run = (inputs: Points[]) => {
          try {
            return aggregate(inputs, agg, o);
          } catch (err) {
            return (err as Error).message;
          }
        };
        const got = run([p]);
        const want = run([p, empty]);
        if (typeof got === 'string' || typeof want === 'string') {
          expect(got, where).toEqual(want);
          failures++;
          continue;
        }
        expect(got.count, where).toBe(want.count);
        expect([...got.ts], where).toEqual([...want.ts]);
        expect([...got.isInt], where).toEqual([...want.isInt]);
        // Bit for bit (NaN included): Object.is compares doubles exactly.
        for (let i = 0; i < got.count; i++) expect(Object.is(got.values[i], want.values[i]), `${where} at ${i}: ${got.values[i]} vs ${want.values[i]}`).toBe(true);
        compared += got.count;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
    // Infinities failed both ways alike.
    expect(failures).toBeGreaterThan(100);
  });
});
