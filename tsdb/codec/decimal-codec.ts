/**
 * Value scheme VAL_DECIMAL (tsdb/SCHEMA.md, "Values: decimal"): when every value
 * of a chunk is m / 10^d for an integer |m| <= 2^52 (exactly, as the decoder computes
 * it), the scaled integers m are coded as residuals of order 1 (deltas: random walks) or 2
 * (delta-of-deltas: counters with a steady rate), divided by their greatest common divisor
 * g and mapped to unsigned either by zigzag or by subtracting their minimum (one-signed
 * residuals such as counter increments save the zigzag bit), then written as an integer
 * stream (stream-codec.ts: Rice with the best k, or sparse for rarely-changing values).
 */
import type { BitReader } from './bit-reader.js';
import type { BitWriter } from './bit-writer.js';
import { MAX_DECIMALS, RICE_ESCAPE as RICE_ESCAPE_, VAL_DECIMAL } from './hour-format.js';
import { growF64, planStream, readStream, writeStream, zigzag } from './stream-codec.js';
import type { StreamPlan } from './stream-codec.js';

/** Bound of scaled integers and residuals: their zigzag (2|v|) stays an exact safe integer. */
const MAX_SCALED = 2 ** 52;
const MAX_RESIDUAL = 2 ** 52;
// A local copy: an imported binding may compile to a getter call in the hot loop.
const RICE_ESCAPE = RICE_ESCAPE_;
const POW10: readonly number[] = Array.from({ length: MAX_DECIMALS + 1 }, (_, i) => 10 ** i);

export interface DecimalPlan {
  d: number;
  order: number;
  /** 0: zigzag(r / g); 1: (r - base) / g. */
  mapping: number;
  base: number;
  g: number;
  stream: StreamPlan | undefined;
  /** Size of the whole chunk in bits (header bytes included). */
  bits: number;
}

let scaled: Float64Array = new Float64Array(1024);
let res: Float64Array = new Float64Array(1024);
let u: Float64Array = new Float64Array(1024);

const varintBytes = (v: number): number => (v < 128 ? 1 : Math.ceil(Math.log2(v + 1) / 7));

function gcd(a: number, b: number): number {
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/**
 * The smallest d in 0..MAX_DECIMALS with Math.round(v * 10^d) / 10^d === v (and the
 * scaled integer within +-2^52, and v not -0) for every v of values[from..to), the scaled
 * integers left in `scaled`; -1 when there is none.
 */
function decimalScale(values: Float64Array, from: number, to: number): number {
  scaled = growF64(scaled, to - from);
  let d = 0;
  let p = 1;
  let raisedAt = from;
  for (let i = from; i < to; i++) {
    const v = values[i]!;
    let m = Math.round(v * p);
    if (m / p !== v) {
      if (v !== v) return -1;
      do {
        if (++d > MAX_DECIMALS) return -1;
        p = POW10[d]!;
        m = Math.round(v * p);
      } while (m / p !== v);
      raisedAt = i;
    }
    if (m > MAX_SCALED || m < -MAX_SCALED || (m === 0 && 1 / v < 0)) return -1;
    scaled[i - from] = m;
  }
  for (let i = from; i < raisedAt; i++) {
    const v = values[i]!;
    const m = Math.round(v * p);
    if (m / p !== v || m > MAX_SCALED || m < -MAX_SCALED) return -1;
    scaled[i - from] = m;
  }
  return d;
}

/** Residuals of `order` of the scaled integers into res[0..n - order). */
function residuals(n: number, order: number): void {
  if (order === 1) for (let i = 1; i < n; i++) res[i - 1] = scaled[i]! - scaled[i - 1]!;
  else for (let i = 2; i < n; i++) res[i - 2] = scaled[i]! - 2 * scaled[i - 1]! + scaled[i - 2]!;
}

/** Maps res[0..len) into u; returns false when a residual is too large. */
function mapResiduals(len: number, mapping: number, base: number, g: number): void {
  if (mapping === 0) {
    for (let i = 0; i < len; i++) {
      const x = res[i]! / g;
      u[i] = x >= 0 ? 2 * x : -2 * x - 1; // zigzag, inlined
    }
  }
  else for (let i = 0; i < len; i++) u[i] = (res[i]! - base) / g;
}

/** Prices both mappings of res[0..len); updates `best` when one beats it. */
function tryOrder(best: DecimalPlan, order: number, len: number, headBytes: number): void {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < len; i++) {
    const r = res[i]!;
    if (r < min) min = r;
    if (r > max) max = r;
  }
  if (len > 0 && (min < -MAX_RESIDUAL || max > MAX_RESIDUAL)) return;
  for (let mapping = 0; mapping <= (len > 0 && max > 0 ? 1 : 0); mapping++) {
    const base = mapping === 1 && len > 0 ? min : 0;
    let g = 0;
    for (let i = 0; i < len && g !== 1; i++) g = gcd(g, Math.abs(res[i]! - base));
    if (g === 0) g = 1;
    mapResiduals(len, mapping, base, g);
    const stream = planStream(u, len, 53, 64);
    const bits = len === 0 ? 8 * headBytes : 8 * (headBytes + varintBytes(zigzag(base)) * mapping + varintBytes(g)) + stream.bits;
    if (bits < best.bits) Object.assign(best, { order, mapping, base, g, stream, bits });
  }
}

