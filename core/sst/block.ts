/**
 * A decoded, immutable block (see block-builder.ts for the layout) and its iterator.
 *
 * Block.parse validates the restart array once (bounds, ascending, first restart at 0) and
 * keeps it as a Uint32Array, so seeks binary-search restart keys and then decode forward
 * at most `restartInterval` entries. Entries are bounds-checked as they are decoded: a
 * malformed entry never yields bytes outside the block's entry region; the iterator
 * records a STORE_CORRUPTION error naming the block (`label`, e.g. "sst /d/12.sst: block
 * @4096") and the entry's offset inside it, and stays invalid from then on.
 *
 * Entry index. A block that keeps being sought (point gets of hot rows) gets, on its
 * SEEKS_BEFORE_INDEX-th seek, the full key and offset of every entry (Block.index), so later
 * seeks binary-search every entry instead of decoding up to a restart interval of them. It
 * is built once per block, costs about the block's key bytes (Block.indexBytes; the SST
 * reader re-charges the block cache for it), and is never built over malformed entries
 * (those seeks decode as before and report the damage).
 *
 * Lifetimes: value() returns a view into the block's immutable bytes (keep it as long as
 * you like); key() returns a view of a buffer the iterator reuses, valid until the next
 * positioning call. Blocks are shared (through the block cache) by many iterators; an
 * iterator is single-threaded and never mutates its block's bytes (only its seek count and
 * entry index, which any iterator may build).
 */
import type { Comparator, InternalIterator, RangeComparator } from '../iter/internal-iterator.js';
import type { StoreError } from '../api/errors.js';
import { corruption } from './sst-format.js';

/** Seeks into one block after which it gets its entry index (see the file header). */
export const SEEKS_BEFORE_INDEX = 2;

/** Every entry's offset and full key (entry i's key: keys[keyEnds[i - 1] ?? 0, keyEnds[i])). */
export interface EntryIndex {
  readonly offsets: Uint32Array;
  readonly keyEnds: Uint32Array;
  readonly keys: Uint8Array;
}

/** A parsed block: entry bytes plus the decoded restart array. Immutable bytes. */
export class Block {
  /** The whole block (entries, restart array, count). */
  readonly data: Uint8Array;
  /** End of the entry region = start of the restart array. */
  readonly restartsOffset: number;
  /** Offsets of the restart entries, ascending. */
  readonly restarts: Uint32Array;
  /** Approximate memory held, for the block cache. */
  readonly charge: number;
  /** Names the block in error messages, e.g. "sst /d/000012.sst: block @4096". */
  readonly label: string;
  /** Seeks into this block so far, by any iterator (until its entry index exists). */
  seeks = 0;
  /** The entry index, once built (see the file header); undefined before, or for damaged entries. */
  index: EntryIndex | undefined;
  /** The entries could not be indexed (malformed): seeks decode as before. */
  indexFailed = false;

  private constructor(data: Uint8Array, restartsOffset: number, restarts: Uint32Array, label: string) {
    this.data = data;
    this.restartsOffset = restartsOffset;
    this.restarts = restarts;
    this.label = label;
    this.charge = data.byteLength + restarts.byteLength + 160;
  }

  /**
   * Parses the trailer of `data` (entries are decoded lazily by iterators). Throws
   * STORE_CORRUPTION (message starting with `label`) when the restart array is malformed.
   * `data` is retained, not copied: the caller must never modify it afterwards.
   */
  static parse(data: Uint8Array, label: string): Block {
    const len = data.length;
    if (len < 4) throw corruption(`${label}: block too short (${len} bytes)`);
    const n = readU32(data, len - 4);
    if (n > (len - 4) / 4) {
      throw corruption(`${label}: restart count ${n} does not fit in ${len} bytes`);
    }
    const restartsOffset = len - 4 - 4 * n;
    const restarts = new Uint32Array(n);
    let prev = -1;
    for (let i = 0; i < n; i++) {
      const r = readU32(data, restartsOffset + 4 * i);
      const ok = i === 0 ? r === 0 : r > prev && r < restartsOffset;
      if (!ok) {
        throw corruption(`${label}: bad restart point ${i} = ${r} (entries end at ${restartsOffset})`);
      }
      restarts[i] = r;
      prev = r;
    }
    if (n === 0 && restartsOffset !== 0) throw corruption(`${label}: entries without restart points`);
    return new Block(data, restartsOffset, restarts, label);
  }

  /** Number of restart points. */
  get numRestarts(): number {
    return this.restarts.length;
  }

