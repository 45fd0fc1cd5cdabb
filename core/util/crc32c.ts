/**
 * CRC-32C (Castagnoli, polynomial 0x82F63B78 reflected), slicing-by-8, plus leveldb's
 * mask: checksums stored next to the data they cover are masked so that a CRC computed
 * over bytes that themselves contain CRCs stays well distributed (leveldb util/crc32c.h).
 */

const POLY = 0x82f63b78;
const T = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n]!;
  for (let s = 1; s < 8; s++) {
    c = T[c & 0xff]! ^ (c >>> 8);
    T[s * 256 + n] = c;
  }
}

/** Extends `crc` (0 to start) over buf[start, end). Returns an unsigned 32-bit value. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length, crc = 0): number {
  let c = ~crc;
  let i = start;
  const end8 = end - 7;
  for (; i < end8; i += 8) {
    const a = c ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    c =
      T[7 * 256 + (a & 0xff)]! ^
      T[6 * 256 + ((a >>> 8) & 0xff)]! ^
      T[5 * 256 + ((a >>> 16) & 0xff)]! ^
      T[4 * 256 + (a >>> 24)]! ^
      T[3 * 256 + buf[i + 4]!]! ^
      T[2 * 256 + buf[i + 5]!]! ^
      T[256 + buf[i + 6]!]! ^
      T[buf[i + 7]!]!;
  }
  for (; i < end; i++) c = T[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const MASK_DELTA = 0xa282ead8;

/** leveldb's mask: rotate right by 15 bits and add a constant. */
export function maskCrc(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

export function unmaskCrc(masked: number): number {
  const rot = (masked - MASK_DELTA) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}
