/**
 * MurmurHash3 x86_32 (Austin Appleby, public domain) over a byte range, for the SST bloom
 * filter and anything else that needs a fast, well-mixed 32-bit hash of a key.
 *
 * Invariants: the output for a given (bytes, seed) never changes; it is part of the SST
 * filter format (core/FORMAT.md, "SST", filter block). Blocks of 4 bytes are read
 * little-endian, as in the reference implementation, so the values match published test
 * vectors. No allocation; pure function, safe to call from anywhere.
 */

/**
 * The 32-bit MurmurHash3 (x86_32 variant) of buf[start, end) with `seed`.
 * Returns an unsigned 32-bit integer.
 */
export function murmur3(buf: Uint8Array, start = 0, end = buf.length, seed = 0): number {
  let h = seed | 0;
  const len = end - start;
  const end4 = start + (len & ~3);
  let i = start;
  for (; i < end4; i += 4) {
    let k = buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = len & 3;
  if (tail !== 0) {
    let k = 0;
    if (tail === 3) k ^= buf[i + 2]! << 16;
    if (tail >= 2) k ^= buf[i + 1]! << 8;
    k ^= buf[i]!;
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
  }
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