  /** Memory the entry index holds (0 before it is built), beyond `charge`. */
  get indexBytes(): number {
    const ix = this.index;
    return ix === undefined ? 0 : ix.keys.byteLength + ix.offsets.byteLength + ix.keyEnds.byteLength + 64;
  }

  /** Builds the entry index (once); leaves it undefined, and indexFailed set, when an entry is malformed. */
  buildIndex(): void {
    if (this.index === undefined && !this.indexFailed) new BlockIterator(this, UNORDERED).indexBlock();
  }

  /**
   * A new iterator over this block, ordered by `compare` (the order it was written in).
   * `compareRange`, when given, must agree exactly with `compare` (see RangeComparator);
   * seeks then compare keys in place instead of creating views.
   */
  iterator(compare: Comparator, compareRange?: RangeComparator): BlockIterator {
    return new BlockIterator(this, compare, compareRange);
  }
}

/** For iterators that only decode forward (Block.buildIndex): they never compare keys. */
const UNORDERED: Comparator = () => {
  throw new Error('BlockIterator: this iterator does not compare keys');
};

// Set by readVarint: the position after the varint it decoded.
let varintEnd = 0;

// Set by readEntryHeader (module scratch: no allocation per entry on the hot path).
let hdrShared = 0;
let hdrUnshared = 0;
let hdrValueLen = 0;
let hdrEnd = 0;

/**
 * Decodes an entry header `<shared><unshared><valueLen>` at p (one byte each in the common
 * case) into the hdr* scratch variables; false when a varint is malformed.
 */
function readEntryHeader(d: Uint8Array, p: number, limit: number): boolean {
  if (p + 3 <= limit && (d[p]! | d[p + 1]!) < 0x80) {
    const c = d[p + 2]!;
    if (c < 0x80) {
      hdrShared = d[p]!;
      hdrUnshared = d[p + 1]!;
      hdrValueLen = c;
      hdrEnd = p + 3;
      return true;
    }
    // A value of 128 bytes to 16 KiB (an hour cell, say): a two-byte length.
    if (p + 4 <= limit && d[p + 3]! < 0x80) {
      hdrShared = d[p]!;
      hdrUnshared = d[p + 1]!;
      hdrValueLen = (c & 0x7f) | (d[p + 3]! << 7);
      hdrEnd = p + 4;
      return true;
    }
  }
  hdrShared = readVarint(d, p, limit);
  hdrUnshared = hdrShared < 0 ? -1 : readVarint(d, varintEnd, limit);
  hdrValueLen = hdrUnshared < 0 ? -1 : readVarint(d, varintEnd, limit);
  hdrEnd = varintEnd;
  return hdrValueLen >= 0;
}

/** Decodes a uvarint (< 2^32) at p, not reading at or past `limit`; -1 when malformed. */
function readVarint(d: Uint8Array, p: number, limit: number): number {
  let result = 0;
  let mul = 1; // 2^shift, without a pow call per byte
  for (let shift = 0; shift <= 28; shift += 7, mul *= 128) {
    if (p >= limit) return -1;
    const b = d[p++]!;
    result += (b & 0x7f) * mul;
    if (b < 0x80) {
      varintEnd = p;
      return result;
    }
  }
  return -1;
}

function readU32(d: Uint8Array, p: number): number {
  return ((d[p]! << 24) | (d[p + 1]! << 16) | (d[p + 2]! << 8) | d[p + 3]!) >>> 0;
}

/**
 * Iterates one block forward and backward. Implements InternalIterator; `close()` only
 * drops the reference to the block. reset() re-targets the iterator to another block,
 * so a file iterator can reuse one object (and its key buffer) for every block.
 */
export class BlockIterator implements InternalIterator {
  private readonly compare: Comparator;
  private readonly compareRange: RangeComparator | undefined;
  private block!: Block;
  private data!: Uint8Array;
  private restarts!: Uint32Array;
  private numRestarts = 0;
  private limit = 0;
  /** Offset of the current entry; == limit when not positioned at an entry. */
  private cur = 0;
  /** Offset just past the current entry. */
  private nextOff = 0;
  /** Index of the restart at or before `cur` (leveldb's restart_index_). */
  private restartIdx = 0;
  private keyBuf: Uint8Array = new Uint8Array(64);
  private keyLen = 0;
  private keyView: Uint8Array | undefined;
  private valStart = 0;
  private valEnd = 0;
  private isValid = false;
  private err: StoreError | undefined;

  constructor(block: Block, compare: Comparator, compareRange?: RangeComparator) {
    this.compare = compare;
    this.compareRange = compareRange;
    this.reset(block);
  }

