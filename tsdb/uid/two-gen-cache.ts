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
  private changes = 0;

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
    const prev = this.young.get(key) ?? this.old.get(key);
    if (prev !== undefined && prev !== value) this.changes++;
    if (this.young.size >= this.half && !this.young.has(key)) {
      if (this.old.size > 0) this.changes++;
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  delete(key: K): void {
    // Both generations: a key set again after its generation aged may be in both.
    const young = this.young.delete(key);
    const old = this.old.delete(key);
    if (young || old) this.changes++;
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
    this.changes++;
  }

  /**
   * Changes whenever an entry may have left the cache or taken another value (a set over a
   * different value, a delete, a clear, a generation dropped); never otherwise. What was
   * derived from the cache's answers stays valid while it is unchanged.
   */
  get epoch(): number {
    return this.changes;
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
