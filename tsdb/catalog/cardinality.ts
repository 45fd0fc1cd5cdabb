/**
 * Cardinality for the operator (GET /api/horae/cardinality, tsdb/OPERATOR.md): series per
 * metric and per tag key, the largest first, and new series per minute.
 *
 * Series counts come from one read of the series index (its table, tsdb/SCHEMA.md "Series
 * index": one row per series, the key is the TSUID `metric (tagk tagv)*`), counted as the
 * rows pass and kept: a request reuses them while the catalog saw no change (Catalog.stamp:
 * no series created, renamed or forgotten) or for `refreshMs` (default 60 s), so the index
 * is read at most once a minute however often the page asks, and never while nothing
 * changes. New series per minute and what the limits refused are the limiter's own
 * counters (limits/series-limiter.ts: this process's admissions), read each time.
 */
import { latin1 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import { META_FAMILY } from '../meta/series-index.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { LimitName, SeriesLimiter } from '../limits/series-limiter.js';
import type { UidTable } from '../uid/uid-table.js';

export interface CardinalityEntry {
  /** The metric or tag key (its UID in hex when it has no name). */
  readonly name: string;
  readonly series: number;
}

export interface CardinalityReport {
  readonly timeMs: number;
  /** When the series counts were taken from the index, and how long the read took (ms). */
  readonly countedMs: number;
  readonly countTookMs: number;
  /** Series in the index. */
  readonly series: number;
  readonly metricCount: number;
  readonly tagKeyCount: number;
  /** The metrics with the most series, most first (ties by name). */
  readonly metrics: readonly CardinalityEntry[];
  /** The tag keys by the series that carry them, most first (ties by name). */
  readonly tagKeys: readonly CardinalityEntry[];
  readonly newSeries: {
    readonly lastHour: number;
    readonly lastDay: number;
    /** The last 60 minutes, oldest first (the current minute last). */
    readonly perMinute: readonly number[];
  };
  /** Series (tags: points) refused per limit since the start. */
  readonly refused: Readonly<Record<LimitName, number>>;
}

export interface CardinalityDeps {
  /** The series index's table. */
  readonly index: () => Promise<Table>;
  readonly widths: SchemaWidths;
  readonly metrics: UidTable;
  readonly tagks: UidTable;
  readonly limiter: SeriesLimiter;
  /** The catalog's change stamp (Catalog.stamp). */
  readonly stamp: () => number;
  readonly now: () => number;
  /** Counts are taken again after this long even when the stamp did not move (default 60 s: other servers' series). */
  readonly refreshMs?: number;
}

/** A UID as a map key: its value as a number (widths up to 6 bytes), else its bytes as latin1. */
type UidKey = number | string;

function uidKey(k: Uint8Array, at: number, width: number): UidKey {
  if (width > 6) return latin1(k.subarray(at, at + width));
  let n = 0;
  for (let i = at; i < at + width; i++) n = n * 256 + k[i]!;
  return n;
}

function uidOfKey(key: UidKey, width: number): Uint8Array {
  if (typeof key === 'string') return Uint8Array.from(key, (ch) => ch.charCodeAt(0));
  const out = new Uint8Array(width);
  let n = key;
  for (let i = width - 1; i >= 0; i--) {
    out[i] = n % 256;
    n = Math.floor(n / 256);
  }
  return out;
}

interface Counts {
  readonly stamp: number;
  readonly atMs: number;
  readonly tookMs: number;
  readonly series: number;
  readonly byMetric: ReadonlyMap<UidKey, number>;
  readonly byTagk: ReadonlyMap<UidKey, number>;
}

export class Cardinality {
  private readonly deps: CardinalityDeps;
  private counts: Counts | undefined;
  private counting: Promise<Counts> | undefined;
  /** Times the index was read (tests, /api/stats). */
  reads = 0;

  constructor(deps: CardinalityDeps) {
    this.deps = deps;
  }

  /** The report with the `top` largest metrics and tag keys. */
  async report(top: number): Promise<CardinalityReport> {
    const c = await this.current();
    const lim = this.deps.limiter.stats();
    return {
      timeMs: this.deps.now(),
      countedMs: c.atMs,
      countTookMs: c.tookMs,
      series: c.series,
      metricCount: c.byMetric.size,
      tagKeyCount: c.byTagk.size,
      metrics: await named(c.byMetric, top, this.deps.metrics, this.deps.widths.metric),
      tagKeys: await named(c.byTagk, top, this.deps.tagks, this.deps.widths.tagk),
      newSeries: { lastHour: lim.newLastHour, lastDay: lim.newLastDay, perMinute: lim.newPerMinute },
      refused: lim.refused,
    };
  }

  private async current(): Promise<Counts> {
    const c = this.counts;
    const refresh = this.deps.refreshMs ?? 60_000;
    if (c !== undefined && (c.stamp === this.deps.stamp() || this.deps.now() - c.atMs < refresh)) return c;
    this.counting ??= this.count().then((n) => {
      this.counts = n;
      return n;
    }).finally(() => {
      this.counting = undefined;
    });
    return this.counting;
  }

  /** One pass over the series index: series per metric UID and per tag key UID. */
  private async count(): Promise<Counts> {
    const stamp = this.deps.stamp();
    const atMs = this.deps.now();
    const started = performance.now();
    this.reads++;
    const w = this.deps.widths;
    const pair = w.tagk + w.tagv;
    const byMetric = new Map<UidKey, number>();
    const byTagk = new Map<UidKey, number>();
    let series = 0;
    const table = await this.deps.index();
    for await (const rows of table.scan({ families: [META_FAMILY], batchRows: 1024, borrowValues: true })) {
      for (const r of rows) {
        const k = r.key;
        if (k.length < w.metric) continue;
        series++;
        const m = uidKey(k, 0, w.metric);
        byMetric.set(m, (byMetric.get(m) ?? 0) + 1);
        for (let o = w.metric; o + pair <= k.length; o += pair) {
          const t = uidKey(k, o, w.tagk);
          byTagk.set(t, (byTagk.get(t) ?? 0) + 1);
        }
      }
    }
    return { stamp, atMs, tookMs: Math.round((performance.now() - started) * 10) / 10, series, byMetric, byTagk };
  }
}

/** The `top` largest counts with their names, most first, ties by name. */
async function named(counts: ReadonlyMap<UidKey, number>, top: number, uids: UidTable, width: number): Promise<CardinalityEntry[]> {
  // The top by count (ties at the cut by UID), names only for those; then ties by name.
  const best = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, top);
  const out: CardinalityEntry[] = [];
  for (const [id, series] of best) {
    const uid = uidOfKey(id, width);
    const name = await uids.getName(uid);
    out.push({ name: name ?? Buffer.from(uid).toString('hex').toUpperCase(), series });
  }
  return out.sort((a, b) => b.series - a.series || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
