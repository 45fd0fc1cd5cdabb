/**
 * Value scheme VAL_FLOAT_DELTA (tsdb/SCHEMA.md, "Values: float delta"): each
 * float64 as its 64-bit pattern (an integer that grows with the value for positive
 * floats, so a slow walk gives small differences in units of the current ulp), the
 * difference from the previous pattern modulo 2^64, zigzag, Rice(k). Exact for every
 * pattern (-0, subnormals, NaN payloads, infinities): large jumps take the 64-bit escape.
 * 64-bit arithmetic runs on two uint32 words; no BigInt: u32View gives a Float64Array's
 * words in this platform's order (HI/LO); the format stores patterns high word first.
 */
import type { BitReader } from './bit-reader.js';
import type { BitWriter } from './bit-writer.js';
import { K_ALL_ZERO, VAL_FLOAT_DELTA } from './hour-format.js';
import { bestRiceK, growF64 } from './stream-codec.js';
import type { RiceChoice } from './stream-codec.js';

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Index of the low / high 32-bit word of float i in a u32View: 2 * i + LO, 2 * i + HI. */
export const LO = LITTLE_ENDIAN ? 0 : 1;
export const HI = LITTLE_ENDIAN ? 1 : 0;

/** The 2 * n words of f[0..n) (shares memory with f). */
export function u32View(f: Float64Array, n = f.length): Uint32Array {
  return new Uint32Array(f.buffer, f.byteOffset, n * 2);
}

/** Count of trailing zero bits of a non-zero uint32. */
export function ctz32(x: number): number {
  return 31 - Math.clz32(x & -x);
}

const TWO32 = 4294967296;

let zh: Uint32Array = new Uint32Array(1024);
let zl: Uint32Array = new Uint32Array(1024);
let approx: Float64Array = new Float64Array(1024);

/**
 * Zigzag pattern deltas of words[2 * from .. 2 * to) (a u32View) into module buffers, and
 * the best Rice parameter; the chunk's size in bits (header included) is in `bits`.
 */
export function planFloatDelta(words: Uint32Array, from: number, to: number): RiceChoice {
  const n = to - from - 1;
  if (zh.length < n) {
    zh = new Uint32Array(Math.max(n, zh.length * 2));
    zl = new Uint32Array(zh.length);
  }
  approx = growF64(approx, n);
  let ph = words[2 * from + HI]!;
  let pl = words[2 * from + LO]!;
  for (let i = 0; i < n; i++) {
    const j = 2 * (from + 1 + i);
    const ch = words[j + HI]!;
    const cl = words[j + LO]!;
    const lo = (cl - pl) >>> 0;
    const hi = (ch - ph - (cl < pl ? 1 : 0)) | 0;
    const sign = hi >> 31;
    const zhi = (((hi << 1) | (lo >>> 31)) ^ sign) >>> 0;
    const zlo = ((lo << 1) ^ sign) >>> 0;
    zh[i] = zhi;
    zl[i] = zlo;
    approx[i] = zhi * TWO32 + zlo;
    ph = ch;
    pl = cl;
  }
  const c = bestRiceK(approx, n, 63, 64);
  return { k: c.k, bits: 8 * 10 + Math.ceil(c.bits / 8) * 8 };
}

/** Writes the chunk planned by the LAST planFloatDelta call (first pattern from `words`). */
export function writeFloatDelta(w: BitWriter, k: number, words: Uint32Array, from: number, to: number): void {
  w.writeU8(VAL_FLOAT_DELTA);
  w.writeU32(words[2 * from + HI]!);
  w.writeU32(words[2 * from + LO]!);
  w.writeU8(k);
  if (k !== K_ALL_ZERO) for (let i = 0, n = to - from - 1; i < n; i++) w.writeRice64(zh[i]!, zl[i]!, k);
  w.align();
}

/** Reads the rest of a VAL_FLOAT_DELTA chunk into words (a u32View of the output) for [from, to). */
export function readFloatDelta(r: BitReader, words: Uint32Array, from: number, to: number): void {
  let ph = r.readU32();
  let pl = r.readU32();
  words[2 * from + HI] = ph;
  words[2 * from + LO] = pl;
  const k = r.readU8();
  if (k > 63 && k !== K_ALL_ZERO) r.fail(`Rice parameter ${k}`);
  if (k === K_ALL_ZERO) {
    for (let i = from + 1; i < to; i++) {
      words[2 * i + HI] = ph;
      words[2 * i + LO] = pl;
    }
    return;
  }
  const n = to - from - 1;
  if (zh.length < n) {
    zh = new Uint32Array(Math.max(n, zh.length * 2));
    zl = new Uint32Array(zh.length);
  }
  r.beginBits();
  r.readRice64Run(k, zh, zl, n);
  r.endBits();
  for (let i = from + 1, j = 0; i < to; i++, j++) {
    const zlo = zl[j]!;
    const zhi = zh[j]!;
    const sign = -(zlo & 1);
    const dlo = (((zlo >>> 1) | (zhi << 31)) ^ sign) >>> 0;
    const dhi = (zhi >>> 1) ^ sign;
    const lo = pl + dlo;
    pl = lo >>> 0;
    ph = (ph + dhi + (lo > 0xffffffff ? 1 : 0)) >>> 0;
    words[2 * i + HI] = ph;
    words[2 * i + LO] = pl;
  }
}
