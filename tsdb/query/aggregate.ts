/**
 * Cross-series aggregation with interpolation, modelled on OpenTSDB's
 * src/core/AggregationIterator.java (reference §3.8): per series a "current" and a
 * look-ahead "next" point; each step consumes the smallest next timestamp (every series
 * having it), and the output at that time aggregates every active series:
 * - a series is active from its first point until the step after its last one;
 * - its value is exact at its own timestamps, else the aggregator's interpolation
 *   (LERP in long arithmetic with truncation when all-integer, ZIM 0, MAX/MIN the type's
 *   extremes, PREV the previous value); with rate, its last rate (no interpolation);
 * - the output is an integer only when every buffered point (current and next of every
 *   series, started or not) is an integer and rate is off, then runLong, else runDouble.
 * With rate, each series' first rate (against t = 0, see rate.ts) is consumed up front:
 * every such series is active from the start and that rate is never emitted.
 * Only steps with emitFrom <= t <= emitTo are computed and returned (the serializer's
 * trim, §3.13); a double result of ±Infinity fails the query as doubleValue() does.
 */
import { TsdbError } from '../errors.js';
import { type Aggregator, LERP, MAX, MIN, PREV, ZIM } from './aggregators.js';
import { allocPoints, exactAt, LONG_MAX, LONG_MAX_NUM, LONG_MIN, LONG_MIN_NUM, lowerBound, MAX_SAFE, type OutSeries, type Points, trimmed, wrap64 } from './series.js';

export interface AggregateOptions {
  readonly rate: boolean;
  /** Points after this time (the scan end) are never consumed. */
  readonly endMs: number;
  /** Output window, inclusive on both ends. */
  readonly emitFrom: number;
  readonly emitTo: number;
}

export function aggregate(inputs: readonly Points[], agg: Aggregator, o: AggregateOptions): OutSeries {
  const K = inputs.length;
  const rate = o.rate;
  const interp = agg.interpolation;
  const pos = new Int32Array(K); // index of the next point; the current one is pos - 1
  const nextTs = new Float64Array(K).fill(Infinity);
  const active = new Uint8Array(K);
  const ended = new Int32Array(K);
  let nEnded = 0;
  let floats = 0; // non-integer points among all current and next slots
  let cap = 0;
  for (let i = 0; i < K; i++) {
    const p = inputs[i]!;
    cap += lowerBound(p.ts, p.count, o.emitTo + 1) - lowerBound(p.ts, p.count, o.emitFrom);
    if (p.count === 0) continue;
    if (rate) {
      if (p.count < 2) continue; // its only rate is consumed, nothing follows
      active[i] = 1;
      pos[i] = 1;
      nextTs[i] = p.ts[1]!;
    } else {
      nextTs[i] = p.ts[0]!;
      if (p.isInt[0] !== 1) floats++;
    }
  }
  const out: Points = allocPoints(cap);
  const buf = new Float64Array(K);
  let k = 0;
  for (;;) {
    for (let q = 0; q < nEnded; q++) {
      const i = ended[q]!;
      active[i] = 0;
      if (!rate && inputs[i]!.isInt[pos[i]! - 1] !== 1) floats--;
    }
    nEnded = 0;
    let x = Infinity;
    for (let i = 0; i < K; i++) if (nextTs[i]! < x) x = nextTs[i]!;
    if (x > o.endMs || x > o.emitTo) break;
    for (let i = 0; i < K; i++) {
      if (nextTs[i] !== x) continue;
      const p = inputs[i]!;
      const c = pos[i]!;
      if (!rate && active[i] === 1 && p.isInt[c - 1] !== 1) floats--;
      active[i] = 1;
      pos[i] = c + 1;
      if (c + 1 < p.count) {
        nextTs[i] = p.ts[c + 1]!;
        if (!rate && p.isInt[c + 1] !== 1) floats++;
      } else {
        nextTs[i] = Infinity;
        ended[nEnded++] = i;
      }
    }
    if (x < o.emitFrom) continue;
    const allInt = !rate && floats === 0;
    let n = 0;
    let needExact = false;
    for (let i = 0; i < K; i++) {
      if (active[i] !== 1) continue;
      const p = inputs[i]!;
      const c = pos[i]! - 1;
      const x0 = p.ts[c]!;
      const y0 = p.values[c]!;
      let v: number;
      if (x0 === x || rate) {
        v = y0;
      } else {
        const x1 = p.ts[c + 1]!;
        const y1 = p.values[c + 1]!;
        if (x1 === x) v = y1;
        else if (interp === LERP) {
          if (allInt) {
            const prod = (x - x0) * (y1 - y0);
            v = y0 + Math.trunc(prod / (x1 - x0));
            if (prod > MAX_SAFE || prod < -MAX_SAFE || y1 > MAX_SAFE || y1 < -MAX_SAFE) needExact = true;
          } else {
            v = y0 + ((x - x0) * (y1 - y0)) / (x1 - x0);
          }
        } else if (interp === ZIM) v = 0;
        else if (interp === MAX) v = allInt ? LONG_MAX_NUM : Number.MAX_VALUE;
        else if (interp === MIN) v = allInt ? LONG_MIN_NUM : -Number.MAX_VALUE;
        else v = y0; // PREV
      }
      if (allInt && !agg.selects && (v > MAX_SAFE || v < -MAX_SAFE)) needExact = true;
      buf[n++] = v;
    }
    out.ts[k] = x;
    if (allInt) {
      let r = agg.runLong(buf, 0, n);
      if (needExact || !(r <= MAX_SAFE && r >= -MAX_SAFE)) {
        const exact = agg.runBig(exactValues(inputs, active, pos, x, interp));
        r = Number(exact);
        if (r > MAX_SAFE || r < -MAX_SAFE) {
          out.exact ??= new BigInt64Array(cap);
          out.exact[k] = exact;
        }
      }
      out.values[k] = r;
      out.isInt[k] = 1;
    } else {
      const r = agg.runDouble(buf, 0, n);
      if (r === Infinity || r === -Infinity) throw new TsdbError('TSDB_ILLEGAL_DATA', `Got Infinity: ${r} aggregating with ${agg.name} at ${x}`);
      out.values[k] = r;
    }
    k++;
  }
  out.count = k;
  return trimmed(out);
}

/** The inputs of one all-integer step as exact int64 (Java long arithmetic, wrapping). */
function exactValues(inputs: readonly Points[], active: Uint8Array, pos: Int32Array, x: number, interp: number): bigint[] {
  const vals: bigint[] = [];
  for (let i = 0; i < inputs.length; i++) {
    if (active[i] !== 1) continue;
    const p = inputs[i]!;
    const c = pos[i]! - 1;
    const x0 = p.ts[c]!;
    if (x0 === x) {
      vals.push(exactAt(p, c));
      continue;
    }
    const x1 = p.ts[c + 1]!;
    if (x1 === x) vals.push(exactAt(p, c + 1));
    else if (interp === LERP) {
      const y0 = exactAt(p, c);
      const y1 = exactAt(p, c + 1);
      vals.push(wrap64(y0 + wrap64(BigInt(x - x0) * wrap64(y1 - y0)) / BigInt(x1 - x0)));
    } else if (interp === ZIM) vals.push(0n);
    else if (interp === MAX) vals.push(LONG_MAX);
    else if (interp === MIN) vals.push(LONG_MIN);
    else if (interp === PREV) vals.push(exactAt(p, c));
  }
  return vals;
}
