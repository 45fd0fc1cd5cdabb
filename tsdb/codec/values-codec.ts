/**
 * The value section of a compressed hour cell (tsdb/SCHEMA.md, "Value
 * section"): chunks of VALUE_CHUNK points, each in the smallest of
 *   VAL_CONST        one pattern for the whole chunk (0 bits per point);
 *   VAL_DECIMAL      scaled decimal integers, Rice coded (decimal-codec.ts);
 *   VAL_FLOAT_DELTA  64-bit pattern deltas, Rice coded (float-codec.ts);
 *   VAL_GORILLA      XOR of patterns (gorilla-codec.ts);
 *   VAL_RAW          8 bytes per value, the always-correct fallback.
 * Chunks keep one odd stretch (a NaN, a jump) from costing the whole hour, and bound the
 * work per scheme choice. Values are kind-agnostic: integer points are integer floats here.
 */
import type { BitReader } from './bit-reader.js';
import type { BitWriter } from './bit-writer.js';
import { planDecimal, readDecimal, writeDecimal } from './decimal-codec.js';
import { HI as HI_, LO as LO_, planFloatDelta, readFloatDelta, u32View, writeFloatDelta } from './float-codec.js';
import { readGorilla, writeGorilla } from './gorilla-codec.js';
import { VAL_CONST, VAL_DECIMAL, VAL_FLOAT_DELTA, VAL_GORILLA, VAL_RAW, VALUE_CHUNK } from './hour-format.js';

// Local copies of imported constants: tsx (and other CJS-style transpilers) turn imported
// bindings into getter calls, which would sit in the hot loops.
const HI = HI_;
const LO = LO_;

/** Decimal chunks costing more bits per value than this are priced against the float schemes. */
const DECIMAL_GOOD_ENOUGH = 32;

/** Writes values[0..n) (n >= 1) as chunks. */
export function encodeValues(w: BitWriter, values: Float64Array, n: number): void {
  const words = u32View(values, n);
  for (let from = 0; from < n; from += VALUE_CHUNK) encodeChunk(w, values, words, from, Math.min(n, from + VALUE_CHUNK));
}

function encodeChunk(w: BitWriter, values: Float64Array, words: Uint32Array, from: number, to: number): void {
  const n = to - from;
  const h0 = words[2 * from + HI]!;
  const l0 = words[2 * from + LO]!;
  let same = true;
  for (let i = from + 1; i < to && same; i++) same = words[2 * i + HI] === h0 && words[2 * i + LO] === l0;
  const dec = planDecimal(values, from, to);
  if (same && (dec === undefined || dec.bits >= 72)) {
    w.writeU8(VAL_CONST);
    w.writeU32(h0);
    w.writeU32(l0);
    return;
  }
  if (dec !== undefined && dec.bits <= DECIMAL_GOOD_ENOUGH * n) {
    writeDecimal(w, dec, n);
    return;
  }
  const rawBits = 8 + 64 * n;
  const gorillaBits = writeGorilla(undefined, words, from, to);
  const delta = planFloatDelta(words, from, to);
  const best = Math.min(rawBits, gorillaBits, delta.bits, dec?.bits ?? Infinity);
  // Ties go to the simpler decoder: raw, decimal, float delta, Gorilla.
  if (best === rawBits) {
    w.writeU8(VAL_RAW);
    w.ensure(8 * n);
    for (let i = from; i < to; i++) {
      w.writeU32(words[2 * i + HI]!);
      w.writeU32(words[2 * i + LO]!);
    }
  } else if (dec !== undefined && best === dec.bits) {
    writeDecimal(w, dec, n); // the float planners do not touch the decimal buffers
  } else if (best === delta.bits) {
    writeFloatDelta(w, delta.k, words, from, to);
  } else {
    writeGorilla(w, words, from, to);
  }
}

/** Reads n >= 1 values into out[0..n); pushes each chunk's scheme to `schemes` when given. */
export function decodeValues(r: BitReader, out: Float64Array, n: number, schemes?: number[]): void {
  const words = u32View(out, n);
  for (let from = 0; from < n; from += VALUE_CHUNK) {
    const to = Math.min(n, from + VALUE_CHUNK);
    const scheme = r.readU8();
    schemes?.push(scheme);
    switch (scheme) {
      case VAL_DECIMAL:
        readDecimal(r, out, from, to);
        break;
      case VAL_FLOAT_DELTA:
        readFloatDelta(r, words, from, to);
        break;
      case VAL_CONST: {
        const h = r.readU32();
        const l = r.readU32();
        for (let i = from; i < to; i++) {
          words[2 * i + HI] = h;
          words[2 * i + LO] = l;
        }
        break;
      }
      case VAL_GORILLA:
        readGorilla(r, words, from, to);
        break;
      case VAL_RAW:
        if (r.pos + 8 * (to - from) > r.end) r.fail('truncated raw values');
        for (let i = from; i < to; i++) {
          words[2 * i + HI] = r.readU32();
          words[2 * i + LO] = r.readU32();
        }
        break;
      default:
        r.fail(`unknown value scheme ${scheme}`);
    }
  }
}
