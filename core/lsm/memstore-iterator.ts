/**
 * Iterator over a memstore's leaves (memstore.ts). Keys and values are views into the
 * slabs, made when asked for: `key()` makes one per position (and returns it again until
 * the iterator moves), `value()` one per call. Both stay valid for the memstore's life,
 * longer than the InternalIterator contract requires.
 *
 * Valid while no insert happens (inserts shift leaves); readers re-create and re-seek.
 */
import type { InternalIterator } from '../iter/internal-iterator.js';
import { compareInternalKeyRange } from './internal-key.js';
import type { Leaf } from './memstore-slab.js';
import { rowPrefixAt, uvarintSize } from './memstore-slab.js';

export class MemstoreIterator implements InternalIterator {
  private li = 0;
  private i = -1;
  private leaf: Leaf | undefined;
  private k: Uint8Array | undefined;
  private readonly leaves: Leaf[];
  private readonly slabs: Uint8Array[];

  constructor(leaves: Leaf[], slabs: Uint8Array[]) {
    this.leaves = leaves;
    this.slabs = slabs;
  }

  get valid(): boolean {
    return this.leaf !== undefined;
  }

  /** Positions at entry i of leaf li, or the first entry after it; invalid past the end. */
  private at(li: number, i: number): void {
    const leaves = this.leaves;
    while (li < leaves.length && i >= leaves[li]!.n) {
      li++;
      i = 0;
    }
    this.k = undefined;
    if (li >= leaves.length) {
      this.leaf = undefined;
      return;
    }
    this.li = li;
    this.i = i;
    this.leaf = leaves[li];
  }

  /** Positions at entry i of leaf li, or the last entry before it; invalid before the start. */
  private atBack(li: number, i: number): void {
    const leaves = this.leaves;
    while (li >= 0 && i < 0) {
      li--;
      if (li >= 0) i = leaves[li]!.n - 1;
    }
    this.k = undefined;
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
    this.atBack(li, this.leaves[li]!.n - 1);
  }

  seek(target: Uint8Array): void {
    const leaves = this.leaves;
    const t = new Target(target);
    // First leaf whose last key >= target.
    let lo = 0;
    let hi = leaves.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const l = leaves[mid]!;
      if (l.n === 0 || this.cmp(l, l.n - 1, t) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= leaves.length) {
      this.leaf = undefined;
      this.k = undefined;
      return;
    }
    // First entry >= target in that leaf.
    this.at(lo, this.countBelow(leaves[lo]!, t, false));
  }

  seekForPrev(target: Uint8Array): void {
    const leaves = this.leaves;
    const t = new Target(target);
    // Last leaf whose first key <= target.
    let lo = -1;
    let hi = leaves.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const l = leaves[mid]!;
      if (l.n > 0 && this.cmp(l, 0, t) <= 0) lo = mid;
      else hi = mid - 1;
    }
    if (lo < 0) {
      this.leaf = undefined;
      this.k = undefined;
      return;
    }
    // Last entry <= target in that leaf.
    this.atBack(lo, this.countBelow(leaves[lo]!, t, true) - 1);
  }

  /** Entries of the (sorted) leaf below the target, or at most equal to it with orEqual. */
  private countBelow(leaf: Leaf, t: Target, orEqual: boolean): number {
    let a = 0;
    let b = leaf.n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      const c = this.cmp(leaf, mid, t);
      if (c < 0 || (orEqual && c === 0)) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /** Entry j of `leaf` against the target: row prefixes first when the target has them. */
  private cmp(leaf: Leaf, j: number, t: Target): number {
    if (t.prefixed) {
      const pre = leaf.pre;
      const a1 = pre[3 * j]!;
      if (a1 !== t.p1) return a1 - t.p1;
      const a2 = pre[3 * j + 1]!;
      if (a2 !== t.p2) return a2 - t.p2;
      const a3 = pre[3 * j + 2]!;
      if (a3 !== t.p3) return a3 - t.p3;
    }
    const loc = leaf.loc;
    const o = loc[4 * j + 1]!;
    return compareInternalKeyRange(this.slabs[loc[4 * j]!]!, o, o + loc[4 * j + 2]!, t.key);
  }

  next(): void {
    this.at(this.li, this.i + 1);
  }

  prev(): void {
    this.atBack(this.li, this.i - 1);
  }

  key(): Uint8Array {
    let k = this.k;
    if (k === undefined) {
      const loc = this.leaf!.loc;
      const j = 4 * this.i;
      const o = loc[j + 1]!;
      k = this.k = this.slabs[loc[j]!]!.subarray(o, o + loc[j + 2]!);
    }
    return k;
  }

  value(): Uint8Array {
    const loc = this.leaf!.loc;
    const j = 4 * this.i;
    const vl = loc[j + 3]!;
    const o = loc[j + 1]! + loc[j + 2]! + uvarintSize(vl);
    return this.slabs[loc[j]!]!.subarray(o, o + vl);
  }

  error(): Error | undefined {
    return undefined;
  }

  close(): void {
    this.leaf = undefined;
    this.k = undefined;
  }
}

/** A seek target and, when its row bytes are all there, its row-prefix numbers. */
class Target {
  readonly key: Uint8Array;
  readonly prefixed: boolean;
  readonly p1: number;
  readonly p2: number;
  readonly p3: number;

  constructor(key: Uint8Array) {
    this.key = key;
    this.prefixed = key.length >= 2 && key.length >= 2 + ((key[0]! << 8) | key[1]!);
    this.p1 = this.prefixed ? rowPrefixAt(key, 0, 0) : 0;
    this.p2 = this.prefixed ? rowPrefixAt(key, 0, 6) : 0;
    this.p3 = this.prefixed ? rowPrefixAt(key, 0, 12) : 0;
  }
}
