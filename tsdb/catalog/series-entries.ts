/**
 * The writer's series entries, owned by the catalog: one live entry per series (keyed by
 * its TSUID), and the caches that find an entry from what a client sent — the series text
 * of a parsed point, and per protocol the raw bytes of its metric and tags
 * (series-byte-cache.ts). The caches are indexes into the live entries only: an entry the
 * table dropped is never handed out again (a hit on it is a miss), so a series written
 * after a drop gets a new entry, resolved from its names again.
 *
 * Bounded in bytes (`maxBytes`, the catalog's share: 1/2 for the entries, 7/16 for the
 * byte caches of all protocols together, which keep two generations and so hold between
 * half and all of theirs, 1/16 for the texts, which only points no byte cache can scan
 * use; an entry costs SERIES_ENTRY_BYTES beside its template and TSUID key,
 * memory/catalog-memory.ts). Entries come in two generations: those used since the last
 * generation change (young) and the others (old); an entry used moves to young (marked on
 * the entry: a hit costs one compare, no map lookup). Past the bound, old entries go,
 * oldest first, until an eighth of the bound is free; once none is left, young becomes
 * old. So a working set up to the whole bound stays (series written round-robin, as a
 * fleet writes them, drop nothing), and what goes is what was used least lately. clear()
 * drops every entry (dropCaches, a rename).
 *
 * An entry is per-series scratch of the writer too (write-group.ts): a write group tells
 * series apart by entry, so two entries of one series in one group would write one row
 * twice in one mutation. At most one entry of a series is live at a time, so of two
 * entries of one series at least one is dead: a group that holds a dead entry merges it
 * with the series' other entries before it builds its rows (WriteGroup.build).
 */
import { SERIES_ENTRY_BYTES, TEXT_ENTRY_BYTES } from '../memory/catalog-memory.js';
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
  private youngBytes = 0;
  private oldBytes = 0;
  private gen = 0;
  /** The entries' bound. */
  private readonly bound: number;
  /** The byte caches' bound, all protocols together. */
  private readonly byteCacheBytes: number;
  private readonly texts: TwoGenCache<string, E>;
  private readonly byProtocol = new Map<string, SeriesByteCache<E>>();

  constructor(maxBytes: number) {
    this.bound = Math.max(1, Math.floor(maxBytes / 2));
    this.byteCacheBytes = (maxBytes * 7) / 16;
    this.texts = new TwoGenCache(maxBytes / 16, (text) => TEXT_ENTRY_BYTES + text.length);
  }

  /** Bytes held: entries, texts and byte caches (by the estimates of memory/catalog-memory.ts). */
  get heldBytes(): number {
    let n = this.youngBytes + this.oldBytes + this.texts.bytes;
    for (const c of this.byProtocol.values()) n += c.bytes;
    return n;
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
      if (this.old.delete(e.tsuidKey)) this.oldBytes -= entryBytes(e);
      this.young.set(e.tsuidKey, e);
      this.youngBytes += entryBytes(e);
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
    this.youngBytes += entryBytes(e);
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

  /**
   * Remembers that `text` names the series of live entry `e`. The text is kept as a copy
   * of its own: a text cut from a parsed line (a sliced or concatenated string) would keep
   * the whole line, or its chunk, alive (measured: ~1.1 KB a series over telnet, against
   * ~0.25 KB for the copy; scripts/heap-per-series.ts).
   */
  setText(text: string, e: E): void {
    this.texts.set(Buffer.from(text, 'utf8').toString('utf8'), e);
  }

  /**
   * The byte cache of a protocol (its own key space: the same series sent over telnet and
   * as JSON has other bytes); it hands out live entries only.
   */
  bytes(protocol: string): SeriesByteCache<E> {
    let c = this.byProtocol.get(protocol);
    if (c === undefined) {
      // One bound for all protocols' caches, shared among those in use.
      c = new SeriesByteCache<E>(() => this.byteCacheBytes / this.byProtocol.size, (e) => this.use(e));
      this.byProtocol.set(protocol, c);
    }
    return c;
  }

  /** Drops the live entry of `tsuidKey`, if any: the caches' hits on it become misses. */
  drop(tsuidKey: string): void {
    const e = this.young.get(tsuidKey) ?? this.old.get(tsuidKey);
    if (e === undefined) return;
    e.alive = false;
    if (this.young.delete(tsuidKey)) this.youngBytes -= entryBytes(e);
    if (this.old.delete(tsuidKey)) this.oldBytes -= entryBytes(e);
  }

  /** Drops every entry and empties every cache. */
  clear(): void {
    for (const e of this.young.values()) e.alive = false;
    for (const e of this.old.values()) e.alive = false;
    this.young = new Map();
    this.old = new Map();
    this.youngBytes = 0;
    this.oldBytes = 0;
    this.gen++;
    this.texts.clear();
    for (const c of this.byProtocol.values()) c.clear();
  }

  private rotateIfFull(): void {
    if (this.youngBytes + this.oldBytes < this.bound) return;
    const keep = this.bound - this.bound / 8;
    for (const [key, e] of this.old) {
      if (this.youngBytes + this.oldBytes <= keep) return;
      e.alive = false;
      this.old.delete(key);
      this.oldBytes -= entryBytes(e);
    }
    // Every entry left was used in this generation: they become the old one.
    this.old = this.young;
    this.oldBytes = this.youngBytes;
    this.young = new Map();
    this.youngBytes = 0;
    this.gen++;
  }
}

/** An entry's heap bytes by the estimate: the object and its keys. */
function entryBytes(e: CatalogSeries): number {
  return SERIES_ENTRY_BYTES + e.template.length + e.tsuidKey.length;
}
