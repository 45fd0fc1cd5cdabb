/**
 * javaDouble's fast path for values of at most two decimals against the general rule it
 * shortcuts (javaDoubleGeneral: String(v), ".0" added, Java's E form outside [1e-3, 1e7)), over
 * seeded values of every magnitude: two-decimal values, their neighbours one ulp away,
 * values near the bounds of the fast path, and arbitrary doubles.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../helpers/model.js';
import { javaDouble, javaDoubleGeneral as reference } from '../../../tsdb/query/format-json.js';

function nextUp(v: number, dir: 1 | -1): number {
  const f = new Float64Array([v]);
  const i = new BigInt64Array(f.buffer);
  i[0] = i[0]! + BigInt(v >= 0 ? dir : -dir);
  return f[0]!;
}

describe('javaDouble', () => {
  it('prints what the general rule prints, for two-decimal values and their neighbours', () => {
    const r = seededRandom(7);
    const values: number[] = [0, -0, 0.01, -0.01, 0.1, 0.07, 0.29, 1, 10, 99.99, 100, 1e7 - 0.01, 1e7, -(1e7 - 0.01), 9999999.99, 0.001, 0.005, 123456.78];
    for (let k = 0; k < 20_000; k++) {
      const scale = 10 ** Math.floor(r() * 9);
      const m = Math.round((r() - 0.3) * scale * 100);
      const v = m / 100;
      values.push(v, nextUp(v, 1), nextUp(v, -1), v * 3, v / 3, (m + 0.5) / 100);
    }
    for (let k = 0; k < 20_000; k++) values.push((r() - 0.5) * 10 ** (r() * 20 - 6));
    for (const v of values) expect(javaDouble(v), String(v)).toBe(reference(v));
  });

  it('keeps Java forms: a whole value gets .0, sign and E notation as before', () => {
    expect(javaDouble(42)).toBe('42.0');
    expect(javaDouble(-0.5)).toBe('-0.5');
    expect(javaDouble(0.07)).toBe('0.07');
    expect(javaDouble(12.3)).toBe('12.3');
    expect(javaDouble(1e7)).toBe('1.0E7');
    expect(javaDouble(0.0001)).toBe('1.0E-4');
    expect(javaDouble(NaN)).toBe('NaN');
  });
});
