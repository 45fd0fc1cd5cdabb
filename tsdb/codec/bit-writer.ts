/**
 * BitWriter: the append-only output of the hour codec (format: tsdb/SCHEMA.md).
 * Byte fields (u8, uvarint, u32) and bit fields share one growable buffer; bit fields are
 * MSB-first, collected in a 32-bit accumulator and flushed a word at a time, and a bit
 * section ends with align(), which pads with zero bits to the next byte.
 *
 * Rice codes: a value u with parameter k is q = floor(u / 2^k) written as q zero bits and
 * a one bit, then the k low bits of u. A quotient >= RICE_ESCAPE is written as
 * RICE_ESCAPE zero bits and then u in full (escBits = 32 or 64 bits), so the unary run is
 * bounded and any 64-bit value has a code.
 */
import { RICE_ESCAPE as RICE_ESCAPE_ } from './hour-format.js';

// Local copies of imported constants: tsx (and other CJS-style transpilers) turn imported
// bindings into getter calls, which would sit in the hot loops.
const RICE_ESCAPE = RICE_ESCAPE_;

const TWO32 = 4294967296;

export class BitWriter {
  buf: Uint8Array;
  /** Bytes written (not counting the bits pending in the accumulator). */
  pos = 0;
  private acc = 0;
  private nacc = 0;

  constructor(capacity = 1024) {
    this.buf = new Uint8Array(capacity);
  }

  /** Forgets everything written; keeps the buffer. */
  reset(): void {
    this.pos = 0;
    this.acc = 0;
    this.nacc = 0;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n + 64));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** A copy of the bytes written so far (call align() first if bits are pending). */
  finish(): Uint8Array {
    if (this.nacc !== 0) throw new Error('BUG: BitWriter.finish with pending bits');
    return this.buf.slice(0, this.pos);
  }

  // ---- byte fields (only between bit sections) ---------------------------------------

  writeU8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  /** Big-endian 32-bit. */
  writeU32(v: number): void {
    this.ensure(4);
    const b = this.buf;
    const p = this.pos;
    b[p] = v >>> 24;
    b[p + 1] = v >>> 16;
    b[p + 2] = v >>> 8;
    b[p + 3] = v;
    this.pos = p + 4;
  }

  /** Unsigned LEB128 of an integer 0..2^53-1. */
  writeUvarint(v: number): void {
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  /** Zigzag (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...) then uvarint; |v| <= 2^52. */
  writeSvarint(v: number): void {
    this.writeUvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  // ---- bit fields --------------------------------------------------------------------

  /** Writes the low `n` bits of `v` (0 <= n <= 32), most significant first. */
  writeBits(v: number, n: number): void {
    const free = 32 - this.nacc;
    if (n < free) {
      this.acc = (this.acc << n) | (v & ((1 << n) - 1));
      this.nacc += n;
      return;
    }
    const rest = n - free;
    const word = free === 32 ? v : (this.acc << free) | ((v >>> rest) & ((1 << free) - 1));
    this.ensure(4);
    const b = this.buf;
    const p = this.pos;
    b[p] = word >>> 24;
    b[p + 1] = word >>> 16;
    b[p + 2] = word >>> 8;
    b[p + 3] = word;
    this.pos = p + 4;
    this.acc = rest === 0 ? 0 : v & ((1 << rest) - 1);
    this.nacc = rest;
  }

  /** Writes the low `n` bits (0 <= n <= 53) of a non-negative integer `v`. */
  writeWide(v: number, n: number): void {
    if (n <= 32) this.writeBits(v >>> 0, n);
    else {
      this.writeBits(Math.floor(v / TWO32), n - 32);
      this.writeBits(v >>> 0, 32);
    }
  }

  /** Pads the pending bits with zeros to a byte boundary and flushes them. */
  align(): void {
    let n = this.nacc;
    if (n === 0) return;
    const pad = (8 - (n & 7)) & 7;
    let acc = this.acc * 2 ** pad;
    n += pad;
    this.ensure(4);
    while (n > 0) {
      n -= 8;
      this.buf[this.pos++] = Math.floor(acc / 2 ** n) & 0xff;
      acc %= 2 ** n;
    }
    this.acc = 0;
    this.nacc = 0;
  }

  /** Rice code of an integer 0 <= u < 2^53 with parameter 0 <= k <= 53; escape: escBits bits. */
  writeRice(u: number, k: number, escBits: 32 | 64): void {
    if (k <= 24 && u < 0x40000000) {
      // Fast path: the quotient, its one bit and the k low bits in one or two writes.
      const q = u >>> k;
      if (q < RICE_ESCAPE) {
        const code = (1 << k) | (u & ((1 << k) - 1));
        if (q + 1 + k <= 32) this.writeBits(code, q + 1 + k);
        else {
          this.writeBits(0, q);
          this.writeBits(code, k + 1);
        }
        return;
      }
    }
    const q = Math.floor(u / 2 ** k);
    if (q < RICE_ESCAPE) {
      this.writeBits(1, q + 1);
      if (k > 0) this.writeWide(u - q * 2 ** k, k);
      return;
    }
    this.writeBits(0, RICE_ESCAPE);
    if (escBits === 64) this.writeBits(Math.floor(u / TWO32), 32);
    this.writeBits(u >>> 0, 32);
  }

  /** Rice code of the 64-bit unsigned integer hi * 2^32 + lo (hi, lo uint32), 0 <= k <= 63. */
  writeRice64(hi: number, lo: number, k: number): void {
    let q: number;
    if (k >= 32) q = hi >>> (k - 32);
    else q = k === 0 ? hi * TWO32 + lo : hi * 2 ** (32 - k) + (lo >>> k);
    if (q >= RICE_ESCAPE) {
      this.writeBits(0, RICE_ESCAPE);
      this.writeBits(hi, 32);
      this.writeBits(lo, 32);
      return;
    }
    this.writeBits(1, q + 1);
    if (k > 32) this.writeBits(hi, k - 32);
    if (k > 0) this.writeBits(lo, k >= 32 ? 32 : k);
  }
}
