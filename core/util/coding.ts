/**
 * Append-style encoders and a sticky-error decoder for the byte formats in core/FORMAT.md.
 * Fixed-width integers are big-endian. Varints are unsigned LEB128, up to 2^53 - 1
 * (JavaScript's exact integer range); larger values are a decode error.
 */

/** A growable byte buffer: `appendX` methods write at the end and grow geometrically. */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  private dv: DataView;

  constructor(initialBytes = 256) {
    this.buf = new Uint8Array(initialBytes);
    this.dv = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.dv = new DataView(next.buffer);
  }

  reset(): void {
    this.pos = 0;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  u16(v: number): this {
    this.ensure(2);
    this.dv.setUint16(this.pos, v);
    this.pos += 2;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    this.dv.setUint32(this.pos, v);
    this.pos += 4;
    return this;
  }

  /** An unsigned integer up to 2^53 - 1 as 8 bytes big-endian. */
  u64(v: number): this {
    this.ensure(8);
    this.dv.setUint32(this.pos, Math.floor(v / 0x100000000));
    this.dv.setUint32(this.pos + 4, v >>> 0);
    this.pos += 8;
    return this;
  }

  uvarint(v: number): this {
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80;
      v = v >= 0x100000000 ? Math.floor(v / 128) : v >>> 7;
    }
    b[p++] = v;
    this.pos = p;
    return this;
  }

  bytes(src: Uint8Array): this {
    const n = src.length;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    if (n <= 32) {
      // Short arrays (keys, small values): a loop beats the call into TypedArray#set.
      for (let i = 0; i < n; i++) buf[p++] = src[i]!;
    } else {
      buf.set(src, p);
      p += n;
    }
    this.pos = p;
    return this;
  }

  /** <uvarint len><bytes len> */
  lpBytes(src: Uint8Array): this {
    this.uvarint(src.length);
    return this.bytes(src);
  }

  /** A copy of the written bytes. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** A view of the written bytes, valid until the next write or reset. */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Number of bytes `uvarint(v)` takes. */
export function uvarintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/**
 * Reads fields in order. On a short or malformed read it records `err` and returns zeros
 * from then on, so hot loops check once at the end (leveldb Slice parsing, Prometheus Decbuf).
 */
export class ByteReader {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;
  err: string | undefined;
  private readonly view: DataView;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private short(n: number, what: string): boolean {
    if (this.err !== undefined) return true;
    if (this.pos + n > this.end) {
      this.err = `truncated ${what} at offset ${this.pos}: need ${n} bytes, have ${this.end - this.pos}`;
      return true;
    }
    return false;
  }

  u8(): number {
    if (this.short(1, 'u8')) return 0;
    return this.buf[this.pos++]!;
  }

  u16(): number {
    if (this.short(2, 'u16')) return 0;
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    if (this.short(4, 'u32')) return 0;
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  u64(): number {
    if (this.short(8, 'u64')) return 0;
    const hi = this.view.getUint32(this.pos);
    const lo = this.view.getUint32(this.pos + 4);
    this.pos += 8;
    if (hi > 0x1fffff) {
      this.err = `u64 at offset ${this.pos - 8} exceeds 2^53`;
      return 0;
    }
    return hi * 0x100000000 + lo;
  }

  uvarint(): number {
    if (this.err !== undefined) return 0;
    const b = this.buf;
    let p = this.pos;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      if (p >= this.end) {
        this.err = `truncated varint at offset ${this.pos}`;
        return 0;
      }
      const byte = b[p++]!;
      result += (byte & 0x7f) * mul;
      if (byte < 0x80) {
        this.pos = p;
        return result;
      }
      mul *= 128;
    }
    this.err = `varint at offset ${this.pos} is longer than 8 bytes`;
    return 0;
  }

  /** A view of the next n bytes (no copy). */
  bytes(n: number): Uint8Array {
    if (this.short(n, 'bytes')) return new Uint8Array(0);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  lpBytes(): Uint8Array {
    const n = this.uvarint();
    return this.bytes(n);
  }
}
