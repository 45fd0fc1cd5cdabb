/**
 * Unsigned integer streams (tsdb/SCHEMA.md, "Conventions", integer stream):
 * the residuals of the timestamp and decimal value schemes. A mode byte, then
 *   0..maxK  Rice codes with k = mode, one per value, then zero padding to a byte;
 *   0xFE     sparse: <uvarint m> <u8 kGap> <u8 kVal>, then m pairs (Rice(zeros before
 *            the next non-zero value, kGap), Rice(value - 1, kVal)), padding; zeros after
 *            the last pair are implied. For mostly-zero streams: missing points on a
 *            grid, late points, gauges that rarely change;
 *   0xFF     every value is 0; nothing follows.
 * A kGap or kVal of 0xFF means that part is all zeros and takes no bits.
 *
 * Also the Rice parameter search every encoder uses: residuals go into a Float64Array and
 * the k with the fewest bits (escapes included) wins.
 */
import type { BitReader } from './bit-reader.js';
import type { BitWriter } from './bit-writer.js';
import { K_ALL_ZERO as K_ALL_ZERO_, RICE_ESCAPE as RICE_ESCAPE_ } from './hour-format.js';

// Local copies of imported constants: tsx (and other CJS-style transpilers) turn imported
// bindings into getter calls, which would sit in the hot loops.
const K_ALL_ZERO = K_ALL_ZERO_;
const RICE_ESCAPE = RICE_ESCAPE_;

export interface RiceChoice {
  /** 0..maxK, or K_ALL_ZERO when every value is 0 (no bits at all). */
  k: number;
  bits: number;
}

/** Bits of the Rice codes of u[0..n) with parameter k; an escape costs RICE_ESCAPE + escBits. */
export function riceBits(u: Float64Array, n: number, k: number, escBits: number): number {
  const inv = 2 ** -k;
  let quotients = 0;
  let escapes = 0;
  for (let i = 0; i < n; i++) {
    const q = Math.floor(u[i]! * inv);
    if (q < RICE_ESCAPE) quotients += q;
    else escapes++;
  }
  return quotients + (n - escapes) * (k + 1) + escapes * (RICE_ESCAPE + escBits);
}

/**
 * The best k in 0..maxK for u[0..n) (non-negative integers; values past 2^53 may be
 * approximate, which only affects the estimate). The cost is close to convex in k with
 * its minimum near log2(mean) - 1, so it starts there and walks downhill.
 */
export function bestRiceK(u: Float64Array, n: number, maxK: number, escBits: number): RiceChoice {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += u[i]!;
  if (sum === 0) return { k: K_ALL_ZERO, bits: 0 };
  const start = Math.min(maxK, Math.max(0, Math.floor(Math.log2(sum / n)) - 1));
  let k = start;
  let bits = riceBits(u, n, k, escBits);
  for (let step = -1; step <= 1; step += 2) {
    for (let next = k + step; next >= 0 && next <= maxK; next += step) {
      const b = riceBits(u, n, next, escBits);
      if (b >= bits) break;
      k = next;
      bits = b;
    }
    if (k !== start) break; // went down: no need to try up
  }
  return { k, bits };
}

/** `a` if it holds n entries, else a bigger array (contents not kept). */
export function growF64(a: Float64Array, n: number): Float64Array {
  return a.length >= n ? a : new Float64Array(Math.max(n, a.length * 2));
}

/** Zigzag of an integer |v| <= 2^52 as a number: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ... */
export function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

