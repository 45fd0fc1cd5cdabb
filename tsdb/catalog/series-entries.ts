/**
 * The writer's series entries, owned by the catalog: one live entry per series (keyed by
 * its TSUID), and the caches that find an entry from what a client sent — the series text
 * of a parsed point, and per protocol the raw bytes of its metric and tags
 * (series-byte-cache.ts). The caches are indexes into the live entries only: an entry the
 * table dropped is never handed out again (a hit on it is a miss), so a series written
 * after a drop gets a new entry, resolved from its names again.
 *
 * Bounded by `capacity` live entries, in two generations: an entry used since the last
 * generation change is kept; the others are dropped when the young generation fills (as
 * TwoGenCache, with use marked on the entry: a hit costs one compare, no map lookup).
 * clear() drops every entry (dropCaches, a rename).
 *
 * An entry is per-series scratch of the writer too (write-group.ts): a write group tells
 * series apart by entry, so two entries of one series in one group would write one row
 * twice in one mutation. At most one entry of a series is live at a time, so of two
 * entries of one series at least one is dead: a group that holds a dead entry merges it
 * with the series' other entries before it builds its rows (WriteGroup.build).
 */
import { SeriesByteCache } from './series-byte-cache.js';
import { TwoGenCache } from '../uid/two-gen-cache.js';

/** What the catalog keeps of a series' entry; the writer's entry type extends it. */
export interface CatalogSeries {
  /** The row key with salt, metric and tags filled in and base time 0. */
  readonly template: Uint8Array;
  /** The TSUID as latin1: the series' identity here and in the query caches. */
  readonly tsuidKey: string;
  /** False once the table dropped the entry. */
  alive: boolean;
  /** The table generation the entry was last used in. */
  gen: number;
}

export class SeriesEntries<E extends CatalogSeries> {
  private young = new Map<string, E>();
  private old = new Map<string, E>();
  private gen = 0;
  private readonly half: number;
  private readonly capacity: number;
  private readonly texts: TwoGenCache<string, E>;
  private readonly byProtocol = new Map<string, SeriesByteCache<E>>();

  constructor(capacity: number) {
    this.capacity = capacity;
    this.half = Math.max(1, Math.floor(capacity / 2));
    this.texts = new TwoGenCache(capacity);
  }

  /** Live entries. */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** The live entry of `tsuidKey`, if any. */
  get(tsuidKey: string): E | undefined {
    const e = this.young.get(tsuidKey) ?? this.old.get(tsuidKey);
    if (e !== undefined) this.use(e);
    return e;
  }

  /**
   * True when `e` is live (it is then marked used); false when the table dropped it (the
   * caller treats it as absent). Every cache hit goes through here.
   */
  use(e: E): boolean {
    if (!e.alive) return false;
    if (e.gen !== this.gen) {
      this.old.delete(e.tsuidKey);
      this.young.set(e.tsuidKey, e);
      e.gen = this.gen;
      this.rotateIfFull();
    }
    return true;
  }

  /**
   * The live entry of `e`'s series: the one already live, or `e` (a new entry), which
   * becomes live. Every new entry comes in through here.
   */
  intern(e: E): E {
    const have = this.get(e.tsuidKey);
    if (have !== undefined) return have;
    e.alive = true;
    e.gen = this.gen;
    this.young.set(e.tsuidKey, e);
    this.rotateIfFull();
    return e;
  }

  /** The live entry a series text was last resolved to. */
  byText(text: string): E | undefined {
    const e = this.texts.get(text);
    if (e === undefined) return undefined;
    if (this.use(e)) return e;
    this.texts.delete(text);
    return undefined;
  }

  /** Remembers that `text` names the series of live entry `e`. */
  setText(text: string, e: E): void {
    this.texts.set(text, e);
  }

  /**
   * The byte cache of a protocol (its own key space: the same series sent over telnet and
   * as JSON has other bytes); it hands out live entries only.
   */
  bytes(protocol: string): SeriesByteCache<E> {
    let c = this.byProtocol.get(protocol);
    if (c === undefined) this.byProtocol.set(protocol, (c = new SeriesByteCache<E>(this.capacity, (e) => this.use(e))));
    return c;
  }

  /** Drops every entry and empties every cache. */
  clear(): void {
    for (const e of this.young.values()) e.alive = false;
    for (const e of this.old.values()) e.alive = false;
    this.young = new Map();
    this.old = new Map();
    this.gen++;
    this.texts.clear();
    for (const c of this.byProtocol.values()) c.clear();
  }

  private rotateIfFull(): void {
    if (this.young.size < this.half) return;
    for (const e of this.old.values()) e.alive = false;
    this.old = this.young;
    this.young = new Map();
    this.gen++;
  }
}
