/**
 * Size budgets of the compressed hour cell (everything included: header, timestamps,
 * values) on TSBS "devops cpu"-like data from fixed seeds (test/tsdb/codec/codec-data.ts).
 * The targets beat VictoriaMetrics on the same shapes: <= 1.2 bytes/point for values
 * rounded to 2 decimals, <= 6.5 for full-precision float64 random walks. A cell of 128
 * points or more carries a 9-byte summary (SUMMARY_MIN_POINTS): 0.025 bytes a point of
 * these 360-point hours, inside every budget but the late points' (1.2 before it).
 * bench/codec-bench.ts prints the same figures with speeds.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { encodeHourBlock } from '../../../tsdb/codec/hour-codec.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';
import { blockOf, devopsOffsets, shapeBlocks, walk } from './codec-data.js';
import type { ShapeName } from './codec-data.js';

const SERIES = 400;
const SEED = 20261121;

function bytesPerPoint(blocks: readonly PointBlock[]): number {
  let bytes = 0;
  let points = 0;
  for (const b of blocks) {
    bytes += encodeHourBlock(b).length;
    points += b.count;
  }
  return bytes / points;
}

const shape = (name: ShapeName): number => bytesPerPoint(shapeBlocks(name, SERIES, SEED));

function devops(make: (rng: Random) => PointBlock): number {
  const rng = new Random(SEED);
  return bytesPerPoint(Array.from({ length: SERIES }, () => make(rng)));
}

describe('hour cell size on devops-like data (bytes/point, everything included)', () => {
  it('2-decimal random walk, 10 s interval: < 1.2', () => {
    const bpp = shape('devops 2-decimal walk');
    expect(bpp).toBeLessThan(1.2);
    expect(bpp).toBeGreaterThan(1.0); // ~1.09 is the entropy of the walk's steps alone: a lower figure means a broken generator
  });

  it('full-precision float64 random walk: < 6.5', () => {
    expect(shape('full-precision walk')).toBeLessThan(6.5);
  });

  it('integer counter (+0..1000 per point): < 1.4; constant integer: < 0.06', () => {
    expect(shape('integer counter')).toBeLessThan(1.4);
    expect(shape('constant integer')).toBeLessThan(0.06);
  });

  it('a counter with a steady rate and a rarely-changing gauge: < 0.1', () => {
    const o = devopsOffsets(new Random(1));
    expect(bytesPerPoint([blockOf(o, Float64Array.from(o, (_, i) => 5_000_000 + 250 * i))])).toBeLessThan(0.1);
    const rng = new Random(2);
    let v = 512;
    expect(bytesPerPoint([blockOf(o, Float64Array.from(o, () => (rng.chance(0.02) ? (v += 64) : v)))])).toBeLessThan(0.1);
  });

  it('missing points cost bits, not bytes: 5% missing < 1.25', () => {
    expect(devops((rng) => {
      const o = devopsOffsets(rng, { missing: 0.05 });
      return blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length));
    })).toBeLessThan(1.25);
  });

  it('+-5 ms jitter on every point costs ~4 bits per point, not a delta-of-delta: < 1.7', () => {
    expect(devops((rng) => {
      const o = devopsOffsets(rng, { jitterMs: 5 });
      return blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length));
    })).toBeLessThan(1.7);
  });

  it('a few late points are cheap (sparse delta-of-deltas): < 1.25', () => {
    expect(devops((rng) => {
      const o = devopsOffsets(rng, { jitterMs: 50, jitterShare: 0.02 });
      return blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length));
    })).toBeLessThan(1.25);
  });

  it('repeated full-precision values use XOR coding: < 1.5', () => {
    const rng = new Random(SEED);
    const o = devopsOffsets(rng);
    let v = Math.PI;
    expect(bytesPerPoint([blockOf(o, Float64Array.from(o, () => (rng.chance(0.1) ? (v = rng.next() * 100) : v)), new Uint8Array(o.length))]))
      .toBeLessThan(1.5);
  });
});
