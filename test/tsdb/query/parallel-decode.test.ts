/**
 * Queries decoded in parallel (worker threads take some salt buckets: query/decode-pool.ts)
 * answer byte for byte as the main thread alone does: the OpenTSDB conformance cases and
 * seeded random data (integers beyond 2^53, floats, annotations, raw and compressed hours)
 * under many query shapes (downsampling with fills, rates, aggregators, group-by, none).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import { CONFORMANCE_CASES, MIXED_SHAPES, caseBodies, mixedPoints, putOk as put, queryRaw as query } from '../helpers/http-cases.js';
import { openFixture, openedServers } from '../helpers/tsdb-fixture.js';

const SERIAL: Partial<TsdbConfig> = { queryDecodeThreads: 0 };
const PARALLEL: Partial<TsdbConfig> = { queryDecodeThreads: 2, queryParallelMinRows: 0 };
// One pool of two decode workers shared by every parallel store of this file.
const pool = new DecodePool(2);
const opened = openedServers(pool);

afterAll(() => opened.closeAll());

async function server(config: Partial<TsdbConfig>, nowMs: number): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture({ saltBuckets: 8, ...config }, nowMs, config.queryDecodeThreads === 0 ? {} : { decodePool: pool });
  return { app: opened.add(await buildServer({ tsdb }), tsdb), tsdb };
}

describe('parallel query decoding', () => {
  it('answers every OpenTSDB conformance case exactly as the serial path', async () => {
    for (const c of CONFORMANCE_CASES) {
      const a = await server(SERIAL, 1357100000000);
      const b = await server(PARALLEL, 1357100000000);
      for (const body of caseBodies(c)) {
        await put(a.app, body);
        await put(b.app, body);
      }
      expect(await query(b.app, c.query), c.name).toEqual(await query(a.app, c.query));
    }
    expect(pool.rowsSent).toBeGreaterThan(0);
  });

  it('answers random data under many query shapes exactly as the serial path', async () => {
    const T0 = Date.UTC(2026, 0, 1) / 1000;
    const now = (T0 + 30 * 3600) * 1000;
    const a = await server(SERIAL, now);
    const b = await server(PARALLEL, now);
    const points = mixedPoints(new Random(20261125), T0);
    for (let i = 0; i < points.length; i += 5000) {
      await put(a.app, points.slice(i, i + 5000));
      await put(b.app, points.slice(i, i + 5000));
    }
    // Annotations on one series, and hours 0-2 compressed into hour cells on both stores.
    const note = { startTime: T0 + 100, description: 'deploy', tsuid: '000001000001000001000002000002' };
    expect((await a.app.inject({ method: 'POST', url: '/api/annotation', payload: note })).statusCode).toBe(200);
    expect((await b.app.inject({ method: 'POST', url: '/api/annotation', payload: note })).statusCode).toBe(200);
    for (const o of [a, b]) await o.tsdb.compactor.runOnce({ force: true, sweep: true });
    const shapes = MIXED_SHAPES;
    for (const shape of shapes) {
      const q = { start: (T0 + 1800) * 1000, end: (T0 + 5 * 3600) * 1000, msResolution: true, showQuery: true, queries: [{ metric: 'm', ...shape }] };
      const [sa, sb] = [await query(a.app, q), await query(b.app, q)];
      expect(sa.status, sa.body).toBe(200);
      expect(sb, JSON.stringify(shape)).toEqual(sa);
    }
    const before = pool.sessions;
    for (const shape of shapes.slice(0, 2)) await query(b.app, { start: (T0 + 1800) * 1000, end: (T0 + 5 * 3600) * 1000, queries: [{ metric: 'm', ...shape }] });
    expect(pool.sessions).toBe(before + 2);
  });

  it('keeps the point and series limits (413) and the unknown-metric answer (404) in parallel', async () => {
    const T0 = Date.UTC(2026, 0, 1) / 1000;
    const b = await server({ ...PARALLEL, queryMaxPoints: 2500 }, (T0 + 7200) * 1000);
    const c = await server({ ...PARALLEL, queryMaxSeries: 10 }, (T0 + 7200) * 1000);
    // 2000 points in each of two hours over 16 series: one hour fits the point limit, both do not.
    const body = Array.from({ length: 4000 }, (_, i) => ({ metric: 'm', timestamp: T0 + (i < 2000 ? i : 3600 + i - 2000), value: i, tags: { host: `h${i % 16}` } }));
    await put(b.app, body);
    await put(c.app, body);
    const big = await query(b.app, { start: T0, end: T0 + 7199, queries: [{ metric: 'm', aggregator: 'sum' }] });
    expect(big.status).toBe(413);
    expect(big.body).toContain('more than 2500 data points');
    const many = await query(c.app, { start: T0, end: T0 + 20, queries: [{ metric: 'm', aggregator: 'sum' }] });
    expect(many.status).toBe(413);
    expect(many.body).toContain('more than 10 series');
    expect((await query(b.app, { start: T0, queries: [{ metric: 'nope', aggregator: 'sum' }] })).status).toBe(404);
    const small = await query(b.app, { start: T0, end: T0 + 20, queries: [{ metric: 'm', aggregator: 'sum' }] });
    expect(small.status).toBe(200);
    expect(b.tsdb.queryDecodePool()).toBe(pool);
  });
});
