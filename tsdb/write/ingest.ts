/**
 * The write path: incoming points → validated → series resolved to a row-key template
 * (UIDs assigned on first sight) → queued into the current write group → one mutate()
 * per group (tsdb/SCHEMA.md "Row key", "Qualifiers", "Values", "OpenTSDB compacted column").
 *
 * Write groups (group commit at the series level): calls that arrive while earlier groups
 * are being written join one group. The group stores each row's points as ONE cell: a
 * single-point cell (2- or 4-byte qualifier) when the row got one point, otherwise an
 * OpenTSDB compacted column (qualifiers and values concatenated, plus the meta byte) —
 * the format OpenTSDB itself uses for several points in one cell. Under load a group holds
 * many points per series, so the store sees a fraction of the cells; an idle server
 * writes a call's group at once, so nothing waits for a timer. While writers stream, a
 * group smaller than the recent ones waits for more, up to the group window (scheduleFlush;
 * tsdb/OPERATOR.md).
 *
 * Per point the hot path is a cache hit on the series text and a timestamp/value check;
 * names are validated once per series, not per point.
 *
 * Cell timestamps: every cell of a group carries the group's write time, strictly greater
 * than the previous group's, so across groups the newest write of a timestamp wins. In a
 * group, a repeated (series, ms timestamp) keeps the point of the latest call. Calls join
 * groups in call order: one that is still resolving series (creating them, after an
 * eviction say) holds back the later calls until its points are in, so a later call's
 * point cannot land in an earlier group than an earlier call's.
 *
 * Memory: points accepted but not yet durable are counted; past `maxInflightPoints`
 * write() rejects with TSDB_OVERLOADED (HTTP answers 503) and overloaded() is true
 * (telnet stops reading until whenWritable() resolves).
 */
import type { Durability, Table } from '../../core/api/store.js';
import type { Catalog } from '../catalog/catalog.js';
import type { TsdbConfig } from '../config.js';
import { TsdbError, isTsdbError } from '../errors.js';
import type { SchemaWidths } from '../schema/widths.js';
import { validatePointValue } from './data-point.js';
import type { IncomingPoint } from './data-point.js';
import { KnownSeriesPoints, newScannedPoint, writableAsScanned } from './put-entry.js';
import type { PointOutcome, PointSource } from './put-entry.js';
import { SeriesCreator } from './series-creation.js';
import type { DirtyMark } from './dirty-mark.js';
import { WriteGroup } from './write-group.js';
import type { SeriesEntry } from './write-group.js';

export interface IngestDeps {
  readonly data: Table;
  /** Names, series and their caches: series seen for the first time (by this process) are recorded there before their points are written. */
  readonly catalog: Catalog<SeriesEntry>;
  readonly widths: SchemaWidths;
  readonly config: TsdbConfig;
  readonly now: () => number;
  /** Told about every (row, hour) the first time a series writes into it, and touched on every write. */
  readonly onRowWritten?: (rowKey: Uint8Array, baseSec: number, nowMs: number) => DirtyMark;
  /**
   * Told of each series' newest point in a group once the store has it, before the group's
   * writers hear so (the last-value cache, meta/last-values.ts); `failed` when a group's
   * write failed (some of its rows may be stored all the same).
   */
  readonly newestPoints?: {
    stored(e: SeriesEntry, ms: number, value: number, isInt: boolean, big: bigint | undefined): void;
    failed(): void;
  };
  /**
   * Where other servers share the store: told of each series of a group (TSUID as latin1,
   * newest base hour written) once the group's write returned, stored or failed (some rows
   * may be stored all the same); the group is acknowledged once this resolves, and fails
   * when it rejects (catalog.announceWritten).
   */
  readonly announceWritten?: (series: Iterable<readonly [string, number]>) => Promise<void>;
  /**
   * Where servers share the store: resolves once the rows a group reported to onRowWritten
   * may be written (the compaction ledger lists them: compact/compaction-ledger.ts);
   * undefined when they may be now.
   */
  readonly rowsListed?: () => Promise<void> | undefined;
  /** Called as each write call starts, before any series entry is used (the index cleanup's self-fence: meta/cleanup-member.ts). */
  readonly beforeWrite?: () => void;
}

