/**
 * K-way merge of child iterators into one ordered view (leveldb MergingIterator). Keys are
 * unique across children in the engine (they carry sequence numbers); if two children hold
 * an equal key, the child with the lower index wins and the other copy is also returned
 * next (callers do not rely on that).
 *
 * Forward and backward iteration; switching direction re-positions every child around the
 * current key. A binary heap picks the smallest (forward) or largest (backward) child.
 * Errors: the first child error becomes this iterator's error and it turns invalid.
 */
import type { Comparator, InternalIterator } from './internal-iterator.js';

export class MergingIterator implements InternalIterator {
  private readonly children: InternalIterator[];
  private readonly compare: Comparator;
  private heap: number[] = [];
  private forward = true;
  private err: Error | undefined;

  constructor(children: InternalIterator[], compare: Comparator) {
    this.children = children;
    this.compare = compare;
  }

  get valid(): boolean {
    return this.err === undefined && this.heap.length > 0;
  }

  private better(a: number, b: number): boolean {
    const c = this.compare(this.children[a]!.key(), this.children[b]!.key());
    if (c === 0) return a < b;
    return this.forward ? c < 0 : c > 0;
  }

  private rebuild(): void {
    const heap: number[] = [];
    for (let i = 0; i < this.children.length; i++) {
      const ch = this.children[i]!;
      if (ch.valid) heap.push(i);
      else {
        const e = ch.error();
        if (e !== undefined && this.err === undefined) this.err = e;
      }
    }
    this.heap = heap;
    for (let i = (heap.length >>> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      let m = l;
      if (r < n && this.better(heap[r]!, heap[l]!)) m = r;
      if (!this.better(heap[m]!, heap[i]!)) return;
      const t = heap[i]!;
      heap[i] = heap[m]!;
      heap[m] = t;
      i = m;
    }
  }

  /** After the top child moved: re-place it or drop it. */
  private fixTop(): void {
    const heap = this.heap;
    const top = heap[0]!;
    const ch = this.children[top]!;
    if (!ch.valid) {
      const e = ch.error();
      if (e !== undefined && this.err === undefined) this.err = e;
      const last = heap.pop()!;
      if (heap.length > 0 && last !== top) {
        heap[0] = last;
      }
    }
    if (heap.length > 0) this.siftDown(0);
  }

  seekToFirst(): void {
    this.forward = true;
    for (const c of this.children) c.seekToFirst();
    this.rebuild();
  }

  seekToLast(): void {
    this.forward = false;
    for (const c of this.children) c.seekToLast();
    this.rebuild();
  }

  seek(target: Uint8Array): void {
    this.forward = true;
    for (const c of this.children) c.seek(target);
    this.rebuild();
  }

  seekForPrev(target: Uint8Array): void {
    this.forward = false;
    for (const c of this.children) c.seekForPrev(target);
    this.rebuild();
  }

  next(): void {
    if (!this.forward) {
      // Re-position every child at the first key > current key.
      const cur = this.key().slice();
      this.forward = true;
      for (const c of this.children) {
        c.seek(cur);
        if (c.valid && this.compare(c.key(), cur) === 0) c.next();
      }
      this.rebuild();
      // The current entry itself was the top; the child holding it advanced above.
      return;
    }
    this.children[this.heap[0]!]!.next();
    this.fixTop();
  }

  prev(): void {
    if (this.forward) {
      const cur = this.key().slice();
      this.forward = false;
      for (const c of this.children) {
        c.seekForPrev(cur);
        if (c.valid && this.compare(c.key(), cur) === 0) c.prev();
      }
      this.rebuild();
      return;
    }
    this.children[this.heap[0]!]!.prev();
    this.fixTop();
  }

  key(): Uint8Array {
    return this.children[this.heap[0]!]!.key();
  }

  value(): Uint8Array {
    return this.children[this.heap[0]!]!.value();
  }

  error(): Error | undefined {
    if (this.err !== undefined) return this.err;
    for (const c of this.children) {
      const e = c.error();
      if (e !== undefined) return e;
    }
    return undefined;
  }

  close(): void {
    for (const c of this.children) c.close();
    this.heap = [];
  }
}
