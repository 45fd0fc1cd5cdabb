/**
 * Cardinality limits, as VictoriaMetrics (-storage.maxHourlySeries, -storage.maxDailySeries)
 * and Prometheus (sample/label limits) offer them: new series admitted in any 60 minutes
 * and in any 24 hours, series per metric, and tags per series (horae.max_tags, checked
 * where a point is validated; counted here). A refused series' points get the refusal as
 * their outcome (`?details` on /api/put, a `put:` line on telnet); the other points of the
 * same request are written. Counted per limit for /api/stats.
 *
 * The limiter sees only series that are new to the series index (catalog.ts asks it after
 * the index said so), so a restart or a dropped cache does not count known series again.
 * Windows are per process: minute buckets over the last 24 hours (1,440 counters), which
 * also give the operator page its new series per minute. Series per metric start from the
 * index's count (read once per metric, up to the limit) and grow with what is admitted.
 */
import { latin1 } from '../../core/api/bytes.js';
import { TsdbError } from '../errors.js';
import { makeRoom } from '../meta/make-room.js';

/** Heap bytes of one metric's count beside its UID key's length: string header, map slot, a number. */
export const METRIC_COUNT_BYTES = 64;

export interface SeriesLimits {
  /** New series in any 60 minutes, at most (0: no limit). */
  readonly newPerHour: number;
  /** New series in any 24 hours, at most (0: no limit). */
  readonly newPerDay: number;
  /** Series of one metric, at most (0: no limit). */
  readonly perMetric: number;
}

export interface SeriesLimiterDeps {
  readonly metricWidth: number;
  /** Series of a metric in the index, counted up to `upTo` (the catalog's seriesCount). */
  countSeries(metricUid: Uint8Array, upTo: number): Promise<number>;
  /** Wall clock in ms. */
  now(): number;
  /** The bound of the per-metric counts' bytes (the catalog's plans share): past it the oldest-loaded eighth goes, read again when needed. */
  readonly maxBytes?: number;
}

/** Which limit refused (the `limit` tag of horae.limits.refused in /api/stats). */
export type LimitName = 'new_series_per_hour' | 'new_series_per_day' | 'series_per_metric' | 'tags_per_series';

export interface SeriesLimiterStats {
  readonly newLastHour: number;
  readonly newLastDay: number;
  /** New series in each of the last 60 minutes, oldest first (the current minute last). */
  readonly newPerMinute: readonly number[];
  /** Series refused (tags: points refused) per limit. */
  readonly refused: Readonly<Record<LimitName, number>>;
}

const MINUTE_MS = 60_000;
const DAY_MINUTES = 1440;

export class SeriesLimiter {
  private readonly limits: SeriesLimits;
  private readonly deps: SeriesLimiterDeps;
  /** New series admitted in minute `stamps[i]`, for the minutes ≡ i mod 1440. */
  private readonly counts = new Uint32Array(DAY_MINUTES);
  private readonly stamps = new Float64Array(DAY_MINUTES).fill(-1);
  /** Series per metric (latin1 of the metric UID) as far as this process knows. */
  private readonly perMetric = new Map<string, number>();
  /** Bytes of perMetric by the estimate (METRIC_COUNT_BYTES and the keys). */
  private held = 0;
  private readonly loading = new Map<string, Promise<number>>();
  private readonly refused: Record<LimitName, number> = { new_series_per_hour: 0, new_series_per_day: 0, series_per_metric: 0, tags_per_series: 0 };

  constructor(limits: SeriesLimits, deps: SeriesLimiterDeps) {
    this.limits = limits;
    this.deps = deps;
  }

