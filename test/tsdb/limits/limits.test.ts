/**
 * Cardinality limits (tsdb/limits/series-limiter.ts, applied in catalog.recordSeries):
 * new series per hour and per day, series per metric, tags per series. Each refused
 * point is reported with its limit's message (`?details`, telnet `put: limit exceeded:`)
 * and counted in /api/stats; every other point of the same request is stored; series the
 * index already holds (after dropCaches, after a restart) are never refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { openMemoryStore } from '../../../core/index.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { startServer } from '../../../tsdb/server/server.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { telnet } from '../e2e/e2e-helpers.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1767225600; // 2026-01-01
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(config: Partial<TsdbConfig>) {
  const f = await openFixture(config, T0 * 1000);
  app = await buildServer({ tsdb: f.tsdb });
  return { app, ...f };
}

const point = (metric: string, host: string, value = 1, ts = T0) => ({ metric, timestamp: ts, value, tags: { host } });

interface Details { success: number; failed: number; errors: { datapoint: { metric: string; tags: Record<string, string> }; error: string }[] }

async function put(a: FastifyInstance, body: unknown[]): Promise<{ status: number; details: Details }> {
  const r = await a.inject({ method: 'POST', url: '/api/put?details', payload: body });
  return { status: r.statusCode, details: r.json() as Details };
}

async function limitStats(a: FastifyInstance): Promise<Record<string, number>> {
  const r = await a.inject({ method: 'GET', url: '/api/stats' });
  const out: Record<string, number> = {};
  for (const p of r.json() as { metric: string; value: number; tags: Record<string, string> }[]) {
    if (p.metric === 'horae.limits.refused') out[p.tags.limit!] = p.value;
    if (p.metric === 'horae.series.new') out[`new_${p.tags.window!}`] = p.value;
  }
  return out;
}

const stored = (tsdb: Tsdb, metric: string, host: string) => readSeries(tsdb, metric, { host }, (T0 - 3600) * 1000, (T0 + 86400) * 1000);

describe('cardinality limits', () => {
  it('series per metric: the new series past the limit are refused, everything else of the request is stored', async () => {
    const { app, tsdb } = await server({ limitSeriesPerMetric: 3 });
    const first = await put(app, [point('m', 'a'), point('m', 'b'), point('other', 'x'), point('m', 'c'), point('m', 'd'), point('m', 'a', 2, T0 + 1), point('m', 'e')]);
    expect(first.status).toBe(400);
    expect(first.details.success).toBe(5);
    expect(first.details.errors.map((e) => e.datapoint.tags.host)).toEqual(['d', 'e']);
    for (const e of first.details.errors) expect(e.error).toBe('series limit of the metric reached: it has 3 series, the limit is 3 (horae.limits.series_per_metric)');
    expect(await stored(tsdb, 'm', 'a')).toHaveLength(2);
    expect(await stored(tsdb, 'other', 'x')).toHaveLength(1);
    expect(await stored(tsdb, 'm', 'd')).toHaveLength(0);
    // Known series keep being written; other metrics are not limited by m's count.
    const second = await put(app, [point('m', 'c', 3, T0 + 2), point('other', 'y'), point('m', 'f')]);
    expect(second.details.success).toBe(2);
    expect(second.details.errors.map((e) => e.datapoint.tags.host)).toEqual(['f']);
    expect(await limitStats(app)).toMatchObject({ series_per_metric: 3, new_1h: 5 });
  });

  it('series per metric starts from what the index holds: after a restart, and after dropCaches', async () => {
    const store = await openMemoryStore();
    const config = { limitSeriesPerMetric: 2 };
    const one = await Tsdb.open(store, { config, background: false, now: () => T0 * 1000 });
    app = await buildServer({ tsdb: one });
    expect((await put(app, [point('m', 'a'), point('m', 'b')])).details.success).toBe(2);
    await app.close();
    await one.close();
    const two = await Tsdb.open(store, { config, background: false, now: () => T0 * 1000 });
    app = await buildServer({ tsdb: two });
    const r = await put(app, [point('m', 'a', 5, T0 + 5), point('m', 'c'), point('m', 'b', 6, T0 + 6)]);
    expect(r.details.success).toBe(2);
    expect(r.details.errors.map((e) => e.datapoint.tags.host)).toEqual(['c']);
    two.dropCaches();
    const again = await put(app, [point('m', 'a', 7, T0 + 7), point('m', 'b', 8, T0 + 8), point('m', 'c')]);
    expect(again.details.errors.map((e) => e.datapoint.tags.host)).toEqual(['c']);
    expect(await stored(two, 'm', 'a')).toHaveLength(3);
  });

  it('new series per hour: refused past the limit within any 60 minutes, admitted again once the hour has passed; known series never count', async () => {
    const { app, tsdb, clock } = await server({ limitNewSeriesPerHour: 4 });
    const r = await put(app, [point('m1', 'a'), point('m1', 'b'), point('m2', 'a'), point('m2', 'b'), point('m2', 'c'), point('m1', 'a', 2, T0 + 1), point('m3', 'z')]);
    expect(r.details.success).toBe(5);
    expect(r.details.errors.map((e) => `${e.datapoint.metric} ${e.datapoint.tags.host}`)).toEqual(['m2 c', 'm3 z']);
    expect(r.details.errors[0]!.error).toBe('new series limit reached: 4 new series in the last hour, the limit is 4 (horae.limits.new_series_per_hour)');
    // A series the index holds is not new, even once the writer's caches are gone.
    tsdb.dropCaches();
    clock.now += 30 * 60_000;
    const known = await put(app, [point('m1', 'b', 3, T0 + 2), point('m2', 'a', 3, T0 + 2), point('m9', 'q')]);
    expect(known.details.success).toBe(2);
    expect(known.details.errors.map((e) => e.datapoint.metric)).toEqual(['m9']);
    clock.now += 31 * 60_000;
    expect((await put(app, [point('m9', 'q'), point('m2', 'c')])).details.success).toBe(2);
    expect(await limitStats(app)).toMatchObject({ new_series_per_hour: 3, new_1h: 2, new_24h: 6 });
  });

  it('new series per day: refused past the limit within any 24 hours', async () => {
    const { app, clock } = await server({ limitNewSeriesPerDay: 3, limitNewSeriesPerHour: 100 });
    expect((await put(app, [point('d', 'a'), point('d', 'b')])).details.success).toBe(2);
    clock.now += 5 * 3600_000;
    const r = await put(app, [point('d', 'c'), point('d', 'e'), point('d', 'a', 9, T0 + 9)]);
    expect(r.details.success).toBe(2);
    expect(r.details.errors[0]!.error).toBe('new series limit reached: 3 new series in the last 24 hours, the limit is 3 (horae.limits.new_series_per_day)');
    clock.now += 19 * 3600_000 + 60_000;
    expect((await put(app, [point('d', 'e')])).details.success).toBe(1);
    expect(await limitStats(app)).toMatchObject({ new_series_per_day: 1 });
  });

  it('tags per series: a point with more tags than horae.max_tags is refused with OpenTSDB\'s message and counted', async () => {
    const { app } = await server({ maxTags: 2 });
    const r = await app.inject({ method: 'POST', url: '/api/put?details', payload: [
      { metric: 't', timestamp: T0, value: 1, tags: { a: '1', b: '2', c: '3' } }, { metric: 't', timestamp: T0, value: 1, tags: { a: '1' } }] });
    const d = r.json() as Details;
    expect(d.success).toBe(1);
    expect(d.errors[0]!.error).toMatch(/^Too many tags: 3 maximum allowed: 2/);
    expect(await limitStats(app)).toMatchObject({ tags_per_series: 1 });
  });

  it('answers a telnet put of a refused series with `put: limit exceeded:` and writes the other lines', async () => {
    const s = await startServer({ store: await openMemoryStore(), port: 0, bind: '127.0.0.1', config: { limitSeriesPerMetric: 1 }, now: () => T0 * 1000 });
    try {
      const out = await telnet(s.port, `put tm ${T0} 1 host=a\nput tm ${T0} 1 host=b\nput tm ${T0 + 1} 2 host=a\nversion\nexit\n`);
      const lines = out.split('\n').filter((l) => l.startsWith('put:'));
      expect(lines).toEqual(['put: limit exceeded: series limit of the metric reached: it has 1 series, the limit is 1 (horae.limits.series_per_metric)']);
      expect(await readSeries(s.tsdb, 'tm', { host: 'a' }, (T0 - 60) * 1000, (T0 + 60) * 1000)).toHaveLength(2);
    } finally {
      await s.stop();
    }
  });
});
