/**
 * Cross-series aggregation with interpolation, modelled on OpenTSDB's
 * src/core/AggregationIterator.java: per series a "current" and a
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
 * trim); a double result of ±Infinity fails the query as doubleValue() does.
 */
import { TsdbError } from '../errors.js';
import * as aggs from './aggregators.js';
import type { Aggregator } from './aggregators.js';
import * as series from './series.js';
import { allocPoints, exactAt, lowerBound, type OutSeries, type Points, trimmed, wrap64 } from './series.js';

// Module-local copies: hot loops then read plain constants, not live import bindings.
const LERP = aggs.LERP;
const ZIM = aggs.ZIM;
const MAX = aggs.MAX;
const MIN = aggs.MIN;
const MAX_SAFE = series.MAX_SAFE;
const LONG_MAX = series.LONG_MAX;
const LONG_MIN = series.LONG_MIN;
const LONG_MAX_NUM = series.LONG_MAX_NUM;
const LONG_MIN_NUM = series.LONG_MIN_NUM;

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
  if (K === 1 && !rate) {
    const one = aggregateOneDoubleSeries(inputs[0]!, agg, o);
    if (one !== undefined) return one;
  }
  const interp = agg.interpolation;
  // Per series: its arrays, g[i] = index of its next point (the current one is g[i] − 1).
  let cap = 0;
  const T: Float64Array[] = [];
  const V: Float64Array[] = [];
  const I: Uint8Array[] = [];
  const lim = new Int32Array(K);
  const g = new Int32Array(K);
  const nextTs = new Float64Array(K);
  const live = new Int32Array(K); // series with a next point, any order
  const act = new Int32Array(K); // active series, ascending (the aggregators' value order)
  const ended = new Int32Array(K);
  const eq = new Int32Array(K);
  let nLive = 0;
  let nAct = 0;
  let nEnded = 0;
  let floats = 0; // non-integer points among all current and next slots
  for (let i = 0; i < K; i++) {
    const p = inputs[i]!;
    const n = p.count;
    cap += lowerBound(p.ts, n, o.emitTo + 1) - lowerBound(p.ts, n, o.emitFrom);
    T.push(p.ts);
    V.push(p.values);
    I.push(p.isInt);
    lim[i] = n;
    if (n === 0 || (rate && n < 2)) continue; // with rate, a lone first rate is consumed and nothing follows
    if (rate) {
      act[nAct++] = i;
      g[i] = 1;
    } else if (p.isInt[0] !== 1) {
      floats++;
    }
    nextTs[i] = p.ts[g[i]!]!;
    live[nLive++] = i;
  }
  const out: Points = allocPoints(cap);
  const buf = new Float64Array(K);
  let k = 0;
  for (;;) {
    for (let q = 0; q < nEnded; q++) {
      const i = ended[q]!;
      if (!rate && I[i]![g[i]! - 1] !== 1) floats--;
      let at = 0;
      while (act[at] !== i) at++;
      act.copyWithin(at, at + 1, nAct--);
    }
    nEnded = 0;
    let x = Infinity;
    let nEq = 0;
    for (let q = 0; q < nLive; q++) {
      const i = live[q]!;
      const t = nextTs[i]!;
      if (t < x) {
        x = t;
        eq[0] = i;
        nEq = 1;
      } else if (t === x) {
        eq[nEq++] = i;
      }
    }
    if (x > o.endMs || x > o.emitTo) break;
    for (let q = 0; q < nEq; q++) {
      const i = eq[q]!;
      const c = g[i]!;
      if (c === 0) {
        // its first point: the series becomes active (sorted insert)
        let at = nAct;
        while (at > 0 && act[at - 1]! > i) at--;
        act.copyWithin(at + 1, at, nAct++);
        act[at] = i;
      } else if (!rate && I[i]![c - 1] !== 1) {
        floats--;
      }
      g[i] = c + 1;
      if (c + 1 < lim[i]!) {
        nextTs[i] = T[i]![c + 1]!;
        if (!rate && I[i]![c + 1] !== 1) floats++;
      } else {
        ended[nEnded++] = i;
        let at = 0;
        while (live[at] !== i) at++;
        live[at] = live[--nLive]!;
      }
    }
    if (x < o.emitFrom) continue;
    const allInt = !rate && floats === 0;
    let n = 0;
    let needExact = false;
    for (let q = 0; q < nAct; q++) {
      const i = act[q]!;
      const c = g[i]! - 1;
      const ts = T[i]!;
      const vs = V[i]!;
      const x0 = ts[c]!;
      const y0 = vs[c]!;
      let v: number;
      if (x0 === x || rate) {
        v = y0;
      } else {
        const x1 = ts[c + 1]!;
        const y1 = vs[c + 1]!;
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
      buf[n++] = v;
    }
    out.ts[k] = x;
    if (allInt) {
      let r = agg.runLong(buf, 0, n);
      if (!agg.selects && !needExact) {
        for (let q = 0; q < n; q++) if (buf[q]! > MAX_SAFE || buf[q]! < -MAX_SAFE) needExact = true;
      }
      if (needExact || !(r <= MAX_SAFE && r >= -MAX_SAFE)) {
        const exact = agg.runBig(exactValues(inputs, act.subarray(0, nAct), g, x, interp));
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

/**
 * aggregate() of a group of one series without rate whose points are all doubles (a
 * group by a tag every series has its own value of, as a dashboard's per-host chart asks):
 * the steps are the series' own timestamps, where its value is exact, and a double is
 * current at every step, so every output is runDouble of that one value. Undefined when a
 * point is an integer (the look-ahead typing rule then needs the general loop).
 */
function aggregateOneDoubleSeries(p: Points, agg: Aggregator, o: AggregateOptions): OutSeries | undefined {
  const n = p.count;
  const isInt = p.isInt;
  for (let i = 0; i < n; i++) if (isInt[i] === 1) return undefined;
  const ts = p.ts;
  const from = lowerBound(ts, n, o.emitFrom);
  const out = allocPoints(lowerBound(ts, n, o.emitTo + 1) - from);
  const last = Math.min(o.endMs, o.emitTo);
  const same = agg.oneIsValue;
  let k = 0;
  for (let c = from; c < n; c++) {
    const x = ts[c]!;
    if (x > last) break;
    const v = p.values[c]!;
    const r = same && v === v && v !== 0 ? v : agg.runDouble(p.values, c, c + 1);
    if (r === Infinity || r === -Infinity) throw new TsdbError('TSDB_ILLEGAL_DATA', `Got Infinity: ${r} aggregating with ${agg.name} at ${x}`);
    out.ts[k] = x;
    out.values[k] = r;
    k++;
  }
  out.count = k;
  return trimmed(out);
}

/** The inputs of one all-integer step as exact int64 (Java long arithmetic, wrapping). */
function exactValues(inputs: readonly Points[], act: Int32Array, g: Int32Array, x: number, interp: number): bigint[] {
  const vals: bigint[] = [];
  for (const i of act) {
    const p = inputs[i]!;
    const c = g[i]! - 1;
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
    else vals.push(exactAt(p, c)); // PREV
  }
  return vals;
}
