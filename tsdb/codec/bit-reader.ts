/**
 * BitReader: reads what BitWriter wrote (format: tsdb/SCHEMA.md). Byte fields
 * are read at `pos`; a bit section starts with beginBits() and ends with endBits(), which
 * skips the zero padding to the next byte.
 *
 * Bits are served from a 32-bit window `win` (MSB-aligned, zero below the `nb` valid
 * bits) refilled a byte at a time to >= 25 valid bits. Past the end of the input the
 * refill feeds zero bytes instead of reading out of bounds; endBits() (and every byte
 * read) then throws HourCodecError, so truncated input never yields silent garbage, and
 * since every loop is bounded by the point count nothing can spin.
 */
import { HourCodecError } from './errors.js';
import { RICE_ESCAPE as RICE_ESCAPE_ } from './hour-format.js';

// Local copies of imported constants: tsx (and other CJS-style transpilers) turn imported
// bindings into getter calls, which would sit in the hot loops.
const RICE_ESCAPE = RICE_ESCAPE_;

const TWO32 = 4294967296;

export class BitReader {
  readonly buf: Uint8Array;
  readonly end: number;
  /** Next byte to load (byte mode: next byte to read). */
  pos: number;
  /** Bit window, MSB first; `nb` valid bits. Public for the decoders' inlined hot loops. */
  win = 0;
  nb = 0;
  /** High word of the last readRice64 (the low word is its return value). */
  hi = 0;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  fail(what: string): never {
    throw new HourCodecError(what, this.pos);
  }

  // ---- byte fields -------------------------------------------------------------------

  readU8(): number {
    if (this.pos >= this.end) this.fail('truncated');
    return this.buf[this.pos++]!;
  }

  readU32(): number {
    if (this.pos + 4 > this.end) this.fail('truncated');
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
  }

