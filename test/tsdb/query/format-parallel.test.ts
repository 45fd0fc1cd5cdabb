/**
 * A big answer formatted on the decode workers too (query/format-parallel.ts) is byte for
 * byte the answer one thread writes (format-json.ts), for random series of every kind of
 * value and every optional field, both output shapes, with and without the summary; parts
 * are cut where they should be; small answers never leave this thread.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import { formatQueryResultsBytes } from '../../../tsdb/query/format-json.js';
import type { FormatOptions, OutputSeries } from '../../../tsdb/query/format-json.js';
import { PARALLEL_FORMAT_MIN_POINTS, formatQueryResultsParallel, splitByPoints } from '../../../tsdb/query/format-parallel.js';

const pools = [new DecodePool(1), new DecodePool(3)];
afterAll(() => Promise.all(pools.map((p) => p.close())));

/** A value of one of the kinds an answer holds: plain doubles, exponents, integers, NaN. */
function value(rng: Random): { v: number; int: boolean } {
  switch (rng.int(6)) {
    case 0: return { v: rng.int(2001) - 1000, int: true };
    case 1: return { v: (rng.next() - 0.5) * 200, int: false };
    case 2: return { v: rng.next() * 1e-5, int: false };
    case 3: return { v: rng.next() * 1e12, int: false };
    case 4: return { v: Number.NaN, int: false };
    default: return { v: Math.round(rng.next() * 1e4) / 100, int: false };
  }
}

/** Series of random sizes whose points live in arrays bigger than their count (as the pipeline leaves them). */
function randomSeries(rng: Random, n: number, points: number): OutputSeries[] {
  const out: OutputSeries[] = [];
  const step = 60_000 + rng.int(3) * 1000;
  for (let i = 0; i < n; i++) {
    const count = Math.max(1, Math.round((points / n) * (0.2 + rng.next() * 1.6)));
    const cap = count + rng.int(50);
    const backing = new Float64Array(cap * 2 + 7);
    const ts = backing.subarray(3, 3 + cap);
    const values = backing.subarray(3 + cap, 3 + 2 * cap);
    const isInt = new Uint8Array(cap);
    const t0 = 1_700_000_000_000 + rng.int(3) * 17;
    for (let k = 0; k < count; k++) {
      const { v, int } = value(rng);
      ts[k] = t0 + k * step;
      values[k] = v;
      isInt[k] = int ? 1 : 0;
    }
    out.push({
      metric: rng.chance(0.5) ? 'cpu.usage_user' : 'mé"tric\\',
      tags: { host: `host_${i}`, ...(rng.chance(0.3) ? { dc: 'ü"1' } : {}) },
      aggregateTags: rng.chance(0.5) ? ['region'] : [],
      points: { count, ts, values, isInt, ...(rng.chance(0.5) ? { nanAsNull: rng.chance(0.5) } : {}) },
      ...(rng.chance(0.3) ? { query: { aggregator: 'avg', metric: 'm', index: i, tags: { host: '*' } } } : {}),
      ...(rng.chance(0.3) ? { tsuids: [`00000${i}`] } : {}),
      ...(rng.chance(0.2) ? { annotations: [{ tsuid: '0001', startTime: 1, description: 'ann "x"', custom: { a: 'b' } }] } : {}),
      ...(rng.chance(0.2) ? { globalAnnotations: [{ startTime: 2, description: 'g' }] } : {}),
      ...(rng.chance(0.2) ? { stats: { queryIdx: i, emittedDPs: count } } : {}),
    });
  }
  return out;
}

const SHAPES: FormatOptions[] = [
  { arrays: false, msResolution: false },
  { arrays: true, msResolution: false },
  { arrays: false, msResolution: true },
  { arrays: true, msResolution: true },
];

