/**
 * Decode workers that read whole salt buckets themselves (exported ranges, core's
 * Table.exportRange; scanner.ts, decode-pool.ts, decode-worker.ts) answer byte for byte as
 * the main thread alone does, on the embedded store, which exports ranges: seeded random
 * data (floats, integers, integers beyond 2^53, millisecond timestamps, compressed and raw
 * hours, annotations) in files and, for some series, in the memstore too, under many
 * query shapes; the series and point limits still hold.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import { Random } from '../../../core/util/random.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { MIXED_SHAPES, mixedPoints, putOk as put, queryRaw as query } from '../helpers/http-cases.js';
import { openFixture, openedServers, useFixtureStore } from '../helpers/tsdb-fixture.js';

const SERIAL: Partial<TsdbConfig> = { queryDecodeThreads: 0, saltBuckets: 8 };
const PARALLEL: Partial<TsdbConfig> = { queryDecodeThreads: 2, queryParallelMinRows: 0, queryWorkerReads: true, saltBuckets: 8 };
const pool = new DecodePool(2);
const opened = openedServers(pool);

useFixtureStore((clock) => openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0, clock }));
afterAll(async () => {
  useFixtureStore(undefined);
  await opened.closeAll();
});

async function server(config: Partial<TsdbConfig>, nowMs: number): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture(config, nowMs, config.queryDecodeThreads === 0 ? {} : { decodePool: pool });
  return { app: opened.add(await buildServer({ tsdb }), tsdb), tsdb };
}

const T0 = Date.UTC(2026, 0, 1) / 1000;

/** Both servers hold the data (and an annotation per series) flushed and compacted (buckets exportable), then `late` in their memstores. */
async function load(servers: ReadonlyArray<{ app: FastifyInstance; tsdb: Tsdb }>, points: unknown[], late: unknown[], annotate = true): Promise<void> {
  for (const o of servers) {
    for (let i = 0; i < points.length; i += 5000) await put(o.app, points.slice(i, i + 5000));
    // An annotation on every series (its TSUID as the store assigned it).
    const all = annotate ? JSON.parse((await query(o.app, { start: T0, showTSUIDs: true, queries: [{ metric: 'm', aggregator: 'none' }] })).body) as Array<{ tsuids: string[] }> : [];
    for (const series of all) {
      const note = { startTime: T0 + 100, description: 'deploy', tsuid: series.tsuids[0]! };
      expect((await o.app.inject({ method: 'POST', url: '/api/annotation', payload: note })).statusCode).toBe(200);
    }
    await o.tsdb.compactor.runOnce({ force: true, sweep: true });
    await o.tsdb.data.flush();
    await o.tsdb.data.compact({ major: true });
    if (late.length > 0) await put(o.app, late);
  }
}

describe('decode workers reading exported ranges', () => {
  it('answer random data under many query shapes exactly as the serial path', async () => {
    const now = (T0 + 30 * 3600) * 1000;
    const a = await server(SERIAL, now);
    const b = await server(PARALLEL, now);
    const points = mixedPoints(new Random(20261127), T0);
    // Late points of three hosts stay in the memstore: their buckets' exports hold it too.
    const late = [3, 7, 12].map((h) => ({ metric: 'm', timestamp: T0 + 2 * 3600 + 7, value: 42.5, tags: { host: `h${h}`, dc: `d${h % 3}` } }));
    await load([a, b], points, late);
    const shapes = [...MIXED_SHAPES, { aggregator: 'avg', downsample: '5m-avg', filters: [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: true }] }];
    const ranges = pool.rangesSent;
    for (const shape of shapes) {
      for (const [start, end] of [[(T0 + 1800) * 1000, (T0 + 5 * 3600) * 1000], [T0 * 1000, now]] as const) {
        const q = { start, end, msResolution: true, showQuery: true, showTSUIDs: true, queries: [{ metric: 'm', ...shape }] };
        const [sa, sb] = [await query(a.app, q), await query(b.app, q)];
        expect(sa.status, sa.body).toBe(200);
        expect(sb, JSON.stringify(shape)).toEqual(sa);
      }
    }
    // The workers really read whole buckets (every worker bucket of every query).
    expect(pool.rangesSent - ranges).toBeGreaterThan(50);
    const lateOnes = JSON.parse((await query(b.app, { start: (T0 + 2 * 3600) * 1000, end: (T0 + 2 * 3600 + 8) * 1000, queries: [{ metric: 'm', aggregator: 'none' }] })).body) as Array<{ dps: Record<string, number> }>;
    expect(lateOnes.filter((x) => x.dps[String(T0 + 2 * 3600 + 7)] === 42.5).length).toBe(3);
    // Annotations of series in exported buckets come back with them.
    const before = pool.rangesSent;
    const noted = JSON.parse((await query(b.app, { start: T0 * 1000, end: now, queries: [{ metric: 'm', aggregator: 'none' }] })).body) as Array<{ annotations?: unknown[] }>;
    expect(noted.filter((s) => s.annotations?.length === 1).length).toBe(16);
    expect(pool.rangesSent - before).toBeGreaterThan(2);
  });

  it('are off by default: rows are sent', async () => {
    const now = (T0 + 7200) * 1000;
    const b = await server({ ...PARALLEL, queryWorkerReads: false }, now);
    await load([b], Array.from({ length: 64 }, (_, i) => ({ metric: 'm', timestamp: T0 + i, value: i, tags: { host: `h${i % 16}` } })), [], false);
    const [ranges, rows] = [pool.rangesSent, pool.rowsSent];
    expect((await query(b.app, { start: T0, end: T0 + 100, queries: [{ metric: 'm', aggregator: 'sum' }] })).status).toBe(200);
    expect(pool.rangesSent).toBe(ranges);
    expect(pool.rowsSent).toBeGreaterThan(rows);
  });

  it('keep the series and point limits (413)', async () => {
    const now = (T0 + 7200) * 1000;
    const b = await server({ ...PARALLEL, queryMaxPoints: 2500 }, now);
    const c = await server({ ...PARALLEL, queryMaxSeries: 10 }, now);
    // 2000 points in each of two hours over 16 series: one hour fits the point limit, both do not.
    const body = Array.from({ length: 4000 }, (_, i) => ({ metric: 'm', timestamp: T0 + (i < 2000 ? i : 3600 + i - 2000), value: i, tags: { host: `h${i % 16}` } }));
    await load([b, c], body, [], false);
    const ranges = pool.rangesSent;
    const big = await query(b.app, { start: T0, end: T0 + 7199, queries: [{ metric: 'm', aggregator: 'sum' }] });
    expect(big.status).toBe(413);
    expect(big.body).toContain('more than 2500 data points');
    expect((await query(b.app, { start: T0, end: T0 + 20, queries: [{ metric: 'm', aggregator: 'sum' }] })).status).toBe(200);
    const many = await query(c.app, { start: T0, end: T0 + 20, queries: [{ metric: 'm', aggregator: 'sum' }] });
    expect(many.status).toBe(413);
    expect(many.body).toContain('more than 10 series');
    expect(pool.rangesSent).toBeGreaterThan(ranges);
  });
});
