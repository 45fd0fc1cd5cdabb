/**
 * A map bounded in bytes, with two generations: lookups hit the young map, then the old
 * one (promoting the entry); when the young map holds half the bound, the old one is
 * dropped and the young one becomes old. So at most `maxBytes` (by `sizeOf`, the caller's
 * estimate of an entry's heap bytes) are held, hits cost one or two Map lookups and no
 * list bookkeeping, and entries used at least once per half-bound of inserts stay: what
 * goes at a rotation is only what was not used since the one before, never the whole
 * cache. Used for the UID and series caches on the write hot path.
 */
export class TwoGenCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngBytes = 0;
  private oldBytes = 0;
  private readonly half: number;
  private readonly sizeOf: (key: K, value: V) => number;

  constructor(maxBytes: number, sizeOf: (key: K, value: V) => number) {
    this.half = Math.max(1, Math.floor(maxBytes / 2));
    this.sizeOf = sizeOf;
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) {
      this.old.delete(key);
      this.oldBytes -= this.sizeOf(key, o);
      this.set(key, o);
    }
    return o;
  }

  set(key: K, value: V): void {
    const had = this.young.get(key);
    if (had !== undefined) this.youngBytes -= this.sizeOf(key, had);
    else if (this.youngBytes >= this.half) {
      this.old = this.young;
      this.oldBytes = this.youngBytes;
      this.young = new Map();
      this.youngBytes = 0;
    }
    this.young.set(key, value);
    this.youngBytes += this.sizeOf(key, value);
  }

  delete(key: K): void {
    // Both generations: a key set again after its generation aged may be in both.
    const y = this.young.get(key);
    if (y !== undefined) {
      this.young.delete(key);
      this.youngBytes -= this.sizeOf(key, y);
    }
    const o = this.old.get(key);
    if (o !== undefined) {
      this.old.delete(key);
      this.oldBytes -= this.sizeOf(key, o);
    }
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
    this.youngBytes = 0;
    this.oldBytes = 0;
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  /** Bytes held, by the caller's estimate (at most the bound plus one entry). */
  get bytes(): number {
    return this.youngBytes + this.oldBytes;
  }
}
