import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import { openEmbeddedStore, openMemoryStore } from '../../../core/index.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { registerOverviewRoutes } from '../../../tsdb/server/routes/overview.js';
import type { Overview, OverviewRegion } from '../../../tsdb/server/overview/overview-snapshot.js';
import { DATA_TABLE, dataTableSpec } from '../../../tsdb/tables.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { DEFAULT_WIDTHS } from '../../../tsdb/schema/widths.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1767225600; // 2026-01-01T00:00:00Z, hour-aligned
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function overview(a: FastifyInstance, url = '/api/horae/overview'): Promise<Overview> {
  const res = await a.inject({ method: 'GET', url });
  expect(res.statusCode).toBe(200);
  return res.json() as Overview;
}

function put(a: FastifyInstance, points: unknown[]): Promise<unknown> {
  return a.inject({ method: 'POST', url: '/api/put', payload: points }).then((r) => expect(r.statusCode).toBe(204));
}

const dataRegions = (o: Overview): OverviewRegion[] => o.tables.find((t) => t.name === DATA_TABLE)!.regions;

/** The salt bucket the store really put `metric`'s rows in (read back from the data table). */
async function bucketsOf(tsdb: Tsdb): Promise<Set<number>> {
  const out = new Set<number>();
  for await (const batch of tsdb.data.scan()) for (const row of batch) out.add(row.key[0]!);
  return out;
}

