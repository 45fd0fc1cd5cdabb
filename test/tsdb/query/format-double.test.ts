/**
 * writePlainDouble (the bytes /api/query prints for a double) against the rule it
 * implements, javaDoubleGeneral (String(v): the shortest form that reads back, the closest
 * such, in Java's plain form), over seeded values of the shapes that reach its branches:
 * short decimals (15 digits or fewer), averages of two-decimal values and arbitrary doubles
 * (16 and 17 digits), doubles one to three ulps from 16- and 17-digit decimals (where a
 * shorter form just reads back, or just does not), powers of two (whose rounding interval
 * is narrower below), powers of ten with their neighbours, short binary fractions (whose
 * exact decimals tie between two 17-digit ones), and the range's bounds.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../helpers/model.js';
import { javaDoubleGeneral as reference } from '../../../tsdb/query/format-json.js';
import { PLAIN_MAX, PLAIN_MIN, writePlainDouble, writeSafeInteger } from '../../../tsdb/query/format-double.js';

const buf = new Uint8Array(64);

function printed(v: number): string | undefined {
  buf.fill(0x7e);
  const o = writePlainDouble(buf, 3, v);
  if (o < 0) {
    expect(buf.every((b) => b === 0x7e), `${v}: nothing written when declined`).toBe(true);
    return undefined;
  }
  expect(buf[2], 'nothing written before the offset').toBe(0x7e);
  expect(buf[o], 'nothing written past the returned offset').toBe(0x7e);
  return Buffer.from(buf.subarray(3, o)).toString('latin1');
}

/** v moved k ulps (k may be negative), for finite v > 0. */
function ulps(v: number, k: number): number {
  const f = new Float64Array([v]);
  const i = new BigInt64Array(f.buffer);
  i[0] = i[0]! + BigInt(k);
  return f[0]!;
}

function expectSame(values: readonly number[]): number {
  let digits16 = 0;
  for (const v of values) {
    const o = writePlainDouble(buf, 0, v);
    if (o < 0) continue;
    const got = Buffer.from(buf.subarray(0, o)).toString('latin1');
    const want = reference(v);
    if (got !== want) expect(got, `${v}`).toBe(want);
    if (want.replace(/[-.]/g, '').replace(/^0+/, '').length === 16) digits16++;
  }
  return digits16;
}

