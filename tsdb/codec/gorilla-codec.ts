/**
 * Value scheme VAL_GORILLA (tsdb/SCHEMA.md, "Values: Gorilla XOR"), after
 * Pelkonen et al., VLDB 2015: each value's 64-bit pattern XOR the previous one;
 *   0                       the same value (1 bit: wins for full-precision floats that
 *                           repeat, where a Rice code would still spend k + 1 bits);
 *   10 <bits>               the XOR's meaningful bits fit the previous window;
 *   11 <6: leading zeros> <6: length - 1> <bits>   a new window.
 * The encoder first runs it in counting mode (no writer) to price it against the others.
 */
import type { BitReader } from './bit-reader.js';
import type { BitWriter } from './bit-writer.js';
import { VAL_GORILLA } from './hour-format.js';
import { ctz32, HI as HI_, LO as LO_ } from './float-codec.js';

// Local copies of imported constants: tsx (and other CJS-style transpilers) turn imported
// bindings into getter calls, which would sit in the hot loops.
const HI = HI_;
const LO = LO_;

/**
 * Writes values[from..to) (as u32View words) to `w`, or with w === undefined only counts:
 * returns the size of the chunk in bits, header included.
 */
export function writeGorilla(w: BitWriter | undefined, words: Uint32Array, from: number, to: number): number {
  let ph = words[2 * from + HI]!;
  let pl = words[2 * from + LO]!;
  if (w !== undefined) {
    w.writeU8(VAL_GORILLA);
    w.writeU32(ph);
    w.writeU32(pl);
  }
  let bits = 72;
  let winLead = -1;
  let winTrail = 0;
  for (let i = from + 1; i < to; i++) {
    const ch = words[2 * i + HI]!;
    const cl = words[2 * i + LO]!;
    const xh = (ch ^ ph) >>> 0;
    const xl = (cl ^ pl) >>> 0;
    ph = ch;
    pl = cl;
    if ((xh | xl) === 0) {
      bits += 1;
      w?.writeBits(0, 1);
      continue;
    }
    const lead = xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
    const trail = xl !== 0 ? ctz32(xl) : 32 + ctz32(xh);
    let len: number;
    let shift: number;
    if (winLead >= 0 && lead >= winLead && trail >= winTrail) {
      len = 64 - winLead - winTrail;
      shift = winTrail;
      bits += 2 + len;
      w?.writeBits(2, 2);
    } else {
      len = 64 - lead - trail;
      shift = trail;
      winLead = lead;
      winTrail = trail;
      bits += 14 + len;
      w?.writeBits((3 << 12) | (lead << 6) | (len - 1), 14);
    }
    if (w !== undefined) {
      // The meaningful bits: (xh:xl) >>> shift, `len` of them.
      let mh: number;
      let ml: number;
      if (shift === 0) { mh = xh; ml = xl; }
      else if (shift < 32) { mh = xh >>> shift; ml = ((xl >>> shift) | (xh << (32 - shift))) >>> 0; }
      else { mh = 0; ml = xh >>> (shift - 32); }
      if (len > 32) w.writeBits(mh, len - 32);
      w.writeBits(ml, len > 32 ? 32 : len);
    }
  }
  if (w !== undefined) w.align();
  return bits + ((8 - (bits & 7)) & 7);
}

/** Reads the rest of a VAL_GORILLA chunk into words (a u32View of the output) for [from, to). */
export function readGorilla(r: BitReader, words: Uint32Array, from: number, to: number): void {
  let ph = r.readU32();
  let pl = r.readU32();
  words[2 * from + HI] = ph;
  words[2 * from + LO] = pl;
  r.beginBits();
  r.checkBitsLeft(to - from - 1);
  let lead = -1;
  let len = 0;
  for (let i = from + 1; i < to; i++) {
    if (r.readBits(1) !== 0) {
      if (r.readBits(1) !== 0) {
        lead = r.readBits(6);
        len = r.readBits(6) + 1;
        if (lead + len > 64) r.fail('Gorilla window past 64 bits');
      } else if (lead < 0) {
        r.fail('Gorilla reuses a window before the first');
      }
      const mh = len > 32 ? r.readBits32(len - 32) : 0;
      const ml = r.readBits32(len > 32 ? 32 : len);
      const shift = 64 - lead - len;
      let xh: number;
      let xl: number;
      if (shift === 0) { xh = mh; xl = ml; }
      else if (shift < 32) { xh = (mh << shift) | (ml >>> (32 - shift)); xl = ml << shift; }
      else { xh = ml << (shift - 32); xl = 0; }
      ph = (ph ^ xh) >>> 0;
      pl = (pl ^ xl) >>> 0;
    }
    words[2 * i + HI] = ph;
    words[2 * i + LO] = pl;
  }
  r.endBits();
}
