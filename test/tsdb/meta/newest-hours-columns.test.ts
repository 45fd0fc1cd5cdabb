/**
 * The newest-hour hints in columns (tsdb/meta/newest-hours.ts over catalog/key-table.ts)
 * against a Map model, with many more series than the bound holds: a trusted hint is never
 * wrong (a dropped one may be missing, and its series number handed to another series
 * must not carry its hour or trust), through growth, drops and reuse of freed numbers;
 * bytes (the arrays' length) never pass the bound.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { latin1 } from '../../../core/api/bytes.js';
import { NewestHours } from '../../../tsdb/meta/newest-hours.js';

const tsuid = (n: number): Uint8Array => {
  const t = new Uint8Array(3 + 6 * (1 + (n % 3)));
  t[2] = 1 + (n % 4);
  for (let i = 3; i < t.length; i += 6) new DataView(t.buffer).setUint32(i + 2, n * 13 + i);
  return t;
};
/** A data row key of `t`: 1-byte salt, base time after the metric. */
const rowKey = (t: Uint8Array, base: number): Uint8Array => {
  const k = new Uint8Array(t.length + 5);
  k[0] = t[t.length - 1]! % 20;
  k.set(t.subarray(0, 3), 1);
  new DataView(k.buffer).setUint32(4, base);
  k.set(t.subarray(3), 8);
  return k;
};

describe('newest-hour hints in columns', () => {
  it.each([[1 << 30], [16 * 1024]])('never trust a wrong hour, with a bound of %i bytes', (bound) => {
    const r = new Random(bound);
    const h = new NewestHours(() => false, bound);
    /** Series → its newest row's hour (what a read sees) and whether the hint was established since its last forget. */
    const model = new Map<number, { hour: number; trusted: boolean }>();
    let trustedSeen = 0;
    for (let step = 0; step < 30_000; step++) {
      const n = r.int(3000);
      const t = tsuid(n);
      const hour = (1_000 + r.int(50)) * 3600;
      const m = model.get(n);
      const op = r.int(10);
      if (op < 3) {
        if (r.chance(0.5)) h.written(latin1(t), hour);
        else h.writtenRow(rowKey(t, hour), 1, 3, hour);
        model.set(n, { hour: Math.max(hour, m?.hour ?? 0), trusted: m?.trusted ?? false });
      } else if (op < 5) {
        // A read sees the series' newest row (one written before, when it has none yet).
        const token = h.beginRead();
        const newest = m?.hour ?? hour;
        h.establish(t, newest, token);
        model.set(n, { hour: newest, trusted: token >= 0 || (m?.trusted ?? false) });
      } else if (op < 6) {
        h.forget(t);
        if (m !== undefined) m.trusted = false;
      } else {
        const got = h.trusted(t);
        if (got !== undefined) {
          trustedSeen++;
          expect(m?.trusted, `step ${step}: series ${n} trusted without a read`).toBe(true);
          expect(got, `step ${step}: series ${n}`).toBe(m!.hour);
        } else if (bound > 1e9) expect(m?.trusted ?? false, `step ${step}: series ${n} lost its trust`).toBe(false);
      }
      if (r.chance(0.0005)) {
        h.distrustAll();
        for (const v of model.values()) v.trusted = false;
      }
      expect(h.bytes).toBeLessThanOrEqual(bound);
    }
    expect(trustedSeen).toBeGreaterThan(bound < 1e9 ? 100 : 500);
    if (bound < 1e9) expect(h.size).toBeGreaterThan(100);
    else expect(h.size).toBe(model.size);
  });
});