/** The best decimal plan for values[from..to), or undefined when the scheme does not apply. */
export function planDecimal(values: Float64Array, from: number, to: number): DecimalPlan | undefined {
  const n = to - from;
  const d = decimalScale(values, from, to);
  if (d < 0) return undefined;
  res = growF64(res, n);
  u = growF64(u, n);
  const best: DecimalPlan = { d, order: 1, mapping: 0, base: 0, g: 1, stream: undefined, bits: Infinity };
  const head = 2 + varintBytes(zigzag(scaled[0]!));
  residuals(n, 1);
  tryOrder(best, 1, n - 1, head);
  if (n >= 3 && Math.abs(scaled[1]! - scaled[0]!) <= MAX_RESIDUAL) {
    residuals(n, 2);
    tryOrder(best, 2, n - 2, head + varintBytes(zigzag(scaled[1]! - scaled[0]!)));
  }
  return best.stream === undefined ? undefined : best;
}

/**
 * Writes the chunk of `n` values planned by the LAST planDecimal call (it left the scaled
 * integers in a module buffer; nothing else touches it).
 */
export function writeDecimal(w: BitWriter, plan: DecimalPlan, n: number): void {
  w.writeU8(VAL_DECIMAL);
  w.writeU8(plan.d | ((plan.order - 1) << 4) | (plan.mapping << 5));
  w.writeSvarint(scaled[0]!);
  if (plan.order === 2) w.writeSvarint(scaled[1]! - scaled[0]!);
  if (n === 1) return; // one value: no divisor, no stream
  if (plan.mapping === 1) w.writeSvarint(plan.base);
  w.writeUvarint(plan.g);
  residuals(n, plan.order);
  mapResiduals(n - plan.order, plan.mapping, plan.base, plan.g);
  writeStream(w, plan.stream!, u, n - plan.order, 64);
}

/** Reads the rest of a VAL_DECIMAL chunk (after the scheme byte) into out[from..to). */
export function readDecimal(r: BitReader, out: Float64Array, from: number, to: number): void {
  const flags = r.readU8();
  const order = ((flags >> 4) & 1) + 1;
  const mapping = (flags >> 5) & 1;
  if (flags > 63) r.fail(`decimal flags ${flags}`);
  if (to - from < order) r.fail(`decimal order ${order} for ${to - from} values`);
  const p = POW10[flags & 15]!;
  let m = r.readSvarint();
  out[from] = m / p;
  let delta = order === 2 ? r.readSvarint() : 0;
  if (order === 2) out[from + 1] = (m += delta) / p;
  if (to - from === 1) {
    if (flags > 15) r.fail(`decimal flags ${flags} for one value`);
    return;
  }
  const base = mapping === 1 ? r.readSvarint() : 0;
  const g = r.readUvarintIn(1, MAX_RESIDUAL, 'decimal divisor');
  const len = to - from - order;
  if (mapping === 0 && len > 0 && r.pos < r.end && r.buf[r.pos]! <= FUSED_MAX_K) {
    // A plain Rice stream of zigzag residuals (the random-walk case): decoded and summed
    // in one pass (readRiceZigzagSums), not stored in `u` and read back.
    const k = r.readU8();
    r.beginBits();
    readRiceZigzagSums(r, k, out, from + order, len, m, order === 2 ? delta : undefined, g, p);
    r.endBits();
    return;
  }
  u = growF64(u, len);
  readStream(r, u, len, 53, 64);
  const start = from + order;
  if (mapping === 0) {
    // Branch-free zigzag decode in doubles: h = floor(u / 2), odd = u - 2h; s = h - odd * (2h + 1).
    if (order === 1) {
      for (let i = 0; i < len; i++) {
        const x = u[i]!;
        const h = Math.floor(x * 0.5);
        const odd = x - 2 * h;
        m += g * (h - odd * (2 * h + 1));
        out[start + i] = m / p;
      }
    } else {
      for (let i = 0; i < len; i++) {
        const x = u[i]!;
        const h = Math.floor(x * 0.5);
        const odd = x - 2 * h;
        m += delta += g * (h - odd * (2 * h + 1));
        out[start + i] = m / p;
      }
    }
  } else if (order === 1) {
    for (let i = 0; i < len; i++) out[start + i] = (m += base + g * u[i]!) / p;
  } else {
    for (let i = 0; i < len; i++) out[start + i] = (m += delta += base + g * u[i]!) / p;
  }
}

