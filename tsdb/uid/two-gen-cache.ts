/**
 * A bounded map with two generations: lookups hit the young map, then the old one
 * (promoting the entry); when the young map reaches half the capacity, the old one is
 * dropped and the young one becomes old. So at most `capacity` entries are held, hits
 * cost one or two Map lookups and no list bookkeeping, and entries used at least once per
 * half-capacity inserts stay. Used for the UID and series caches on the write hot path.
 */
export class TwoGenCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly half: number;

  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) {
      this.old.delete(key);
      this.set(key, o);
    }
    return o;
  }

  set(key: K, value: V): void {
    if (this.young.size >= this.half && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  delete(key: K): void {
    // Both generations: a key set again after its generation aged may be in both.
    this.young.delete(key);
    this.old.delete(key);
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
