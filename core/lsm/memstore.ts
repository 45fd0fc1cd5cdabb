/**
 * The memstore: recent writes of one region, sorted by internal key, with approximate
 * size accounting. A two-level sorted structure (a B+tree of height 2): an array of leaves,
 * each a sorted run of at most LEAF_MAX entries. Appends in key order (the common case for
 * time-series ingest) take the fast path at the end of the last leaf; other inserts binary
 * search the leaves, then the leaf, and splice.
 *
 * Invariants: keys are unique (they carry sequence numbers); entries are never removed; a
 * memstore becomes immutable when the region switches to a new one for a flush.
 *
 * Concurrency: single-threaded. Iterators are valid while no insert happens; readers that
 * yield to the event loop re-create their iterators and re-seek (see read-path.ts).
 */
import type { Comparator, InternalIterator } from '../iter/internal-iterator.js';
import { compareInternalKeys } from './internal-key.js';

const LEAF_MAX = 256;
/**
 * Per-entry bookkeeping charged on top of key and value bytes, so memstore limits bound
 * real memory: measured on Node 20 (--expose-gc, 300 K entries) at ~218 bytes of JS heap
 * per entry (two Uint8Array views, leaf slots, prefix numbers) besides the payload bytes.
 */
export const ENTRY_OVERHEAD_BYTES = 200;

interface Leaf {
  keys: Uint8Array[];
  values: Uint8Array[];
  /** Row-prefix numbers of each key (see rowPrefix1/2), compared before the key bytes. */
  p1: number[];
  p2: number[];
}

/**
 * Rows bytes [0, 6) and [6, 12), zero padded, as exact integers: ordering them first gives
 * the same order as the rows' bytes (a zero pad never exceeds a real byte, and equal
 * prefixes fall through to the full comparison). Comparing two numbers instead of two
 * byte arrays avoids touching the keys' memory on most steps of a binary search, which is
 * what random inserts into a large memstore spend their time on (cache misses).
 */
function rowPrefix(k: Uint8Array, from: number): number {
  const rl = (k[0]! << 8) | k[1]!;
  let v = 0;
  for (let i = from; i < from + 6; i++) v = v * 256 + (i < rl ? k[2 + i]! : 0);
  return v;
}

function newLeaf(): Leaf {
  return { keys: [], values: [], p1: [], p2: [] };
}

export class Memstore {
  private readonly leaves: Leaf[] = [newLeaf()];
  private readonly compare: Comparator;
  sizeBytes = 0;
  count = 0;
  /** Smallest and largest sequence numbers inserted (Infinity / 0 when empty). */
  minSeq = Infinity;
  maxSeq = 0;
  minTs = Infinity;
  maxTs = -Infinity;
  deletions = 0;
  readonly createdAtMs: number;

