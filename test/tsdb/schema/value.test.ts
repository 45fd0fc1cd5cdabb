import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { testSeed } from '../../helpers/model.js';
import { IllegalDataError, InvalidInputError } from '../../../tsdb/schema/errors.js';
import {
  decodeValue, encodeValue, fixQualifierFlags, floatingPointValueToFix, intLength, looksLikeInteger, parseValueString,
  readFloatingPoint, readLong, readNumber, valueLengthOfFlags, writeValue,
} from '../../../tsdb/schema/value.js';

const enc = (v: number, isInt: boolean, big?: bigint): string => {
  const e = encodeValue(v, isInt, big);
  return `${e.flags.toString(16)}:${toHex(e.bytes)}`;
};

describe('integer values', () => {
  it.each([
    [0, '0:00'], [42, '0:2a'], [-2, '0:fe'], [127, '0:7f'], [-128, '0:80'],
    [128, '1:0080'], [-129, '1:ff7f'], [300, '1:012c'], [32767, '1:7fff'], [-32768, '1:8000'],
    [32768, '3:00008000'], [70000, '3:00011170'], [2147483647, '3:7fffffff'], [-2147483648, '3:80000000'],
    [2147483648, '7:0000000080000000'], [-2147483649, '7:ffffffff7fffffff'], [5000000000, '7:000000012a05f200'],
    [Number.MAX_SAFE_INTEGER, '7:001fffffffffffff'], [-Number.MAX_SAFE_INTEGER, '7:ffe0000000000001'],
  ] as const)('%d is stored in the smallest length', (v, want) => {
    expect(enc(v, true)).toBe(want);
    const bytes = encodeValue(v, true).bytes;
    expect(intLength(v)).toBe(bytes.length);
    expect(decodeValue(bytes.length - 1, bytes)).toEqual({ isInt: true, value: v });
  });

  it('stores int64 values beyond 2^53 from a bigint and decodes them back to one', () => {
    const cases: Array<[bigint, string]> = [
      [2n ** 53n + 1n, '0020000000000001'], [2n ** 63n - 1n, '7fffffffffffffff'],
      [-(2n ** 63n), '8000000000000000'], [-(2n ** 53n) - 1n, 'ffdfffffffffffff'],
    ];
    for (const [big, hex] of cases) {
      expect(enc(Number(big), true, big)).toBe(`7:${hex}`);
      expect(decodeValue(7, fromHex(hex))).toEqual({ isInt: true, value: Number(big), big });
      expect(readLong(fromHex(hex), 0, 8)).toBe(big);
    }
    expect(enc(42, true, 42n)).toBe('0:2a'); // small bigints still use the smallest length
    expect(intLength(-(2n ** 63n))).toBe(8);
  });

  it('rejects integers it cannot store exactly', () => {
    expect(() => encodeValue(2 ** 53, true)).toThrow(/not a safe integer/);
    expect(() => encodeValue(1.5, true)).toThrow(RangeError);
    expect(() => encodeValue(0, true, 2n ** 63n)).toThrow(/int64/);
    expect(() => encodeValue(0, true, -(2n ** 63n) - 1n)).toThrow(RangeError);
  });
});

describe('floating-point values', () => {
  it('uses 4 bytes (flags b) when float32 holds the value exactly, else 8 (flags f)', () => {
    expect(enc(42.5, false)).toBe('b:422a0000');
    expect(enc(5.1, false)).toBe('f:4014666666666666');
    expect(enc(1000, false)).toBe('b:447a0000');
    expect(enc(-0, false)).toBe('b:80000000');
    expect(enc(1e300, false)).toBe('f:7e37e43c8800759c');
    expect(decodeValue(0xb, fromHex('422a0000'))).toEqual({ isInt: false, value: 42.5 });
    expect(decodeValue(0xf, fromHex('4014666666666666'))).toEqual({ isInt: false, value: 5.1 });
  });

  it('rejects NaN and infinities', () => {
    for (const v of [Number.NaN, Infinity, -Infinity]) expect(() => encodeValue(v, false)).toThrow(/not finite/);
  });
});

