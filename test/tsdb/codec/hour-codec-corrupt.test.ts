/**
 * Malformed compressed hour cells (tsdb/SCHEMA.md): every truncation, trailing
 * bytes, random byte flips and hand-made bad fields either decode to a valid block or
 * throw HourCodecError; never another error, never a hang, never out-of-hour offsets.
 */
import { describe, expect, it } from 'vitest';
import { fromHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { HourCodecError } from '../../../tsdb/codec/errors.js';
import { decodeHourBlock, encodeHourBlock, inspectHourBlock } from '../../../tsdb/codec/hour-codec.js';
import { appendPoint, newPointBlock } from '../../../tsdb/codec/point-block.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';
import { testSeed } from '../../helpers/model.js';
import { blockOf, devopsOffsets, randomBlock, randomOffsets, walk } from './codec-data.js';

/** One cell per scheme family, so truncations hit every decoder. */
function sampleCells(): Uint8Array[] {
  const rng = new Random(99);
  const o = devopsOffsets(rng, { missing: 0.1 });
  const jit = devopsOffsets(rng, { jitterMs: 30 });
  const irregular = randomOffsets(rng, 50, 20_000);
  const big = newPointBlock(4);
  appendPoint(big, 5, 2n ** 60n);
  appendPoint(big, 6, 1.5);
  appendPoint(big, 9, -3n);
  let v = 1.1;
  return [
    blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length)),
    blockOf(jit, walk(rng, jit.length), new Uint8Array(jit.length)),
    blockOf(irregular, Float64Array.from(irregular, () => (rng.chance(0.3) ? (v = rng.next()) : v))),
    blockOf(irregular, new Float64Array(Uint32Array.from({ length: 2 * irregular.length }, () => rng.nextU32()).buffer)),
    blockOf(irregular, Float64Array.from(irregular, (_, i) => 100 + 3 * i)),
    big,
    blockOf(o, new Float64Array(o.length).fill(100 / 3)),
  ].map(encodeHourBlock);
}

/** Decodes; returns 'ok' (after checking the block's invariants) or 'error'; rethrows anything else. */
function tryDecode(bytes: Uint8Array): 'ok' | 'error' {
  let b: PointBlock;
  try {
    b = decodeHourBlock(bytes);
  } catch (e) {
    if (e instanceof HourCodecError) return 'error';
    throw e;
  }
  for (let i = 0; i < b.count; i++) {
    const t = b.offsetsMs[i]!;
    if (t < 0 || t > 3_599_999 || (i > 0 && t <= b.offsetsMs[i - 1]!)) throw new Error(`decoded offset ${t} at ${i} breaks the invariants`);
  }
  return 'ok';
}

describe('malformed hour cells', () => {
  it('every truncation of every sample cell throws HourCodecError', () => {
    const cells = sampleCells();
    expect(cells.map((c) => inspectHourBlock(c).valueSchemes[0])).toEqual([2, 3, 4, 0, 2, 4, 1]); // decimal, float delta, Gorilla, raw, decimal, Gorilla, constant
    for (const cell of cells) {
      for (let len = 0; len < cell.length; len++) {
        expect(() => decodeHourBlock(cell.subarray(0, len)), `length ${len} of ${cell.length}`).toThrow(HourCodecError);
      }
    }
  });

  it('a trailing byte throws HourCodecError', () => {
    for (const cell of sampleCells()) {
      const longer = new Uint8Array(cell.length + 1);
      longer.set(cell);
      expect(() => decodeHourBlock(longer)).toThrow(/trailing/);
    }
  });

  it('random byte flips decode to a valid block or throw HourCodecError', () => {
    const seed = testSeed(4242);
    const rng = new Random(seed);
    const cells = [...sampleCells(), ...Array.from({ length: 30 }, () => encodeHourBlock(randomBlock(rng))).filter((c) => c.length < 20_000)];
    let errors = 0;
    let oks = 0;
    for (let i = 0; i < 4000; i++) {
      const cell = cells[rng.int(cells.length)]!.slice();
      for (let f = rng.range(1, 3); f > 0; f--) cell[rng.int(cell.length)] = rng.chance(0.5) ? rng.int(256) : cell[rng.int(cell.length)]! ^ (1 << rng.int(8));
      const r = tryDecode(cell);
      if (r === 'error') errors++;
      else oks++;
    }
    // Both outcomes happen: flips inside value bits decode (no checksum here; the SST has one).
    expect(errors, `seed ${seed}`).toBeGreaterThan(100);
    expect(oks, `seed ${seed}`).toBeGreaterThan(100);
  });

  it('bad fields name what is wrong', () => {
    const bad: [string, RegExp][] = [
      ['', /truncated/],
      ['20 00', /format version 2/],
      ['11 00', /flags on an empty cell/], // a summary of no points
      ['11 02 03 00 00 00 00 00 00 00 00 00', /NaN count 3/], // more NaNs than points
      ['11 02 00 40 00 00', /truncated/], // the sum cut short
      ['1c 01 00 00 00 00', /header byte/], // kind mode 3
      ['10 81dddb01', /point count 3600001/],
      ['12 00', /flags on an empty cell/],
      ['10 03 05 00 01', /unknown timestamp scheme 5/],
      ['10 01 00 80dddb01', /first offset 3600000/],
      ['10 02 00 00 00', /timestamp step 0/],
      ['10 03 00 00 c08db701', /run past the hour/], // 0, 3,000,000, 6,000,000
      ['10 02 01 00 0a', /scheme 1 for two points/],
      ['10 01 00 00 07', /unknown value scheme 7/],
      ['10 02 00 00 0a 02 ff', /decimal flags 255/],
      ['10 02 00 00 0a 03 00000000 00000000 40', /Rice parameter 64/],
      ['10 02 00 00 0a 04 00000000 00000000 80', /Gorilla reuses a window before the first/],
      ['16 01 00 00 02 00 00 00', /big integer count/],
      ['12 01 00 00 02 00 00 01 00 10000000 00000000', /big integer for float point 0/],
      ['16 01 00 00 02 00 00 01 00 00000000 00000001', /fits a float64/],
    ];
    for (const [hex, re] of bad) {
      const bytes = fromHex(hex.replaceAll(' ', ''));
      expect(() => decodeHourBlock(bytes), hex).toThrow(HourCodecError);
      expect(() => decodeHourBlock(bytes), hex).toThrow(re);
    }
  });

  it('a short cell claiming 3.6M irregular points fails fast', () => {
    const t0 = performance.now();
    // count 3,600,000; delta-of-delta timestamps with a Rice stream of k = 5 and no bits.
    expect(() => decodeHourBlock(fromHex('1080dddb0101000105'))).toThrow(/truncated bit section/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