export interface IngestStats {
  readonly pointsWritten: number;
  readonly pointsRejected: number;
  readonly inflightPoints: number;
  readonly overloadRejections: number;
  /** Series new to the database (SeriesCreator's CreationStats). */
  readonly seriesCreated: number;
  /** Known series made live again (dropped from the in-memory entries, or first written since the start). */
  readonly seriesReadmitted: number;
  readonly groupsWritten: number;
  readonly cellsWritten: number;
}

/**
 * Groups being written at once; more calls wait in the next group. One: a group writes
 * one cell per row, so the calls that arrive while a group is made durable all join the
 * next one, and bigger groups cost fewer memstore entries, RowMutations and WAL bytes a
 * point (a second group in flight cost 11–13% more CPU a point over telnet and HTTP JSON,
 * bench/results/ab-ingest-groups-cdbe8df.json). The WAL still batches fsyncs across tables
 * and other writers.
 */
const MAX_GROUPS_IN_FLIGHT = 1;

/**
 * A group of at least this many points means writers are streaming: the next group then
 * waits until it is as big as the recent ones, up to the group window
 * (horae.ingest.group_window_ms). Below it (light load) a group is written as soon as the
 * previous one is done.
 */
export const STREAMING_GROUP_POINTS = 4096;

/**
 * A waiting group goes once it is as big as the largest of this many last groups: the
 * writers of any of them are likely streaming still. One would do for writers that always
 * come back together, but one that came back late would never catch up with the others.
 */
export const RECENT_GROUPS = 4;

export class Ingestor {
  private readonly deps: IngestDeps;
  private readonly creator: SeriesCreator;
  /** put()'s scratch for one scanned point. */
  private readonly scanned = newScannedPoint();
  private lastWriteTs = 0;
  private callSeq = 0;
  private inflight = 0;
  /** Sequence numbers of the write calls not yet ended (callsEnded). */
  private readonly callsOpen = new Set<number>();
  private waiters: Array<() => void> = [];
  private group: WriteGroup | undefined;
  private groupsInFlight = 0;
  private flushScheduled = false;
  /** When the last group started (performance.now() ms) and its points: the group window. */
  private lastGroupStart = Number.NEGATIVE_INFINITY;
  private lastGroupPoints = 0;
  /** The points of the last RECENT_GROUPS groups (a ring): the group window's target is their largest. */
  private readonly recentGroupPoints = new Array<number>(RECENT_GROUPS).fill(0);
  private recentAt = 0;
  /** The flush of a group waiting out the group window (scheduleFlush). */
  private windowTimer: NodeJS.Timeout | undefined;
  /** Writers that can add no points until some of theirs are acknowledged (writerBlocked). */
  private blockedWriters = 0;
  private written = 0;
  private rejected = 0;
  private overloadRejections = 0;
  /** Series being created by some call (series text → its entry, once recorded). */
  private readonly resolving = new Map<string, Promise<SeriesEntry>>();
  private groups = 0;
  private cells = 0;
  /** Settles once the latest call that had to resolve series (or wait) has queued its points. */
  private queuedTail: Promise<void> | undefined;

  constructor(deps: IngestDeps) {
    this.deps = deps;
    this.creator = new SeriesCreator(deps.catalog, deps.config, deps.widths, deps.now);
  }

  /** True while accepted-but-not-durable points exceed the configured bound. */
  overloaded(): boolean {
    return this.inflight >= this.deps.config.maxInflightPoints;
  }

