/**
 * The last-value cache: for each series, its newest point, kept in memory so that
 * /api/query/last answers a series without reading the store (dashboards' "current value"
 * panels ask for it again and again).
 *
 * An entry holds the newest of two sets of points:
 * - those a read of the store found in the hours up to `upTo` (the read's current hour:
 *   /api/query/last does not look at rows of future hours);
 * - those the write path stored since the entry was made: it reports each series' newest
 *   point of every acknowledged write, before the writer hears so (`written`), future
 *   hours included.
 * Entries are made only by reads (a write knows the newest point it wrote, not whether the
 * series holds a newer one): a read that misses puts a *loading* entry in place before it
 * reads the store (`begin`), then `finish`es it with what it found. A write acknowledged
 * before the entry was placed is in the store the read reads (the store applies a write
 * before acknowledging it); one acknowledged after it is in the entry. So at a time whose
 * hour is at most `upTo`, the entry's point is the series' newest in the hours up to now,
 * if it lies in one of them (`get`). Past `upTo` (the next hour began) the series is read
 * again and the entry refreshed: that hour's row may hold points written before the entry
 * was made, unseen by its read (they were in the future then).
 *
 * A write at the entry's own timestamp replaces its value, as in the store: there the cell
 * with the newer version wins, and a write's version grows with the order in which writes
 * are acknowledged (tsdb/write/ingest.ts). A failed write, a delete (Tsdb.rowsDeleted),
 * /api/dropcaches and evictions drop entries: a read that began before finishes nothing
 * (one that shared a loading entry must not finish a newer one, made after it, that missed
 * the writes the old one took). Every drop advances a stamp; an entry keeps the stamp it
 * was made at and a read the stamp it began at, and a read finishes only an entry made no
 * later than it began, of a metric not forgotten since.
 *
 * Writes of other servers (stores with several writers) reach this process through the
 * change log (meta/change-log.ts), after they are stored: `forget` drops their series'
 * entries, `forgetMetric` every entry of a metric (a batch too big to list). The next read
 * of such a series reads the store, which holds those writes by then. So this holds
 * while this process is the data table's only writer, and elsewhere once the change log
 * has been read (docs/SCALING.md states the bound). Bounded in bytes (`maxBytes`; an entry
 * costs LAST_VALUE_BYTES beside its key, memory/catalog-memory.ts): past that the
 * oldest-inserted entries are dropped, an eighth of the bound at a time (make-room.ts).
 */
import { LAST_VALUE_BYTES } from '../memory/catalog-memory.js';
import { makeRoom } from './make-room.js';

/** A series' newest point (/api/query/last). */
export interface LastPoint {
  /** Epoch ms. */
  readonly ts: number;
  readonly value: number;
  readonly isInt: boolean;
  /** An integer beyond ±2^53 exactly (`value` is its nearest double). */
  readonly big?: bigint;
}

class Entry {
  /** The stamp when the entry was made. */
  readonly born: number;
  ts = -Infinity;
  value = 0;
  isInt = false;
  big: bigint | undefined = undefined;
  /** The newest current hour (epoch s) a finished read covered; -Infinity while loading. */
  upTo = -Infinity;

  constructor(born: number) {
    this.born = born;
  }
}

export interface LastValueStats {
  readonly series: number;
  readonly hits: number;
  readonly misses: number;
}

export class LastValues {
  /** TSUID (latin1, as NewestHours keys it) → entry. */
  private readonly entries = new Map<string, Entry>();
  private readonly maxBytes: number;
  /** Bytes of the entries by the estimate. */
  private held = 0;
  /** TSUID bytes of the metric UID (the key's first chars). */
  private readonly metricWidth: number;
  /** Advanced by every drop; entries and reads carry the value they began at. */
  private stamp = 0;
  /** The stamp of the last clear(): reads that began before finish nothing. */
  private cleared = 0;
  /** Metric (key prefix) → the stamp it was forgotten at: entries made before are stale. */
  private readonly metricsForgotten = new Map<string, number>();
  /** get()s answered from an entry, and left to the store. */
  private hits = 0;
  private misses = 0;

