/**
 * Series by the raw bytes of a telnet line's (or a JSON datapoint's) metric and tags: a
 * hash of the bytes picks a bucket, and the bytes themselves are compared, so a hit costs
 * no string and no allocation. Only series named, validated and resolved by name are
 * added, so a hit means the same bytes parsed before into exactly this series. Bounded in
 * bytes (a slot costs BYTE_SLOT_BYTES beside its key, memory/catalog-memory.ts), in two
 * generations as TwoGenCache: a hit in the old one moves the slot to the young one, and
 * when the young one holds half the bound the old one is dropped — only the slots not hit
 * since the last such rotation go, never the whole cache.
 *
 * Speed: the hash and the compare read 4 bytes at a time through a DataView (about 3×
 * faster than byte loops on ~100-byte keys; a native `Buffer#compare` per range costs
 * more than the loop in call overhead). The DataView of the caller's buffer is made once
 * per buffer (a telnet chunk, a JSON body), not per lookup. The table is an array of
 * bucket chains indexed by the low bits of the hash (no Map: a 32-bit key would be a heap
 * number), doubled as it fills. Keys are packed in their generation's arena (64 KiB
 * chunks, one DataView each), not one Uint8Array and DataView per key: a slot costs its
 * object and its key bytes only (a key hit in the old generation is copied to the young
 * one's arena, so a dropped generation's chunks go with it).
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
import { BYTE_SLOT_BYTES } from '../memory/catalog-memory.js';

interface Slot<T> {
  readonly hash: number;
  /** The generation it is in (a prediction into a dropped one is not followed). */
  gen: number;
  /** The arena chunk holding the key (metric bytes, one space, tag bytes) at `at`, `len` bytes, and its view. */
  key: Uint8Array;
  view: DataView;
  at: number;
  readonly len: number;
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

/** Bytes of an arena chunk (a longer key gets a chunk of its own size). */
const CHUNK_BYTES = 64 * 1024;

/** One generation: chains of slots by the low bits of the hash, doubled as it fills; its keys' arena. */
class Generation<T> {
  buckets: (Slot<T> | undefined)[] = new Array<Slot<T> | undefined>(MIN_BUCKETS).fill(undefined);
  mask = MIN_BUCKETS - 1;
  count = 0;
  bytes = 0;
  readonly gen: number;
  private chunk: Uint8Array = new Uint8Array(0);
  private chunkView: DataView = EMPTY_VIEW;
  private top = 0;

  constructor(gen: number) {
    this.gen = gen;
  }

  /** Makes room for `len` key bytes at `top` (a new chunk when the current one is full). */
  private room(len: number): void {
    if (this.top + len <= this.chunk.length) return;
    this.chunk = new Uint8Array(Math.max(CHUNK_BYTES, len));
    this.chunkView = new DataView(this.chunk.buffer);
    this.top = 0;
  }

  /** Packs line[ms,me) + ' ' + line[ts,te) into the arena; the slot fields that locate it. */
  pack(line: Uint8Array, ms: number, me: number, ts: number, te: number): { key: Uint8Array; view: DataView; at: number } {
    const ml = me - ms;
    this.room(ml + 1 + te - ts);
    const at = this.top;
    this.chunk.set(line.subarray(ms, me), at);
    this.chunk[at + ml] = 0x20;
    this.chunk.set(line.subarray(ts, te), at + ml + 1);
    this.top += ml + 1 + te - ts;
    return { key: this.chunk, view: this.chunkView, at };
  }

  /** Copies slot `s`'s key into this arena (a slot moving here from the old generation). */
  adopt(s: Slot<T>): void {
    this.room(s.len);
    this.chunk.set(s.key.subarray(s.at, s.at + s.len), this.top);
    s.key = this.chunk;
    s.view = this.chunkView;
    s.at = this.top;
    this.top += s.len;
  }

  link(s: Slot<T>): void {
    const b = s.hash & this.mask;
    s.next = this.buckets[b];
    this.buckets[b] = s;
    s.gen = this.gen;
    this.count++;
    this.bytes += slotBytes(s);
    if (this.count > this.buckets.length) this.grow();
  }

  /** Takes `s` (found after `prev` in its chain) out. */
  unlink(s: Slot<T>, prev: Slot<T> | undefined): void {
    if (prev === undefined) this.buckets[s.hash & this.mask] = s.next;
    else prev.next = s.next;
    s.next = undefined;
    this.count--;
    this.bytes -= slotBytes(s);
  }

  /** Every slot (for a rotation's clean-up). */
  *slots(): IterableIterator<Slot<T>> {
    for (let s of this.buckets) for (; s !== undefined; s = s.next) yield s;
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
}

function slotBytes(s: Slot<unknown>): number {
  return BYTE_SLOT_BYTES + s.len;
}

/** `T`: what a series maps to (the writer's series entry). */
export class SeriesByteCache<T> {
  private young: Generation<T>;
  private old: Generation<T>;
  private gens = 0;
  private readonly maxBytes: () => number;
  private readonly accept: ((entry: T) => boolean) | undefined;
  /** The slot of the last hit (undefined after a miss). */
  private last: Slot<T> | undefined;
  /** The last buffer looked up in, and its DataView. */
  private viewBuf: Uint8Array | undefined;
  private view: DataView = EMPTY_VIEW;

