/**
 * The SST bloom filter (leveldb util/bloom.cc): one filter per file over the "bloom keys"
 * (for the engine, the row part of each internal key), with double hashing
 * h_i = h + i * delta, delta = rotr(h, 17), h = murmur3(key, seed 0xbc9f1d34).
 *
 *   filter block := <bytes m: bit array, bit j at byte j >> 3, mask 1 << (j & 7)> <u8 k>
 *
 * m = max(64, n * bitsPerKey) bits rounded up to whole bytes; k = floor(bitsPerKey * 0.69)
 * clamped to [1, 30]. A k above 30 is reserved for other encodings: readers treat such a
 * filter as "may contain everything". At 10 bits/key the false-positive rate is about 1%.
 *
 * The builder keeps only 32-bit hashes (4 bytes per distinct key) and drops a key whose
 * hash equals the previous one: equal hashes set exactly the same bits, so deduplicating
 * by hash is exact. Single-threaded.
 */
import { murmur3 } from '../util/hash.js';
import { BLOOM_HASH_SEED } from './sst-format.js';

/** Probes used for `bitsPerKey` (k = bitsPerKey * ln 2, in [1, 30]). */
export function bloomProbes(bitsPerKey: number): number {
  const k = Math.floor(bitsPerKey * 0.69);
  return k < 1 ? 1 : k > 30 ? 30 : k;
}

/** The filter hash of bloomKey[start, end). */
export function bloomHash(key: Uint8Array, start = 0, end = key.length): number {
  return murmur3(key, start, end, BLOOM_HASH_SEED);
}

/** Collects key hashes, then encodes the filter block. */
export class BloomBuilder {
  private readonly bitsPerKey: number;
  private hashes = new Uint32Array(1024);
  private n = 0;

  /** REQUIRES: bitsPerKey > 0. */
  constructor(bitsPerKey: number) {
    if (!(bitsPerKey > 0)) throw new RangeError(`bitsPerKey must be > 0, got ${bitsPerKey}`);
    this.bitsPerKey = bitsPerKey;
  }

  /** Distinct hashes collected so far. */
  get keys(): number {
    return this.n;
  }

  /** Bytes the encoded filter will take with the keys added so far. */
  get sizeEstimate(): number {
    return Math.ceil(Math.max(64, this.n * this.bitsPerKey) / 8) + 1;
  }

  /** Adds a bloom key (not retained). */
  addKey(key: Uint8Array): void {
    this.addHash(murmur3(key, 0, key.length, BLOOM_HASH_SEED));
  }

  /** Adds a precomputed bloomHash(); a repeat of the previous hash is skipped. */
  addHash(h: number): void {
    const n = this.n;
    if (n > 0 && this.hashes[n - 1] === h) return;
    if (n === this.hashes.length) {
      const next = new Uint32Array(n * 2);
      next.set(this.hashes);
      this.hashes = next;
    }
    this.hashes[n] = h;
    this.n = n + 1;
  }

  /** Encodes the filter block for every hash added. */
  finish(): Uint8Array {
    const k = bloomProbes(this.bitsPerKey);
    const bytes = Math.ceil(Math.max(64, Math.ceil(this.n * this.bitsPerKey)) / 8);
    const bits = bytes * 8;
    const out = new Uint8Array(bytes + 1);
    out[bytes] = k;
    const hashes = this.hashes;
    for (let i = 0; i < this.n; i++) {
      let h = hashes[i]!;
      const delta = ((h >>> 17) | (h << 15)) >>> 0;
      for (let j = 0; j < k; j++) {
        const pos = h % bits;
        out[pos >>> 3]! |= 1 << (pos & 7);
        h = (h + delta) >>> 0;
      }
    }
    return out;
  }
}

/** A decoded filter block. Never has false negatives for keys that were added. */
export class BloomFilter {
  private readonly data: Uint8Array;
  private readonly bits: number;
  private readonly k: number;

  /** `data` is a filter block (retained, not copied). */
  constructor(data: Uint8Array) {
    this.data = data;
    this.bits = data.length < 2 ? 0 : (data.length - 1) * 8;
    this.k = data.length < 2 ? 0 : data[data.length - 1]!;
  }

  /** Probes per key as stored. */
  get probes(): number {
    return this.k;
  }

  /** Bits in the filter. */
  get sizeBits(): number {
    return this.bits;
  }

  /** False only when `key` (a bloom key) was certainly never added. */
  mayContain(key: Uint8Array): boolean {
    return this.mayContainHash(murmur3(key, 0, key.length, BLOOM_HASH_SEED));
  }

  /** mayContain() for a precomputed bloomHash(). */
  mayContainHash(hash: number): boolean {
    const k = this.k;
    if (k > 30) return true; // reserved for future encodings
    const bits = this.bits;
    if (bits === 0) return false;
    const data = this.data;
    let h = hash >>> 0;
    const delta = ((h >>> 17) | (h << 15)) >>> 0;
    for (let j = 0; j < k; j++) {
      const pos = h % bits;
      if ((data[pos >>> 3]! & (1 << (pos & 7))) === 0) return false;
      h = (h + delta) >>> 0;
    }
    return true;
  }
}