  /** Points the iterator at `block` (unpositioned) and clears any error. */
  reset(block: Block): void {
    this.block = block;
    this.data = block.data;
    this.restarts = block.restarts;
    this.numRestarts = block.restarts.length;
    this.limit = block.restartsOffset;
    this.err = undefined;
    this.invalidate();
  }

  get valid(): boolean {
    return this.isValid;
  }

  /** The current block. */
  get currentBlock(): Block {
    return this.block;
  }

  seekToFirst(): void {
    if (this.err !== undefined || this.numRestarts === 0) return this.invalidate();
    this.seekToRestart(0);
    this.parseNext();
  }

  seekToLast(): void {
    if (this.err !== undefined || this.numRestarts === 0) return this.invalidate();
    this.seekToRestart(this.numRestarts - 1);
    while (this.parseNext() && this.nextOff < this.limit) {
      // decode forward to the last entry
    }
  }

  seek(target: Uint8Array): void {
    if (this.err !== undefined || this.numRestarts === 0) return this.invalidate();
    const b = this.block;
    if (b.index === undefined && !b.indexFailed && ++b.seeks >= SEEKS_BEFORE_INDEX) this.indexBlock();
    if (b.index !== undefined) return this.seekIndexed(b.index, target);
    // Binary search for the last restart whose key is < target.
    let left = 0;
    let right = this.numRestarts - 1;
    while (left < right) {
      const mid = (left + right + 1) >>> 1;
      const c = this.compareRestartKey(mid, target);
      if (this.err !== undefined) return;
      if (c < 0) left = mid;
      else right = mid - 1;
    }
    this.seekToRestart(left);
    const rc = this.compareRange;
    if (rc !== undefined) {
      // In place: no key view per entry stepped over (key() creates one on demand).
      while (this.parseNext()) {
        if (rc(this.keyBuf, 0, this.keyLen, target) >= 0) return;
      }
      return;
    }
    const compare = this.compare;
    while (this.parseNext()) {
      if (compare(this.key(), target) >= 0) return;
    }
  }

  /**
   * Builds the block's entry index by decoding every entry as a forward pass does
   * (parseNext, with its checks). On a malformed entry the block is marked unindexable and
   * the error is not kept: a seek that never reaches the damage must not fail because the
   * index pass did. Leaves the iterator unpositioned.
   */
  indexBlock(): void {
    const b = this.block;
    const offsets: number[] = [];
    const keyEnds: number[] = [];
    let keys = new Uint8Array(Math.max(64, this.limit >>> 2));
    let n = 0;
    this.seekToRestart(0);
    while (this.parseNext()) {
      if (n + this.keyLen > keys.length) {
        const next = new Uint8Array(Math.max(keys.length * 2, n + this.keyLen));
        next.set(keys.subarray(0, n));
        keys = next;
      }
      keys.set(this.keyBuf.subarray(0, this.keyLen), n);
      offsets.push(this.cur);
      n += this.keyLen;
      keyEnds.push(n);
    }
    if (this.err !== undefined) {
      b.indexFailed = true;
      this.err = undefined;
      return;
    }
    b.index = { offsets: Uint32Array.from(offsets), keyEnds: Uint32Array.from(keyEnds), keys: keys.slice(0, n) };
  }

