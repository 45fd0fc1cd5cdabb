/**
 * WriteGroup: the points of the calls that are written together (ingest.ts), kept in
 * typed-array columns reused from group to group (each series' points linked through a
 * `next` column: no object or array per point or per series), and turned into one cell
 * per row: a single-point cell, or an OpenTSDB compacted column for several points
 * (tsdb/SCHEMA.md "OpenTSDB compacted column"). Qualifiers and values are views of one
 * buffer per group, row keys views of key slabs; none of them is ever reused.
 */
import { latin1 } from '../../core/api/bytes.js';
import type { Durability, RowMutation } from '../../core/api/store.js';
import type { CatalogSeries } from '../catalog/series-entries.js';
import { FLAG_FLOAT, writeMsQualifier, writeSecondQualifier } from '../schema/qualifier.js';
import { writeBaseTimeAt } from '../schema/row-key.js';
import { valueLengthOfFlags, writeValue } from '../schema/value.js';
import type { SchemaWidths } from '../schema/widths.js';
import { DATA_FAMILY } from '../tables.js';
import { MAX_SECOND_TIMESTAMP } from './data-point.js';
import type { IncomingPoint } from './data-point.js';
import type { DirtyMark } from './dirty-mark.js';

/**
 * What the writer keeps per series: the catalog's entry (its key template and identity,
 * catalog/series-entries.ts) and per-group scratch.
 */
export interface SeriesEntry extends CatalogSeries {
  /**
   * The base hours of the last two rows the series reported to onRowWritten, and their
   * marks: a row of either, its mark still live, is only touched (lastWriteMs), not
   * reported again. Two, because around an hour's end the points of several connections
   * alternate between two hours: with one, a 4-connection telnet load reported a third
   * of its rows again (~94 k reports, each a key copy and two map lookups, in 8.64 M points).
   */
  lastBase: number;
  dirty: DirtyMark | undefined;
  prevBase: number;
  prevDirty: DirtyMark | undefined;
  /** The group whose points `first`/`last` link (WriteGroup's `next` column). */
  groupId: number;
  /** Index of this series' first and last point in that group. */
  first: number;
  last: number;
}

/**
 * A fresh entry for a series whose row key template is `template` and TSUID (as latin1)
 * `tsuidKey` (default: the template's bytes, as unique). Live until the catalog's table
 * says otherwise (SeriesEntries.intern).
 */
export function newSeriesEntry(template: Uint8Array, tsuidKey = latin1(template)): SeriesEntry {
  return { template, tsuidKey, alive: true, gen: -1, lastBase: -1, dirty: undefined, prevBase: -1, prevDirty: undefined, groupId: -1, first: -1, last: -1 };
}

/**
 * A group's points in columns: typed arrays, grown by doubling and reused by the next
 * group once build() has copied the points into cells (the store never sees them).
 */
class PointColumns {
  /** Point time in ms. */
  ms = new Float64Array(1024);
  values = new Float64Array(1024);
  seqs = new Float64Array(1024);
  /** FLAG_INT | FLAG_MS_QUALIFIER */
  flags = new Uint8Array(1024);
  /** The next point of the same series in this group, or -1. */
  next = new Int32Array(1024);
  /** Scratch for build(): one series' point indices in write order. */
  order = new Int32Array(1024);
  /** Scratch for sortRuns (merge buffer). */
  merge = new Int32Array(1024);

  grow(): void {
    const n = this.ms.length * 2;
    this.ms = grown(this.ms, new Float64Array(n));
    this.values = grown(this.values, new Float64Array(n));
    this.seqs = grown(this.seqs, new Float64Array(n));
    this.flags = grown(this.flags, new Uint8Array(n));
    this.next = grown(this.next, new Int32Array(n));
    this.order = new Int32Array(n);
    this.merge = new Int32Array(n);
  }
}

function grown<T extends Float64Array | Uint8Array | Int32Array>(old: T, to: T): T {
  to.set(old);
  return to;
}

const FLAG_INT = 1;
const FLAG_MS_QUALIFIER = 2;
/** The value is in `bigs` (an integer beyond 2^53). */
const FLAG_BIG = 4;
/** Column sets not in use; at most MAX_POOLED kept (groups in flight + the one filling). */
const pool: PointColumns[] = [];
const MAX_POOLED = 4;
/** Row keys of a group are views of slabs this big (no ArrayBuffer per row). */
const KEY_SLAB_BYTES = 16 * 1024;

