import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { testSeed } from '../../helpers/model.js';
import { IllegalDataError } from '../../../tsdb/schema/errors.js';
import {
  buildCompactedColumn, countDataPoints, parseDataCell, readDataCell, splitDataCell,
} from '../../../tsdb/schema/compacted.js';
import type { DataCell, PointSink } from '../../../tsdb/schema/compacted.js';
import { writeMsQualifier, writeSecondQualifier } from '../../../tsdb/schema/qualifier.js';
import { decodeValue, encodeValue } from '../../../tsdb/schema/value.js';

const cell = (q: string, v: string): DataCell => ({ qualifier: fromHex(q), value: fromHex(v) });
const long8 = (n: number): string => n.toString(16).padStart(16, '0');

/** Collects what a sink sees, as text, to compare whole cells at once. */
class Recorder implements PointSink {
  readonly seen: string[] = [];
  point(offsetMs: number, flags: number, value: Uint8Array, start: number, len: number, ms: boolean): void {
    this.seen.push(`${offsetMs}/${flags.toString(16)}/${toHex(value.subarray(start, start + len))}${ms ? '/ms' : ''}`);
  }
}

function parse(q: string, v: string): string[] {
  const r = new Recorder();
  const n = parseDataCell(fromHex(q), fromHex(v), r);
  expect(n).toBe(r.seen.length);
  return r.seen;
}

describe('building compacted columns (OpenTSDB TestCompactionQueue)', () => {
  it('sortMsAndS: sorts by ms offset and marks mixed resolutions', () => {
    const out = buildCompactedColumn([cell('0007', long8(4)), cell('f0000207', long8(5)), cell('f0000107', long8(5))]);
    expect(toHex(out.qualifier)).toBe('0007f0000107f0000207');
    expect(toHex(out.value)).toBe(long8(4) + long8(5) + long8(5) + '01');
  });

  it('secondsOutOfOrder: meta byte 00 for seconds only', () => {
    const out = buildCompactedColumn([cell('0207', long8(2)), cell('0007', long8(0)), cell('0107', long8(1))]);
    expect(toHex(out.qualifier)).toBe('000701070207');
    expect(toHex(out.value)).toBe(long8(0) + long8(1) + long8(2) + '00');
  });

  it('secondAndMs: meta byte 01', () => {
    const out = buildCompactedColumn([cell('0007', long8(4)), cell('f0000107', long8(5))]);
    expect(toHex(out.value).slice(-2)).toBe('01');
    expect(toHex(buildCompactedColumn([cell('f0000107', '05'.padStart(16, '0')), cell('f0000207', long8(6))]).value).slice(-2)).toBe('00');
  });

  it('msSameAsSecond: equal offsets with different values are illegal data', () => {
    expect(() => buildCompactedColumn([cell('0007', long8(4)), cell('f0000007', long8(5))])).toThrow(IllegalDataError);
    expect(() => buildCompactedColumn([cell('0007', long8(4)), cell('f0000007', long8(5))])).toThrow(/Duplicate timestamp at offset 0 ms/);
    // an 8-byte 4 and a 1-byte 4 are different too
    expect(() => buildCompactedColumn([cell('0007', long8(4)), cell('0000', '04')])).toThrow(IllegalDataError);
  });

  it('keeps identical duplicates once; one point left means no meta byte', () => {
    const out = buildCompactedColumn([cell('0007', long8(4)), cell('f0000007', long8(4))]);
    expect(toHex(out.qualifier)).toBe('0007');
    expect(toHex(out.value)).toBe(long8(4));
    const single = buildCompactedColumn([cell('f0000107', long8(5))]);
    expect([toHex(single.qualifier), toHex(single.value)]).toEqual(['f0000107', long8(5)]);
  });

  it('rejects inputs that are not single points', () => {
    expect(() => buildCompactedColumn([])).toThrow(RangeError);
    expect(() => buildCompactedColumn([cell('00070017', long8(1) + long8(2))])).toThrow(/not a single-point qualifier/);
    expect(() => buildCompactedColumn([cell('f000', '01')])).toThrow(RangeError);
    expect(() => buildCompactedColumn([cell('0007', '01')])).toThrow(/flags a 8-byte value, got 1/);
  });
});