  /** seek() with the block's entry index: a binary search over every entry's full key. */
  private seekIndexed(ix: EntryIndex, target: Uint8Array): void {
    const keys = ix.keys;
    const ends = ix.keyEnds;
    const rc = this.compareRange;
    let lo = 0;
    let hi = ix.offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ks = mid === 0 ? 0 : ends[mid - 1]!;
      const c = rc !== undefined ? rc(keys, ks, ends[mid]!, target) : this.compare(keys.subarray(ks, ends[mid]!), target);
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === ix.offsets.length) return this.invalidate();
    // Position at entry lo as parseNext would have: its full key in keyBuf (the next
    // entry shares a prefix of it), its value, the restart at or before it.
    const at = ix.offsets[lo]!;
    readEntryHeader(this.data, at, this.limit); // checked when the index was built
    const ks = lo === 0 ? 0 : ends[lo - 1]!;
    const klen = ends[lo]! - ks;
    if (klen > this.keyBuf.length) this.keyBuf = new Uint8Array(Math.max(klen, this.keyBuf.length * 2));
    this.keyBuf.set(keys.subarray(ks, ks + klen));
    this.keyLen = klen;
    this.keyView = undefined;
    this.cur = at;
    this.valStart = hdrEnd + hdrUnshared;
    this.valEnd = this.valStart + hdrValueLen;
    this.nextOff = this.valEnd;
    const restarts = this.restarts;
    let r = 0;
    while (r + 1 < this.numRestarts && restarts[r + 1]! <= at) r++;
    this.restartIdx = r;
    this.isValid = true;
  }

  seekForPrev(target: Uint8Array): void {
    this.seek(target);
    if (this.isValid) {
      const rc = this.compareRange;
      const c = rc !== undefined ? rc(this.keyBuf, 0, this.keyLen, target) : this.compare(this.key(), target);
      if (c > 0) this.prev();
    } else if (this.err === undefined) {
      this.seekToLast();
    }
  }

  next(): void {
    this.parseNext();
  }

  prev(): void {
    const original = this.cur;
    const restarts = this.restarts;
    while (restarts[this.restartIdx]! >= original) {
      if (this.restartIdx === 0) return this.invalidate();
      this.restartIdx--;
    }
    this.seekToRestart(this.restartIdx);
    do {
      if (!this.parseNext()) return;
    } while (this.nextOff < original);
  }

  /** The current key: a view of a reused buffer, valid until the next positioning call. */
  key(): Uint8Array {
    return (this.keyView ??= this.keyBuf.subarray(0, this.keyLen));
  }

  /** The current value: a view into the immutable block bytes; may be kept. */
  value(): Uint8Array {
    return this.data.subarray(this.valStart, this.valEnd);
  }

  error(): StoreError | undefined {
    return this.err;
  }

  close(): void {
    this.invalidate();
  }

  private invalidate(): void {
    this.isValid = false;
    this.cur = this.limit;
    this.nextOff = this.limit;
    this.restartIdx = this.numRestarts;
    this.keyLen = 0;
    this.keyView = undefined;
  }

  private seekToRestart(i: number): void {
    this.keyLen = 0;
    this.restartIdx = i;
    this.nextOff = this.restarts[i]!;
  }

  private fail(at: number, what: string): false {
    this.err = corruption(`${this.block.label}: bad entry @+${at} (block offset): ${what}`);
    this.invalidate();
    return false;
  }

  /** Compares the (whole) key stored at restart `i` with target. */
  private compareRestartKey(i: number, target: Uint8Array): number {
    const d = this.data;
    const at = this.restarts[i]!;
    const limit = this.limit;
    if (!readEntryHeader(d, at, limit)) {
      this.fail(at, 'malformed varint');
      return 0;
    }
    const shared = hdrShared;
    const unshared = hdrUnshared;
    const vlen = hdrValueLen;
    const p = hdrEnd;
    if (shared !== 0) {
      this.fail(at, `restart entry shares ${shared} bytes`);
      return 0;
    }
    if (p + unshared + vlen > limit) {
      this.fail(at, `key ${unshared} + value ${vlen} bytes overrun the entries (end @+${limit})`);
      return 0;
    }
    const rc = this.compareRange;
    return rc !== undefined ? rc(d, p, p + unshared, target) : this.compare(d.subarray(p, p + unshared), target);
  }

  /** Decodes the entry at nextOff. Returns false (and invalidates) at the end or on corruption. */
  private parseNext(): boolean {
    const d = this.data;
    const limit = this.limit;
    const at = this.nextOff;
    this.cur = at;
    if (at >= limit) {
      this.invalidate();
      return false;
    }
    if (!readEntryHeader(d, at, limit)) return this.fail(at, 'malformed varint');
    const shared = hdrShared;
    const unshared = hdrUnshared;
    const vlen = hdrValueLen;
    let p = hdrEnd;
    if (shared > this.keyLen) return this.fail(at, `shares ${shared} bytes of a ${this.keyLen}-byte previous key`);
    if (p + unshared + vlen > limit) {
      return this.fail(at, `key ${unshared} + value ${vlen} bytes overrun the entries (end @+${limit})`);
    }
    const klen = shared + unshared;
    if (klen > this.keyBuf.length) {
      const next = new Uint8Array(Math.max(klen, this.keyBuf.length * 2));
      next.set(this.keyBuf.subarray(0, shared));
      this.keyBuf = next;
    }
    const kb = this.keyBuf;
    if (unshared < 64) {
      for (let i = shared; i < klen; i++) kb[i] = d[p++]!;
    } else {
      kb.set(d.subarray(p, p + unshared), shared);
      p += unshared;
    }
    this.keyLen = klen;
    this.keyView = undefined;
    this.valStart = p;
    this.valEnd = p + vlen;
    this.nextOff = p + vlen;
    const restarts = this.restarts;
    while (this.restartIdx + 1 < this.numRestarts && restarts[this.restartIdx + 1]! < at) this.restartIdx++;
    this.isValid = true;
    return true;
  }
}
