/**
 * The compressed hour codec (tsdb/codec/hour-codec.ts, format tsdb/SCHEMA.md):
 * seeded round trips over many shapes, bit-exact (-0, subnormals, NaN payloads, int64 kinds),
 * the decode-into-`out` contract, the header peeks and the encoder's argument checks.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { decodeHourBlock, encodeHourBlock, hourBlockCount, hourBlockInfo, inspectHourBlock } from '../../../tsdb/codec/hour-codec.js';
import { TS_DOD, TS_GRID, TS_REGULAR, VAL_CONST, VAL_DECIMAL, VAL_FLOAT_DELTA, VAL_GORILLA, VAL_RAW } from '../../../tsdb/codec/hour-format.js';
import { appendPoint, newPointBlock, pointBlocksEqual, pointValue } from '../../../tsdb/codec/point-block.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';
import { testSeed } from '../../helpers/model.js';
import { blockOf, devopsOffsets, randomBlock, randomOffsets, walk } from './codec-data.js';

/** The first index where two arrays differ in [0, n), or -1 (a loop: blocks reach 3.6M points). */
function firstDiff(a: ArrayLike<number | bigint>, b: ArrayLike<number | bigint>, n: number): number {
  for (let i = 0; i < n; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

/** Every field bit for bit: offsets, kinds, value patterns, big ints. */
function expectSame(got: PointBlock, want: PointBlock, what: string): void {
  expect(got.count, what).toBe(want.count);
  const n = want.count;
  const words = (b: PointBlock): Uint32Array => new Uint32Array(b.values.buffer, b.values.byteOffset, 2 * n);
  const at = (b: PointBlock, i: number): string => `@${b.offsetsMs[i]} ${String(pointValue(b, i))} int=${b.isInt[i]}`;
  for (const [name, x, y, len] of [
    ['offset', got.offsetsMs, want.offsetsMs, n],
    ['kind', got.isInt, want.isInt, n],
    ['value bits', words(got), words(want), 2 * n],
  ] as const) {
    const i = firstDiff(x, y, len);
    const p = name === 'value bits' ? i >> 1 : i;
    expect(i, `${what}: ${name} differs at point ${p}: got ${i < 0 ? '' : at(got, p)}, want ${i < 0 ? '' : at(want, p)}`).toBe(-1);
  }
  const values = (b: PointBlock): (number | bigint)[] => Array.from({ length: Math.min(n, 4000) }, (_, i) => pointValue(b, i));
  expect(firstDiff(values(got), values(want), Math.min(n, 4000)), `${what}: exact int64 values`).toBe(-1);
  expect(pointBlocksEqual(got, want), what).toBe(true);
}

function roundTrip(b: PointBlock, what = 'block'): Uint8Array {
  const cell = encodeHourBlock(b);
  expectSame(decodeHourBlock(cell), b, what);
  expect(hourBlockCount(cell)).toBe(b.count);
  return cell;
}

const floats = (xs: number[]): PointBlock => blockOf(Int32Array.from(xs, (_, i) => i * 1000), Float64Array.from(xs), new Uint8Array(xs.length));

describe('hour codec round trips', () => {
  it('seeded random blocks over every shape, bit-exact', () => {
    const seed = testSeed(7001);
    const rng = new Random(seed);
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const b = randomBlock(rng);
      const cell = roundTrip(b, `seed ${seed} block ${i} (replay: TEST_SEED=${seed})`);
      const layout = inspectHourBlock(cell);
      seen.add(`ts${layout.timestampScheme}`);
      for (const v of layout.valueSchemes) seen.add(`v${v}`);
    }
    // The generator reaches every scheme, so each is exercised by the loop above.
    for (const s of [TS_REGULAR, TS_DOD, TS_GRID]) expect(seen).toContain(`ts${s}`);
    for (const s of [VAL_CONST, VAL_DECIMAL, VAL_FLOAT_DELTA, VAL_GORILLA, VAL_RAW]) expect(seen).toContain(`v${s}`);
  });

  it('the empty block and single points of each kind', () => {
    expect(roundTrip(newPointBlock(0))).toEqual(new Uint8Array([0x10, 0x00]));
    for (const v of [0, -0, 1, -1, 0.5, 3.14, 5e-324, NaN, Infinity, -Infinity, 2 ** 53, Number.MAX_VALUE]) {
      for (const isInt of [false, true]) {
        const b = newPointBlock(1);
        appendPoint(b, 3_599_999, v, isInt);
        roundTrip(b, `value ${v} int ${isInt}`);
      }
    }
    const b = newPointBlock(1);
    appendPoint(b, 0, 7n);
    expect(encodeHourBlock(b).length).toBeLessThanOrEqual(7);
  });

  it('-0, subnormals, NaN and infinities inside walks', () => {
    const specials = [-0, 0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.5, NaN, Infinity, -Infinity, -0, 1.5];
    for (let at = 0; at < 20; at++) {
      const v = walk(new Random(at), 40, 2);
      v[at] = specials[at % specials.length]!;
      v[(at * 7) % 40] = -0;
      roundTrip(floats(Array.from(v)), `special at ${at}`);
    }
    roundTrip(floats([-0, -0, -0, -0]));
    roundTrip(floats([5e-324, 1e-323, 1.5e-323, 2e-323, 2.5e-323]));
  });

  it('integers and decimals at the edges of the exact ranges', () => {
    const edge = [2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 52, -(2 ** 52), 2 ** 52 + 1, -(2 ** 52) - 1, 2 ** 53, 0];
    const b = floats(edge);
    b.isInt.fill(1);
    roundTrip(b, 'near 2^53');
    roundTrip(floats([0.1, 0.2, 0.30000000000000004, 1e-15, 123456.789012345, 4503599627370.4966]), 'decimals');
    roundTrip(floats([1e22, 1e21, -1e22, 9007199254740993e-15]), 'large decimals');
  });

  it('decimal residuals of order 2: a steadily accelerating series costs no bits per point', () => {
    const o = devopsOffsets(new Random(8));
    const b = blockOf(o, Float64Array.from(o, (_, i) => (i * i) / 4), new Uint8Array(o.length));
    const cell = roundTrip(b, 'quadratic');
    expect(cell.length).toBeLessThan(20 + 9); // 9: the summary of a cell this long
    expect(inspectHourBlock(cell).summary).toBeDefined();
    expect(inspectHourBlock(cell).valueSchemes).toEqual([VAL_DECIMAL]);
  });

  it('decimal random walks with rare huge jumps: Rice escapes inside the residual stream, orders 1 and 2', () => {
    // Small two-signed steps pick a small Rice k; a jump of millions is an escape (its
    // quotient reaches RICE_ESCAPE), read as a raw 64-bit value in the middle of the run.
    const r = new Random(11);
    const o = devopsOffsets(r);
    for (const order of [1, 2]) {
      for (const scale of [1, 100, 10_000]) {
        let v = 5000;
        let step = 0;
        const values = Float64Array.from(o, (_, i) => {
          const jump = i % 97 === 13 ? (r.chance(0.5) ? 1 : -1) * (1e6 + r.int(1e6)) : r.int(21) - 10;
          if (order === 1) v += jump;
          else v += step += jump;
          return v / scale;
        });
        const cell = roundTrip(blockOf(o, values, new Uint8Array(o.length)), `order ${order}, scale ${scale}`);
        expect(inspectHourBlock(cell).valueSchemes).toEqual([VAL_DECIMAL]);
      }
    }
  });

  it('decimal walks at every Rice parameter, with codes longer than 25 bits between the short ones', () => {
    // The fused decimal loop takes a code of up to 25 bits from 4 bytes in one step and
    // hands longer ones (a quotient of 10+ at a large k), escapes and the last bytes to the
    // reader's window: walks whose steps are mostly ~2^bits, every 7th 40× as large.
    const r = new Random(12);
    const o = devopsOffsets(r);
    for (let bits = 0; bits <= 22; bits++) {
      let v = 0;
      const values = Float64Array.from(o, (_, i) => {
        const size = 2 ** bits * (i % 7 === 3 ? 40 : 1);
        v += Math.round((r.chance(0.5) ? 1 : -1) * size * (0.5 + r.next()));
        return v / 100;
      });
      const cell = roundTrip(blockOf(o, values, new Uint8Array(o.length)), `steps of 2^${bits}`);
      expect(inspectHourBlock(cell).valueSchemes).toEqual([VAL_DECIMAL]);
    }
  });

  it('int64 beyond +-(2^53-1) round-trips exactly through bigInts', () => {
    const b = newPointBlock(8);
    const bigs = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, -(2n ** 53n) - 3n];
    bigs.forEach((v, i) => appendPoint(b, i * 10_000, v));
    appendPoint(b, 50_000, 12n);
    appendPoint(b, 60_000, 1.25);
    const got = decodeHourBlock(roundTrip(b));
    expect(bigs.map((_, i) => pointValue(got, i))).toEqual(bigs);
    expect([pointValue(got, 4), pointValue(got, 5)]).toEqual([12, 1.25]);
    expect(Array.from(got.bigInts!)).toEqual([...bigs, 0n, 0n]);
    expect(inspectHourBlock(encodeHourBlock(b)).bigInts).toBe(true);
  });

  it('mixed integer and float points keep their kinds', () => {
    const o = devopsOffsets(new Random(3));
    const v = walk(new Random(4), o.length, 1);
    const kinds = Uint8Array.from(v, (_, i) => (i % 3 === 0 ? 1 : 0));
    roundTrip(blockOf(o, v, kinds));
    expect(inspectHourBlock(encodeHourBlock(blockOf(o, v, kinds))).kindMode).toBe(2);
  });

  it('mixed kinds at every count modulo 8 (the kind bitmap\'s last byte)', () => {
    const rng = new Random(5);
    for (let n = 2; n <= 41; n++) {
      const o = Int32Array.from({ length: n }, (_, i) => i * 1000 + 7);
      const v = walk(rng, n, 1);
      const kinds = Uint8Array.from(v, () => (rng.chance(0.5) ? 1 : 0));
      kinds[0] = 1;
      kinds[n - 1] = 0;
      roundTrip(blockOf(o, Float64Array.from(v, (x, i) => (kinds[i] === 1 ? Math.round(x) : x)), kinds), `${n} points`);
    }
  });

  it('extreme offsets: the first and last ms of the hour, huge and tiny gaps', () => {
    for (const offsets of [[0, 1, 3_599_999], [0, 3_599_998, 3_599_999], [0, 1_800_000, 3_599_999], [3_599_997, 3_599_998, 3_599_999], [7, 3_599_999]]) {
      roundTrip(blockOf(Int32Array.from(offsets), Float64Array.from(offsets, (t) => t / 1000)), `offsets ${offsets.join(',')}`);
    }
  });

  it('a full hour of one point per ms, and 100k random ms offsets', () => {
    const n = 3_600_000;
    const all = blockOf(Int32Array.from({ length: n }, (_, i) => i), Float64Array.from({ length: n }, (_, i) => i % 1000));
    const cell = roundTrip(all, 'every ms');
    expect(cell.length).toBeLessThan(n / 4);
    const rng = new Random(11);
    const o = randomOffsets(rng, 100_000, 60);
    roundTrip(blockOf(o, walk(rng, o.length, 3), new Uint8Array(o.length)), 'random ms');
  });

  it('decodes into a reused block: grows it, sets count, clears bigInts', () => {
    const out = newPointBlock(4);
    const big = newPointBlock(2);
    appendPoint(big, 0, 2n ** 62n);
    decodeHourBlock(encodeHourBlock(big), out);
    expect(out.bigInts).toBeDefined();
    const rng = new Random(5);
    const large = blockOf(devopsOffsets(rng), walk(rng, 360, 2), new Uint8Array(360));
    expect(decodeHourBlock(encodeHourBlock(large), out)).toBe(out);
    expectSame(out, large, 'grown');
    expect(out.bigInts).toBeUndefined();
    const small = floats([1, 2, 3]);
    decodeHourBlock(encodeHourBlock(small), out);
    expect(out.count).toBe(3);
    expect(out.values.length).toBeGreaterThanOrEqual(360);
    expectSame(out, small, 'reused');
  });

  it('hourBlockCount and hourBlockInfo read the header only', () => {
    const b = blockOf(Int32Array.from([1234, 5678, 9999]), Float64Array.from([1, 2, 3]));
    const cell = encodeHourBlock(b);
    expect(hourBlockCount(cell)).toBe(3);
    expect(hourBlockInfo(cell)).toEqual({ count: 3, firstOffsetMs: 1234 });
    expect(hourBlockInfo(encodeHourBlock(newPointBlock(0)))).toEqual({ count: 0, firstOffsetMs: -1 });
    // Only the header is needed: the rest may be missing.
    expect(hourBlockCount(cell.subarray(0, 2))).toBe(3);
  });

  it('the encoder rejects blocks that break the PointBlock invariants', () => {
    const bad = (offsets: number[], count = offsets.length): PointBlock =>
      ({ count, offsetsMs: Int32Array.from(offsets), values: new Float64Array(offsets.length), isInt: new Uint8Array(offsets.length) });
    expect(() => encodeHourBlock(bad([0, 10, 10]))).toThrow(RangeError);
    expect(() => encodeHourBlock(bad([20, 10]))).toThrow(RangeError);
    expect(() => encodeHourBlock(bad([-1, 10]))).toThrow(RangeError);
    expect(() => encodeHourBlock(bad([0, 3_600_000]))).toThrow(RangeError);
    expect(() => encodeHourBlock(bad([0, 1], 3))).toThrow(RangeError);
    expect(() => encodeHourBlock(bad([0, 1], -1))).toThrow(RangeError);
  });
});