  /** Resolves once the pipeline is below its bound. */
  whenWritable(): Promise<void> {
    if (!this.overloaded()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * The ingest entry of every protocol (put-entry.ts): writes the source's points, known
   * series from their bytes and the rest parsed, and resolves with one outcome per point
   * (a parse error or a write outcome) once the good ones are durable. Rejects as write().
   */
  async put(source: PointSource, opts: { durability?: Durability; admit?: 'reject' | 'wait' } = {}): Promise<PointOutcome[]> {
    this.deps.beforeWrite?.();
    const n = source.count;
    const out: PointOutcome[] = new Array<PointOutcome>(n).fill(undefined);
    const cache = source.protocol === undefined ? undefined : this.deps.catalog.series.bytes(source.protocol);
    const sp = this.scanned;
    const known = KnownSeriesPoints.take(n);
    const points: IncomingPoint[] = [];
    const origin: number[] = [];
    const via: WriteVia = { keepTexts: cache === undefined, entries: [] };
    let outcomes: PointOutcome[];
    // The point looked up last: a scanned point's sameTags hint holds only after its previous point's lookup.
    let looked = -1;
    try {
      for (let i = 0; i < n; i++) {
        if (cache !== undefined && source.scan(i, sp) && writableAsScanned(sp)) {
          const e = cache.get(sp.buf, sp.metricStart, sp.metricEnd, sp.tagsStart, sp.tagsEnd, sp.sameTags && looked === i - 1);
          looked = i;
          if (e !== undefined) {
            known.add(e, sp.timestamp, sp.value, sp.isInt, points.length);
            continue;
          }
        }
        try {
          points.push(source.parse(i));
          origin.push(i);
        } catch (err) {
          if (!isTsdbError(err)) throw err;
          out[i] = err;
        }
      }
      cache?.releaseView(); // a request body is not kept past the call
      sp.buf = EMPTY_BYTES;
      // A protocol with a byte cache finds its series by their bytes: their texts are not
      // kept as well (one key per series, not two); the byte cache learns them below.
      outcomes = await this.write(points, opts, known, via);
    } finally {
      known.release();
    }
    for (let j = 0; j < outcomes.length; j++) {
      const i = origin[j]!;
      const o = outcomes[j];
      if (o !== undefined) {
        out[i] = o;
      } else if (cache !== undefined) {
        const e = via.entries[j];
        if (e === undefined || !e.alive) continue;
        // Teach the byte cache this series, so its next points take the known path; a
        // point without a byte form is found by its text next time.
        if (source.scan(i, sp)) cache.set(sp.buf, sp.metricStart, sp.metricEnd, sp.tagsStart, sp.tagsEnd, e);
        else this.deps.catalog.series.setText(points[j]!.seriesText ?? seriesTextOf(points[j]!), e);
      }
    }
    cache?.releaseView();
    sp.buf = EMPTY_BYTES;
    return out;
  }

  /**
   * Resolves once every write call made before this one has ended (stored or failed), or
   * with false after `timeoutMs`. A caller that dropped series entries (the index cleanup)
   * then knows no write still holds one: put() takes its entries and calls write() in one
   * synchronous step.
   */
  async callsEnded(timeoutMs: number): Promise<boolean> {
    const upTo = this.callSeq;
    const until = Date.now() + timeoutMs;
    for (;;) {
      let open = false;
      for (const s of this.callsOpen) if (s <= upTo) open = true;
      if (!open) return true;
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /**
   * Writes `points`; resolves with one outcome per point once the good ones are durable
   * (per `durability`, default the config's). Rejects with TSDB_OVERLOADED before doing
   * anything when the pipeline is full and `admit` is 'reject' (the default), and with
   * TSDB_STORAGE when the store fails the write (then no point of the call is known to
   * be stored).
   */
  async write(
    points: readonly IncomingPoint[],
    opts: { durability?: Durability; admit?: 'reject' | 'wait' } = {},
    known?: KnownSeriesPoints,
    via?: WriteVia,
  ): Promise<PointOutcome[]> {
    if (opts.admit !== 'wait' && this.overloaded()) {
      this.overloadRejections++;
      throw new TsdbError('TSDB_OVERLOADED', 'Please throttle writes: too many points in flight');
    }
    if (known === undefined) this.deps.beforeWrite?.();
    const n = points.length + (known?.count ?? 0);
    const seq = ++this.callSeq;
    this.inflight += n;
    this.callsOpen.add(seq);
    // A call that cannot queue its points at once (it resolves series, or an earlier call
    // has not queued yet) makes the later calls wait for it.
    const prior = this.queuedTail;
    let queuedNow: (() => void) | undefined;
    if (prior !== undefined || points.length > 0) {
      const mine = new Promise<void>((resolve) => { queuedNow = resolve; });
      this.queuedTail = mine;
      const done = queuedNow!;
      queuedNow = () => {
        if (this.queuedTail === mine) this.queuedTail = undefined;
        done();
      };
    }
    try {
      const outcomes: PointOutcome[] = new Array(points.length).fill(undefined);
      let entries: (SeriesEntry | undefined)[] = [];
      try {
        if (points.length > 0) entries = await this.resolveSeries(points, outcomes, via?.keepTexts ?? true);
        if (via !== undefined) via.entries = entries;
      } finally {
        // Even when this call fails, the later ones must wait for the earlier ones only.
        if (prior !== undefined) await prior;
      }
      const group = this.group ??= new WriteGroup(this.deps.widths);
      let queued = 0;
      let g = 0;
      if (known !== undefined) {
        const { entries: ke, timestamps, values, ints, generalBefore } = known;
        for (let i = 0; i < known.count; i++) {
          for (const before = generalBefore[i]!; g < before; g++) if (this.addPoint(group, entries[g], points[g]!, g, outcomes, seq)) queued++;
          group.addRaw(ke[i]!, timestamps[i]!, values[i]!, ints[i] === 1, undefined, seq);
        }
        queued += known.count;
      }
      for (; g < points.length; g++) if (this.addPoint(group, entries[g], points[g]!, g, outcomes, seq)) queued++;
      queuedNow?.();
      queuedNow = undefined;
      if (queued > 0) {
        group.requireDurability(opts.durability ?? this.deps.config.durability);
        const done = group.done;
        this.scheduleFlush();
        await done;
      }
      this.written += queued;
      this.rejected += n - queued;
      return outcomes;
    } finally {
      queuedNow?.();
      this.inflight -= n;
      this.callsOpen.delete(seq);
      if (!this.overloaded() && this.waiters.length > 0) {
        const w = this.waiters;
        this.waiters = [];
        for (const f of w) f();
      }
    }
  }

  /** Adds point i of a call to the group unless its series or value was rejected (outcome set). */
  private addPoint(group: WriteGroup, e: SeriesEntry | undefined, p: IncomingPoint, i: number, outcomes: PointOutcome[], seq: number): boolean {
    if (e === undefined) return false;
    try {
      validatePointValue(p);
    } catch (err) {
      outcomes[i] = err as TsdbError;
      return false;
    }
    group.add(e, p, seq);
    return true;
  }

  stats(): IngestStats {
    return {
      pointsWritten: this.written,
      pointsRejected: this.rejected,
      inflightPoints: this.inflight,
      overloadRejections: this.overloadRejections,
      seriesCreated: this.creator.stats().seriesCreated,
      seriesReadmitted: this.creator.stats().seriesReadmitted,
      groupsWritten: this.groups,
      cellsWritten: this.cells,
    };
  }

  /** The live series entry of a point written before (undefined if dropped or never written). */
  entryOf(p: IncomingPoint): SeriesEntry | undefined {
    return this.deps.catalog.series.byText(p.seriesText ?? seriesTextOf(p));
  }

  /**
   * Writes the current group once the calls of this tick have joined it. While writers
   * stream (the last group held STREAMING_GROUP_POINTS or more), a group smaller than the
   * biggest of the RECENT_GROUPS last ones waits for more points, until it is as big or the
   * group window has passed since the last group started, or half the in-flight bound is
   * waiting: the writers of those groups are likely on their way back (an HTTP client
   * sends its next batch once answered). Fewer, bigger groups cost fewer cells, memstore
   * entries and WAL records a point (bench/results/ab-ingest-2026-11-28-s24.json); a lone writer's
   * next batch is as big as its last, so it does not wait, and no group waits while a
   * writer is blocked on its acknowledgements (writerBlocked).
   */
  private scheduleFlush(): void {
    if (this.groupsInFlight >= MAX_GROUPS_IN_FLIGHT) return;
    if (this.windowTimer !== undefined) {
      if (!this.windowDone()) return;
      // The waiting group has gathered enough: it goes now, after this tick.
      clearTimeout(this.windowTimer);
      this.windowTimer = undefined;
      setImmediate(() => this.runFlush());
      return;
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    const wait = this.windowWait();
    if (wait > 0) {
      this.windowTimer = setTimeout(() => {
        this.windowTimer = undefined;
        this.runFlush();
      }, wait);
    } else {
      setImmediate(() => this.runFlush());
    }
  }

  /**
   * A writer can add no points until some of those it has written are acknowledged (a
   * telnet connection at its bound of unacknowledged lines): a group waiting out the group
   * window would wait for nothing from it, and the group holding its points could not
   * grow from it, so no group waits while any writer is blocked, and a waiting one goes
   * now. Returns the call that ends the state (once; later calls do nothing).
   */
  writerBlocked(): () => void {
    this.blockedWriters++;
    if (this.windowTimer !== undefined) {
      clearTimeout(this.windowTimer);
      this.windowTimer = undefined;
      setImmediate(() => this.runFlush());
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.blockedWriters--;
    };
  }

  private runFlush(): void {
    this.flushScheduled = false;
    void this.flush();
  }

  /** The waiting group has gathered what the window waits for: as many points as the biggest recent group. */
  private windowDone(): boolean {
    const pending = this.pendingPoints();
    if (pending * 2 >= this.deps.config.maxInflightPoints) return true;
    for (const n of this.recentGroupPoints) if (pending < n) return false;
    return true;
  }

  /** Milliseconds the next group should still wait for more points (0: write it now). */
  private windowWait(): number {
    const windowMs = this.deps.config.ingestGroupWindowMs;
    if (windowMs === 0 || this.blockedWriters > 0 || this.lastGroupPoints < STREAMING_GROUP_POINTS || this.windowDone()) return 0;
    const wait = this.lastGroupStart + windowMs - performance.now();
    return wait >= 1 ? Math.ceil(wait) : 0;
  }

  private async flush(): Promise<void> {
    const g = this.group;
    if (g === undefined || g.size === 0) return;
    this.group = undefined;
    this.groupsInFlight++;
    this.lastGroupStart = performance.now();
    this.lastGroupPoints = g.size;
    this.recentGroupPoints[this.recentAt] = g.size;
    this.recentAt = (this.recentAt + 1) % RECENT_GROUPS;
    // The next group may be written once this one's write returned (its announcement, if
    // any, then overlaps the next write).
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.groupsInFlight--;
      if (this.pendingPoints() > 0) this.scheduleFlush();
    };
    try {
      const now = this.deps.now();
      const ts = Math.max(now, this.lastWriteTs + 1);
      this.lastWriteTs = ts;
      const newest = this.deps.newestPoints;
      const announce = this.deps.announceWritten;
      const rows = g.build(ts, now, this.deps.onRowWritten, newest !== undefined || announce !== undefined);
      const listed = this.deps.rowsListed?.();
      if (listed !== undefined) await listed;
      this.cells += rows.length;
      this.groups++;
      let failure: unknown;
      try {
        await this.deps.data.mutate(rows, { durability: g.durability });
      } catch (err) {
        newest?.failed();
        failure = err;
      }
      if (failure === undefined && newest !== undefined) g.eachNewest((e, ms, value, isInt, big) => newest.stored(e, ms, value, isInt, big));
      release();
      if (announce !== undefined) await announce(newestHoursOf(g));
      if (failure !== undefined) throw failure;
      g.resolve();
    } catch (err) {
      const full = (err as { code?: unknown } | null)?.code === 'STORE_NO_SPACE';
      g.reject(new TsdbError(full ? 'TSDB_STORAGE_FULL' : 'TSDB_STORAGE', `storage failed the write: ${(err as Error).message}`, { cause: err }));
    } finally {
      release();
    }
  }

  private pendingPoints(): number {
    return this.group?.size ?? 0;
  }

  /** Series entries per point (undefined where the series was rejected; outcome set). */
  private async resolveSeries(points: readonly IncomingPoint[], outcomes: PointOutcome[], keepTexts: boolean): Promise<(SeriesEntry | undefined)[]> {
    const entries: (SeriesEntry | undefined)[] = new Array(points.length);
    let missing: Map<string, number[]> | undefined;
    for (let i = 0; i < points.length; i++) {
      const p = points[i]!;
      const text = p.seriesText ?? seriesTextOf(p);
      const e = this.deps.catalog.series.byText(text);
      if (e !== undefined) {
        entries[i] = e;
      } else {
        missing ??= new Map();
        const list = missing.get(text);
        if (list === undefined) missing.set(text, [i]);
        else list.push(i);
      }
    }
    if (missing !== undefined) {
      // A series another call is creating right now (connections that first see it in the
      // same moment) is waited for, not created twice: one entry, one set of UID lookups
      // and one index write per series.
      const owned: Array<[string, number[]]> = [];
      const waits: Promise<void>[] = [];
      for (const [text, idx] of missing) {
        const pending = this.resolving.get(text);
        if (pending === undefined) {
          owned.push([text, idx]);
          continue;
        }
        waits.push(pending.then((e) => {
          for (const i of idx) entries[i] = e;
        }, (err: unknown) => {
          if (!isTsdbError(err)) throw err;
          for (const i of idx) outcomes[i] = err;
        }));
      }
      const settle = new Map<string, { resolve(e: SeriesEntry): void; reject(err: unknown): void }>();
      for (const [text] of owned) {
        const p = new Promise<SeriesEntry>((resolve, reject) => settle.set(text, { resolve, reject }));
        p.catch(() => undefined); // nobody may be waiting
        this.resolving.set(text, p);
      }
      try {
        await this.creator.create({ points, owned, entries, outcomes, keepTexts });
        for (const [text, idx] of owned) {
          const e = entries[idx[0]!];
          if (e !== undefined) settle.get(text)!.resolve(e);
          else settle.get(text)!.reject(outcomes[idx[0]!]);
        }
      } catch (err) {
        for (const s of settle.values()) s.reject(err);
        throw err;
      } finally {
        for (const [text] of owned) this.resolving.delete(text);
      }
      await Promise.all(waits);
    }
    return entries;
  }
}

const EMPTY_BYTES = new Uint8Array(0);

/** How put() calls write(): whether the series' texts are kept, and where write() leaves each point's entry. */
interface WriteVia {
  readonly keepTexts: boolean;
  entries: (SeriesEntry | undefined)[];
}

/** Each series of a built group (TSUID as latin1) with the newest base hour it wrote into. */
function newestHoursOf(g: WriteGroup): Array<readonly [string, number]> {
  const out: Array<readonly [string, number]> = [];
  g.eachNewest((e, ms) => out.push([e.tsuidKey, Math.floor(ms / 3_600_000) * 3600]));
  return out;
}

/** The series cache key of a point that came without one. */
export function seriesTextOf(p: IncomingPoint): string {
  let s = p.metric;
  for (const [k, v] of p.tags) s += ` ${k}=${v}`;
  return s;
}
