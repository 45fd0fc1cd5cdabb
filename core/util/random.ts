/**
 * A small seeded PRNG for tests, benchmarks and data-structure coin flips (skiplist
 * levels): xoshiro128** seeded through splitmix32, so nearby seeds give unrelated streams.
 *
 * Invariants: the sequence for a seed is fixed forever (tests print seeds and replay them
 * with TEST_SEED). NOT cryptographic. Single-threaded like everything else in core/.
 */

/** A deterministic pseudo-random generator; the same seed yields the same sequence. */
export class Random {
  /** The seed this generator was created with (print it when a randomized test fails). */
  readonly seed: number;
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is any number; only its low 32 bits matter. */
  constructor(seed: number) {
    this.seed = seed;
    let s = seed >>> 0;
    const split = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) | 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1; // the all-zero state is a fixed point
  }

  /** The next raw 32-bit value, unsigned. */
  nextU32(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9);
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r >>> 0;
  }

  /** A float in [0, 1) with 32 random bits. */
  next(): number {
    return this.nextU32() / 0x100000000;
  }

  /** An integer in [0, n); `n` must be a positive integer <= 2^32. */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** `n` random bytes in a new array. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const v = this.nextU32();
      out[i] = v;
      out[i + 1] = v >>> 8;
      out[i + 2] = v >>> 16;
      out[i + 3] = v >>> 24;
    }
    if (i < n) {
      let v = this.nextU32();
      for (; i < n; i++, v >>>= 8) out[i] = v;
    }
    return out;
  }

  /** Shuffles `arr` in place (Fisher-Yates) and returns it. */
  shuffle<T>(arr: T[]): T[] {
    for (let i = arr.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = arr[i]!;
      arr[i] = arr[j]!;
      arr[j] = t;
    }
    return arr;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
