import { describe, expect, it } from 'vitest';
import type { OpsOverview, OpsRegion } from '../../ui/src/lib/ops-overview.js';
import { SnapshotWindow, cacheHitRatio, counterDelta, counterRate, liveRates, regionActivity } from '../../ui/src/lib/ops-rates.js';

function region(id: string, cellsWritten: number, rowsRead = 0): OpsRegion {
  return { id, start: '', end: '', sizeBytes: 0, fileBytes: 0, memstoreBytes: 0, files: 0, cellsWritten, writeRequests: 0, rowsRead, readRequests: 0, flushing: false, compacting: false };
}

function snap(timeMs: number, regions: OpsRegion[], c: { points?: number; queries?: number; rejected?: number; hits?: number; misses?: number } = {}): OpsOverview {
  return {
    timeMs,
    startedMs: 0,
    backend: 'embedded',
    store: {
      memstoreBytes: 0, files: 0, fileBytes: 0, flushesInProgress: 0, flushesDone: 0, compactionsInProgress: 0, compactionsDone: 0, splitsDone: 0,
      blockCache: { hits: c.hits ?? 0, misses: c.misses ?? 0, sizeBytes: 0, capacityBytes: 0 }, stalledWriters: 0, walBytes: 0,
    },
    counters: { pointsWritten: c.points ?? 0, pointsRejected: c.rejected ?? 0, seriesCreated: 0, queries: c.queries ?? 0, queryErrors: 0 },
    uids: { metric: 0, tagk: 0, tagv: 0 },
    schema: { dataTable: 'tsdb', saltWidth: 1, saltBuckets: 20 },
    tables: [{ name: 'tsdb', regions }],
    history: { intervalMs: 5000, timesMs: [], rates: { points: [], queries: [], cellsWritten: [], rowsRead: [] } },
  };
}

describe('counterRate and counterDelta', () => {
  it('divides growth by the elapsed seconds', () => {
    expect(counterRate(100, 300, 2000)).toBe(100);
    expect(counterRate(5, 5, 1000)).toBe(0);
  });

  it('counts a counter that went down as restarted from zero, and knows nothing without time or a reading', () => {
    expect(counterRate(500, 40, 2000)).toBe(20);
    expect(counterDelta(500, 40)).toBe(40);
    expect(counterDelta(undefined, 7)).toBe(7);
    expect(counterRate(undefined, 40, 2000)).toBeNull();
    expect(counterRate(1, 2, 0)).toBeNull();
  });
});

describe('regionActivity', () => {
  it('gives per-region writes and rates between two snapshots', () => {
    const a = snap(1000, [region('1', 10, 4), region('2', 0)]);
    const b = snap(3000, [region('1', 110, 4), region('2', 6)]);
    const [r1, r2] = regionActivity(a, b).get('tsdb')!;
    expect([r1!.writes, r1!.writesPerSec, r1!.reads, r1!.readsPerSec]).toEqual([100, 50, 0, 0]);
    expect([r2!.writes, r2!.writesPerSec]).toEqual([6, 3]);
  });

  it('counts a region born of a split (absent before) from zero, and uses cumulative counts without a before', () => {
    const a = snap(1000, [region('1', 10)]);
    const b = snap(2000, [region('3', 4), region('4', 9)]);
    expect(regionActivity(a, b).get('tsdb')!.map((r) => r.writes)).toEqual([4, 9]);
    const alone = regionActivity(undefined, b).get('tsdb')!;
    expect(alone.map((r) => [r.writes, r.writesPerSec])).toEqual([[4, null], [9, null]]);
  });
});

describe('liveRates', () => {
  it('computes ingest, query and rejection rates and the window hit ratio of the block cache', () => {
    const a = snap(0, [], { points: 0, queries: 2, hits: 10, misses: 10 });
    const b = snap(4000, [], { points: 2000, queries: 6, rejected: 4, hits: 28, misses: 12 });
    expect(liveRates(a, b)).toEqual({ pointsPerSec: 500, queriesPerSec: 1, rejectedPerSec: 1, cacheHitRatio: 0.9 });
    expect(liveRates(undefined, b)).toEqual({ pointsPerSec: null, queriesPerSec: null, rejectedPerSec: null, cacheHitRatio: null });
    expect(liveRates(b, snap(5000, [], { points: 2000, queries: 6, rejected: 4, hits: 28, misses: 12 })).cacheHitRatio).toBeNull();
    expect(cacheHitRatio(b)).toBe(0.7);
    expect(cacheHitRatio(a.tables.length === 1 ? snap(0, []) : a)).toBeNull();
  });
});

describe('SnapshotWindow', () => {
  it('keeps the snapshots of the window, at least two, and ignores ones not newer', () => {
    const w = new SnapshotWindow(10_000);
    expect([w.latest, w.previous, w.oldest]).toEqual([undefined, undefined, undefined]);
    w.push(snap(0, []));
    expect(w.previous).toBeUndefined();
    expect(w.oldest).toBeUndefined();
    for (const t of [2000, 4000, 12_000]) w.push(snap(t, []));
    w.push(snap(12_000, []));
    expect([w.oldest!.timeMs, w.previous!.timeMs, w.latest!.timeMs]).toEqual([2000, 4000, 12_000]);
    w.push(snap(60_000, []));
    expect([w.oldest!.timeMs, w.previous!.timeMs, w.latest!.timeMs]).toEqual([12_000, 12_000, 60_000]);
  });
});