describe('formatting an answer on several threads', () => {
  it('writes the bytes one thread writes, for random answers, shapes and pools', async () => {
    const rng = new Random(20261127);
    let cases = 0;
    for (let round = 0; round < 12; round++) {
      const series = randomSeries(rng, 2 + rng.int(120), PARALLEL_FORMAT_MIN_POINTS * (1 + rng.next() * 2));
      const opts = SHAPES[round % SHAPES.length]!;
      const summary = rng.chance(0.5) ? { datapoints: 5, queryTimeMs: 1.5 } : undefined;
      const pool = pools[round % pools.length]!;
      const serial = formatQueryResultsBytes(series, opts, summary);
      const parallel = await formatQueryResultsParallel(series, opts, summary, () => pool);
      expect(parallel.equals(serial), `round ${round}`).toBe(true);
      JSON.parse(parallel.toString('utf8'));
      cases++;
    }
    expect(cases).toBe(12);
  });

  it('keeps every small answer intact while later ones are written after it in the shared slab', () => {
    const rng = new Random(20261128);
    const kept: Array<{ out: Buffer; copy: Buffer; expected: unknown }> = [];
    for (let i = 0; i < 600; i++) {
      // Mostly small answers (slab carves), some that outgrow their estimate or skip the slab.
      const series = randomSeries(rng, 1 + rng.int(3), rng.chance(0.05) ? 3000 : 1 + rng.int(120));
      const opts: FormatOptions = { arrays: rng.chance(0.5), msResolution: rng.chance(0.5) };
      const out = formatQueryResultsBytes(series, opts);
      kept.push({ out, copy: Buffer.from(out), expected: JSON.parse(out.toString('utf8')) });
    }
    for (const k of kept) expect(k.out.equals(k.copy)).toBe(true);
    expect(kept.every((k) => Array.isArray(k.expected))).toBe(true);
  });

  it('cuts consecutive, non-empty parts of about equal points', () => {
    const rng = new Random(7);
    for (let round = 0; round < 200; round++) {
      const series = randomSeries(rng, 1 + rng.int(40), 100 + rng.int(5000));
      const total = series.reduce((n, s) => n + s.points.count, 0);
      const n = 1 + rng.int(series.length);
      const parts = splitByPoints(series, n, total);
      expect(parts.length).toBe(n);
      expect(parts.every((p) => p.length > 0)).toBe(true);
      expect(parts.flat()).toEqual(series);
      // Each part but the last stops at the first series that reaches its share.
      let sum = 0;
      for (let j = 0; j < n - 1; j++) {
        for (const s of parts[j]!) sum += s.points.count;
        const goal = (total * (j + 1)) / n;
        if (parts[j]!.length > 1) expect(sum - parts[j]!.at(-1)!.points.count, `round ${round} part ${j}`).toBeLessThan(goal);
      }
    }
  });

  it('formats small answers on this thread alone, without asking for the pool', async () => {
    let messages = 0;
    let asked = 0;
    const pool = { threads: 2, format: () => { messages++; return Promise.resolve(new Uint8Array(0)); } } as unknown as DecodePool;
    const spy = (): DecodePool => {
      asked++;
      return pool;
    };
    const rng = new Random(3);
    const small = randomSeries(rng, 10, PARALLEL_FORMAT_MIN_POINTS / 2);
    const total = small.reduce((n, s) => n + s.points.count, 0);
    expect(total).toBeLessThan(PARALLEL_FORMAT_MIN_POINTS);
    const opts = SHAPES[0]!;
    expect((await formatQueryResultsParallel(small, opts, undefined, spy)).equals(formatQueryResultsBytes(small, opts))).toBe(true);
    const one = randomSeries(rng, 1, PARALLEL_FORMAT_MIN_POINTS * 2);
    expect((await formatQueryResultsParallel(one, opts, undefined, spy)).equals(formatQueryResultsBytes(one, opts))).toBe(true);
    expect(messages).toBe(0);
    expect(asked).toBe(0);
    const big = randomSeries(rng, 10, PARALLEL_FORMAT_MIN_POINTS * 2);
    await expect(formatQueryResultsParallel(big, opts, undefined, spy)).resolves.toBeInstanceOf(Buffer);
    expect(messages).toBe(2);
    expect(asked).toBe(1);
    // No pool (no decode threads): the one thread writes it all.
    expect((await formatQueryResultsParallel(big, opts, undefined, () => undefined)).equals(formatQueryResultsBytes(big, opts))).toBe(true);
  });

  it('fails the answer, not the process, when a worker cannot format', async () => {
    const closed = new DecodePool(1);
    await closed.close();
    const series = randomSeries(new Random(5), 4, PARALLEL_FORMAT_MIN_POINTS * 2);
    await expect(formatQueryResultsParallel(series, SHAPES[1]!, undefined, () => closed)).rejects.toThrow(/closed/);
  });
});