  constructor(maxBytes: number, metricWidth = 3) {
    this.maxBytes = Math.max(1, maxBytes);
    this.metricWidth = metricWidth;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes held, by the estimate. */
  get bytes(): number {
    return this.held;
  }

  stats(): LastValueStats {
    return { series: this.entries.size, hits: this.hits, misses: this.misses };
  }

  /**
   * The series' newest point in the hours up to `nowHour` (epoch s), if the entry can tell:
   * `null` when it knows there is none, undefined when the store must be read.
   */
  get(key: string, nowHour: number): LastPoint | null | undefined {
    const e = this.live(key);
    // A newest point in a future hour says nothing of the current ones.
    if (e === undefined || e.upTo < nowHour || Math.floor(e.ts / 3_600_000) * 3600 > nowHour) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    if (e.ts === -Infinity) return null;
    return e.big === undefined ? { ts: e.ts, value: e.value, isInt: e.isInt } : { ts: e.ts, value: e.value, isInt: e.isInt, big: e.big };
  }

  /**
   * Before a read of the store for these series: a loading entry for each one without one.
   * Returns the token `finish` takes.
   */
  begin(keys: readonly string[]): number {
    for (const k of keys) if (this.live(k) === undefined) this.insert(k);
    return this.stamp;
  }

  /**
   * A read that began with `token` found `p` (undefined: no point) as the series' newest
   * point in the hours up to `nowHour`.
   */
  finish(key: string, p: LastPoint | undefined, nowHour: number, token: number): void {
    if (token < this.cleared) return;
    const e = this.entries.get(key);
    if (e === undefined || e.born > token) return;
    if (this.metricsForgotten.size > 0 && (this.metricsForgotten.get(key.slice(0, this.metricWidth)) ?? -1) > token) return;
    // At an equal timestamp the entry's value came from a write acknowledged while the read
    // ran: the read may have seen the value before it.
    if (p !== undefined && p.ts > e.ts) {
      e.ts = p.ts;
      e.value = p.value;
      e.isInt = p.isInt;
      e.big = p.big;
    }
    if (nowHour > e.upTo) e.upTo = nowHour;
  }

  /** The write path stored `ms` as the newest point of the series in one acknowledged write. */
  written(key: string, ms: number, value: number, isInt: boolean, big?: bigint): void {
    const e = this.entries.get(key);
    if (e === undefined || ms < e.ts) return;
    e.ts = ms;
    e.value = value;
    e.isInt = isInt;
    e.big = big;
  }

  /** Another server wrote these series (TSUIDs as latin1): their entries go. */
  forget(keys: Iterable<string>): void {
    let any = false;
    for (const k of keys) {
      if (!this.entries.delete(k)) continue;
      this.held -= entryBytes(k);
      any = true;
    }
    if (any) this.stamp++;
  }

  /** Another server wrote series of this metric (UID as latin1), too many to list: every entry of it goes. */
  forgetMetric(metric: string): void {
    this.metricsForgotten.set(metric, ++this.stamp);
  }

  /** Forgets every entry; reads in progress finish nothing. */
  clear(): void {
    this.entries.clear();
    this.held = 0;
    this.metricsForgotten.clear();
    this.cleared = ++this.stamp;
  }

  /** The entry of `key` unless its metric was forgotten since it was made (then it goes). */
  private live(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e === undefined || this.metricsForgotten.size === 0) return e;
    if ((this.metricsForgotten.get(key.slice(0, this.metricWidth)) ?? -1) <= e.born) return e;
    this.entries.delete(key);
    this.held -= entryBytes(key);
    return undefined;
  }

  private insert(key: string): void {
    const freed = makeRoom(this.entries, this.held + entryBytes(key), this.maxBytes, entryBytes);
    if (freed > 0) {
      this.held -= freed;
      this.stamp++;
    }
    this.entries.set(key, new Entry(this.stamp));
    this.held += entryBytes(key);
  }
}

function entryBytes(key: string): number {
  return LAST_VALUE_BYTES + key.length;
}