  /** Unsigned LEB128, at most 8 bytes (values below 2^56; callers bound them further). */
  readUvarint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.readU8();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    return this.fail('varint longer than 8 bytes');
  }

  /** A uvarint that must lie in [lo, hi]. */
  readUvarintIn(lo: number, hi: number, what: string): number {
    const v = this.readUvarint();
    if (v < lo || v > hi) this.fail(`${what} ${v} outside ${lo}..${hi}`);
    return v;
  }

  /** Zigzag uvarint; |v| <= 2^52. */
  readSvarint(): number {
    const u = this.readUvarint();
    if (u > Number.MAX_SAFE_INTEGER) this.fail('signed varint out of range');
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  // ---- bit fields --------------------------------------------------------------------

  beginBits(): void {
    this.win = 0;
    this.nb = 0;
  }

  /** Ends a bit section: drops the padding, rewinds the look-ahead, checks for overrun. */
  endBits(): void {
    const bitPos = this.pos * 8 - this.nb;
    const next = Math.ceil(bitPos / 8);
    if (next > this.end) throw new HourCodecError('truncated bit section', this.end);
    this.pos = next;
    this.win = 0;
    this.nb = 0;
  }

  /** Fails early when fewer than `bits` bits remain (so a short cell cannot claim much work). */
  checkBitsLeft(bits: number): void {
    if (bits > (this.end - this.pos) * 8 + this.nb) this.fail('truncated bit section');
  }

  /** Tops the window up to >= 25 valid bits (zeros past the end). */
  refill(): void {
    let nb = this.nb;
    let win = this.win;
    let p = this.pos;
    const b = this.buf;
    const end = this.end;
    while (nb <= 24) {
      win |= (p < end ? b[p]! : 0) << (24 - nb);
      p++;
      nb += 8;
    }
    this.nb = nb;
    this.win = win;
    this.pos = p;
  }

  /** Reads `n` bits, 0 <= n <= 25. */
  readBits(n: number): number {
    if (n === 0) return 0;
    if (this.nb < n) this.refill();
    const v = this.win >>> (32 - n);
    this.win <<= n;
    this.nb -= n;
    return v;
  }

  /** Reads `n` bits, 0 <= n <= 32, as an unsigned number. */
  readBits32(n: number): number {
    if (n <= 25) return this.readBits(n);
    return (this.readBits(n - 16) * 65536 + this.readBits(16)) >>> 0;
  }

  /** Reads `n` bits, 0 <= n <= 53. */
  readWide(n: number): number {
    if (n <= 32) return this.readBits32(n);
    return this.readBits(n - 32) * TWO32 + this.readBits32(32);
  }

  /**
   * The unary quotient: the number of zero bits before the next one bit (consumed), or -1
   * for an escape (RICE_ESCAPE zero bits, consumed).
   */
  readUnary(): number {
    if (this.nb < 25) this.refill();
    const q = Math.clz32(this.win);
    if (q >= RICE_ESCAPE) {
      this.win <<= RICE_ESCAPE;
      this.nb -= RICE_ESCAPE;
      return -1;
    }
    this.win <<= q + 1;
    this.nb -= q + 1;
    return q;
  }

  /** A Rice code (see BitWriter.writeRice) as a number; exact below 2^53. */
  readRice(k: number, escBits: 32 | 64): number {
    const q = this.readUnary();
    if (q < 0) return escBits === 64 ? this.readBits32(32) * TWO32 + this.readBits32(32) : this.readBits32(32);
    return k === 0 ? q : q * 2 ** k + this.readWide(k);
  }

  /**
   * Reads n Rice codes (parameter k) into out[0..n). For k <= 24 the window is kept in
   * locals and each code is one Math.clz32 plus shifts (the decode hot loop).
   */
  readRiceRun(k: number, escBits: 32 | 64, out: Float64Array, n: number): void {
    this.checkBitsLeft(n * (k + 1));
    if (k > 24) {
      for (let i = 0; i < n; i++) out[i] = this.readRice(k, escBits);
      return;
    }
    const buf = this.buf;
    const end = this.end;
    const mask = (1 << k) - 1;
    let win = this.win;
    let nb = this.nb;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      while (nb <= 24) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      const q = Math.clz32(win);
      if (q >= RICE_ESCAPE) {
        this.win = win << RICE_ESCAPE;
        this.nb = nb - RICE_ESCAPE;
        this.pos = pos;
        out[i] = escBits === 64 ? this.readBits32(32) * TWO32 + this.readBits32(32) : this.readBits32(32);
        win = this.win;
        nb = this.nb;
        pos = this.pos;
        continue;
      }
      win <<= q + 1;
      nb -= q + 1;
      while (nb < k) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      out[i] = (q << k) | ((win >>> (32 - k)) & mask);
      win <<= k;
      nb -= k;
    }
    this.win = win;
    this.nb = nb;
    this.pos = pos;
  }

  /**
   * Reads n 64-bit Rice codes (parameter k) into hiOut/loOut[0..n). For 32 < k <= 56 (the
   * float-delta case) the window is kept in locals: the unary part, k - 32 <= 24 high bits
   * and the low word as two 16-bit reads.
   */
  readRice64Run(k: number, hiOut: Uint32Array, loOut: Uint32Array, n: number): void {
    this.checkBitsLeft(n * (k + 1));
    if (k <= 32 || k > 56) {
      for (let i = 0; i < n; i++) {
        loOut[i] = this.readRice64(k);
        hiOut[i] = this.hi;
      }
      return;
    }
    const buf = this.buf;
    const end = this.end;
    const hb = k - 32;
    let win = this.win;
    let nb = this.nb;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      while (nb <= 24) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      const q = Math.clz32(win);
      if (q >= RICE_ESCAPE) {
        this.win = win << RICE_ESCAPE;
        this.nb = nb - RICE_ESCAPE;
        this.pos = pos;
        hiOut[i] = this.readBits32(32);
        loOut[i] = this.readBits32(32);
        win = this.win;
        nb = this.nb;
        pos = this.pos;
        continue;
      }
      win <<= q + 1;
      nb -= q + 1;
      while (nb <= 24) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      hiOut[i] = (q << hb) | (win >>> (32 - hb));
      win <<= hb;
      nb -= hb;
      while (nb <= 24) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      const top = win >>> 16;
      win <<= 16;
      nb -= 16;
      while (nb <= 24) {
        win |= (pos < end ? buf[pos]! : 0) << (24 - nb);
        pos++;
        nb += 8;
      }
      loOut[i] = ((top << 16) | (win >>> 16)) >>> 0;
      win <<= 16;
      nb -= 16;
    }
    this.win = win;
    this.nb = nb;
    this.pos = pos;
  }

  /** A 64-bit Rice code (see BitWriter.writeRice64): returns the low word, sets `hi`. */
  readRice64(k: number): number {
    const q = this.readUnary();
    if (q < 0) {
      this.hi = this.readBits32(32);
      return this.readBits32(32);
    }
    if (k >= 32) {
      this.hi = k === 32 ? q : ((q << (k - 32)) | this.readBits32(k - 32)) >>> 0;
      return this.readBits32(32);
    }
    const low = this.readBits32(k);
    this.hi = k === 0 ? 0 : q >>> (32 - k);
    return ((q << k) | low) >>> 0;
  }
}
