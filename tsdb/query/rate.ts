/**
 * Per-series rate of change (src/core/RateSpan.java, RateOptions.java), applied after
 * downsampling and before cross-series aggregation.
 *
 * rate = Δv / (Δt_ms / 1000.0), always a double. Δv is computed in int64 when both points
 * are integers (then converted), in double otherwise. With `counter`, a negative Δv is a
 * rollover: dropped when `dropResets` (the point still becomes the next base), otherwise
 * Δv = counterMax − prev + next (int64 when both are integers; counterMax defaults to
 * Long.MAX_VALUE), and a rate above a positive `resetValue` becomes 0.
 *
 * The first output is RateSpan's rate against (t = 0, v = 0.0): it is kept at index 0 so
 * the aggregation can consume it the way AggregationIterator's constructor does (never
 * emitted, but it is the series' "previous rate" until its second point).
 */
import { TsdbError } from '../errors.js';
import { allocPoints, exactAt, LONG_MAX, MAX_SAFE, type Points, wrap64 } from './series.js';

export interface RateSpec {
  readonly counter: boolean;
  /** Long.MAX_VALUE when absent. A bigint keeps a maximum beyond 2^53 exact. */
  readonly counterMax?: number | bigint;
  /** 0 (off) when absent. */
  readonly resetValue?: number;
  readonly dropResets: boolean;
}

export function rate(p: Points, r: RateSpec): Points {
  const n = p.count;
  const { ts, values, isInt } = p;
  const out = allocPoints(n);
  const cm = r.counterMax;
  const cmBig = cm === undefined ? LONG_MAX : typeof cm === 'bigint' ? cm : BigInt(Math.trunc(cm));
  const cmNum = Number(cmBig);
  const reset = r.resetValue ?? 0;
  const counter = r.counter;
  let k = 0;
  let t0 = 0;
  let v0 = 0;
  let int0 = false; // the (0, 0) base is a double
  let i0 = -1;
  for (let i = 0; i < n; i++) {
    const t1 = ts[i]!;
    const v1 = values[i]!;
    const int1 = isInt[i] === 1;
    if (t1 <= t0) {
      throw new TsdbError('TSDB_ILLEGAL_DATA', `Next timestamp (${t1}) is supposed to be strictly greater than the previous one (${t0}), but it's not.`);
    }
    const dt = (t1 - t0) / 1000.0;
    const bothInt = int0 && int1;
    let diff: number;
    if (!bothInt) diff = v1 - v0;
    else if (v0 > MAX_SAFE || v0 < -MAX_SAFE || v1 > MAX_SAFE || v1 < -MAX_SAFE) diff = Number(wrap64(exactAt(p, i) - exactAt(p, i0)));
    else diff = v1 - v0;
    let rt: number;
    if (counter && diff < 0) {
      if (r.dropResets) {
        t0 = t1;
        v0 = v1;
        int0 = int1;
        i0 = i;
        continue;
      }
      const d = bothInt ? Number(wrap64(cmBig - exactAt(p, i0) + exactAt(p, i))) : cmNum - v0 + v1;
      rt = d / dt;
      if (reset > 0 && rt > reset) rt = 0;
    } else {
      rt = diff / dt;
    }
    out.ts[k] = t1;
    out.values[k++] = rt;
    t0 = t1;
    v0 = v1;
    int0 = int1;
    i0 = i;
  }
  out.count = k;
  return out;
}
