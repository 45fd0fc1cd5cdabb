/**
 * Builds one block (data or index) in the leveldb table_format layout:
 *
 *   entry*  := <uvarint shared><uvarint unshared><uvarint valueLen>
 *              <bytes unshared: key delta><bytes valueLen: value>
 *   restart := <u32 offset of an entry whose shared == 0>      (one per restartInterval entries)
 *   block   := entry* restart* <u32 numRestarts>
 *
 * `shared` is the length of the prefix this key has in common with the previous key; at a
 * restart point it is 0 so that a reader can binary-search the restart array and decode
 * forward from there. u32s are big-endian. Format: core/FORMAT.md, "SST", data blocks.
 *
 * Invariants: the first entry is a restart (offset 0); restart offsets ascend; an empty
 * block is `restart 0, numRestarts 1` (8 bytes). Keys must arrive in increasing order;
 * the builder does not compare them (the SstWriter checks order under HORAE_INVARIANTS).
 * Single-threaded; buffers are reused across reset() so a writer allocates no memory per entry.
 */

/** Accumulates entries of one block; reuse it with reset() after finish(). */
export class BlockBuilder {
  /** Entries between restart points (>= 1). Index blocks use 1 so every key is whole. */
  readonly restartInterval: number;
  private buf: Uint8Array;
  private pos = 0;
  private restarts: Uint32Array;
  private numRestarts = 1;
  private counter = 0;
  private lastKey: Uint8Array;
  private lastKeyLen = 0;
  private count = 0;

  constructor(restartInterval = 16, initialBytes = 4096) {
    if (!Number.isInteger(restartInterval) || restartInterval < 1) {
      throw new RangeError(`restartInterval must be an integer >= 1, got ${restartInterval}`);
    }
    this.restartInterval = restartInterval;
    this.buf = new Uint8Array(Math.max(64, initialBytes));
    this.restarts = new Uint32Array(64);
    this.lastKey = new Uint8Array(64);
  }

  /** Number of entries added since the last reset(). */
  get entries(): number {
    return this.count;
  }

  /** Bytes finish() would return now: entries + restart array + count. */
  get sizeEstimate(): number {
    return this.pos + 4 * this.numRestarts + 4;
  }

  /** The last key added, as a view valid until the next add() or reset(). */
  lastKeyView(): Uint8Array {
    return this.lastKey.subarray(0, this.lastKeyLen);
  }

  /**
   * Appends an entry. REQUIRES: `key` sorts after the previous key of this block; finish()
   * has not been called since the last reset(). Neither buffer is retained.
   */
  add(key: Uint8Array, value: Uint8Array): void {
    const klen = key.length;
    const vlen = value.length;
    let shared = 0;
    if (this.counter < this.restartInterval) {
      const last = this.lastKey;
      const n = this.lastKeyLen < klen ? this.lastKeyLen : klen;
      while (shared < n && last[shared] === key[shared]) shared++;
    } else {
      if (this.numRestarts === this.restarts.length) {
        const next = new Uint32Array(this.restarts.length * 2);
        next.set(this.restarts);
        this.restarts = next;
      }
      this.restarts[this.numRestarts++] = this.pos;
      this.counter = 0;
    }
    const unshared = klen - shared;
    const need = this.pos + 24 + unshared + vlen;
    if (need > this.buf.length) this.grow(need);
    const b = this.buf;
    let p = this.pos;
    // Three varints; the common case is one byte each.
    if (shared < 0x80) b[p++] = shared;
    else p = putVarint(b, p, shared);
    if (unshared < 0x80) b[p++] = unshared;
    else p = putVarint(b, p, unshared);
    if (vlen < 0x80) b[p++] = vlen;
    else p = putVarint(b, p, vlen);
    // NB: short copies by hand; TypedArray#set has a fixed cost that dominates below ~64 bytes.
    if (unshared < 64) {
      for (let i = shared; i < klen; i++) b[p++] = key[i]!;
    } else {
      b.set(key.subarray(shared), p);
      p += unshared;
    }
    if (vlen < 64) {
      for (let i = 0; i < vlen; i++) b[p++] = value[i]!;
    } else {
      b.set(value, p);
      p += vlen;
    }
    this.pos = p;
    if (klen > this.lastKey.length) {
      const next = new Uint8Array(Math.max(klen, this.lastKey.length * 2));
      next.set(this.lastKey.subarray(0, this.lastKeyLen));
      this.lastKey = next;
    }
    const last = this.lastKey;
    if (unshared < 64) {
      for (let i = shared; i < klen; i++) last[i] = key[i]!;
    } else {
      last.set(key.subarray(shared), shared);
    }
    this.lastKeyLen = klen;
    this.counter++;
    this.count++;
  }

  /**
   * Appends the restart array and returns the whole block as a view of the internal
   * buffer, valid until the next reset(). Call reset() before adding again.
   */
  finish(): Uint8Array {
    const need = this.pos + 4 * this.numRestarts + 4;
    if (need > this.buf.length) this.grow(need);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < this.numRestarts; i++) p = putU32(b, p, this.restarts[i]!);
    p = putU32(b, p, this.numRestarts);
    return b.subarray(0, p);
  }

  /** Empties the builder, keeping its buffers. */
  reset(): void {
    this.pos = 0;
    this.numRestarts = 1;
    this.restarts[0] = 0;
    this.counter = 0;
    this.lastKeyLen = 0;
    this.count = 0;
  }

  private grow(need: number): void {
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
}

function putVarint(b: Uint8Array, p: number, v: number): number {
  while (v >= 0x80) {
    b[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  b[p++] = v;
  return p;
}

function putU32(b: Uint8Array, p: number, v: number): number {
  b[p] = v >>> 24;
  b[p + 1] = (v >>> 16) & 0xff;
  b[p + 2] = (v >>> 8) & 0xff;
  b[p + 3] = v & 0xff;
  return p + 4;
}