  constructor(compare: Comparator = compareInternalKeys, nowMs = Date.now()) {
    this.compare = compare;
    this.createdAtMs = nowMs;
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** Inserts an entry. `seq`/`ts`/`isDelete` feed the metadata kept for flushed files. */
  add(key: Uint8Array, value: Uint8Array, seq: number, ts: number, isDelete: boolean): void {
    const leaves = this.leaves;
    const p1 = rowPrefix(key, 0);
    const p2 = rowPrefix(key, 6);
    let li = leaves.length - 1;
    let leaf = leaves[li]!;
    const n = leaf.keys.length;
    if (n === 0 || cmp(leaf.p1[n - 1]!, leaf.p2[n - 1]!, leaf.keys[n - 1]!, p1, p2, key, this.compare) < 0) {
      // Fast path: append after the last key.
      if (n >= LEAF_MAX) {
        leaf = { keys: [key], values: [value], p1: [p1], p2: [p2] };
        leaves.push(leaf);
      } else {
        leaf.keys.push(key);
        leaf.values.push(value);
        leaf.p1.push(p1);
        leaf.p2.push(p2);
      }
    } else {
      li = this.leafFor(p1, p2, key);
      leaf = leaves[li]!;
      const pos = lowerBound(leaf, p1, p2, key, this.compare);
      leaf.keys.splice(pos, 0, key);
      leaf.values.splice(pos, 0, value);
      leaf.p1.splice(pos, 0, p1);
      leaf.p2.splice(pos, 0, p2);
      if (leaf.keys.length > LEAF_MAX) {
        const half = leaf.keys.length >>> 1;
        const right: Leaf = { keys: leaf.keys.splice(half), values: leaf.values.splice(half), p1: leaf.p1.splice(half), p2: leaf.p2.splice(half) };
        leaves.splice(li + 1, 0, right);
      }
    }
    this.count++;
    this.sizeBytes += key.length + value.length + ENTRY_OVERHEAD_BYTES;
    if (seq < this.minSeq) this.minSeq = seq;
    if (seq > this.maxSeq) this.maxSeq = seq;
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
    if (isDelete) this.deletions++;
  }

  /** Index of the leaf that should hold `key`: the last leaf whose first key <= key. */
  private leafFor(p1: number, p2: number, key: Uint8Array): number {
    const leaves = this.leaves;
    let lo = 0;
    let hi = leaves.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const l = leaves[mid]!;
      if (l.keys.length > 0 && cmp(l.p1[0]!, l.p2[0]!, l.keys[0]!, p1, p2, key, this.compare) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The leaves in key order, for flushes and region splits. Read-only. */
  leafArrays(): readonly Leaf[] {
    return this.leaves;
  }

  iterator(): InternalIterator {
    return new MemstoreIterator(this.leaves, this.compare);
  }
}

function cmp(ap1: number, ap2: number, a: Uint8Array, bp1: number, bp2: number, b: Uint8Array, compare: Comparator): number {
  if (ap1 !== bp1) return ap1 - bp1;
  if (ap2 !== bp2) return ap2 - bp2;
  return compare(a, b);
}

function lowerBound(leaf: Leaf, p1: number, p2: number, key: Uint8Array, compare: Comparator): number {
  let lo = 0;
  let hi = leaf.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(leaf.p1[mid]!, leaf.p2[mid]!, leaf.keys[mid]!, p1, p2, key, compare) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index with keys[i] >= key (iterator seeks: no prefixes for arbitrary targets). */
function lowerBoundKeys(keys: Uint8Array[], key: Uint8Array, compare: Comparator): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Last index with keys[i] <= key, or -1. */
function upperBoundMinus1(keys: Uint8Array[], key: Uint8Array, compare: Comparator): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(keys[mid]!, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

class MemstoreIterator implements InternalIterator {
  private li = 0;
  private i = -1;
  private leaf: Leaf | undefined;
  private readonly leaves: Leaf[];
  private readonly compare: Comparator;

  constructor(leaves: Leaf[], compare: Comparator) {
    this.leaves = leaves;
    this.compare = compare;
  }

  get valid(): boolean {
    return this.leaf !== undefined;
  }

  private at(li: number, i: number): void {
    const leaves = this.leaves;
    while (li < leaves.length && i >= leaves[li]!.keys.length) {
      li++;
      i = 0;
    }
    if (li >= leaves.length) {
      this.leaf = undefined;
      return;
    }
    this.li = li;
    this.i = i;
    this.leaf = leaves[li];
  }

  private atBack(li: number, i: number): void {
    const leaves = this.leaves;
    while (li >= 0 && i < 0) {
      li--;
      if (li >= 0) i = leaves[li]!.keys.length - 1;
    }
    if (li < 0) {
      this.leaf = undefined;
      return;
    }
    this.li = li;
    this.i = i;
    this.leaf = leaves[li];
  }

  seekToFirst(): void {
    this.at(0, 0);
  }

  seekToLast(): void {
    const li = this.leaves.length - 1;
    this.atBack(li, this.leaves[li]!.keys.length - 1);
  }

  seek(target: Uint8Array): void {
    const leaves = this.leaves;
    // First leaf whose last key >= target.
    let lo = 0;
    let hi = leaves.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ks = leaves[mid]!.keys;
      if (ks.length === 0 || this.compare(ks[ks.length - 1]!, target) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= leaves.length) {
      this.leaf = undefined;
      return;
    }
    this.at(lo, lowerBoundKeys(leaves[lo]!.keys, target, this.compare));
  }

  seekForPrev(target: Uint8Array): void {
    const leaves = this.leaves;
    // Last leaf whose first key <= target.
    let lo = -1;
    let hi = leaves.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const first = leaves[mid]!.keys[0];
      if (first !== undefined && this.compare(first, target) <= 0) lo = mid;
      else hi = mid - 1;
    }
    if (lo < 0) {
      this.leaf = undefined;
      return;
    }
    this.atBack(lo, upperBoundMinus1(leaves[lo]!.keys, target, this.compare));
  }

  next(): void {
    this.at(this.li, this.i + 1);
  }

  prev(): void {
    this.atBack(this.li, this.i - 1);
  }

  key(): Uint8Array {
    return this.leaf!.keys[this.i]!;
  }

  value(): Uint8Array {
    return this.leaf!.values[this.i]!;
  }

  error(): Error | undefined {
    return undefined;
  }

  close(): void {
    this.leaf = undefined;
  }
}