describe('value text (OpenTSDB put path)', () => {
  it('decides the type from the text', () => {
    expect(parseValueString('42')).toEqual({ value: 42, isInt: true });
    expect(parseValueString('-42')).toEqual({ value: -42, isInt: true });
    expect(parseValueString('+42')).toEqual({ value: 42, isInt: true });
    expect(parseValueString('42.5')).toEqual({ value: 42.5, isInt: false });
    expect(parseValueString('5.1')).toEqual({ value: 5.1, isInt: false });
    expect(parseValueString('1e3')).toEqual({ value: 1000, isInt: false });
    expect(parseValueString('1E-2')).toEqual({ value: 0.01, isInt: false });
    expect(parseValueString('.5')).toEqual({ value: 0.5, isInt: false });
    expect(parseValueString('2.')).toEqual({ value: 2, isInt: false });
    expect(parseValueString('1.5f')).toEqual({ value: 1.5, isInt: false });
    expect(parseValueString('9223372036854775807')).toEqual({ value: 9223372036854775807, isInt: true, big: 2n ** 63n - 1n });
    expect(parseValueString('-9223372036854775808')).toEqual({ value: -9223372036854775808, isInt: true, big: -(2n ** 63n) });
    expect(parseValueString('+9007199254740993').big).toBe(9007199254740993n);
    expect(enc(42.5, parseValueString('42.5').isInt)).toBe('b:422a0000');
    expect(enc(5.1, parseValueString('5.1').isInt)).toBe('f:4014666666666666');
  });

  it.each([
    '', '-', 'abc', 'NaN', 'Infinity', '-Infinity', '0x10', '1.2.3', '1e', '1e400', '--1', '1 ',
    '9223372036854775808', '-9223372036854775809', '00000000000000000001',
  ])('rejects %j', (s) => {
    expect(() => parseValueString(s)).toThrow(InvalidInputError);
  });

  it('looksLikeInteger checks only for . e E', () => {
    expect([looksLikeInteger('123'), looksLikeInteger('abc'), looksLikeInteger('1.0'), looksLikeInteger('1e5'), looksLikeInteger('1E5')])
      .toEqual([true, true, false, false, false]);
  });
});

describe('reading values', () => {
  it('takes the length from the flags and rejects lengths the type does not allow', () => {
    for (const flags of [2, 4, 5, 6]) expect(() => decodeValue(flags, new Uint8Array(8))).toThrow(IllegalDataError);
    for (const flags of [0x8, 0x9, 0xa, 0xc, 0xd, 0xe]) expect(() => decodeValue(flags, new Uint8Array(8))).toThrow(IllegalDataError);
    expect(() => readLong(new Uint8Array(3), 0, 3)).toThrow(/not 1, 2, 4 or 8/);
    expect(() => readFloatingPoint(new Uint8Array(2), 0, 2)).toThrow(/not 4 or 8/);
    expect(() => decodeValue(7, new Uint8Array(4))).toThrow(/needs 8 bytes/);
    expect(() => readNumber(3, new Uint8Array(5), 2)).toThrow(IllegalDataError);
    expect(valueLengthOfFlags(0xb)).toBe(4);
  });

  it('applies the legacy repair rules', () => {
    expect(fixQualifierFlags(0x3, 8)).toBe(0x7);
    expect(fixQualifierFlags(0xf, 4)).toBe(0xb);
    expect(fixQualifierFlags(0x1b, 4)).toBe(0x1b); // offset bits kept
    expect(fixQualifierFlags(0x17, 1)).toBe(0x10);
    expect(floatingPointValueToFix(0xb, 8)).toBe(true);
    expect(floatingPointValueToFix(0xb, 4)).toBe(false);
    expect(floatingPointValueToFix(0x3, 8)).toBe(false);
    expect(floatingPointValueToFix(0xf, 8)).toBe(false);
  });

  it('round-trips random values at random offsets (seeded)', () => {
    const rnd = new Random(testSeed(0x7a1e));
    const buf = new Uint8Array(24);
    for (let i = 0; i < 3000; i++) {
      const kind = rnd.int(4);
      const off = rnd.int(16);
      let value: number;
      let big: bigint | undefined;
      if (kind === 0) value = rnd.range(-1000000, 1000000) * (rnd.chance(0.3) ? 2 ** rnd.int(30) : 1);
      else if (kind === 1) {
        big = BigInt.asIntN(64, (BigInt(rnd.nextU32()) << 32n) | BigInt(rnd.nextU32()));
        value = Number(big);
        if (Number.isSafeInteger(value)) big = undefined;
      } else if (kind === 2) value = Math.fround((rnd.next() - 0.5) * 2 ** rnd.int(60));
      else value = (rnd.next() - 0.5) * 10 ** rnd.range(-20, 20);
      const isInt = kind < 2;
      const flags = writeValue(buf, off, value, isInt, big);
      const msg = `seed ${rnd.seed} iter ${i} value ${String(big ?? value)}`;
      const got = decodeValue(flags, buf, off);
      expect(got.isInt, msg).toBe(isInt);
      expect(got.value, msg).toBe(value);
      expect(got.big, msg).toBe(big);
      expect(readNumber(flags, buf, off), msg).toBe(value);
      if (!isInt) expect(valueLengthOfFlags(flags), msg).toBe(Math.fround(value) === value ? 4 : 8);
    }
  });
});
