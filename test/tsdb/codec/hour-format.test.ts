/**
 * Pins the compressed hour cell format: each annotated example in tsdb/SCHEMA.md
 * decodes to the points its section describes (bit for bit), those points encode to exactly
 * the documented bytes, and the cell uses the scheme the section is about.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { decodeHourBlock, encodeHourBlock, hourBlockSummary, inspectHourBlock } from '../../../tsdb/codec/hour-codec.js';
import {
  KIND_MIXED, TS_DOD, TS_GRID, TS_REGULAR, VAL_CONST, VAL_DECIMAL, VAL_FLOAT_DELTA, VAL_GORILLA, VAL_RAW,
} from '../../../tsdb/codec/hour-format.js';
import { appendPoint, newPointBlock, pointValue } from '../../../tsdb/codec/point-block.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';
import { hexExample, readFormatDoc } from '../../helpers/format-doc.js';

const DOC = 'tsdb/SCHEMA.md';
const doc = readFormatDoc(DOC);

/** [offset ms, value, isInt] points; a bigint is an integer point. */
type Pt = readonly [number, number | bigint, boolean?];

function block(points: readonly Pt[]): PointBlock {
  const b = newPointBlock(points.length);
  for (const [t, v, isInt] of points) appendPoint(b, t, v, isInt ?? typeof v === 'bigint');
  return b;
}

/** A block of float points given as [hi, lo] bit patterns (signalling NaNs stay intact). */
function patterns(offsets: number[], words: [number, number][]): PointBlock {
  const values = new Float64Array(words.length);
  const w = new Uint32Array(values.buffer);
  const le = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  words.forEach(([hi, lo], i) => {
    w[2 * i + (le ? 1 : 0)] = hi;
    w[2 * i + (le ? 0 : 1)] = lo;
  });
  return { count: words.length, offsetsMs: Int32Array.from(offsets), values, isInt: new Uint8Array(words.length) };
}

/** Offsets, kinds, value bit patterns and exact integers as comparable text. */
function dump(b: PointBlock): string[] {
  const w = new Uint32Array(b.values.buffer, b.values.byteOffset, 2 * b.count);
  return Array.from({ length: b.count }, (_, i) =>
    `${b.offsetsMs[i]} ${b.isInt[i] ? 'int' : 'float'} ${w[2 * i]!.toString(16)}:${w[2 * i + 1]!.toString(16)} ${String(pointValue(b, i))}`);
}

const tenSeconds = (n: number): number[] => Array.from({ length: n }, (_, i) => i * 10_000);

interface Example {
  readonly section: string;
  readonly points: PointBlock;
  readonly timestamps: number;
  readonly values: number;
  readonly check?: (decoded: PointBlock) => void;
}

const EXAMPLES: readonly Example[] = [
  { section: 'Compressed hour cell', points: block([[0, 12.5], [10_000, 12.75], [20_000, 12.25], [30_000, 13]]), timestamps: TS_REGULAR, values: VAL_DECIMAL },
  {
    section: 'Hour summary',
    points: block(tenSeconds(128).map((t) => [t, 0.25])),
    timestamps: TS_REGULAR,
    values: VAL_DECIMAL,
    check: (d) => expect(hourBlockSummary(encodeHourBlock(d))).toEqual({ count: 128, nonNaN: 128, sum: 32 }),
  },
  {
    section: 'Timestamps: delta-of-delta',
    points: block([0, 1000, 2010, 3000, 4000].map((t) => [t, 1, true])),
    timestamps: TS_DOD,
    values: VAL_DECIMAL,
  },
  {
    section: 'Timestamps: grid',
    points: block([5002, 14_999, 35_001, 44_998, 55_000, 65_003].map((t) => [t, 7, true])),
    timestamps: TS_GRID,
    values: VAL_DECIMAL,
  },
  {
    section: 'Kind bitmap',
    points: block([[0, 1.5], [10_000, 2], [20_000, 3, true], [30_000, 4, true]]),
    timestamps: TS_REGULAR,
    values: VAL_DECIMAL,
    check: (d) => expect(inspectHourBlock(encodeHourBlock(d)).kindMode).toBe(KIND_MIXED),
  },
  {
    section: 'Values: decimal',
    points: block([5000, 5250, 5500, 5750, 6001, 6250].map((v, i) => [i * 60_000, v, true])),
    timestamps: TS_REGULAR,
    values: VAL_DECIMAL,
  },
  {
    section: 'Values: float delta',
    points: block([20 + Math.SQRT2, 20 + Math.SQRT1_2, 20 + Math.LN2, 20 + Math.LOG10E].map((v, i) => [i * 10_000, v])),
    timestamps: TS_REGULAR,
    values: VAL_FLOAT_DELTA,
  },
  {
    section: 'Values: Gorilla XOR',
    points: block([100 / 3, 100 / 3, 200 / 7, 200 / 7, 100 / 3].map((v, i) => [tenSeconds(5)[i]!, v])),
    timestamps: TS_REGULAR,
    values: VAL_GORILLA,
  },
  { section: 'Values: constant', points: block([[0, 100 / 3], [60_000, 100 / 3], [120_000, 100 / 3]]), timestamps: TS_REGULAR, values: VAL_CONST },
  {
    section: 'Values: raw',
    points: patterns([0, 1, 2], [[0x3ff00000, 1], [0x80100000, 0], [0x7ff00000, 1]]),
    timestamps: TS_REGULAR,
    values: VAL_RAW,
  },
  {
    section: 'Big-integer list',
    points: block([[1_800_000, 2n ** 63n - 1n]]),
    timestamps: TS_REGULAR,
    values: VAL_CONST,
    check: (d) => {
      expect(d.bigInts?.[0]).toBe(2n ** 63n - 1n);
      expect(d.values[0]).toBe(2 ** 63);
    },
  },
];

describe('compressed hour cell format (tsdb/SCHEMA.md)', () => {
  for (const ex of EXAMPLES) {
    describe(ex.section, () => {
      const bytes = hexExample(doc, ex.section, DOC);

      it('the documented bytes decode to the described points', () => {
        const decoded = decodeHourBlock(bytes);
        expect(dump(decoded)).toEqual(dump(ex.points));
        ex.check?.(decoded);
      });

      it('the points encode to exactly the documented bytes', () => {
        expect(toHex(encodeHourBlock(ex.points))).toBe(toHex(bytes));
      });

      it('uses the scheme the section describes', () => {
        const layout = inspectHourBlock(bytes);
        expect([layout.timestampScheme, ...layout.valueSchemes]).toEqual([ex.timestamps, ex.values]);
      });
    });
  }

  it('the empty cell is two bytes', () => {
    expect(toHex(encodeHourBlock(newPointBlock(0)))).toBe('1000');
  });
});
