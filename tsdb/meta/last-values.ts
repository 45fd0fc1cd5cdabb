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
 * has been read (docs/SCALING.md states the bound).
 *
 * Columnar (issue 32): the TSUIDs are interned in a KeyTable (catalog/key-table.ts) and an
 * entry is a row of typed-array columns (born, ts, value, isInt, upTo), an integer beyond
 * ±2^53 in a map beside them. Bounded in bytes (`maxBytes`): bytes is the arrays' length
 * and BIG_VALUE_BYTES a kept big integer; when an add would grow them past the bound, an
 * eighth of the entries is dropped instead (a hand going round the series numbers), a
 * part, never the whole.
 */
import { KeyTable } from '../catalog/key-table.js';

/** Heap bytes of one kept integer beyond ±2^53 (a map slot and a bigint). */
const BIG_VALUE_BYTES = 96;

/** A series' newest point (/api/query/last). */
export interface LastPoint {
  /** Epoch ms. */
  readonly ts: number;
  readonly value: number;
  readonly isInt: boolean;
  /** An integer beyond ±2^53 exactly (`value` is its nearest double). */
  readonly big?: bigint;
}

export interface LastValueStats {
  readonly series: number;
  readonly hits: number;
  readonly misses: number;
}

/** The entry columns, by series number. */
class Columns {
  /** The stamp when the entry was made. */
  born: Float64Array;
  /** The newest point's epoch ms (-Infinity: none found), value and whether it is an integer. */
  ts: Float64Array;
  value: Float64Array;
  isInt: Uint8Array;
  /** The newest current hour (epoch s) a finished read covered; -Infinity while loading. */
  upTo: Float64Array;

  constructor(n: number, from?: Columns) {
    this.born = grown(new Float64Array(n), from?.born);
    this.ts = grown(new Float64Array(n), from?.ts);
    this.value = grown(new Float64Array(n), from?.value);
    this.isInt = grown(new Uint8Array(n), from?.isInt);
    this.upTo = grown(new Float64Array(n), from?.upTo);
  }

  get byteLength(): number {
    return this.born.byteLength + this.ts.byteLength + this.value.byteLength + this.isInt.byteLength + this.upTo.byteLength;
  }
}

function grown<T extends Float64Array | Uint8Array>(to: T, from: T | undefined): T {
  if (from !== undefined && from.length <= to.length) to.set(from);
  return to;
}

export class LastValues {
  /** TSUID (latin1, as NewestHours keys it) → series number (its row in `cols`). */
  private readonly keys: KeyTable;
  private cols: Columns;
  /** Integers beyond ±2^53 exactly, by series number. */
  private readonly bigs = new Map<number, bigint>();
  private readonly maxBytes: number;
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
  /** Where the next drop starts (a series number). */

