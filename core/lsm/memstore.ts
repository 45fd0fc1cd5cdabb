/**
 * The memstore: recent writes of one region, sorted by internal key, with approximate
 * size accounting.
 *
 * Packed layout (memstore-slab.ts): each entry is copied into slabs (Uint8Arrays of 16 KiB
 * growing to 1 MiB; an entry of a quarter of a slab or more gets one of its own) as
 * [uvarint keyLen][key][uvarint valueLen][value], the form of write batches and of the
 * flush job's input, so it is copied in one piece on the way in and on the way out (a
 * write's consecutive entries for one region in one piece for them all: addRun); the
 * sorted structure holds only numbers. It is a B+tree
 * of height 2: an array of leaves, each a sorted run of at most LEAF_MAX entries kept in
 * two typed arrays (where the entry is; its row-prefix numbers). There is no JS object
 * per entry, so a large memstore costs the garbage collector a few thousand objects, not
 * two views per cell that survive every scavenge.
 *
 * Appends in key order (the common case for time-series ingest) take the fast path at the
 * end of the last leaf; other inserts binary search the leaves, then the leaf (comparing
 * row-prefix numbers first, then the rest of the keys 4 bytes a step through the slabs'
 * DataViews), and shift the leaf's tail; a full leaf splits in two.
 *
 * Invariants: keys are well-formed internal keys, unique (they carry sequence numbers);
 * entries are never removed and their bytes never change; a memstore becomes immutable
 * when the region switches to a new one for a flush.
 *
 * Buffers: `add` copies its arguments (the caller may reuse them at once). Iterators hand
 * out views into the slabs, valid for the memstore's life.
 *
 * Concurrency: single-threaded. Iterators are valid while no insert happens; readers that
 * yield to the event loop re-create their iterators and re-seek (see read-path.ts).
 */
import type { InternalIterator } from '../iter/internal-iterator.js';
import { KeyKind, MAX_SEQ, MAX_TS, TRAILER_BYTES } from './internal-key.js';
import { MemstoreIterator } from './memstore-iterator.js';
import { LEAF_MAX, Leaf, SlabArena, compareKeysAfterPrefix, copyBytes, rowPrefixAt, uvarintSize } from './memstore-slab.js';

/**
 * Per-entry bookkeeping charged on top of key and value bytes, so memstore limits bound
 * real memory. Measured on Node 20 (--expose-gc; growth of heap used plus array buffers
 * for 1 M entries of 36-byte keys and 8-byte values written through encodeBatch, minus
 * those 44 bytes): 36 bytes per entry appended in key order (full leaves), 51.5 in random
 * order (leaves ~70% full after splits), with a leaf slot of 32 bytes; the rest is the
 * two length bytes in the slab, slab tails and the leaf objects. A third row-prefix number
 * made the slot 40 bytes: 8 more per entry, 11 in random order. (The layout with two
 * Uint8Array views per entry measured 242–247.)
 */
export const ENTRY_OVERHEAD_BYTES = 60;

export interface MemstoreOptions {
  /** First slab's size (then doubling). Tests make it small to cross slab boundaries. */
  readonly slabMinBytes?: number;
  /** Largest slab size. */
  readonly slabMaxBytes?: number;
}

export class Memstore {
  /** Sorted; only the last may be empty (a new memstore has one empty leaf). */
  readonly leaves: Leaf[] = [new Leaf()];
  readonly arena: SlabArena;
  sizeBytes = 0;
  count = 0;
  /** Smallest and largest sequence numbers inserted (Infinity / 0 when empty). */
  minSeq = Infinity;
  maxSeq = 0;
  minTs = Infinity;
  maxTs = -Infinity;
  deletions = 0;
  readonly createdAtMs: number;
  /** The engine's clock at the last write into this memstore (its creation before any). */
  lastWriteMs: number;
  /**
   * Regions holding this memstore: a split hands its parent's memstores to both children
   * unchanged (each reads its own range), so sizes are charged to each holder in shares
   * (and the scheduler flushes it once: scheduler.ts SharedFlush).
   */
  shares = 1;