let nextGroupId = 0;
/** Points of one series in a group sorted by insertion sort (more: sortRuns). */
const INSERTION_SORT_MAX = 64;

export class WriteGroup {
  readonly id = nextGroupId++;
  durability: Durability = 'buffered';
  readonly done: Promise<void>;
  private readonly widths: SchemaWidths;
  private entries: SeriesEntry[] = [];
  private cols: PointColumns | undefined;
  private count = 0;
  private bigs: Map<number, bigint> | undefined;
  private settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
  /** Per entry (this.entries order), its newest point in the group: ms, value, is-integer (build with trackNewest). */
  private newestMs: Float64Array | undefined;
  private newestValues: Float64Array | undefined;
  private newestInt: Uint8Array | undefined;
  /** The exact value of a newest point beyond ±2^53, by entry index. */
  private newestBig: Map<number, bigint> | undefined;

  constructor(widths: SchemaWidths) {
    this.widths = widths;
    this.cols = pool.pop() ?? new PointColumns();
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // A group nobody awaits any more must not surface as an unhandled rejection.
    this.done.catch(() => undefined);
  }

  get size(): number {
    return this.count;
  }

  requireDurability(d: Durability): void {
    if (d === 'sync') this.durability = 'sync';
  }

  /** Adds a validated point of series `e`, written by call number `seq`. */
  add(e: SeriesEntry, p: IncomingPoint, seq: number): void {
    this.addRaw(e, p.timestamp, p.value, p.isInt, p.big, seq);
  }

  /** add() with the point's fields passed one by one (the telnet fast path has no point object). */
  addRaw(e: SeriesEntry, t: number, value: number, isInt: boolean, big: bigint | undefined, seq: number): void {
    let c = this.cols;
    if (c === undefined) throw new Error('BUG: point added to a write group after build()');
    const i = this.count++;
    if (i === c.ms.length) c.grow();
    c = this.cols!;
    const isMs = t > MAX_SECOND_TIMESTAMP;
    c.ms[i] = isMs ? t : t * 1000;
    c.values[i] = value;
    c.seqs[i] = seq;
    c.flags[i] = (isInt ? FLAG_INT : 0) | (isMs ? FLAG_MS_QUALIFIER : 0);
    c.next[i] = -1;
    if (big !== undefined) {
      (this.bigs ??= new Map()).set(i, big);
      c.flags[i] |= FLAG_BIG;
    }
    if (e.groupId !== this.id) {
      e.groupId = this.id;
      e.first = i;
      this.entries.push(e);
    } else {
      c.next[e.last] = i;
    }
    e.last = i;
  }