describe('GET /api/horae/overview', () => {
  it('lists every table and region with key ranges, salt-bucket hints and store figures', async () => {
    const { tsdb } = await openFixture();
    app = await buildServer({ tsdb });
    const o = await overview(app);
    expect(o.tables.map((t) => t.name)).toEqual(['tsdb', 'tsdb-meta', 'tsdb-postings', 'tsdb-uid']);
    const regions = dataRegions(o);
    expect(regions).toHaveLength(DEFAULT_WIDTHS.saltBuckets);
    expect(regions[0]!.start).toBe('');
    expect(regions[0]!.startHint).toBeUndefined();
    expect(regions[0]!.endHint).toEqual({ salt: 1 });
    regions.slice(1).forEach((r, i) => {
      expect(r.start).toBe(toHex(Uint8Array.of(i + 1)));
      expect(r.startHint).toEqual({ salt: i + 1 });
    });
    expect(regions.at(-1)!.end).toBe('');
    expect(o.backend).toBe('memory');
    expect(o.schema).toEqual({ dataTable: 'tsdb', saltWidth: 1, saltBuckets: 20 });
    expect(o.store).toMatchObject({ flushesInProgress: 0, compactionsInProgress: 0, walBytes: 0, blockCache: { hits: 0, misses: 0 } });
    expect(o.uids).toEqual({ metric: 0, tagk: 0, tagv: 0 });
    expect(o.counters).toEqual({ pointsWritten: 0, pointsRejected: 0, seriesCreated: 0, queries: 0, queryErrors: 0 });
    expect(o.history).toEqual({ intervalMs: 5000, timesMs: [], rates: { points: [], queries: [], cellsWritten: [], rowsRead: [] } });
    expect((await app.inject({ method: 'GET', url: '/api/v1/horae/overview' })).statusCode).toBe(200);
  });

  it('counts writes in the region that took them and leaves the others alone', async () => {
    const { tsdb } = await openFixture();
    app = await buildServer({ tsdb });
    const before = dataRegions(await overview(app));
    const points = Array.from({ length: 50 }, (_, i) => ({ metric: 'hot.metric', timestamp: T0 + i, value: i, tags: { host: 'h1' } }));
    await put(app, points);
    const after = await overview(app);
    const [bucket, ...rest] = [...(await bucketsOf(tsdb))];
    expect(rest).toEqual([]);
    const grew = dataRegions(after).filter((r, i) => r.cellsWritten > before[i]!.cellsWritten).map((r) => r.startHint?.salt ?? 0);
    expect(grew).toEqual([bucket]);
    const hot = dataRegions(after).find((r) => (r.startHint?.salt ?? 0) === bucket)!;
    expect(hot.writeRequests).toBeGreaterThan(0);
    expect(hot.sizeBytes).toBeGreaterThan(0);
    expect(after.counters.pointsWritten).toBe(50);
    expect(after.counters.seriesCreated).toBe(1);
    expect(after.uids).toEqual({ metric: 1, tagk: 1, tagv: 1 });
  });

  it('counts queries and failed queries, and reads in the regions scanned', async () => {
    const { tsdb } = await openFixture();
    app = await buildServer({ tsdb });
    await put(app, [{ metric: 'm', timestamp: T0, value: 1, tags: { host: 'a' } }]);
    const ok = await app.inject({ method: 'GET', url: `/api/query?start=${T0}&m=sum:m` });
    expect(ok.statusCode).toBe(200);
    const bad = await app.inject({ method: 'GET', url: `/api/query?start=${T0}&m=sum:nope` });
    expect(bad.statusCode).toBeGreaterThanOrEqual(400);
    await app.inject({ method: 'GET', url: '/api/v1/query/last?timeseries=m{host=a}' });
    await app.inject({ method: 'GET', url: '/api/version' });
    const o = await overview(app);
    expect(o.counters.queries).toBe(3);
    expect(o.counters.queryErrors).toBe(1);
    const [bucket] = [...(await bucketsOf(tsdb))];
    const hot = dataRegions(o).find((r) => (r.startHint?.salt ?? 0) === bucket)!;
    expect(hot.rowsRead).toBeGreaterThan(0);
  });

  it('keeps a history of rates sampled once per interval, computed from the counters', async () => {
    const f = await openFixture();
    app = await buildServer({ tsdb: f.tsdb });
    f.clock.now += 5000;
    const first = await overview(app);
    expect(first.history.timesMs).toEqual([f.clock.now]);
    expect(first.history.rates.points).toEqual([0]);
    await put(app, Array.from({ length: 100 }, (_, i) => ({ metric: 'r', timestamp: T0 + i, value: i, tags: { host: 'a' } })));
    f.clock.now += 2000; // not due: no new sample
    expect((await overview(app)).history.timesMs).toHaveLength(1);
    f.clock.now += 3000;
    await app.inject({ method: 'GET', url: `/api/query?start=${T0}&m=sum:r` });
    const second = await overview(app);
    expect(second.history.timesMs).toHaveLength(2);
    expect(second.history.rates.points.at(-1)).toBe(100 / 5);
    expect(second.history.rates.queries.at(-1)).toBe(1 / 5);
    expect(second.history.rates.cellsWritten.at(-1)).toBeGreaterThan(0);
  });

  it('samples on its own timer, without requests, and keeps at most historySamples', async () => {
    const store = await openMemoryStore();
    const tsdb = await Tsdb.open(store, { background: false });
    app = Fastify();
    registerOverviewRoutes(app, tsdb, { sampleIntervalMs: 40, historySamples: 3 });
    await app.ready();
    // Only the timer can add samples while no request comes; the one request below adds at most one.
    await new Promise((r) => setTimeout(r, 600));
    const o = await overview(app);
    expect(o.history.intervalMs).toBe(40);
    expect(o.history.timesMs).toHaveLength(3);
    expect(o.history.rates.points).toEqual([0, 0, 0]);
  });

  it('decodes the metric and base hour of a boundary that is a whole row key', async () => {
    const clock = { now: Date.UTC(2026, 0, 1) };
    const store = await openMemoryStore({ clock: () => clock.now });
    const spec = dataTableSpec(DEFAULT_WIDTHS);
    // A split inside bucket 3: salt 03, metric UID 000001 (the first metric assigned), base hour T0.
    const inside = fromHex(`03000001${T0.toString(16).padStart(8, '0')}`);
    await store.createTable({ ...spec, splitPoints: [...spec.splitPoints!, inside].sort((a, b) => toHex(a).localeCompare(toHex(b))) });
    const tsdb = await Tsdb.open(store, { now: () => clock.now, background: false });
    app = await buildServer({ tsdb });
    await put(app, [{ metric: 'sys.cpu.user', timestamp: T0, value: 1, tags: { host: 'a' } }]);
    const r = dataRegions(await overview(app)).find((x) => x.start === toHex(inside))!;
    expect(r.startHint).toEqual({ salt: 3, metricUid: '000001', metric: 'sys.cpu.user', baseTimeSec: T0 });
    expect(r.endHint).toEqual({ salt: 4 });
  });

  it('on the embedded store: files, flushes and splits show, and regions split off a hot bucket carry the metric hint', async () => {
    const store = await openEmbeddedStore({
      dir: '/db', fs: new MemFileSystem(), memstoreFlushBytes: 4096, regionSplitBytes: 8192, blockSizeBytes: 256, compactionMinFiles: 3, maintenanceIntervalMs: 0,
    });
    try {
      const tsdb = await Tsdb.open(store, { background: false });
      app = await buildServer({ tsdb });
      // One series, one point per hour: 1500 rows, all in the series' bucket.
      for (let k = 0; k < 3; k++) {
        await put(app, Array.from({ length: 500 }, (_, i) => ({ metric: 'hot.metric', timestamp: T0 + (k * 500 + i) * 3600, value: i, tags: { host: 'busy' } })));
      }
      await store.idle();
      const [bucket] = [...(await bucketsOf(tsdb))];
      const o = await overview(app);
      expect(o.backend).toBe('embedded');
      expect(o.store.flushesDone).toBeGreaterThan(0);
      expect(o.store.splitsDone).toBeGreaterThan(0);
      expect(o.store.files).toBeGreaterThan(0);
      const regions = dataRegions(o);
      expect(regions.length).toBeGreaterThan(20);
      const split = regions.filter((r) => r.startHint?.metric !== undefined);
      expect(split.length).toBeGreaterThan(0);
      for (const r of split) {
        expect(r.startHint).toMatchObject({ salt: bucket, metricUid: '000001', metric: 'hot.metric' });
        expect(r.startHint!.baseTimeSec! % 3600).toBe(0);
      }
      const inBucket = regions.filter((r) => (r.startHint?.salt ?? 0) === bucket);
      const elsewhere = regions.filter((r) => (r.startHint?.salt ?? 0) !== bucket);
      expect(inBucket.reduce((s, r) => s + r.files, 0)).toBeGreaterThan(0);
      expect(inBucket.reduce((s, r) => s + r.fileBytes, 0)).toBeGreaterThan(0);
      expect(elsewhere.reduce((s, r) => s + r.cellsWritten + r.files, 0)).toBe(0);
      expect(o.store.walBytes).toBeGreaterThan(0);
      expect(regions.every((r) => r.flushing === false && r.compacting === false)).toBe(true); // idle
      // A query over the flushed hours goes through the block cache.
      expect((await app.inject({ method: 'GET', url: `/api/query?start=${T0}&end=${T0 + 1500 * 3600}&m=sum:hot.metric` })).statusCode).toBe(200);
      const after = await overview(app);
      expect(after.store.blockCache.hits + after.store.blockCache.misses).toBeGreaterThan(0);
      const reads = (x: Overview): number => dataRegions(x).filter((r) => (r.startHint?.salt ?? 0) === bucket).reduce((s, r) => s + r.rowsRead, 0);
      expect(reads(after) - reads(o)).toBe(1500); // bucketsOf's scan read them once before
    } finally {
      await app?.close();
      app = undefined;
      await store.close();
    }
  });
});
