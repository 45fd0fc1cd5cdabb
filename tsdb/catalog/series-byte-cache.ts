/**
 * Series by the raw bytes of a telnet line's (or a JSON datapoint's) metric and tags: a
 * hash of the bytes picks a bucket, and the bytes themselves are compared, so a hit costs
 * no string and no allocation. Only series the general path validated and resolved are
 * added, so a hit means the same bytes parsed before into exactly this series. Bounded:
 * emptied when it reaches its capacity (the general path refills it).
 *
 * Speed: the hash and the compare read 4 bytes at a time through a DataView (about 3×
 * faster than byte loops on ~100-byte keys; a native `Buffer#compare` per range costs
 * more than the loop in call overhead). The DataView of the caller's buffer is made once
 * per buffer (a telnet chunk, a JSON body), not per lookup. The table is an array of
 * bucket chains indexed by the low bits of the hash (no Map: a 32-bit key would be a heap
 * number), doubled as it fills.
 *
 * Entries may die (catalog/series-entries.ts drops them): a hit on one the `accept`
 * predicate refuses is a miss, and its slot is unlinked.
 *
 * Prediction: clients send their series in the same order every interval (collectd,
 * tcollector, TSBS), so each slot remembers the slot looked up after it, and a lookup
 * first compares the bytes with that one: a hit then costs one compare and no hash. It
 * also remembers whether that next slot has its tags: a caller that knows the tags repeat
 * the previous lookup's (the JSON scanner does) then has only the metric compared.
 */
interface Slot<T> {
  readonly hash: number;
  /** metric bytes, one space, tag bytes */
  readonly key: Uint8Array;
  readonly view: DataView;
  readonly metricLength: number;
  readonly entry: T;
  next: Slot<T> | undefined;
  /** The slot found right after this one last time: the likely next lookup. */
  succ: Slot<T> | undefined;
  /** succ's tag bytes are this slot's (another metric of the same tags). */
  succSameTags: boolean;
}

const MIN_BUCKETS = 1024;
const EMPTY_VIEW: DataView = new DataView(new ArrayBuffer(0));

/** `T`: what a series maps to (the writer's series entry). */
export class SeriesByteCache<T> {
  private buckets: (Slot<T> | undefined)[] = new Array<Slot<T> | undefined>(MIN_BUCKETS).fill(undefined);
  private mask = MIN_BUCKETS - 1;
  private count = 0;
  private readonly capacity: number;
  private readonly accept: ((entry: T) => boolean) | undefined;
  /** The slot of the last hit (undefined after a miss). */
  private last: Slot<T> | undefined;
  /** The last buffer looked up in, and its DataView. */
  private viewBuf: Uint8Array | undefined;
  private view: DataView = EMPTY_VIEW;

  /** `accept`: false for an entry that is no longer valid (its slot is then dropped). */
  constructor(capacity: number, accept?: (entry: T) => boolean) {
    this.capacity = capacity;
    this.accept = accept;
  }

  /**
   * The series whose key is line[ms,me) + line[ts,te), or undefined. `tagsAsBefore`: the
   * caller knows these tag bytes equal those of its previous lookup, made just before and
   * found (a JSON body's scan sees repeated tags objects): then a predicted series whose
   * tags are known to be the previous one's needs only its metric compared.
   */
  get(line: Uint8Array, ms: number, me: number, ts: number, te: number, tagsAsBefore = false): T | undefined {
    const dv = this.viewOf(line);
    const ml = me - ms;
    const len = ml + 1 + (te - ts);
    const last = this.last;
    const p = last?.succ;
    if (p !== undefined && p.metricLength === ml && p.key.length === len && rangeEqual(p.key, p.view, 0, line, dv, ms, ml)
      && ((tagsAsBefore && last!.succSameTags) || rangeEqual(p.key, p.view, ml + 1, line, dv, ts, te - ts))
      && (this.accept === undefined || this.accept(p.entry))) {
      this.last = p;
      return p.entry;
    }
    const h = hashRanges(line, dv, ms, me, ts, te);
    const b = h & this.mask;
    for (let s = this.buckets[b], prev: Slot<T> | undefined; s !== undefined; prev = s, s = s.next) {
      if (s.hash === h && s.metricLength === ml && s.key.length === len
        && rangeEqual(s.key, s.view, 0, line, dv, ms, ml) && rangeEqual(s.key, s.view, ml + 1, line, dv, ts, te - ts)) {
        if (this.accept !== undefined && !this.accept(s.entry)) {
          if (prev === undefined) this.buckets[b] = s.next;
          else prev.next = s.next;
          this.count--;
          break;
        }
        if (last !== undefined && last.succ !== s) {
          last.succ = s;
          const lt = last.key.length - last.metricLength - 1;
          last.succSameTags = lt === len - ml - 1 && rangeEqual(last.key, last.view, last.metricLength + 1, s.key, s.view, ml + 1, lt);
        }
        this.last = s;
        return s.entry;
      }
    }
    this.last = undefined;
    return undefined;
  }

