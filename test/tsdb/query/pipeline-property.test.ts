/**
 * Property tests: runGroup over random series (seeded; TEST_SEED replays one) against a
 * slow reference written plainly from OpenTSDB's rules (pipeline.ts): point objects,
 * Maps of buckets, BigInt for every long operation, the active window and the look-ahead
 * typing rule evaluated per output timestamp from scratch instead of with an iterator.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { runGroup, type PipelineSpec } from '../../../tsdb/query/pipeline.js';
import { seriesOf, type OutSeries } from '../../../tsdb/query/series.js';
import { AGGS, reference, type Pt, type RefOut } from '../helpers/opentsdb-reference.js';

// ---- random inputs ----------------------------------------------------------------------
const BASE = 1_356_998_400_000;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function randomSeries(rnd: Random, big: boolean): Pt[] {
  const n = rnd.int(30);
  const kind = rnd.int(3); // 0 ints, 1 doubles, 2 mixed
  const pts: Pt[] = [];
  let t = BASE + rnd.int(4) * 3_600_000 + rnd.int(7_200_000);
  for (let i = 0; i < n; i++) {
    t += rnd.chance(0.2) ? 1 + rnd.int(999) : 1000 * (1 + rnd.int(rnd.chance(0.3) ? 3000 : 300));
    const int = kind === 0 || (kind === 2 && rnd.chance(0.5));
    if (big && int) {
      const b = BigInt(rnd.range(-3, 3)) * 2n ** 61n + BigInt(rnd.range(-1000, 1000));
      pts.push({ t, v: Number(b), big: b, int });
    } else {
      const v = int ? rnd.range(-500, 500) : rnd.range(-50_000, 50_000) / 64;
      pts.push({ t, v, big: undefined, int });
    }
  }
  return pts;
}

function randomSpec(rnd: Random, big: boolean): PipelineSpec {
  const startMs = BASE + rnd.int(3) * 3_600_000 + rnd.int(3_600_000);
  const endMs = startMs + rnd.int(4 * 3_600_000);
  const aggregator = rnd.chance(0.1) ? 'none' : AGGS[rnd.int(AGGS.length)]!;
  let downsample: PipelineSpec['downsample'];
  if (!big && rnd.chance(0.5)) {
    const fn = AGGS[rnd.int(AGGS.length)]!;
    const fill = (['none', 'nan', 'null', 'zero'] as const)[rnd.int(4)]!;
    downsample = rnd.chance(0.15)
      ? { intervalMs: 0, all: true, fn, fill, calendar: false }
      : { intervalMs: [1000, 10_000, 60_000, 420_000, 900_000, 3_600_000][rnd.int(6)]!, all: false, fn, fill, calendar: false };
  }
  const rate = !big && rnd.chance(0.3) ? { counter: rnd.chance(0.5), counterMax: rnd.chance(0.5) ? 1000 : undefined, resetValue: rnd.chance(0.3) ? 5 : undefined, dropResets: rnd.chance(0.3) } : undefined;
  return { startMs, endMs, aggregator, downsample, rate };
}

/** Compares without expect() per point (millions of calls would dominate the run time). */
function mismatch(got: OutSeries, i: number, want: RefOut): string | undefined {
  const v = got.values[i]!;
  if (got.ts[i] !== want.t) return `ts ${got.ts[i]} vs ${want.t}`;
  if ((got.isInt[i] === 1) !== want.int) return `isInt ${got.isInt[i]} vs ${want.int} at ${want.t}`;
  if (want.int) {
    const exact = Math.abs(v) > MAX_SAFE ? got.exact?.[i] : BigInt(v);
    return exact === want.big ? undefined : `long ${exact} vs ${want.big} at ${want.t}`;
  }
  if (Number.isNaN(want.v)) return Number.isNaN(v) ? undefined : `${v} vs NaN at ${want.t}`;
  return Math.abs(v - want.v) <= 1e-9 * Math.max(1, Math.abs(want.v)) ? undefined : `${v} vs ${want.v} at ${want.t}`;
}

function check(seed: number, big: boolean): void {
  const rnd = new Random(seed);
  const series = Array.from({ length: 1 + rnd.int(5) }, () => randomSeries(rnd, big));
  const spec = randomSpec(rnd, big);
  const data = series.map((s, i) => seriesOf('m', { id: String(i) }, s.map((p) => [p.t, p.big ?? p.v, p.int] as const)));
  const got = runGroup(data, spec);
  const want = reference(series, spec);
  expect(got.length, `outputs (seed ${seed})`).toBe(want.length);
  got.forEach((g, j) => {
    expect(g.count, `points (seed ${seed}, ${JSON.stringify(spec)})`).toBe(want[j]!.length);
    const bad = want[j]!.map((w, i) => mismatch(g, i, w)).find((m) => m !== undefined);
    expect(bad, `seed ${seed}, ${JSON.stringify(spec)}`).toBeUndefined();
    expect(g.nanAsNull === true).toBe(spec.downsample?.fill === 'null');
  });
}

const SEED = process.env['TEST_SEED'] === undefined ? undefined : Number(process.env['TEST_SEED']);
const seeds = (n: number, from: number): number[] => (SEED !== undefined ? [SEED] : Array.from({ length: n }, (_, i) => from + i));

describe('runGroup equals the plain reference on random series', () => {
  it('downsample, fill, rate and aggregation', () => {
    for (const seed of seeds(600, 1)) check(seed, false);
  });

  it('integers beyond 2^53: exact int64 arithmetic, wrapping as Java longs', () => {
    for (const seed of seeds(300, 10_001)) check(seed, true);
  });
});
