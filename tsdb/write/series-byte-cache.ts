/**
 * Series by the raw bytes of a telnet line's metric and tags: a hash of the bytes picks a
 * bucket, and the bytes themselves are compared, so a hit costs no string and no
 * allocation. Only series the general path validated and resolved are added, so a hit
 * means the same bytes parsed before into exactly this series. Bounded: emptied when it
 * reaches its capacity (the general path refills it).
 */
import type { SeriesEntry } from './write-group.js';

interface Slot {
  readonly key: Uint8Array;
  readonly entry: SeriesEntry;
  next: Slot | undefined;
}

export class SeriesByteCache {
  private map = new Map<number, Slot>();
  private count = 0;
  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** The series whose key is line[ms,me) + line[ts,te), or undefined. */
  get(line: Uint8Array, ms: number, me: number, ts: number, te: number): SeriesEntry | undefined {
    const h = hashRanges(line, ms, me, ts, te);
    for (let s = this.map.get(h); s !== undefined; s = s.next) {
      if (sameKey(s.key, line, ms, me, ts, te)) return s.entry;
    }
    return undefined;
  }

  set(line: Uint8Array, ms: number, me: number, ts: number, te: number, entry: SeriesEntry): void {
    if (this.get(line, ms, me, ts, te) !== undefined) return;
    if (this.count >= this.capacity) this.clear();
    const key = new Uint8Array(me - ms + 1 + te - ts);
    key.set(line.subarray(ms, me), 0);
    key[me - ms] = 0x20;
    key.set(line.subarray(ts, te), me - ms + 1);
    const h = hashRanges(line, ms, me, ts, te);
    this.map.set(h, { key, entry, next: this.map.get(h) });
    this.count++;
  }

  clear(): void {
    this.map = new Map();
    this.count = 0;
  }

  get size(): number {
    return this.count;
  }
}

/** FNV-1a over the metric bytes, a space, and the tag bytes. */
function hashRanges(b: Uint8Array, ms: number, me: number, ts: number, te: number): number {
  let h = 0x811c9dc5;
  for (let i = ms; i < me; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  h = Math.imul(h ^ 0x20, 0x01000193);
  for (let i = ts; i < te; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

function sameKey(key: Uint8Array, b: Uint8Array, ms: number, me: number, ts: number, te: number): boolean {
  const ml = me - ms;
  if (key.length !== ml + 1 + (te - ts)) return false;
  for (let i = 0; i < ml; i++) if (key[i] !== b[ms + i]) return false;
  if (key[ml] !== 0x20) return false;
  for (let i = 0, o = ml + 1; i < te - ts; i++) if (key[o + i] !== b[ts + i]) return false;
  return true;
}