  constructor(maxBytes: number, metricWidth = 3) {
    this.maxBytes = Math.max(1, maxBytes);
    this.metricWidth = metricWidth;
    this.keys = new KeyTable((capacity) => {
      this.cols = new Columns(capacity, this.cols);
    });
    this.cols = new Columns(this.keys.capacity);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Bytes held: the arrays' lengths and the big integers kept. */
  get bytes(): number {
    return this.keys.bytes() + this.cols.byteLength + this.bigs.size * BIG_VALUE_BYTES;
  }

  stats(): LastValueStats {
    return { series: this.keys.size, hits: this.hits, misses: this.misses };
  }

  /**
   * The series' newest point in the hours up to `nowHour` (epoch s), if the entry can tell:
   * `null` when it knows there is none, undefined when the store must be read.
   */
  get(key: string, nowHour: number): LastPoint | null | undefined {
    const n = this.live(key);
    const c = this.cols;
    // A newest point in a future hour says nothing of the current ones.
    if (n < 0 || c.upTo[n]! < nowHour || Math.floor(c.ts[n]! / 3_600_000) * 3600 > nowHour) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    const ts = c.ts[n]!;
    if (ts === -Infinity) return null;
    const big = this.bigs.size === 0 ? undefined : this.bigs.get(n);
    const isInt = c.isInt[n] === 1;
    return big === undefined ? { ts, value: c.value[n]!, isInt } : { ts, value: c.value[n]!, isInt, big };
  }

  /**
   * Before a read of the store for these series: a loading entry for each one without one.
   * Returns the token `finish` takes.
   */
  begin(keys: readonly string[]): number {
    for (const k of keys) if (this.live(k) < 0) this.insert(k);
    return this.stamp;
  }

  /**
   * A read that began with `token` found `p` (undefined: no point) as the series' newest
   * point in the hours up to `nowHour`.
   */
  finish(key: string, p: LastPoint | undefined, nowHour: number, token: number): void {
    if (token < this.cleared) return;
    const n = this.keys.findLatin1(key);
    const c = this.cols;
    if (n < 0 || c.born[n]! > token) return;
    if (this.metricsForgotten.size > 0 && (this.metricsForgotten.get(key.slice(0, this.metricWidth)) ?? -1) > token) return;
    // At an equal timestamp the entry's value came from a write acknowledged while the read
    // ran: the read may have seen the value before it.
    if (p !== undefined && p.ts > c.ts[n]!) this.put(n, p.ts, p.value, p.isInt, p.big);
    if (nowHour > c.upTo[n]!) c.upTo[n] = nowHour;
  }

  /** The write path stored `ms` as the newest point of the series in one acknowledged write. */
  written(key: string, ms: number, value: number, isInt: boolean, big?: bigint): void {
    if (this.keys.size === 0) return; // no /api/query/last asked: no key hashed per series written
    const n = this.keys.findLatin1(key);
    if (n < 0 || ms < this.cols.ts[n]!) return;
    this.put(n, ms, value, isInt, big);
  }

  /** Another server wrote these series (TSUIDs as latin1): their entries go. */
  forget(keys: Iterable<string>): void {
    let any = false;
    for (const k of keys) {
      const n = this.keys.findLatin1(k);
      if (n < 0) continue;
      this.remove(n);
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
    this.keys.clear();
    this.bigs.clear();
    this.metricsForgotten.clear();
    this.cleared = ++this.stamp;
  }

  /** The number of `key`'s entry unless its metric was forgotten since it was made (then it goes); -1: none. */
  private live(key: string): number {
    const n = this.keys.findLatin1(key);
    if (n < 0 || this.metricsForgotten.size === 0) return n;
    if ((this.metricsForgotten.get(key.slice(0, this.metricWidth)) ?? -1) <= this.cols.born[n]!) return n;
    this.remove(n);
    return -1;
  }

  private put(n: number, ms: number, value: number, isInt: boolean, big: bigint | undefined): void {
    if (big !== undefined && !this.bigs.has(n) && this.bytes + BIG_VALUE_BYTES > this.maxBytes) {
      // No room for the big integer: the entry goes instead (the next read reads the store).
      this.remove(n);
      this.stamp++;
      return;
    }
    const c = this.cols;
    c.ts[n] = ms;
    c.value[n] = value;
    c.isInt[n] = isInt ? 1 : 0;
    if (big !== undefined) this.bigs.set(n, big);
    else if (this.bigs.size > 0) this.bigs.delete(n);
  }

  /** A loading entry for `key`, after dropping an eighth of the entries while adding would pass the bound. */
  private insert(key: string): void {
    let dropped = false;
    while (this.keys.size > 0 && this.bytes + this.growth(key.length) > this.maxBytes) {
      this.dropEighth();
      dropped = true;
    }
    if (dropped) this.stamp++;
    const n = this.keys.addLatin1(key);
    const c = this.cols; // after the add: it may have grown the columns
    c.born[n] = this.stamp;
    c.ts[n] = -Infinity;
    c.value[n] = 0;
    c.isInt[n] = 0;
    c.upTo[n] = -Infinity;
  }

  /** Bytes an add of a `len`-byte key would add: the table's growth and the columns' with it. */
  private growth(len: number): number {
    const g = this.keys.growthBytes(len);
    return this.keys.growsNumbers() ? g + this.cols.byteLength : g;
  }

  private remove(n: number): void {
    this.keys.remove(n);
    if (this.bigs.size > 0) this.bigs.delete(n);
  }

  private dropEighth(): void {
    this.keys.removeEighth((n) => {
      if (this.bigs.size > 0) this.bigs.delete(n);
    });
  }
}