  constructor(nowMs = Date.now(), options: MemstoreOptions = {}) {
    this.createdAtMs = nowMs;
    this.lastWriteMs = nowMs;
    this.arena = new SlabArena(options.slabMinBytes, options.slabMaxBytes);
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** Number of leaves. */
  get leafCount(): number {
    return this.leaves.length;
  }

  /**
   * Inserts a copy of an entry. `seq`/`ts`/`isDelete` feed the metadata kept for flushed
   * files; they must be the key's own (its trailer).
   */
  add(key: Uint8Array, value: Uint8Array, seq: number, ts: number, isDelete: boolean): void {
    const kl = key.length;
    const vl = value.length;
    const kv = uvarintSize(kl);
    const a = this.arena;
    a.reserve(kv + kl + uvarintSize(vl) + vl);
    const slab = a.slabs[a.slab]!;
    const ko = a.offset + kv;
    putUvarint(slab, a.offset, kl);
    copyBytes(slab, ko, key, 0, kl);
    const vo = putUvarint(slab, ko + kl, vl);
    copyBytes(slab, vo, value, 0, vl);
    this.insert(a.slab, ko, kl, vl);
    this.account(kl, vl, seq, ts, isDelete);
  }

  /**
   * Inserts a copy of the entry whose key is buf[keyOff, keyOff + keyLen) and value
   * buf[valueOff, valueOff + valueLen): in a write batch payload (write-batch.ts), where
   * the entry is one run [uvarint keyLen][key][uvarint valueLen][value] copied at once (no
   * views needed). Sequence number, timestamp and kind come from the key's trailer.
   */
  addFrom(buf: Uint8Array, keyOff: number, keyLen: number, valueOff: number, valueLen: number): void {
    const kv = uvarintSize(keyLen);
    const vv = uvarintSize(valueLen);
    const n = kv + keyLen + vv + valueLen;
    const a = this.arena;
    a.reserve(n);
    const slab = a.slabs[a.slab]!;
    const ko = a.offset + kv;
    if (keyOff >= kv && valueOff === keyOff + keyLen + vv) {
      // The batch layout: one copy; the length bytes are rewritten below all the same.
      copyBytes(slab, a.offset, buf, keyOff - kv, n);
    } else {
      copyBytes(slab, ko, buf, keyOff, keyLen);
      copyBytes(slab, ko + keyLen + vv, buf, valueOff, valueLen);
    }
    putUvarint(slab, a.offset, keyLen);
    putUvarint(slab, ko + keyLen, valueLen);
    this.link(a.slab, ko, keyLen, valueLen);
  }

  /**
   * Inserts copies of entries [from, to) of a write batch (write-batch.ts): `entries` holds
   * per entry its key offset, key length, value offset and value length in `buf`. Entries
   * that lie back to back in the batch layout (as encodeBatch writes them) are copied in
   * one piece, which costs one `TypedArray#set` for the run instead of one per entry;
   * any other layout goes entry by entry (addFrom).
   */
  addRun(buf: Uint8Array, entries: Uint32Array, from: number, to: number): void {
    const first = 4 * from;
    const last = 4 * (to - 1);
    if (to - from < 2 || !backToBack(entries, first, last)) {
      for (let j = first; j <= last; j += 4) this.addFrom(buf, entries[j]!, entries[j + 1]!, entries[j + 2]!, entries[j + 3]!);
      return;
    }
    const start = entries[first]! - uvarintSize(entries[first + 1]!);
    const end = entries[last + 2]! + entries[last + 3]!;
    const a = this.arena;
    a.reserveRun(end - start);
    const s = a.slab;
    a.slabs[s]!.set(buf.subarray(start, end), a.offset);
    const shift = a.offset - start;
    for (let j = first; j <= last; j += 4) this.link(s, entries[j]! + shift, entries[j + 1]!, entries[j + 3]!);
  }

  /**
   * Links an entry stored in slab `s` (key at `ko`) into the sorted structure and accounts
   * for it; sequence number, timestamp and kind come from the key's trailer.
   */
  private link(s: number, ko: number, kl: number, vl: number): void {
    this.insert(s, ko, kl, vl);
    const slab = this.arena.slabs[s]!;
    const t = ko + kl - TRAILER_BYTES;
    this.account(kl, vl, seqAt(slab, t), tsAt(slab, t), slab[t + 15] !== KeyKind.Put);
  }

  private account(kl: number, vl: number, seq: number, ts: number, isDelete: boolean): void {
    this.count++;
    this.sizeBytes += kl + vl + ENTRY_OVERHEAD_BYTES;
    if (seq < this.minSeq) this.minSeq = seq;
    if (seq > this.maxSeq) this.maxSeq = seq;
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
    if (isDelete) this.deletions++;
  }

  /** Links the entry stored at (s, off) into the sorted structure. */
  private insert(s: number, off: number, kl: number, vl: number): void {
    const leaves = this.leaves;
    const slab = this.arena.slabs[s]!;
    const view = this.arena.views[s]!;
    const p1 = rowPrefixAt(slab, off, 0);
    const p2 = rowPrefixAt(slab, off, 6);
    const p3 = rowPrefixAt(slab, off, 12);
    let li = leaves.length - 1;
    let leaf = leaves[li]!;
    const n = leaf.n;
    if (n === 0 || this.cmpAt(leaf, n - 1, p1, p2, p3, slab, view, off, off + kl) < 0) {
      // Fast path: append after the last key.
      if (n === LEAF_MAX) {
        leaf = new Leaf();
        leaves.push(leaf);
      }
      leaf.insert(leaf.n, s, off, kl, vl, p1, p2, p3);
      return;
    }
    li = this.leafFor(p1, p2, p3, slab, view, off, off + kl);
    leaf = leaves[li]!;
    let pos = this.lowerBound(leaf, p1, p2, p3, slab, view, off, off + kl);
    if (leaf.n === LEAF_MAX) {
      const half = LEAF_MAX >>> 1;
      const right = leaf.splitOff(half);
      leaves.splice(li + 1, 0, right);
      if (pos > half) {
        leaf = right;
        pos -= half;
      }
    }
    leaf.insert(pos, s, off, kl, vl, p1, p2, p3);
  }

  /** Compares entry j of `leaf` with the key b[bs, be) whose row prefixes are p1, p2, p3. */
  private cmpAt(leaf: Leaf, j: number, p1: number, p2: number, p3: number, b: Uint8Array, bv: DataView, bs: number, be: number): number {
    const pre = leaf.pre;
    const a1 = pre[3 * j]!;
    if (a1 !== p1) return a1 - p1;
    const a2 = pre[3 * j + 1]!;
    if (a2 !== p2) return a2 - p2;
    const a3 = pre[3 * j + 2]!;
    if (a3 !== p3) return a3 - p3;
    const loc = leaf.loc;
    const s = loc[4 * j]!;
    const o = loc[4 * j + 1]!;
    return compareKeysAfterPrefix(this.arena.slabs[s]!, this.arena.views[s]!, o, o + loc[4 * j + 2]!, b, bv, bs, be);
  }

  /** Index of the leaf that should hold the key: the last leaf whose first key <= key. */
  private leafFor(p1: number, p2: number, p3: number, b: Uint8Array, bv: DataView, bs: number, be: number): number {
    const leaves = this.leaves;
    let lo = 0;
    let hi = leaves.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const l = leaves[mid]!;
      if (l.n > 0 && this.cmpAt(l, 0, p1, p2, p3, b, bv, bs, be) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** First index in `leaf` whose key >= the key. */
  private lowerBound(leaf: Leaf, p1: number, p2: number, p3: number, b: Uint8Array, bv: DataView, bs: number, be: number): number {
    let lo = 0;
    let hi = leaf.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmpAt(leaf, mid, p1, p2, p3, b, bv, bs, be) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The flush job's input (core/lsm/jobs.ts FlushJob): the slabs as they are (shared
   * memory: a worker reads them in place) and, per entry in key order, four numbers: slab,
   * key offset, key length, value length (the value follows the key and its length's
   * uvarint). Only the index is new memory (16 bytes an entry). REQUIRES: no more adds.
   */
  flushInput(): { slabs: Uint8Array[]; index: Uint32Array } {
    let n = 0;
    for (const leaf of this.leaves) n += leaf.n;
    const index = new Uint32Array(4 * n);
    let o = 0;
    for (const leaf of this.leaves) {
      index.set(leaf.loc.subarray(0, 4 * leaf.n), o);
      o += 4 * leaf.n;
    }
    return { slabs: this.arena.slabs.slice(), index };
  }

  iterator(): InternalIterator {
    return new MemstoreIterator(this.leaves, this.arena.slabs);
  }
}

/**
 * Whether the batch entries at entries[first..last] (4 numbers each, see addRun) lie back
 * to back as [uvarint keyLen][key][uvarint valueLen][value] runs, with nothing between.
 */
function backToBack(entries: Uint32Array, first: number, last: number): boolean {
  let p = entries[first]! - uvarintSize(entries[first + 1]!);
  for (let j = first; j <= last; j += 4) {
    const ko = entries[j]!;
    const kl = entries[j + 1]!;
    const vl = entries[j + 3]!;
    if (ko !== p + uvarintSize(kl) || entries[j + 2]! !== ko + kl + uvarintSize(vl)) return false;
    p = entries[j + 2]! + vl;
  }
  return true;
}

/** Writes `v` (< 2^32) as a uvarint at buf[o]; returns the offset after it. */
function putUvarint(buf: Uint8Array, o: number, v: number): number {
  while (v >= 0x80) {
    buf[o++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[o++] = v;
  return o;
}

/** Timestamp in the trailer at buf[t, t + 16) (internal-key.ts timestampOf, in place). */
function tsAt(buf: Uint8Array, t: number): number {
  const hi = ((buf[t]! << 24) | (buf[t + 1]! << 16) | (buf[t + 2]! << 8) | buf[t + 3]!) >>> 0;
  const lo = ((buf[t + 4]! << 24) | (buf[t + 5]! << 16) | (buf[t + 6]! << 8) | buf[t + 7]!) >>> 0;
  return MAX_TS - (hi * 0x100000000 + lo);
}

/** Sequence number in the trailer at buf[t, t + 16) (internal-key.ts seqOf, in place). */
function seqAt(buf: Uint8Array, t: number): number {
  const hi = ((buf[t + 8]! << 24) | (buf[t + 9]! << 16) | (buf[t + 10]! << 8) | buf[t + 11]!) >>> 0;
  const lo = (buf[t + 12]! << 16) | (buf[t + 13]! << 8) | buf[t + 14]!;
  return MAX_SEQ - (hi * 0x1000000 + lo);
}