  /**
   * Decides, in order, which of `tsuids` (series new to the index) may be created: one
   * entry per TSUID, undefined when admitted (it counts against every limit from now on),
   * else the refusal (TSDB_LIMIT_EXCEEDED). A TSUID listed twice counts once.
   */
  async admit(tsuids: readonly Uint8Array[]): Promise<(TsdbError | undefined)[]> {
    const w = this.deps.metricWidth;
    // This batch's metrics' counts as read from the index (a kept count is used instead
    // where there is one after the reads: the kept counts are bounded, and one may go
    // while another is read).
    const loaded = new Map<string, number>();
    for (let more = this.limits.perMetric > 0; more;) {
      const loads = new Map<string, Promise<void>>();
      for (const t of tsuids) {
        const id = latin1(t.subarray(0, w));
        if (this.perMetric.has(id) || loaded.has(id) || loads.has(id)) continue;
        loads.set(id, this.load(id, t.subarray(0, w)).then((n) => { loaded.set(id, n); }));
      }
      more = loads.size > 0;
      if (more) await Promise.all(loads.values());
    }
    const counts = new Map<string, number>();
    const minute = Math.floor(this.deps.now() / MINUTE_MS);
    let hour = this.limits.newPerHour > 0 ? this.sum(minute, 60) : 0;
    let day = this.limits.newPerDay > 0 ? this.sum(minute, DAY_MINUTES) : 0;
    const out: (TsdbError | undefined)[] = new Array(tsuids.length);
    const seen = new Set<string>();
    for (let i = 0; i < tsuids.length; i++) {
      const t = tsuids[i]!;
      const key = latin1(t);
      if (seen.has(key)) continue;
      seen.add(key);
      const id = latin1(t.subarray(0, w));
      let n = 0;
      if (this.limits.perMetric > 0) {
        n = counts.get(id) ?? this.perMetric.get(id) ?? loaded.get(id) ?? 0;
        counts.set(id, n);
      }
      if (this.limits.newPerHour > 0 && hour >= this.limits.newPerHour) {
        out[i] = this.refuse('new_series_per_hour', `new series limit reached: ${hour} new series in the last hour, the limit is ${this.limits.newPerHour} (horae.limits.new_series_per_hour)`);
      } else if (this.limits.newPerDay > 0 && day >= this.limits.newPerDay) {
        out[i] = this.refuse('new_series_per_day', `new series limit reached: ${day} new series in the last 24 hours, the limit is ${this.limits.newPerDay} (horae.limits.new_series_per_day)`);
      } else if (this.limits.perMetric > 0 && n >= this.limits.perMetric) {
        out[i] = this.refuse('series_per_metric', `series limit of the metric reached: it has ${n} series, the limit is ${this.limits.perMetric} (horae.limits.series_per_metric)`);
      } else {
        hour++;
        day++;
        if (this.limits.perMetric > 0) counts.set(id, n + 1);
        this.add(minute);
      }
    }
    for (const [id, n] of counts) this.remember(id, n);
    // A TSUID listed twice gets its first entry's answer.
    if (seen.size < tsuids.length) {
      const first = new Map<string, number>();
      for (let i = 0; i < tsuids.length; i++) {
        const k = latin1(tsuids[i]!);
        const f = first.get(k);
        if (f === undefined) first.set(k, i);
        else out[i] = out[f];
      }
    }
    return out;
  }

  /** Counts a point refused for having more tags than horae.max_tags. */
  refusedTags(): void {
    this.refused.tags_per_series++;
  }

  stats(): SeriesLimiterStats {
    const minute = Math.floor(this.deps.now() / MINUTE_MS);
    const newPerMinute: number[] = [];
    for (let m = minute - 59; m <= minute; m++) newPerMinute.push(this.at(m));
    return { newLastHour: this.sum(minute, 60), newLastDay: this.sum(minute, DAY_MINUTES), newPerMinute, refused: { ...this.refused } };
  }

  /** Forgets what it knows of series per metric (dropCaches, a rename); windows stay. */
  clear(): void {
    this.perMetric.clear();
    this.held = 0;
  }

  /** Bytes of the per-metric counts, by the estimate (charged to the catalog's budget). */
  get bytes(): number {
    return this.held;
  }

  /** Metrics whose series count is kept. */
  get size(): number {
    return this.perMetric.size;
  }

  private refuse(limit: LimitName, message: string): TsdbError {
    this.refused[limit]++;
    return new TsdbError('TSDB_LIMIT_EXCEEDED', message);
  }

  /** The index's count of a metric's series, read once however many batches ask at a time. */
  private load(id: string, metricUid: Uint8Array): Promise<number> {
    let p = this.loading.get(id);
    if (p === undefined) {
      p = this.deps.countSeries(metricUid, this.limits.perMetric).finally(() => this.loading.delete(id));
      this.loading.set(id, p);
    }
    return p;
  }

  /** Keeps a metric's count, the oldest-kept eighth going first when the bound is reached. */
  private remember(id: string, n: number): void {
    if (this.perMetric.has(id)) {
      this.perMetric.set(id, n);
      return;
    }
    this.held -= makeRoom(this.perMetric, this.held + countBytes(id), this.deps.maxBytes ?? Infinity, countBytes);
    this.perMetric.set(id, n);
    this.held += countBytes(id);
  }

  private at(minute: number): number {
    const i = minute % DAY_MINUTES;
    return this.stamps[i] === minute ? this.counts[i]! : 0;
  }

  private add(minute: number): void {
    const i = minute % DAY_MINUTES;
    if (this.stamps[i] !== minute) {
      this.stamps[i] = minute;
      this.counts[i] = 0;
    }
    this.counts[i] = this.counts[i]! + 1;
  }

  /** New series in the `minutes` minutes ending with `minute`. */
  private sum(minute: number, minutes: number): number {
    let n = 0;
    for (let i = 0; i < DAY_MINUTES; i++) {
      const m = this.stamps[i]!;
      if (m > minute - minutes && m <= minute) n += this.counts[i]!;
    }
    return n;
  }
}

function countBytes(id: string): number {
  return METRIC_COUNT_BYTES + id.length;
}
