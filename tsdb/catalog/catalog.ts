/**
 * The catalog: what names and series exist, and everything kept in memory about them —
 * the three UID tables with their caches, the series index with its in-memory copy, the
 * writer's series entries with their text and byte caches (series-entries.ts), the names
 * of series (series-names.ts), the query side's series plans, row-key templates and series
 * counts. One owner, so one rule and one dropCaches for all of it.
 *
 * The rule: whatever is derived from the catalog is kept with the catalog's change stamp
 * read before it was derived, and holds while nothing it derives from was touched since
 * (holds()). A rename and dropCaches touch everything. Recording a new series of metric M
 * touches M only: a new series of one metric leaves the plans of every other metric
 * alone. Assigning a UID touches nothing by itself: no series carries the new UID until
 * one is recorded, which touches its metric. Series sets (the index's in-memory copy,
 * plans, counts) are kept where this process is the store's one writer
 * (capabilities.singleWriter) or hears of the other writers' changes: on other stores
 * every new series, rename and delete is also appended to the change log
 * (meta/change-log.ts), and the changes other servers logged are applied here as if made
 * here (applyRemote), within FEED_POLL_MS plus two reads.
 *
 * dropCaches empties every cache (HTTP /api/dropcaches, telnet dropcaches and fsck reach
 * the same call); a rename drops the series entries and byte caches too, so a put to the
 * old name resolves it again (and gets a new metric, as OpenTSDB does).
 *
 * Memory: every structure here is bounded in bytes by its share of one budget,
 * horae.catalog.memory_bytes (memory/catalog-memory.ts states the shares and the
 * estimates of an entry's bytes), and evicts a part of itself at its bound, never the
 * whole; `memory` reports each one's bytes against its bound (/api/stats). The hour
 * compactor's dirty rows take their share from here too (Tsdb), though they are work to
 * do, not a cache: dropCaches leaves them. The row-key templates are kept per TSUID object
 * (a WeakMap): they live as long as the entry that holds the TSUID, and are counted in it.
 */