/** Rice parameters the fused decimal loop takes: a code then fits an int32 (RICE_ESCAPE = 24). */
const FUSED_MAX_K = 24;
const TWO32 = 4294967296;

/**
 * readStream's Rice loop (BitReader.readRiceRun, k <= 24, 64-bit escapes) fused with
 * readDecimal's mapping-0 sums: each code x is unzigzagged as an int32
 * ((x >>> 1) ^ -(x & 1), the same value as the float form for x < 2^31; escapes use the
 * float form), times g added to the running scaled integer m (order 1) or to the running
 * delta and then m (order 2, `delta` given), and out[start + i] = m / p.
 *
 * The common code goes without a branch that depends on the data: at bit position `bit`,
 * the 4 bytes from bit >> 3, shifted left by bit & 7, hold at least 25 bits of it, enough
 * for a code of q + 1 + k <= 25 bits (the quotient's zeros, its 1, the k remainder bits).
 * An escape, a longer code, and the codes within 4 bytes of the end go through the
 * reader's refilled window (riceZigzagSumsTail).
 */
function readRiceZigzagSums(r: BitReader, k: number, out: Float64Array, start: number, len: number, m0: number, delta0: number | undefined, g: number, p: number): void {
  r.checkBitsLeft(len * (k + 1));
  const buf = r.buf;
  const mask = (1 << k) - 1;
  const order2 = delta0 !== undefined;
  let m = m0;
  let delta = delta0 ?? 0;
  let bit = r.pos * 8 - r.nb;
  /** The last bit position whose 4 bytes all lie in the input. */
  const safe = (r.end - 4) * 8;
  /** The largest quotient taken here: q + 1 + k <= 25 bits, and no escape. */
  const maxQ = Math.min(24 - k, RICE_ESCAPE - 1);
  // One big-endian 4-byte load per code (a DataView: a quarter of the bounds-checked byte
  // loads), and a loop per order, so the loop carries no test of the order.
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let i = 0;
  if (order2) {
    for (; i < len && bit <= safe; i++) {
      const w = dv.getUint32(bit >> 3) << (bit & 7);
      const q = Math.clz32(w);
      if (q > maxQ) break;
      const x = (q << k) | ((w >>> (31 - q - k)) & mask);
      bit += q + 1 + k;
      m += delta += g * ((x >>> 1) ^ -(x & 1));
      out[start + i] = m / p;
    }
  } else {
    for (; i < len && bit <= safe; i++) {
      const w = dv.getUint32(bit >> 3) << (bit & 7);
      const q = Math.clz32(w);
      if (q > maxQ) break;
      const x = (q << k) | ((w >>> (31 - q - k)) & mask);
      bit += q + 1 + k;
      m += g * ((x >>> 1) ^ -(x & 1));
      out[start + i] = m / p;
    }
  }
  // The reader at `bit`: the window refilled from the byte it lies in, the bits before it dropped.
  r.pos = bit >> 3;
  r.win = 0;
  r.nb = 0;
  r.readBits(bit & 7);
  if (i < len) riceZigzagSumsTail(r, k, out, start, i, len, m, delta, order2, g, p);
}

/** readRiceZigzagSums from code i on, through the reader's window (escapes, long codes, the input's last bytes). */
function riceZigzagSumsTail(r: BitReader, k: number, out: Float64Array, start: number, i0: number, len: number, m0: number, delta0: number, order2: boolean, g: number, p: number): void {
  const buf = r.buf;
  const end = r.end;
  const mask = (1 << k) - 1;
  let m = m0;
  let delta = delta0;
  let win = r.win;
  let nb = r.nb;
  let pos = r.pos;
  for (let i = i0; i < len; i++) {
    while (nb <= 24) {
      win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
      pos++;
      nb += 8;
    }
    const q = Math.clz32(win);
    let s: number;
    if (q >= RICE_ESCAPE) {
      r.win = win << RICE_ESCAPE;
      r.nb = nb - RICE_ESCAPE;
      r.pos = pos;
      const x = r.readBits32(32) * TWO32 + r.readBits32(32);
      win = r.win;
      nb = r.nb;
      pos = r.pos;
      const h = Math.floor(x * 0.5);
      s = h - (x - 2 * h) * (2 * h + 1);
    } else {
      win <<= q + 1;
      nb -= q + 1;
      while (nb < k) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      const x = (q << k) | ((win >>> (32 - k)) & mask);
      win <<= k;
      nb -= k;
      s = (x >>> 1) ^ -(x & 1);
    }
    if (order2) m += delta += g * s;
    else m += g * s;
    out[start + i] = m / p;
  }
  r.win = win;
  r.nb = nb;
  r.pos = pos;
}