describe('parsing data cells (Internal#extractDataPoints)', () => {
  it('splits a compacted column', () => {
    expect(parse('0007f0000107f0000207', long8(4) + long8(5) + long8(5) + '01'))
      .toEqual([`0/7/${long8(4)}`, `4/7/${long8(5)}/ms`, `8/7/${long8(5)}/ms`]);
    expect(parse('0010002b', '01' + '422a0000' + '00')).toEqual(['1000/0/01', '2000/b/422a0000']);
  });

  it('reads single points, seconds and ms, without a meta byte', () => {
    expect(parse('0037', long8(7))).toEqual([`3000/7/${long8(7)}`]);
    expect(parse('f0000047', long8(7))).toEqual([`1/7/${long8(7)}/ms`]);
  });

  it('fixQualifierFlags: a 2-byte cell whose flags disagree with the value length', () => {
    expect(parse('0003', long8(7))).toEqual([`0/7/${long8(7)}`]);
    expect(parse('0017', '2a')).toEqual(['1000/0/2a']);
    const [c] = splitDataCell(fromHex('0003'), fromHex(long8(7)));
    expect(toHex(c!.qualifier)).toBe('0007');
  });

  it('fixFloatingPoint: a 4-byte float stored in 8 zero-padded bytes', () => {
    expect(parse('001b', '00000000422a0000')).toEqual(['1000/b/422a0000']);
    const [c] = splitDataCell(fromHex('001b'), fromHex('00000000422a0000'));
    expect([toHex(c!.qualifier), toHex(c!.value)]).toEqual(['001b', '422a0000']);
    expect(() => parse('001b', '00000001422a0000')).toThrow(/first 4 are not zero/);
  });

  it('skips qualifiers that are not data points', () => {
    for (const q of ['0c', '010000', '0100000001', '0600000000', '050000', '']) {
      expect(parseDataCell(fromHex(q), fromHex('7b7d'), new Recorder()), q).toBe(0);
    }
    expect(countDataPoints(fromHex('0c'))).toBe(0);
    expect(countDataPoints(fromHex('0007f0000107f0000207'))).toBe(3);
  });

  it('rejects cells that do not decode, before calling the sink', () => {
    const bad: Array<[string, string, RegExp]> = [
      ['00070017', long8(1) + long8(2), /consumed 16 bytes, but was expecting to consume 15/], // no meta byte
      ['00070017', long8(1) + long8(2) + '0000', /consumed 16 bytes, but was expecting to consume 17/],
      ['0007f000', long8(1) + '00', /ends inside a ms qualifier/],
      ['f0000107', '0102', /ms point flagged 8 value bytes has 2/],
      ['f000', '01', /ms marker/],
      ['0007', '', /value of 0 bytes/],
      ['0007', '00'.repeat(9), /value of 9 bytes/],
    ];
    for (const [q, v, message] of bad) {
      const r = new Recorder();
      expect(() => parseDataCell(fromHex(q), fromHex(v), r), q).toThrow(IllegalDataError);
      expect(() => parseDataCell(fromHex(q), fromHex(v), r), q).toThrow(message);
      expect(r.seen, q).toEqual([]);
    }
  });

  it('reads points into columns', () => {
    const q = fromHex('0010002bf000020f');
    const v = fromHex('01' + '422a0000' + '4014666666666666' + '01');
    const n = countDataPoints(q);
    const out = { offsetsMs: new Float64Array(n + 1), flags: new Uint8Array(n + 1), values: new Float64Array(n + 1) };
    expect(readDataCell(q, v, out, 1)).toBe(4);
    expect([...out.offsetsMs]).toEqual([0, 1000, 2000, 8]);
    expect([...out.flags]).toEqual([0, 0, 0xb, 0xf]);
    expect([...out.values]).toEqual([0, 1, 42.5, 5.1]);
    const arrays = { offsetsMs: [] as number[], flags: [] as number[], values: [] as number[] };
    expect(readDataCell(fromHex('0003'), fromHex(long8(7)), arrays, 0)).toBe(1);
    expect(arrays).toEqual({ offsetsMs: [0], flags: [7], values: [7] });
    expect(() => readDataCell(fromHex('0002'), fromHex('000000'), arrays, 0)).toThrow(/not 1, 2, 4 or 8/);
  });
});

describe('compacted column properties (seeded)', () => {
  it('build then parse returns the points in offset order', () => {
    const rnd = new Random(testSeed(0xc0c0));
    for (let iter = 0; iter < 300; iter++) {
      const offsets = new Set<number>();
      const n = rnd.range(1, 40);
      while (offsets.size < n) offsets.add(rnd.chance(0.5) ? rnd.int(3600) * 1000 : rnd.int(3600000));
      const cells: DataCell[] = [];
      const want: string[] = [];
      for (const off of offsets) {
        const ms = off % 1000 !== 0 || rnd.chance(0.3);
        const isInt = rnd.chance(0.5);
        const value = isInt ? rnd.range(-70000, 70000) : rnd.next() * 100;
        const e = encodeValue(value, isInt);
        const q = new Uint8Array(ms ? 4 : 2);
        if (ms) writeMsQualifier(q, 0, off, e.flags);
        else writeSecondQualifier(q, 0, off / 1000, e.flags);
        cells.push({ qualifier: q, value: e.bytes });
        want.push(`${off}/${e.flags.toString(16)}/${toHex(e.bytes)}${ms ? '/ms' : ''}`);
      }
      const built = buildCompactedColumn(rnd.shuffle(cells.slice()));
      const sortedWant = want.slice().sort((a, b) => Number(a.split('/')[0]) - Number(b.split('/')[0]));
      const msg = `seed ${rnd.seed} iter ${iter}`;
      expect(parse(toHex(built.qualifier), toHex(built.value)), msg).toEqual(sortedWant);
      const anyMs = cells.some((c) => c.qualifier.length === 4);
      const anyS = cells.some((c) => c.qualifier.length === 2);
      if (n > 1) expect(built.value[built.value.length - 1], msg).toBe(anyMs && anyS ? 1 : 0);
      else expect(built.value.length, msg).toBe(cells[0]!.value.length);
      const split = splitDataCell(built.qualifier, built.value);
      expect(split.map((c) => toHex(c.qualifier) + ':' + toHex(c.value)), msg)
        .toEqual(cells.slice().sort((a, b) => sortKey(a) - sortKey(b)).map((c) => toHex(c.qualifier) + ':' + toHex(c.value)));
      for (const c of split) expect(decodeValue(c.qualifier[c.qualifier.length - 1]! & 0xf, c.value).value, msg).toBeTypeOf('number');
    }
  });
});

function sortKey(c: DataCell): number {
  const r = new Recorder();
  parseDataCell(c.qualifier, c.value, r);
  return Number(r.seen[0]!.split('/')[0]);
}
