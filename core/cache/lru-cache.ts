/**
 * A charge-based LRU cache keyed by (file id, offset), used for SST blocks (leveldb
 * util/cache.cc without sharding or handles: JavaScript is single-threaded and blocks are
 * garbage-collected, so an entry evicted while an iterator still uses it stays alive for
 * that iterator).
 *
 * Structure: a Map<id, Map<offset, Node>> for lookups and per-file eviction, plus an
 * intrusive doubly linked list (most recently used at the head) for O(1) recency updates
 * and eviction. Numeric keys only: no string building on the hot path, and offsets of any
 * size up to 2^53 are safe (a packed `id * 2^32 + offset` key would overflow for large ids).
 *
 * Invariants: sizeBytes = sum of charges of the entries held <= capacityBytes after every
 * call; an entry whose charge exceeds the capacity is not stored. Single-threaded.
 */

interface Node<V> {
  id: number;
  offset: number;
  value: V;
  charge: number;
  prev: Node<V> | null;
  next: Node<V> | null;
}

/** Counters from LruCache.stats(). */
export interface LruCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Sum of the charges of the entries held. */
  readonly sizeBytes: number;
  readonly capacityBytes: number;
  readonly entries: number;
  /** Entries dropped to make room (not counting evictFile / replacement). */
  readonly evictions: number;
}

/** An LRU map from (id, offset) to V, bounded by the total charge of its entries. */
export class LruCache<V> {
  /** The bound on the sum of charges, in bytes. */
  readonly capacityBytes: number;
  private readonly files = new Map<number, Map<number, Node<V>>>();
  private head: Node<V> | null = null;
  private tail: Node<V> | null = null;
  private size = 0;
  private count = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private lastId = 0;

  /** `capacityBytes` >= 0; 0 caches nothing. */
  constructor(capacityBytes: number) {
    if (!(capacityBytes >= 0)) throw new RangeError(`capacityBytes must be >= 0, got ${capacityBytes}`);
    this.capacityBytes = capacityBytes;
  }

  /**
   * A fresh id, never returned before by this cache (leveldb Cache::NewId). Readers that
   * cannot guarantee unique ids themselves (e.g. file numbers from several LSMs sharing
   * one cache) take one per open file.
   */
  newId(): number {
    return ++this.lastId;
  }

  /** The cached value and marks it most recently used; undefined (a miss) when absent. */
  get(id: number, offset: number): V | undefined {
    const node = this.files.get(id)?.get(offset);
    if (node === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    if (node !== this.head) {
      this.unlink(node);
      this.pushFront(node);
    }
    return node.value;
  }

  /** True when present; does not count as a hit or change recency. */
  has(id: number, offset: number): boolean {
    return this.files.get(id)?.has(offset) ?? false;
  }

  /**
   * Inserts or replaces the value at (id, offset) as most recently used, charged
   * `chargeBytes`, then evicts least recently used entries until the total fits. A value
   * charged more than the whole capacity is not stored (an old value at that key is
   * removed, so get() never returns a stale value).
   */
  set(id: number, offset: number, value: V, chargeBytes: number): void {
    if (!(chargeBytes >= 0)) throw new RangeError(`chargeBytes must be >= 0, got ${chargeBytes}`);
    let inner = this.files.get(id);
    const old = inner?.get(offset);
    if (chargeBytes > this.capacityBytes) {
      if (old !== undefined) this.remove(old);
      return;
    }
    if (old !== undefined) {
      this.size += chargeBytes - old.charge;
      old.value = value;
      old.charge = chargeBytes;
      if (old !== this.head) {
        this.unlink(old);
        this.pushFront(old);
      }
    } else {
      if (inner === undefined) {
        inner = new Map();
        this.files.set(id, inner);
      }
      const node: Node<V> = { id, offset, value, charge: chargeBytes, prev: null, next: null };
      inner.set(offset, node);
      this.pushFront(node);
      this.size += chargeBytes;
      this.count++;
    }
    while (this.size > this.capacityBytes && this.tail !== null) {
      this.remove(this.tail);
      this.evictions++;
    }
  }

  /** Removes one entry; no-op when absent. */
  delete(id: number, offset: number): void {
    const node = this.files.get(id)?.get(offset);
    if (node !== undefined) this.remove(node);
  }

  /** Removes every entry of `id` (a deleted or closed file); O(entries of that id). */
  evictFile(id: number): void {
    const inner = this.files.get(id);
    if (inner === undefined) return;
    this.files.delete(id);
    for (const node of inner.values()) {
      this.unlink(node);
      this.size -= node.charge;
      this.count--;
    }
  }

  /** Removes everything; counters are kept. */
  clear(): void {
    this.files.clear();
    this.head = this.tail = null;
    this.size = 0;
    this.count = 0;
  }

  stats(): LruCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      sizeBytes: this.size,
      capacityBytes: this.capacityBytes,
      entries: this.count,
      evictions: this.evictions,
    };
  }

  private remove(node: Node<V>): void {
    const inner = this.files.get(node.id)!;
    inner.delete(node.offset);
    if (inner.size === 0) this.files.delete(node.id);
    this.unlink(node);
    this.size -= node.charge;
    this.count--;
  }

  private unlink(node: Node<V>): void {
    if (node.prev !== null) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next !== null) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = null;
  }

  private pushFront(node: Node<V>): void {
    node.next = this.head;
    node.prev = null;
    if (this.head !== null) this.head.prev = node;
    this.head = node;
    if (this.tail === null) this.tail = node;
  }
}