describe('writePlainDouble', () => {
  it('prints what String(v) prints (Java plain form) for seeded values of every branch', () => {
    const r = seededRandom(20261127);
    const values: number[] = [];
    for (let k = 0; k < 25_000; k++) {
      // Log-uniform over the range, both signs.
      const v = Math.exp(Math.log(PLAIN_MIN) + r() * Math.log(PLAIN_MAX / PLAIN_MIN));
      values.push(v, -v);
      // Short decimals, and averages of two-decimal values (what downsampling prints).
      values.push(Math.floor(r() * 1e9) / 10 ** Math.floor(r() * 10));
      let sum = 0;
      const n = 1 + Math.floor(r() * 60);
      for (let j = 0; j < n; j++) sum += Math.round(r() * 1e6) / 100;
      values.push(sum / n);
      // Near 16- and 17-digit decimals.
      const e = Math.floor(r() * 10) - 3;
      let digits = String(1 + Math.floor(r() * 9));
      const len = 15 + Math.floor(r() * 3);
      for (let j = 1; j < len; j++) digits += String(Math.floor(r() * 10));
      const d = Number(`${digits[0]}.${digits.slice(1)}e${e}`);
      for (let j = -3; j <= 3; j++) values.push(ulps(d, j));
    }
    for (let b = -10; b <= 23; b++) for (let j = -8; j <= 8; j++) values.push(ulps(2 ** b, j));
    for (let e = -3; e <= 7; e++) {
      for (let m = 1; m <= 9; m++) for (let j = -8; j <= 8; j++) values.push(ulps(Number(`${m}e${e}`), j));
    }
    // Short binary fractions: their exact decimals end in 5, so many lie halfway between
    // two 17-digit decimals (the even one is printed).
    for (let t = 10; t <= 45; t++) for (let j = 1; j < 4000; j += 2) values.push(j / 2 ** t);
    // Exactly 17 digits ending in 5 with a wide interval (64.000030517578125): halfway
    // between two 16-digit decimals that both read back (the even one is printed).
    for (let j = 64 * 2 ** 16 + 1; j < 64 * 2 ** 16 + 4000; j += 2) values.push(j / 2 ** 16);
    const digits16 = expectSame(values);
    // The 16-digit branch ran (it is the rarest of the three).
    expect(digits16).toBeGreaterThan(1000);
  });

  it('writes Java forms: a whole value gets .0, small values a leading 0., the sign first', () => {
    expect(printed(42)).toBe('42.0');
    expect(printed(-0.5)).toBe('-0.5');
    expect(printed(1e6)).toBe('1000000.0');
    expect(printed(0.001)).toBe('0.001');
    expect(printed(-0.00123)).toBe('-0.00123');
    expect(printed(9999999.999999998)).toBe('9999999.999999998');
    expect(printed(50.280666666666676)).toBe('50.280666666666676'); // 17 digits
    expect(printed(50.69799999999999)).toBe('50.69799999999999'); // 16 digits
    expect(printed(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(printed(1 / 3)).toBe('0.3333333333333333');
    expect(printed(1049 / 2 ** 20)).toBe('0.0010004043579101562'); // exactly …562.5: the even one
    expect(printed(1051 / 2 ** 20)).toBe('0.0010023117065429688'); // exactly …687.5
    expect(printed(64.000030517578125)).toBe('64.00003051757812'); // …812|5: the even 16 digits
    expect(printed(64.000091552734375)).toBe('64.00009155273438');
  });

  it('declines (writes nothing, returns -1) outside [1e-3, 1e7) in magnitude, and for 0, NaN and infinities', () => {
    for (const v of [0, -0, NaN, Infinity, -Infinity, 1e7, -1e7, ulps(1e-3, -1), 1e-4, 5e-324, 1e300]) {
      expect(printed(v), String(v)).toBeUndefined();
    }
    expect(printed(ulps(1e7, -1))).toBe(reference(ulps(1e7, -1)));
  });
  it('writeFixed\' quotient by 100 as a multiplication by the double 0.01 is exact below 2^31', () => {
    // (y * 0.01) | 0 === floor(y / 100): the double 0.01 exceeds 1/100 by 2.1e-19, so the
    // product never drops below the quotient's integer part, nor reaches the next one.
    let checked = 0;
    for (let k = 0; k <= 21_474_836; k += k < 1_000_000 ? 1 : 97) {
      for (const y of [100 * k - 1, 100 * k, 100 * k + 1, 100 * k + 99]) {
        if (y < 0 || y >= 2 ** 31) continue;
        if (((y * 0.01) | 0) !== Math.floor(y / 100)) expect.fail(`y = ${y}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(4_000_000);
  });

  it('prints two-decimal values (its first branch) as String(v), at every digit count of the whole part', () => {
    const r = seededRandom(7);
    const values: number[] = [0.01, 0.1, 0.05, 0.5, 1, 9.99, 10.1, 99.99, 100, 9999999.99, 1234567.8, 1000000.05];
    for (let k = 0; k < 50_000; k++) {
      const cents = Math.floor(r() * 10 ** (1 + Math.floor(r() * 9)));
      if (cents > 0 && cents < 1e9) values.push(cents / 100, -cents / 100);
    }
    for (const v of values) {
      if (printed(v) !== reference(v)) expect(printed(v), String(v)).toBe(reference(v));
    }
  });
});

describe('writeSafeInteger', () => {
  it('prints String(x) for safe integers of every length and sign, and returns the end', () => {
    const r = seededRandom(11);
    const xs = [0, -0, 1, -1, 9, 10, 99, 100, 99_999_999, 100_000_000, 100_000_001, 1_700_000_000, 1_700_000_000_000, 2 ** 31, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    for (let k = 0; k < 20_000; k++) {
      const x = Math.floor(r() * 10 ** Math.floor(r() * 16));
      xs.push(x, -x);
    }
    const out = new Uint8Array(32);
    for (const x of xs) {
      out.fill(0x7e);
      const end = writeSafeInteger(out, 2, x);
      const got = Buffer.from(out.subarray(2, end)).toString('latin1');
      if (got !== String(x) || out[end] !== 0x7e || out[1] !== 0x7e) expect({ x, got, after: out[end] }).toEqual({ x, got: String(x), after: 0x7e });
    }
  });
});