  set(line: Uint8Array, ms: number, me: number, ts: number, te: number, entry: T): void {
    if (this.get(line, ms, me, ts, te) !== undefined) return;
    if (this.count >= this.capacity) this.clear();
    const ml = me - ms;
    const key = new Uint8Array(ml + 1 + te - ts);
    key.set(line.subarray(ms, me), 0);
    key[ml] = 0x20;
    key.set(line.subarray(ts, te), ml + 1);
    const hash = hashRanges(line, this.viewOf(line), ms, me, ts, te);
    const view = new DataView(key.buffer, key.byteOffset, key.byteLength);
    const b = hash & this.mask;
    this.buckets[b] = { hash, key, view, metricLength: ml, entry, next: this.buckets[b], succ: undefined, succSameTags: false };
    if (++this.count > this.buckets.length) this.grow();
  }

  clear(): void {
    this.last = undefined;
    this.buckets = new Array<Slot<T> | undefined>(MIN_BUCKETS).fill(undefined);
    this.mask = MIN_BUCKETS - 1;
    this.count = 0;
  }

  get size(): number {
    return this.count;
  }

  /** Drops the reference to the last buffer looked up in (a large request body, say). */
  releaseView(): void {
    this.viewBuf = undefined;
    this.view = EMPTY_VIEW;
  }

  private grow(): void {
    const old = this.buckets;
    const n = old.length * 2;
    const buckets = new Array<Slot<T> | undefined>(n).fill(undefined);
    const mask = n - 1;
    for (let s of old) {
      while (s !== undefined) {
        const next = s.next;
        s.next = buckets[s.hash & mask];
        buckets[s.hash & mask] = s;
        s = next;
      }
    }
    this.buckets = buckets;
    this.mask = mask;
  }

  private viewOf(b: Uint8Array): DataView {
    if (b !== this.viewBuf) {
      this.viewBuf = b;
      this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    return this.view;
  }
}

/**
 * A 32-bit hash of the metric bytes, a separator and the tag bytes, 4 bytes at a step
 * (multiply-xorshift, then murmur3's finalizer). Not a stable format: in memory only.
 */
export function hashRanges(b: Uint8Array, dv: DataView, ms: number, me: number, ts: number, te: number): number {
  let h = hashRange(b, dv, ms, me, 0x811c9dc5 ^ (me - ms));
  h = hashRange(b, dv, ts, te, Math.imul(h ^ 0x20, 0x01000193));
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

function hashRange(b: Uint8Array, dv: DataView, start: number, end: number, h: number): number {
  let i = start;
  for (; i + 4 <= end; i += 4) {
    h = Math.imul(h ^ dv.getInt32(i, true), 0x9e3779b1);
    h ^= h >>> 15;
  }
  for (; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h;
}

/**
 * a[ao, ao+n) equals b[bo, bo+n). Eight bytes a step as two 32-bit reads, and the last
 * eight bytes read once more, overlapping, instead of a byte loop for the tail: about
 * 1.6× as fast as four bytes a step with a byte tail on ~155-byte keys. Below 8 bytes,
 * a byte loop.
 */
export function rangeEqual(a: Uint8Array, adv: DataView, ao: number, b: Uint8Array, bdv: DataView, bo: number, n: number): boolean {
  if (n < 8) {
    for (let i = 0; i < n; i++) if (a[ao + i] !== b[bo + i]) return false;
    return true;
  }
  const last = n - 8;
  for (let i = 0; i < last; i += 8) {
    if (adv.getInt32(ao + i, true) !== bdv.getInt32(bo + i, true) || adv.getInt32(ao + i + 4, true) !== bdv.getInt32(bo + i + 4, true)) return false;
  }
  return adv.getInt32(ao + last, true) === bdv.getInt32(bo + last, true) && adv.getInt32(ao + last + 4, true) === bdv.getInt32(bo + last + 4, true);
}