  /**
   * One RowMutation per (series, hour): a put versioned `ts`. `onRowWritten` is told of
   * rows a series had not written since it was last compacted. The point columns go back
   * to the pool: no point may be added after this. With `trackNewest`, each series' newest
   * point is kept for eachNewest().
   */
  build(ts: number, now: number, onRowWritten?: (key: Uint8Array, base: number, now: number) => DirtyMark, trackNewest = false): RowMutation[] {
    const c = this.cols;
    if (c === undefined) throw new Error('BUG: write group built twice');
    for (let ei = 0; ei < this.entries.length; ei++) {
      if (!this.entries[ei]!.alive) {
        this.mergeSeries(c);
        break;
      }
    }
    if (trackNewest) {
      this.newestMs = new Float64Array(this.entries.length);
      this.newestValues = new Float64Array(this.entries.length);
      this.newestInt = new Uint8Array(this.entries.length);
      this.newestBig = undefined;
    }
    const rows: RowMutation[] = [];
    const baseOffset = this.widths.saltWidth + this.widths.metric;
    const { ms, values, flags: pflags } = c;
    // One buffer for all qualifiers and values of the group: 4 + 8 bytes per point at most, plus meta bytes.
    const buf = new Uint8Array(this.count * 13);
    const dv = new DataView(buf.buffer);
    let at = 0;
    let slab = new Uint8Array(KEY_SLAB_BYTES);
    let kat = 0;
    for (let ei = 0; ei < this.entries.length; ei++) {
      const e = this.entries[ei]!;
      const n = this.ordered(c, e);
      const idx = c.order;
      if (this.newestMs !== undefined) {
        const i = idx[n - 1]!;
        this.newestMs[ei] = ms[i]!;
        this.newestValues![ei] = values[i]!;
        this.newestInt![ei] = pflags[i]! & FLAG_INT;
        if ((pflags[i]! & FLAG_BIG) !== 0) (this.newestBig ??= new Map()).set(ei, this.bigs!.get(i)!);
      }
      let start = 0;
      while (start < n) {
        const base = hourOf(ms[idx[start]!]!);
        let end = start + 1;
        while (end < n && hourOf(ms[idx[end]!]!) === base) end++;
        const baseMs = base * 1000;
        const qStart = at;
        let anyMs = false;
        let anyS = false;
        for (let k = start; k < end; k++) {
          if ((pflags[idx[k]!]! & FLAG_MS_QUALIFIER) !== 0) {
            anyMs = true;
            at += 4;
          } else {
            anyS = true;
            at += 2;
          }
        }
        const qualifier = buf.subarray(qStart, at);
        const vStart = at;
        let q = qStart;
        for (let k = start; k < end; k++) {
          const i = idx[k]!;
          const f = pflags[i]!;
          const flags = (f & FLAG_BIG) === 0 ? putValue(buf, dv, at, values[i]!, (f & FLAG_INT) !== 0) : writeValue(buf, at, values[i]!, true, this.bigs!.get(i));
          at += valueLengthOfFlags(flags);
          const off = ms[i]! - baseMs;
          if ((f & FLAG_MS_QUALIFIER) !== 0) q += writeMsQualifier(buf, q, off, flags);
          else q += writeSecondQualifier(buf, q, off / 1000, flags);
        }
        if (end - start > 1) buf[at++] = anyMs && anyS ? 1 : 0;
        const value = buf.subarray(vStart, at);
        const t = e.template;
        if (kat + t.length > slab.length) {
          slab = new Uint8Array(Math.max(KEY_SLAB_BYTES, t.length));
          kat = 0;
        }
        slab.set(t, kat);
        writeBaseTimeAt(slab, kat + baseOffset, base);
        const key = slab.subarray(kat, kat + t.length);
        kat += t.length;
        rows.push({ key, mutations: [{ type: 'put', family: DATA_FAMILY, qualifier, value, timestamp: ts }] });
        if (base === e.lastBase && e.dirty !== undefined && e.dirty.live) {
          e.dirty.lastWriteMs = now;
        } else if (base === e.prevBase && e.prevDirty !== undefined && e.prevDirty.live) {
          // Back to the hour before (a slower connection's points around an hour's end):
          // still tracked, so touched as the last one would be.
          e.prevDirty.lastWriteMs = now;
        } else {
          e.prevBase = e.lastBase;
          e.prevDirty = e.dirty;
          e.lastBase = base;
          // A copy: the tracker keeps it past the group, and a view would pin the slab.
          e.dirty = onRowWritten?.(key.slice(), base, now);
        }
        start = end;
      }
    }
    this.cols = undefined;
    if (pool.length < MAX_POOLED) pool.push(c);
    return rows;
  }

  /**
   * Each series' newest point in the group (build with trackNewest; an integer beyond
   * ±2^53 as its nearest double and, in `big`, exactly).
   */
  eachNewest(fn: (e: SeriesEntry, ms: number, value: number, isInt: boolean, big: bigint | undefined) => void): void {
    const ms = this.newestMs;
    if (ms === undefined) return;
    const bigs = this.newestBig;
    for (let k = 0; k < this.entries.length; k++) fn(this.entries[k]!, ms[k]!, this.newestValues![k]!, this.newestInt![k] === 1, bigs?.get(k));
  }

  resolve(): void {
    this.settle?.resolve();
  }

  reject(err: Error): void {
    this.settle?.reject(err);
  }

  /**
   * The group holds an entry the catalog dropped (catalog/series-entries.ts): another entry
   * of its series may be here too. Each series' entries become one (the live one where
   * there is one), their points linked into one list: ordered() then sorts them by time
   * and call, as it does points of one entry.
   */
  private mergeSeries(c: PointColumns): void {
    const at = new Map<string, number>();
    const kept: SeriesEntry[] = [];
    for (const e of this.entries) {
      const i = at.get(e.tsuidKey);
      if (i === undefined) {
        at.set(e.tsuidKey, kept.length);
        kept.push(e);
        continue;
      }
      const k = kept[i]!;
      const [into, from] = k.alive || !e.alive ? [k, e] : [e, k];
      c.next[into.last] = from.first;
      into.last = from.last;
      kept[i] = into;
    }
    this.entries = kept;
  }