/** Inverse of zigzag for 0 <= u < 2^53. */
export function unzigzag(u: number): number {
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

export const MODE_SPARSE = 0xfe;

export interface StreamPlan {
  /** 0..maxK (Rice), MODE_SPARSE or K_ALL_ZERO. */
  mode: number;
  exceptions: number;
  kGap: number;
  kVal: number;
  /** Size in bits, mode byte and parameters included. */
  bits: number;
}

let gaps: Float64Array = new Float64Array(256);
let vals: Float64Array = new Float64Array(256);

function varintBytes(v: number): number {
  return v < 128 ? 1 : v < 16384 ? 2 : v < 2097152 ? 3 : 4;
}

/** The cheapest coding of u[0..n) (integers 0 <= u < 2^53). */
export function planStream(u: Float64Array, n: number, maxK: number, escBits: 32 | 64): StreamPlan {
  const rice = bestRiceK(u, n, maxK, escBits);
  const plan: StreamPlan = { mode: rice.k, exceptions: 0, kGap: 0, kVal: 0, bits: 8 + Math.ceil(rice.bits / 8) * 8 };
  if (rice.k === K_ALL_ZERO) return plan;
  let m = 0;
  for (let i = 0; i < n; i++) if (u[i] !== 0) m++;
  if (m * 4 > n) return plan; // dense: the run lengths cost more than they save
  gaps = growF64(gaps, m);
  vals = growF64(vals, m);
  let e = 0;
  let run = 0;
  for (let i = 0; i < n; i++) {
    const v = u[i]!;
    if (v === 0) run++;
    else {
      gaps[e] = run;
      vals[e++] = v - 1;
      run = 0;
    }
  }
  const g = bestRiceK(gaps, m, maxK, escBits);
  const v = bestRiceK(vals, m, maxK, escBits);
  if (gaps.length > 1 << 16) {
    gaps = new Float64Array(256); // scratch of a huge hour: do not keep it
    vals = new Float64Array(256);
  }
  const bits = 8 * (3 + varintBytes(m)) + Math.ceil((g.bits + v.bits) / 8) * 8;
  if (bits < plan.bits) {
    plan.mode = MODE_SPARSE;
    plan.exceptions = m;
    plan.kGap = g.k;
    plan.kVal = v.k;
    plan.bits = bits;
  }
  return plan;
}

/** Writes u[0..n) as planned by planStream (on the same values). */
export function writeStream(w: BitWriter, plan: StreamPlan, u: Float64Array, n: number, escBits: 32 | 64): void {
  w.writeU8(plan.mode);
  if (plan.mode === K_ALL_ZERO) return;
  if (plan.mode !== MODE_SPARSE) {
    for (let i = 0; i < n; i++) w.writeRice(u[i]!, plan.mode, escBits);
    w.align();
    return;
  }
  w.writeUvarint(plan.exceptions);
  w.writeU8(plan.kGap);
  w.writeU8(plan.kVal);
  let run = 0;
  for (let i = 0; i < n; i++) {
    const v = u[i]!;
    if (v === 0) {
      run++;
      continue;
    }
    if (plan.kGap !== K_ALL_ZERO) w.writeRice(run, plan.kGap, escBits);
    if (plan.kVal !== K_ALL_ZERO) w.writeRice(v - 1, plan.kVal, escBits);
    run = 0;
  }
  w.align();
}

function readK(r: BitReader, maxK: number): number {
  const k = r.readU8();
  if (k > maxK && k !== K_ALL_ZERO) r.fail(`Rice parameter ${k}`);
  return k;
}

/** Reads n values into out[0..n) (out.length >= n). */
export function readStream(r: BitReader, out: Float64Array, n: number, maxK: number, escBits: 32 | 64): void {
  const mode = r.readU8();
  if (mode === K_ALL_ZERO) {
    out.fill(0, 0, n);
    return;
  }
  if (mode !== MODE_SPARSE) {
    if (mode > maxK) r.fail(`stream mode ${mode}`);
    r.beginBits();
    r.readRiceRun(mode, escBits, out, n);
    r.endBits();
    return;
  }
  const m = r.readUvarintIn(1, n, 'sparse stream count');
  const kGap = readK(r, maxK);
  const kVal = readK(r, maxK);
  r.beginBits();
  let i = 0;
  for (let e = 0; e < m; e++) {
    const gap = kGap === K_ALL_ZERO ? 0 : r.readRice(kGap, escBits);
    if (gap > n - 1 - i) r.fail('sparse stream runs past its end');
    for (const stop = i + gap; i < stop; i++) out[i] = 0;
    out[i++] = (kVal === K_ALL_ZERO ? 0 : r.readRice(kVal, escBits)) + 1;
  }
  out.fill(0, i, n);
  r.endBits();
}
