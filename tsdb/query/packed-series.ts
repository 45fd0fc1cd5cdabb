/** Output series packed for a decode worker (decode-pool.ts), and unpacked there (decode-worker.ts). */
import type { OutputSeries } from './format-json.js';

/**
 * Output series as one message carries them to a worker: each without its points (their
 * count kept), and every series' points in two buffers that are transferred, not copied:
 * all timestamps then all values in `f64`, the integer flags in `isInt`, in series order.
 * (A copy of each series' own arrays cost the sending thread ~1.4 ms for q4's 14,400
 * points: three ArrayBuffers a series, each cloned.)
 */
export interface PackedSeries {
  readonly heads: readonly OutputSeries[];
  readonly f64: Float64Array;
  readonly isInt: Uint8Array;
}

const EMPTY_F64 = new Float64Array(0);
const EMPTY_U8 = new Uint8Array(0);

export function packSeries(series: readonly OutputSeries[]): PackedSeries {
  let n = 0;
  for (const s of series) n += s.points.count;
  const f64 = new Float64Array(2 * n);
  const isInt = new Uint8Array(n);
  let at = 0;
  const heads = series.map((s) => {
    const p = s.points;
    const c = p.count;
    f64.set(p.ts.subarray(0, c), at);
    f64.set(p.values.subarray(0, c), n + at);
    isInt.set(p.isInt.subarray(0, c), at);
    at += c;
    // The exact column (rare: integers beyond 2^53) travels with its head, copied.
    return { ...s, points: { count: c, ts: EMPTY_F64, values: EMPTY_F64, isInt: EMPTY_U8, ...(p.nanAsNull === undefined ? {} : { nanAsNull: p.nanAsNull }), ...(p.exact === undefined ? {} : { exact: p.exact.slice(0, c) }) } };
  });
  return { heads, f64, isInt };
}

/** The series of packSeries, their points views of the packed buffers. */
export function unpackSeries(x: PackedSeries): OutputSeries[] {
  const n = x.isInt.length;
  let at = 0;
  return x.heads.map((h) => {
    const c = h.points.count;
    const points = { ...h.points, ts: x.f64.subarray(at, at + c), values: x.f64.subarray(n + at, n + at + c), isInt: x.isInt.subarray(at, at + c) };
    at += c;
    return { ...h, points };
  });
}