  /**
   * `maxBytes`: the bound (asked at each rotation: the owner may share one bound among
   * several caches); `accept`: false for an entry that is no longer valid (its slot is
   * then dropped).
   */
  constructor(maxBytes: number | (() => number), accept?: (entry: T) => boolean) {
    this.maxBytes = typeof maxBytes === 'number' ? () => maxBytes : maxBytes;
    this.accept = accept;
    this.old = new Generation<T>(this.gens++);
    this.young = new Generation<T>(this.gens++);
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
    if (p !== undefined && p.gen === this.young.gen && p.metricLength === ml && p.len === len && rangeEqual(p.key, p.view, p.at, line, dv, ms, ml)
      && ((tagsAsBefore && last!.succSameTags) || rangeEqual(p.key, p.view, p.at + ml + 1, line, dv, ts, te - ts))
      && (this.accept === undefined || this.accept(p.entry))) {
      this.last = p;
      return p.entry;
    }
    const h = hashRanges(line, dv, ms, me, ts, te);
    const s = this.find(this.young, h, line, dv, ms, ml, ts, te, len) ?? this.promote(this.find(this.old, h, line, dv, ms, ml, ts, te, len));
    if (s === undefined) {
      this.last = undefined;
      return undefined;
    }
    if (last !== undefined && last.succ !== s) {
      last.succ = s;
      const lt = last.len - last.metricLength - 1;
      last.succSameTags = lt === len - ml - 1 && rangeEqual(last.key, last.view, last.at + last.metricLength + 1, s.key, s.view, s.at + ml + 1, lt);
    }
    this.last = s;
    return s.entry;
  }

  set(line: Uint8Array, ms: number, me: number, ts: number, te: number, entry: T): void {
    if (this.get(line, ms, me, ts, te) !== undefined) return;
    const ml = me - ms;
    const hash = hashRanges(line, this.viewOf(line), ms, me, ts, te);
    this.rotateIfFull();
    const { key, view, at } = this.young.pack(line, ms, me, ts, te);
    this.young.link({ hash, gen: -1, key, view, at, len: ml + 1 + te - ts, metricLength: ml, entry, next: undefined, succ: undefined, succSameTags: false });
  }

  clear(): void {
    this.last = undefined;
    this.old = new Generation<T>(this.gens++);
    this.young = new Generation<T>(this.gens++);
  }

  get size(): number {
    return this.young.count + this.old.count;
  }

  /** Bytes held (keys and BYTE_SLOT_BYTES a slot). */
  get bytes(): number {
    return this.young.bytes + this.old.bytes;
  }

  /** Drops the reference to the last buffer looked up in (a large request body, say). */
  releaseView(): void {
    this.viewBuf = undefined;
    this.view = EMPTY_VIEW;
  }

  /** The live slot of the key in `g`; a dead one found is unlinked (a miss). */
  private find(g: Generation<T>, h: number, line: Uint8Array, dv: DataView, ms: number, ml: number, ts: number, te: number, len: number): Slot<T> | undefined {
    for (let s = g.buckets[h & g.mask], prev: Slot<T> | undefined; s !== undefined; prev = s, s = s.next) {
      if (s.hash === h && s.metricLength === ml && s.len === len
        && rangeEqual(s.key, s.view, s.at, line, dv, ms, ml) && rangeEqual(s.key, s.view, s.at + ml + 1, line, dv, ts, te - ts)) {
        if (this.accept !== undefined && !this.accept(s.entry)) {
          g.unlink(s, prev);
          return undefined;
        }
        return s;
      }
    }
    return undefined;
  }

  /** A slot found in the old generation moves to the young one. */
  private promote(s: Slot<T> | undefined): Slot<T> | undefined {
    if (s === undefined) return undefined;
    let prev: Slot<T> | undefined;
    for (let c = this.old.buckets[s.hash & this.old.mask]; c !== s; c = c!.next) prev = c;
    this.old.unlink(s, prev);
    this.rotateIfFull();
    this.young.adopt(s);
    this.young.link(s);
    return s;
  }

  /** A new generation when the young one holds half the bound: the old one is dropped. */
  private rotateIfFull(): void {
    if (this.young.bytes >= this.maxBytes() / 2) {
      const dropped = this.old.gen;
      this.old = this.young;
      this.young = new Generation<T>(this.gens++);
      // Predictions into the dropped generation would keep it reachable.
      for (const o of this.old.slots()) if (o.succ !== undefined && o.succ.gen === dropped) o.succ = undefined;
      if (this.last !== undefined && this.last.gen === dropped) this.last = undefined;
    }
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