import { latin1 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import type { TsdbConfig } from '../config.js';
import { randomBytes } from 'node:crypto';
import { ChangeFeed, ChangeLog, WRITER_ID_BYTES } from '../meta/change-log.js';
import type { Change, ChangeFeedStats } from '../meta/change-log.js';
import { TsdbError } from '../errors.js';
import { CreationGate, hex } from '../meta/creation-gate.js';
import { SeriesLimiter } from '../limits/series-limiter.js';
import { SeriesIndex } from '../meta/series-index.js';
import { rowKeyFromTsuid } from '../schema/row-key.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { UidKind } from '../uid/uid-kind.js';
import { UidTable } from '../uid/uid-table.js';
import { SeriesEntries } from './series-entries.js';
import type { CatalogSeries } from './series-entries.js';
import { SeriesNameCache } from './series-names.js';
import { CatalogMemory, PLAN_BYTES, TSUID_REF_BYTES } from '../memory/catalog-memory.js';
import { LastValues } from '../meta/last-values.js';
import { NewestHours } from '../meta/newest-hours.js';
import { makeRoom } from '../meta/make-room.js';

export interface CatalogOptions {
  readonly uid: Table;
  readonly meta: Table;
  readonly widths: SchemaWidths;
  readonly config: Pick<TsdbConfig, 'uidWidthMetric' | 'uidWidthTagk' | 'uidWidthTagv' | 'catalogMemoryBytes' | 'queryLastCache'
    | 'limitNewSeriesPerHour' | 'limitNewSeriesPerDay' | 'limitSeriesPerMetric' | 'indexIdleMs'>;
  /** The series postings table (meta/postings.ts). */
  readonly postings: Table;
  readonly singleWriter: boolean;
  /** The change log table (meta/change-log.ts), where others may write the store. */
  readonly changes?: Table;
  /** Wall clock in ms, for the change feed and the limits' windows (default Date.now). */
  readonly now?: () => number;
  /** True while writes are in flight (the newest-hour hints' trust rule: meta/newest-hours.ts). */
  readonly writesInFlight?: () => boolean;
}

/** What Catalog.recordSeries did with a series: recorded it now, found it recorded, or refused it. */
export type SeriesRecorded = 'new' | 'known' | TsdbError;

/** How long a metric's series count is reused where another process may add series. */
const SERIES_COUNT_TTL_MS = 10_000;

export class Catalog<E extends CatalogSeries = CatalogSeries> {
  readonly metrics: UidTable;
  readonly tagks: UidTable;
  readonly tagvs: UidTable;
  readonly index: SeriesIndex;
  /** The cardinality limits new series pass before they are recorded (limits/series-limiter.ts). */
  readonly limiter: SeriesLimiter;
  /** The writer's series entries and the caches that find them. */
  readonly series: SeriesEntries<E>;
  readonly names: SeriesNameCache;
  /** Newest-hour hints for /api/query/last (meta/newest-hours.ts): kept where series sets are (keepsSeries). */
  readonly newestHours: NewestHours | undefined;
  /** Each series' newest point for /api/query/last (meta/last-values.ts): kept as the hints are, unless horae.query.last_cache is off. */
  readonly lastValues: LastValues | undefined;
  /** The byte budget of everything here and each structure's share (memory/catalog-memory.ts). */
  readonly memory: CatalogMemory;
  readonly widths: SchemaWidths;
  /** Refuses series carrying UIDs the index cleanup deletes (meta/creation-gate.ts). */
  readonly gate: CreationGate;
  /** True when this process is the store's one writer (capabilities.singleWriter). */
  readonly singleWriter: boolean;
  /** True where series sets are kept: one writer, or a change feed from the others. */
  readonly keepsSeries: boolean;
  private readonly log: ChangeLog | undefined;
  private readonly feed: ChangeFeed | undefined;
  /** Told of the other servers' changes after the catalog applied them (the Tsdb's own caches). */
  private remoteListener: ((c: Change) => void) | undefined;
  /** Counts every touch; a stamp is its value. */
  private changes = 0;
  /** The stamp of the last touch of everything. */
  private everything = 0;
  /** The stamp of the last touch of each metric (by metric UID as latin1). */
  private readonly metricTouched = new Map<string, number>();
  /** The newest stamp of a metric no longer in metricTouched (its bound): such a metric counts as touched then. */
  private touchedFloor = 0;
  private touchedBytes = 0;
  private readonly kept = new Set<{ clear(): void; readonly size: number; readonly bytes: number }>();
  private templates = new WeakMap<Uint8Array, Uint8Array>();
  private readonly counts = new Map<string, { n: number; upTo: number; at: number; ms: number }>();

  constructor(o: CatalogOptions) {
    const c = o.config;
    this.widths = o.widths;
    this.singleWriter = o.singleWriter;
    this.gate = new CreationGate(o.now);
    if (!o.singleWriter && o.changes !== undefined) {
      this.log = new ChangeLog(o.changes, randomBytes(WRITER_ID_BYTES), o.widths.metric);
      this.feed = new ChangeFeed(this.log, (c) => this.applyRemote(c), o.now);
    }
    this.keepsSeries = o.singleWriter || this.feed !== undefined;
    const renamed = (): void => this.touchEverything();
    const mem = (this.memory = new CatalogMemory(c.catalogMemoryBytes));
    // The three kinds share the UID caches' bytes: tag values are the many.
    const uid = mem.share('uidCaches');
    this.metrics = new UidTable(o.uid, 'metric', c.uidWidthMetric, uid / 8, renamed);
    this.tagks = new UidTable(o.uid, 'tagk', c.uidWidthTagk, uid / 8, renamed);
    this.tagvs = new UidTable(o.uid, 'tagv', c.uidWidthTagv, (uid * 3) / 4, renamed);
    this.index = new SeriesIndex(o.meta, o.postings, o.widths, {
      keep: this.keepsSeries, memoryBytes: mem.share('index'), idleMs: c.indexIdleMs, ...(o.now === undefined ? {} : { now: o.now }),
    });
    this.limiter = new SeriesLimiter(
      { newPerHour: c.limitNewSeriesPerHour, newPerDay: c.limitNewSeriesPerDay, perMetric: c.limitSeriesPerMetric },
      { metricWidth: o.widths.metric, countSeries: (m, upTo) => this.seriesCount(m, upTo), now: o.now ?? Date.now, maxBytes: mem.share('plans') / 8 },
    );
    this.series = new SeriesEntries<E>(mem.share('seriesEntries'));
    this.names = new SeriesNameCache(o.widths, this.tagks, this.tagvs, this, mem.share('names'));
    const inFlight = o.writesInFlight ?? (() => false);
    this.newestHours = this.keepsSeries ? new NewestHours(inFlight, mem.share('newestHours')) : undefined;
    this.lastValues = this.keepsSeries && c.queryLastCache ? new LastValues(mem.share('lastValues'), o.widths.metric) : undefined;
    const uidTables = [this.metrics, this.tagks, this.tagvs];
    mem.register('seriesEntries', () => this.series.heldBytes, () => this.series.size);
    mem.register('uidCaches', () => uidTables.reduce((n, t) => n + t.cacheBytes(), 0), () => uidTables.reduce((n, t) => n + t.cacheEntries(), 0));
    mem.register('index', () => this.index.stats().bytes, () => this.index.stats().series);
    mem.register('names', () => this.names.bytes, () => this.names.size);
    const hints = this.newestHours;
    if (hints !== undefined) mem.register('newestHours', () => hints.bytes, () => hints.size);
    const last = this.lastValues;
    if (last !== undefined) mem.register('lastValues', () => last.bytes, () => last.size);
    mem.register('plans', () => this.planBytes(), () => this.counts.size + this.limiter.size + [...this.kept].reduce((n, k) => n + k.size, 0));
  }

  /** Bytes of the kept plans, series counts, the limiter's counts and metric stamps (the 'plans' share). */
  private planBytes(): number {
    let n = this.touchedBytes + this.counts.size * COUNT_BYTES + this.limiter.bytes;
    for (const k of this.kept) n += k.bytes;
    return n;
  }

  uidTable(kind: UidKind): UidTable {
    return kind === 'metric' ? this.metrics : kind === 'tagk' ? this.tagks : this.tagvs;
  }

  /** The stamp to keep with what is derived from here now. */
  stamp(): number {
    return this.changes;
  }

  /**
   * True while what was derived at stamp `at` still holds: nothing touched everything
   * since, nor (when given) the metric it derives from.
   */
  holds(at: number, metricUid?: Uint8Array): boolean {
    if (this.everything > at) return false;
    return metricUid === undefined || (this.metricTouched.get(latin1(metricUid)) ?? this.touchedFloor) <= at;
  }

  /**
   * Makes sure series (TSUIDs) are in the series index: those it holds already are left
   * as they are (no write); the new ones pass the cardinality limits (limiter), and the
   * admitted are recorded durably in one write, touching their metrics. Returns one entry
   * per TSUID: 'new' when this call recorded it (a series new to the database), 'known'
   * when the index held it already, else its refusal (TSDB_LIMIT_EXCEEDED). Every new
   * series goes through here. `fresh[i]` true: the caller knows TSUID i cannot be in the
   * index (it carries a UID assigned just now), so the index is not read for it.
   */
  async recordSeries(tsuids: readonly Uint8Array[], nowMs: number, fresh?: readonly boolean[]): Promise<SeriesRecorded[]> {
    const out: SeriesRecorded[] = new Array<SeriesRecorded>(tsuids.length).fill('known');
    if (tsuids.length === 0) return out;
    // The index cleanup (meta/index-cleanup.ts) waits for the recordings in flight before it deletes UIDs.
    const token = this.gate.enter();
    try {
      return await this.recordGated(tsuids, nowMs, fresh, out);
    } finally {
      this.gate.leave(token);
    }
  }

  private async recordGated(tsuids: readonly Uint8Array[], nowMs: number, fresh: readonly boolean[] | undefined, out: SeriesRecorded[]): Promise<SeriesRecorded[]> {
    const ask: number[] = [];
    for (let i = 0; i < tsuids.length; i++) if (fresh?.[i] !== true) ask.push(i);
    const known = ask.length === 0 ? [] : await this.index.known(ask.map((i) => tsuids[i]!));
    const absent: number[] = [];
    const admitted: Uint8Array[] = [];
    for (let i = 0, j = 0; i < tsuids.length; i++) {
      const k = fresh?.[i] === true ? false : known[j++]!;
      // A row the index cleanup marked: the series lives on (revived: no new series, no limit).
      if (k instanceof Uint8Array && await this.index.revive(tsuids[i]!, k, nowMs)) continue;
      if (k === true) continue;
      const kind = this.gate.retiredIn(tsuids[i]!, this.widths);
      if (kind === undefined) absent.push(i);
      else out[i] = retiredUid(kind);
    }
    const verdicts = absent.length === 0 ? [] : await this.limiter.admit(absent.map((i) => tsuids[i]!));
    for (let j = 0; j < absent.length; j++) {
      const v = verdicts[j];
      if (v === undefined) {
        admitted.push(tsuids[absent[j]!]!);
        out[absent[j]!] = 'new';
      } else out[absent[j]!] = v;
    }
    if (admitted.length === 0) return out;
    // The entry's number first: a server dying after the record leaves a gap the others take for "anything changed".
    const r = await this.log?.reserve();
    try {
      await this.index.record(admitted, nowMs);
    } catch (err) {
      if (r !== undefined) await this.log!.abandon(r);
      throw err;
    }
    this.touchMetricsOf(admitted);
    if (r !== undefined) await this.log!.announce(r, { kind: 'series', tsuids: admitted });
    return out;
  }

  /** Renames a UID, keeping the id; every server hears of it (change log, its number taken first as for new series). */
  async rename(kind: UidKind, from: string, to: string): Promise<void> {
    const r = await this.log?.reserve();
    let id: Uint8Array;
    try {
      id = await this.uidTable(kind).rename(from, to);
    } catch (err) {
      if (r !== undefined) await this.log!.abandon(r);
      throw err;
    }
    if (r !== undefined) await this.log!.announce(r, { kind: 'rename', uidKind: kind, id, from, to });
  }

  /**
   * A step of the index cleanup (meta/index-cleanup.ts), applied here and, where others
   * write the store, appended to the change log for them (they apply it the same way).
   */
  async cleanupStep(c: Extract<Change, { kind: 'cleanup' }>): Promise<void> {
    this.applyCleanup(c);
    await this.log?.append(c);
  }

  /**
   * What a cleanup step changes here: step 1 drops the writer's entries and the in-memory
   * index copy of the series being removed (their next write reads the marked row and
   * revives it); step 2 refuses series carrying the UIDs being deleted and drops every
   * cache that may hold them; step 3 keeps the UIDs deleted refused and the others no more.
   */
  applyCleanup(c: Extract<Change, { kind: 'cleanup' }>): void {
    if (c.step === 1 || c.step === 3) {
      for (const t of c.tsuids) this.series.drop(latin1(t));
      this.index.forget(c.tsuids);
      this.touchMetricsOf(c.tsuids);
    }
    if (c.step === 2) {
      for (const kind of ['metric', 'tagk', 'tagv'] as const) {
        if (c.uids[kind].length === 0) continue;
        this.gate.pend(kind, c.uids[kind].map((id) => hex(id)));
        this.uidTable(kind).dropCaches();
      }
      this.touchEverything();
    }
    if (c.step === 3) {
      this.gate.settle({ metric: c.uids.metric.map((id) => hex(id)), tagk: c.uids.tagk.map((id) => hex(id)), tagv: c.uids.tagv.map((id) => hex(id)) });
      if (c.uids.metric.length + c.uids.tagk.length + c.uids.tagv.length > 0) this.touchEverything();
    }
  }

  /** Data rows of these series were deleted: the other servers hear of it (change log). */
  async rowsDeleted(tsuids: readonly Uint8Array[]): Promise<void> {
    if (tsuids.length > 0) await this.log?.append({ kind: 'delete', tsuids });
  }

  /** True where other servers may write the store: points written are announced (announceWritten). */
  get announcesWrites(): boolean {
    return this.log !== undefined;
  }

  /**
   * Points of these series (TSUID as latin1 → newest base hour written, epoch s) are
   * stored: the other servers hear of it (change log; coalesced, one append in flight).
   */
  announceWritten(series: Iterable<readonly [string, number]>): Promise<void> {
    return this.log === undefined ? Promise.resolve() : this.log.appendWritten(series);
  }

  /** Starts reading the other servers' changes (from now on); with `everyMs`, on a timer. */
  async startFeed(everyMs?: number): Promise<void> {
    await this.feed?.start(everyMs);
  }

  async stopFeed(): Promise<void> {
    this.log?.close();
    await this.feed?.stop();
  }

  /** Applies what the other servers logged since the last poll (the feed's timer does it on its own). */
  async pollChanges(): Promise<void> {
    await this.feed?.poll();
  }

  /** `fn` hears of every change of another server, after the catalog applied it. */
  onRemoteChange(fn: (c: Change) => void): void {
    this.remoteListener = fn;
  }

  /** The change feed's counters (undefined where there is none). */
  feedStats(): (ChangeFeedStats & { readonly appended: number }) | undefined {
    const s = this.feed?.stats();
    return s === undefined ? undefined : { ...s, appended: this.log!.appendedCount };
  }

  /** Another server's change, applied to what is kept here as if it were made here. */
  private applyRemote(c: Change): void {
    switch (c.kind) {
      case 'series':
        this.touchMetricsOf(c.tsuids);
        break;
      case 'metrics':
        for (const m of c.metricUids) this.touchMetric(latin1(m));
        break;
      case 'rename':
        this.uidTable(c.uidKind).dropCaches();
        this.touchEverything();
        break;
      case 'unknown':
        this.gate.forgetPending();
        this.dropCaches();
        break;
      case 'cleanup':
        this.applyCleanup(c);
        break;
      case 'delete':
      case 'written':
      case 'writtenMetrics':
        break;
    }
    this.remoteListener?.(c);
  }

  private touchMetricsOf(tsuids: readonly Uint8Array[]): void {
    const w = this.widths.metric;
    for (const t of tsuids) this.touchMetric(latin1(t.subarray(0, w)));
  }

  /**
   * Stamps a metric touched now. The stamps are bounded (an eighth of the plans' share):
   * the oldest-stamped go first, and the newest stamp of those gone becomes the floor every
   * metric without a stamp counts as touched at (what was derived before it is rebuilt).
   */
  private touchMetric(id: string): void {
    const had = this.metricTouched.get(id);
    if (had !== undefined) this.metricTouched.delete(id); // re-inserted: the map stays in stamp order
    else this.touchedBytes += stampBytes(id);
    this.metricTouched.set(id, ++this.changes);
    const max = this.memory.share('plans') / 8;
    if (this.touchedBytes < max) return;
    for (const [k, v] of this.metricTouched) {
      this.metricTouched.delete(k);
      this.touchedBytes -= stampBytes(k);
      this.touchedFloor = Math.max(this.touchedFloor, v);
      if (this.touchedBytes <= (max * 7) / 8) break;
    }
  }

  /** Empties every cache of the catalog and touches everything. */
  dropCaches(): void {
    this.metrics.dropCaches();
    this.tagks.dropCaches();
    this.tagvs.dropCaches();
    this.index.forgetAll();
    this.newestHours?.distrustAll();
    this.lastValues?.clear();
    this.touchEverything();
  }

  /**
   * A cache of values derived from one metric's series (a query's series plan), kept while
   * the catalog holds them; empty where series sets are not kept (keepsSeries). `sizeOf`:
   * a value's heap bytes by estimate (asked again by KeptByMetric.remeasure); the caches
   * made here share three quarters of the plans' share equally.
   */
  keepByMetric<V>(maxEntries: number, sizeOf: (v: V) => number): KeptByMetric<V> {
    const k = new KeptByMetric<V>(this, maxEntries, () => (this.memory.share('plans') * 3) / 4 / this.kept.size, sizeOf);
    this.kept.add(k);
    return k;
  }

  /** The row-key template of a TSUID (salt filled in, base time 0), kept per TSUID object (read only). */
  templateOf(tsuid: Uint8Array): Uint8Array {
    let t = this.templates.get(tsuid);
    if (t === undefined) this.templates.set(tsuid, (t = rowKeyFromTsuid(this.widths, tsuid, 0)));
    return t;
  }

  /**
   * Series of a metric in the series index, counted up to `upTo`. Repeated queries of one
   * metric reuse the count while the metric is untouched (where series sets are kept) or
   * for a few seconds (elsewhere: a count only grows, so a stale one errs low).
   */
  async seriesCount(metricUid: Uint8Array, upTo: number): Promise<number> {
    const id = latin1(metricUid);
    const now = performance.now();
    const c = this.counts.get(id);
    const fresh = c !== undefined && (this.keepsSeries ? this.holds(c.at, metricUid) : now - c.ms < SERIES_COUNT_TTL_MS);
    if (fresh && (c.n < c.upTo || c.upTo >= upTo)) return Math.min(c.n, upTo);
    const at = this.stamp();
    const n = (await this.index.tsuids(metricUid, upTo)).length;
    this.counts.delete(id);
    makeRoom(this.counts, this.counts.size * COUNT_BYTES, MAX_COUNTS * COUNT_BYTES, () => COUNT_BYTES);
    this.counts.set(id, { n, upTo, at, ms: now });
    return n;
  }

  private touchEverything(): void {
    this.everything = ++this.changes;
    this.limiter.clear();
    this.series.clear();
    this.names.clear();
    for (const k of this.kept) k.clear();
    this.templates = new WeakMap();
    this.counts.clear();
  }
}

/** Metrics whose series count is kept, at most (the oldest-counted eighth goes first). */
const MAX_COUNTS = 4096;
/** Heap bytes of one kept series count (the object, its key, the map slot). */
const COUNT_BYTES = 120;

/** Heap bytes of one metric's touch stamp (key string, a number, map slot). */
function stampBytes(id: string): number {
  return 64 + id.length;
}

interface Kept<V> {
  readonly value: V;
  readonly metricUid: Uint8Array;
  readonly at: number;
  bytes: number;
}

/**
 * Values derived from one metric each (Catalog.keepByMetric), by key, bounded in entries
 * and in bytes (by `sizeOf`); the oldest goes first.
 */
export class KeptByMetric<V> {
  private readonly map = new Map<string, Kept<V>>();
  private readonly catalog: Pick<Catalog, 'holds' | 'keepsSeries'>;
  private readonly maxEntries: number;
  /** The bound in bytes (asked at each check: the caches of a catalog share one). */
  private readonly maxBytes: () => number;
  private readonly sizeOf: (v: V) => number;
  private held = 0;

  constructor(catalog: Pick<Catalog, 'holds' | 'keepsSeries'>, maxEntries: number, maxBytes: () => number, sizeOf: (v: V) => number) {
    this.catalog = catalog;
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.sizeOf = sizeOf;
  }

  get size(): number {
    return this.map.size;
  }

  /** Bytes held, by `sizeOf` as last measured. */
  get bytes(): number {
    return this.held;
  }

  /** The kept value of `key`, while it holds. */
  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (hit === undefined) return undefined;
    if (this.catalog.holds(hit.at, hit.metricUid)) return hit.value;
    this.drop(key, hit);
    return undefined;
  }

  /** Keeps `value`, derived from metric `metricUid` at stamp `at` (read before deriving it). */
  set(key: string, value: V, metricUid: Uint8Array, at: number): void {
    if (!this.catalog.keepsSeries) return;
    const had = this.map.get(key);
    if (had !== undefined) this.drop(key, had);
    const k: Kept<V> = { value, metricUid, at, bytes: this.sizeOf(value) };
    this.map.set(key, k);
    this.held += k.bytes;
    this.trim(k);
  }

  /** A kept value grew or shrank (a plan's matched series): measured again, and the oldest go while over the bound. */
  remeasure(value: V): void {
    for (const k of this.map.values()) {
      if (k.value !== value) continue;
      this.held += this.sizeOf(value) - k.bytes;
      k.bytes = this.sizeOf(value);
      this.trim(k);
      return;
    }
  }

  clear(): void {
    this.map.clear();
    this.held = 0;
  }

  /** Drops the oldest entries but `keep` while over either bound; `keep` too when it alone is over the bytes. */
  private trim(keep: Kept<V>): void {
    const max = this.maxBytes();
    for (const [key, k] of this.map) {
      if (this.map.size <= this.maxEntries && this.held <= max) return;
      if (k !== keep) this.drop(key, k);
    }
    if (this.held > max) this.clear();
  }

  private drop(key: string, k: Kept<V>): void {
    this.map.delete(key);
    this.held -= k.bytes;
  }
}

/** A series plan's heap bytes by estimate: PLAN_BYTES and its matched series (query/series-plan.ts). */
export function planBytes(p: { readonly matched?: { readonly tsuids: readonly Uint8Array[] } }): number {
  let n = PLAN_BYTES;
  if (p.matched !== undefined) for (const t of p.matched.tsuids) n += TSUID_REF_BYTES + t.length;
  return n;
}

/** The refusal of a series carrying a UID the index cleanup removed (creation-gate.ts). */
function retiredUid(kind: UidKind): TsdbError {
  return new TsdbError('TSDB_OVERLOADED', `a ${kind === 'metric' ? 'metric' : kind === 'tagk' ? 'tag key' : 'tag value'} of this series was removed by the index cleanup (horae.retention.cleanup) as the point was written: send it again`);
}
