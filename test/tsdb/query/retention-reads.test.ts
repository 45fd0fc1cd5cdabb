/**
 * Reads hide expired points before the store drops them (tsdb/SCHEMA.md "Retention"):
 * with `horae.retention` and per-metric rules, /api/query (raw, downsampled, decoded on the
 * main thread and by decode workers, by metric and by TSUID), /api/query/last and
 * /api/search/lookup return nothing older than the metric's retention back from now; rows
 * are still on disk (the memory store drops nothing).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, openedServers, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const HOUR = 3600;
const NOW_S = T0 + 10 * HOUR + 1800;
const pool = new DecodePool(2);
const opened = openedServers(pool);
afterAll(() => opened.closeAll());

const RETENTION: Partial<TsdbConfig> = { retention: '3h', retentionMetrics: 'keep.*=forever, short=1h' };

async function server(config: Partial<TsdbConfig>): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture({ ...RETENTION, ...config }, NOW_S * 1000, config.queryDecodeThreads === 0 ? {} : { decodePool: pool });
  const app = opened.add(await buildServer({ tsdb }), tsdb);
  // Ten hours of a point a minute, for three metrics; `old` stops writing 5 h ago.
  const points = [];
  for (let s = T0; s <= NOW_S; s += 60) {
    for (const m of ['cpu', 'keep.cpu', 'short']) points.push(pt(m, s, (s - T0) / 60, { host: 'a' }));
    if (s <= NOW_S - 5 * HOUR) points.push(pt('cpu', s, 1, { host: 'old' }));
  }
  await tsdb.ingest.write(points);
  return { app, tsdb };
}

async function query(app: FastifyInstance, sub: Record<string, unknown>): Promise<Array<{ metric: string; tags: Record<string, string>; dps: Record<string, number> }>> {
  const res = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: NOW_S, queries: [sub] } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const firstTs = (dps: Record<string, number>): number => Math.min(...Object.keys(dps).map(Number));

describe('reads under retention', () => {
  for (const [name, config] of [['main thread', { queryDecodeThreads: 0 }], ['decode workers', { queryDecodeThreads: 2, queryParallelMinRows: 0, queryExactMaxRows: 0 }]] as const) {
    it(`/api/query returns no point past the metric's retention (${name})`, async () => {
      const { app, tsdb } = await server(config);
      const cpu = await query(app, { metric: 'cpu', aggregator: 'none', tags: { host: 'a' } });
      expect(cpu).toHaveLength(1);
      expect(firstTs(cpu[0]!.dps)).toBe(NOW_S - 3 * HOUR); // the first minute at or after now - 3 h
      expect(Object.keys(cpu[0]!.dps)).toHaveLength(3 * 60 + 1);
      expect(firstTs((await query(app, { metric: 'short', aggregator: 'none' }))[0]!.dps)).toBe(NOW_S - HOUR);
      expect(firstTs((await query(app, { metric: 'keep.cpu', aggregator: 'none' }))[0]!.dps)).toBe(T0);
      // Downsampled: the bucket holding the cut counts only retained points.
      const ds = await query(app, { metric: 'cpu', aggregator: 'sum', downsample: '1h-count', tags: { host: 'a' } });
      expect(ds[0]!.dps).toEqual({ [NOW_S - 3 * HOUR - 1800]: 30, [NOW_S - 2 * HOUR - 1800]: 60, [NOW_S - HOUR - 1800]: 60, [NOW_S - 1800]: 31 });
      // A series whose points have all expired is not in the answer, by metric or TSUID.
      const all = await query(app, { metric: 'cpu', aggregator: 'none' });
      expect(all.map((s) => s.tags.host)).toEqual(['a']);
      const old = (await tsdb.index.ofMetric((await tsdb.metrics.getId('cpu'))!)).length;
      expect(old).toBe(2); // still indexed, still stored
      expect(await query(app, { tsuids: [await tsuidOf(tsdb, 'cpu', 'old')], aggregator: 'none' })).toEqual([]);
    });
  }

  it('/api/query/last and /api/search/lookup leave out what has expired', async () => {
    const { app } = await server({ queryDecodeThreads: 0 });
    const last = await app.inject({ method: 'GET', url: '/api/query/last?timeseries=cpu&resolve=true' });
    expect(last.statusCode).toBe(200);
    expect((last.json() as Array<{ tags: Record<string, string>; timestamp: number }>).map((p) => [p.tags.host, p.timestamp])).toEqual([['a', NOW_S * 1000]]);
    const back = await app.inject({ method: 'GET', url: '/api/query/last?timeseries=cpu{host=old}&back_scan=24' });
    expect(back.json()).toEqual([]);
    const look = await app.inject({ method: 'GET', url: '/api/search/lookup?m=cpu' });
    expect((look.json() as { results: Array<{ tags: Record<string, string> }>; totalResults: number })).toMatchObject({ totalResults: 1, results: [{ tags: { host: 'a' } }] });
    // Without retention the same data is all there.
    const { app: forever } = await server({ queryDecodeThreads: 0, retention: '', retentionMetrics: '' });
    const lookAll = await forever.inject({ method: 'GET', url: '/api/search/lookup?m=cpu' });
    expect((lookAll.json() as { totalResults: number }).totalResults).toBe(2);
    expect(firstTs((await query(forever, { metric: 'cpu', aggregator: 'none', tags: { host: 'a' } }))[0]!.dps)).toBe(T0);
  });
});

async function tsuidOf(tsdb: Tsdb, metric: string, host: string): Promise<string> {
  const parts = [await tsdb.metrics.getId(metric), await tsdb.tagks.getId('host'), await tsdb.tagvs.getId(host)];
  return parts.map((p) => Buffer.from(p!).toString('hex')).join('').toUpperCase();
}
