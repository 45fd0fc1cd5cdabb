/**
 * Rates from the overview's cumulative counters (ops-overview.ts): per second between two
 * snapshots, for the whole server and per region, plus a short window of snapshots so that
 * the hotspot view compares the last minute rather than everything since the start.
 *
 * Counters restart from zero when the server restarts, and a region created by a split
 * starts at zero: a counter that went down, or a region absent from the older snapshot,
 * counts from zero (all of it happened inside the window), never negative. Pure.
 */
import type { OpsOverview, OpsRegion } from './ops-overview.js';

/** Per second from `before` to `after` over `elapsedMs`; null when unknown or no time passed. */
export function counterRate(before: number | undefined, after: number | undefined, elapsedMs: number): number | null {
  if (before === undefined || after === undefined || !(elapsedMs > 0)) return null;
  const delta = after >= before ? after - before : after;
  return (delta * 1000) / elapsedMs;
}

/** Growth of a cumulative counter, treating a decrease as a restart from zero. */
export function counterDelta(before: number | undefined, after: number): number {
  return before === undefined || after < before ? after : after - before;
}

/** A region's identity across snapshots. */
export function regionKey(table: string, region: OpsRegion): string {
  return `${table}/${region.id}`;
}

export interface RegionActivity {
  readonly table: string;
  readonly region: OpsRegion;
  /** Cells written between the snapshots (or since the start, without an older snapshot). */
  readonly writes: number;
  readonly reads: number;
  /** Per second; null without an older snapshot. */
  readonly writesPerSec: number | null;
  readonly readsPerSec: number | null;
}

/**
 * Per table, per region (in key order) the writes and reads between `before` and `after`.
 * Without `before` the cumulative counts are returned and the rates are null.
 */
export function regionActivity(before: OpsOverview | undefined, after: OpsOverview): Map<string, RegionActivity[]> {
  const old = new Map<string, OpsRegion>();
  for (const t of before?.tables ?? []) for (const r of t.regions) old.set(regionKey(t.name, r), r);
  const elapsedMs = before === undefined ? 0 : after.timeMs - before.timeMs;
  const out = new Map<string, RegionActivity[]>();
  for (const t of after.tables) {
    out.set(
      t.name,
      t.regions.map((r) => {
        const o = before === undefined ? undefined : old.get(regionKey(t.name, r));
        const writes = before === undefined ? r.cellsWritten : counterDelta(o?.cellsWritten, r.cellsWritten);
        const reads = before === undefined ? r.rowsRead : counterDelta(o?.rowsRead, r.rowsRead);
        const rate = (n: number): number | null => (before === undefined || !(elapsedMs > 0) ? null : (n * 1000) / elapsedMs);
        return { table: t.name, region: r, writes, reads, writesPerSec: rate(writes), readsPerSec: rate(reads) };
      }),
    );
  }
  return out;
}

export interface LiveRates {
  readonly pointsPerSec: number | null;
  readonly queriesPerSec: number | null;
  readonly rejectedPerSec: number | null;
  /** Block-cache hits / lookups between the snapshots; null when there was no lookup. */
  readonly cacheHitRatio: number | null;
}

/** Server-wide rates between two snapshots (all null without `before`). */
export function liveRates(before: OpsOverview | undefined, after: OpsOverview): LiveRates {
  const dt = before === undefined ? 0 : after.timeMs - before.timeMs;
  const b = before?.counters;
  const hits = counterDelta(before?.store.blockCache.hits, after.store.blockCache.hits);
  const misses = counterDelta(before?.store.blockCache.misses, after.store.blockCache.misses);
  return {
    pointsPerSec: counterRate(b?.pointsWritten, after.counters.pointsWritten, dt),
    queriesPerSec: counterRate(b?.queries, after.counters.queries, dt),
    rejectedPerSec: counterRate(b?.pointsRejected, after.counters.pointsRejected, dt),
    cacheHitRatio: before === undefined || hits + misses === 0 ? null : hits / (hits + misses),
  };
}

/** Cumulative block-cache hit ratio; null before the first lookup. */
export function cacheHitRatio(o: OpsOverview): number | null {
  const { hits, misses } = o.store.blockCache;
  return hits + misses === 0 ? null : hits / (hits + misses);
}

/**
 * The snapshots of the last `windowMs` (at least the newest two are always kept, so a
 * slow refresh still has a "before"). Snapshots must be pushed in time order.
 */
export class SnapshotWindow {
  readonly windowMs: number;
  private readonly items: OpsOverview[] = [];

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  push(o: OpsOverview): void {
    const last = this.items.at(-1);
    if (last !== undefined && o.timeMs <= last.timeMs) return;
    this.items.push(o);
    while (this.items.length > 2 && o.timeMs - this.items[0]!.timeMs > this.windowMs) this.items.shift();
  }

  get latest(): OpsOverview | undefined {
    return this.items.at(-1);
  }

  /** The snapshot before the latest one. */
  get previous(): OpsOverview | undefined {
    return this.items.length >= 2 ? this.items.at(-2) : undefined;
  }

  /** The oldest snapshot still in the window, unless it is the latest. */
  get oldest(): OpsOverview | undefined {
    return this.items.length >= 2 ? this.items[0] : undefined;
  }
}
