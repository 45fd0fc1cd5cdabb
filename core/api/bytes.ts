/**
 * Byte helpers shared by every layer: the one unsigned comparator, key successors,
 * hex and UTF-8 conversions. Keys are compared as unsigned bytes, lexicographically;
 * a proper prefix sorts before every extension of it.
 */

const EMPTY = new Uint8Array(0);
export const EMPTY_BYTES: Uint8Array = EMPTY;

/** Unsigned lexicographic comparison: negative, zero or positive. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Compares a[aStart, aEnd) with b[bStart, bEnd) without allocating views. */
export function compareRange(
  a: Uint8Array, aStart: number, aEnd: number,
  b: Uint8Array, bStart: number, bEnd: number,
): number {
  const la = aEnd - aStart;
  const lb = bEnd - bStart;
  const n = la < lb ? la : lb;
  for (let i = 0; i < n; i++) {
    const d = a[aStart + i]! - b[bStart + i]!;
    if (d !== 0) return d;
  }
  return la - lb;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function startsWith(key: Uint8Array, prefix: Uint8Array): boolean {
  if (key.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (key[i] !== prefix[i]) return false;
  return true;
}

/**
 * The smallest key greater than every key starting with `prefix`, or an empty array
 * (meaning "end of table") when the prefix is all 0xff or empty.
 */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] !== 0xff) {
      const out = prefix.slice(0, i + 1);
      out[i]!++;
      return out;
    }
  }
  return EMPTY;
}

/** The smallest key strictly greater than `key`: key + 0x00. */
export function keySuccessor(key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length + 1);
  out.set(key);
  return out;
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  return concatByteList(parts);
}

/** concatBytes over a list of any length (no spread: a long list would pass the argument limit). */
export function concatByteList(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const HEX = '0123456789abcdef';

export function toHex(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]! >> 4]! + HEX[b[i]! & 15]!;
  return s;
}

/** Parses hex, ignoring whitespace. Throws TypeError on odd length or non-hex digits. */
export function fromHex(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, '');
  if (clean.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(clean)) {
    throw new TypeError(`invalid hex string: ${JSON.stringify(hex.slice(0, 40))}`);
  }
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

export function fromUtf8(b: Uint8Array): string {
  return decoder.decode(b);
}

/** Buffer.prototype.latin1Slice (Node): bytes to a string of the same char codes, for any Uint8Array. */
const nativeLatin1 = (globalThis as { Buffer?: { prototype: { latin1Slice?: (this: Uint8Array, start: number, end: number) => string } } }).Buffer?.prototype.latin1Slice;

/** Bytes as a latin1 string, one char per byte: the form key-regex filters match against. */
export function latin1(b: Uint8Array): string {
  return latin1Range(b, 0, b.length);
}

/** Bytes [start, end) as a latin1 string (the text of a number token, say). */
export function latin1Range(b: Uint8Array, start: number, end: number): string {
  // Node's native conversion: a third of the time of fromCharCode over a 56-byte row key
  // (a keyRegex scan converts every row key), a quarter of a spread view's over a
  // 17-digit number; the loop serves other runtimes.
  if (nativeLatin1 !== undefined) return nativeLatin1.call(b, start, end);
  let s = '';
  for (let i = start; i < end; i += 4096) {
    s += String.fromCharCode.apply(null, b.subarray(i, Math.min(i + 4096, end)) as unknown as number[]);
  }
  return s;
}

/** 8-byte big-endian signed counter encoding used by `increment`. */
export function encodeInt64(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, v));
  return out;
}

export function decodeInt64(b: Uint8Array): bigint {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getBigInt64(0);
}