  /**
   * Puts the point indices of series `e` into c.order in ascending ms order, one per ms,
   * and returns how many: the point of the latest call wins, and within a call the later
   * point. Already ordered in the common case.
   */
  private ordered(c: PointColumns, e: SeriesEntry): number {
    const { ms, next, order } = c;
    let n = 0;
    let sorted = true;
    let prev = -Infinity;
    for (let i = e.first; i !== -1; i = next[i]!) {
      const t = ms[i]!;
      if (t <= prev) sorted = false;
      prev = t;
      order[n++] = i;
    }
    if (sorted) return n;
    const seqs = c.seqs;
    if (n <= INSERTION_SORT_MAX) {
      // A few points from interleaved runs (telnet connections sending different parts of
      // their files): insertion sort in place, no array or closure.
      for (let k = 1; k < n; k++) {
        const i = order[k]!;
        const t = ms[i]!;
        const sq = seqs[i]!;
        let j = k - 1;
        for (; j >= 0; j--) {
          const o = order[j]!;
          const d = ms[o]! - t || seqs[o]! - sq || o - i;
          if (d <= 0) break;
          order[j + 1] = o;
        }
        order[j + 1] = i;
      }
    } else {
      sortRuns(order, c.merge, n, ms, seqs);
    }
    let m = 0;
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      if (k + 1 < n && ms[order[k + 1]!] === ms[i]) continue; // a later write of the same ms follows
      order[m++] = i;
    }
    return m;
  }
}

/**
 * Sorts order[0, n) by (ms, seq, index) — the order insertion sort gives — using `merge`
 * (at least n long) and allocating nothing: a natural merge sort. A series' points in a
 * group arrive as a few ascending runs (one per connection, each sending its part of
 * the data in time order), so a pass merges neighbouring runs and few passes are needed.
 * Before, `Array.from(...).sort(comparator)` made an array and a closure per series and
 * ~60 bytes of garbage a point on a 4-connection telnet load.
 */
export function sortRuns(order: Int32Array, merge: Int32Array, n: number, ms: Float64Array, seqs: Float64Array): void {
  let src = order;
  let dst = merge;
  for (;;) {
    let runs = 0;
    let i = 0;
    while (i < n) {
      let j = i + 1;
      while (j < n && !after(src[j - 1]!, src[j]!, ms, seqs)) j++;
      let k = j;
      if (j < n) {
        k = j + 1;
        while (k < n && !after(src[k - 1]!, src[k]!, ms, seqs)) k++;
      }
      // Merge src[i, j) and src[j, k) into dst[i, k).
      let a = i;
      let b = j;
      let o = i;
      while (a < j && b < k) dst[o++] = after(src[a]!, src[b]!, ms, seqs) ? src[b++]! : src[a++]!;
      while (a < j) dst[o++] = src[a++]!;
      while (b < k) dst[o++] = src[b++]!;
      runs++;
      i = k;
    }
    const t = src;
    src = dst;
    dst = t;
    if (runs <= 1) break;
  }
  if (src !== order) for (let x = 0; x < n; x++) order[x] = src[x]!;
}

/** Point a sorts after point b: by ms, then by call sequence, then by index. */
function after(a: number, b: number, ms: Float64Array, seqs: Float64Array): boolean {
  return (ms[a]! - ms[b]! || seqs[a]! - seqs[b]! || a - b) > 0;
}

function hourOf(ms: number): number {
  const s = Math.floor(ms / 1000);
  return s - (s % 3600);
}

/**
 * writeValue (tsdb/schema/value.ts: the smallest signed integer, else binary32 when exact,
 * else binary64, big-endian) with one DataView store instead of a scratch buffer and a
 * byte copy; the same bytes. Integers past 32 bits and non-finite values take writeValue.
 */
function putValue(buf: Uint8Array, dv: DataView, at: number, value: number, isInt: boolean): number {
  if (isInt) {
    if (value >= -128 && value <= 127 && Number.isInteger(value)) {
      buf[at] = value & 0xff;
      return 0;
    }
    if (value >= -32768 && value <= 32767 && Number.isInteger(value)) {
      dv.setInt16(at, value);
      return 1;
    }
    if (value >= -2147483648 && value <= 2147483647 && Number.isInteger(value)) {
      dv.setInt32(at, value);
      return 3;
    }
    return writeValue(buf, at, value, true);
  }
  if (!Number.isFinite(value)) return writeValue(buf, at, value, false);
  if (Math.fround(value) === value) {
    dv.setFloat32(at, value);
    return FLAG_FLOAT | 0x3;
  }
  dv.setFloat64(at, value);
  return FLAG_FLOAT | 0x7;
}
