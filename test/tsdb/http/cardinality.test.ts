/**
 * GET /api/horae/cardinality (tsdb/server/routes/cardinality.ts, catalog/cardinality.ts):
 * series per metric and per tag key, largest first, counted from the series index and
 * checked here against the series written; new series per minute from the limiter's
 * counters; the index is read again only once the catalog changed AND the refresh time
 * passed, never per request.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerCardinalityRoutes } from '../../../tsdb/server/routes/cardinality.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1767225600;

describe('/api/horae/cardinality', () => {
  for (const widths of [{}, { uidWidthMetric: 7, uidWidthTagk: 1 }]) {
    it(`ranks metrics and tag keys by series, counts new series per minute, and reads the index only when due (${JSON.stringify(widths)})`, async () => {
      const { tsdb, clock } = await openFixture(widths, T0 * 1000 + 30_000);
      const points = [];
      // cpu: 6 hosts x 2 cpus = 12 series (host, cpu); mem: 6 hosts (host); disk: 2 (host, dev).
      for (let h = 0; h < 6; h++) {
        for (let c = 0; c < 2; c++) points.push(pt('cpu', T0, 1, { host: `h${h}`, cpu: String(c) }));
        points.push(pt('mem', T0, 1, { host: `h${h}` }));
      }
      points.push(pt('disk', T0, 1, { host: 'h0', dev: 'sda' }), pt('disk', T0, 1, { host: 'h0', dev: 'sdb' }));
      await tsdb.ingest.write(points);
      clock.now += 60_000; // the next minute
      await tsdb.ingest.write([pt('mem', T0, 1, { host: 'h6' })]);

      const app = Fastify();
      const card = registerCardinalityRoutes(app, tsdb, { refreshMs: 60_000 });
      const res = await app.inject({ method: 'GET', url: '/api/horae/cardinality?top=2' });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({
        series: 21, metricCount: 3, tagKeyCount: 3,
        metrics: [{ name: 'cpu', series: 12 }, { name: 'mem', series: 7 }],
        tagKeys: [{ name: 'host', series: 21 }, { name: 'cpu', series: 12 }],
        newSeries: { lastHour: 21, lastDay: 21 },
        refused: { new_series_per_hour: 0, new_series_per_day: 0, series_per_metric: 0, tags_per_series: 0 },
      });
      expect(body.newSeries.perMinute).toHaveLength(60);
      expect(body.newSeries.perMinute.slice(-2)).toEqual([20, 1]);
      const all = (await app.inject({ method: 'GET', url: '/api/horae/cardinality?top=10' })).json();
      expect(all.tagKeys).toEqual([{ name: 'host', series: 21 }, { name: 'cpu', series: 12 }, { name: 'dev', series: 2 }]);
      expect(all.metrics.map((m: { name: string }) => m.name)).toEqual(['cpu', 'mem', 'disk']);
      expect(card.reads).toBe(1); // two requests, one read of the index

      // A new series: the counts stay until the refresh time passes, then are taken again.
      await tsdb.ingest.write([pt('disk', T0, 1, { host: 'h1', dev: 'sda' })]);
      expect((await app.inject({ method: 'GET', url: '/api/horae/cardinality' })).json().series).toBe(21);
      expect(card.reads).toBe(1);
      clock.now += 60_000;
      const later = (await app.inject({ method: 'GET', url: '/api/horae/cardinality' })).json();
      expect(later.series).toBe(22);
      expect(later.metrics).toContainEqual({ name: 'disk', series: 3 });
      expect(card.reads).toBe(2);
      // Nothing changed since: no read, however late.
      clock.now += 10 * 60_000;
      expect((await app.inject({ method: 'GET', url: '/api/horae/cardinality' })).json().series).toBe(22);
      expect(card.reads).toBe(2);

      for (const bad of ['0', '-1', '1.5', 'x', '1001']) {
        const r = await app.inject({ method: 'GET', url: `/api/horae/cardinality?top=${bad}` });
        expect(r.statusCode, bad).toBe(400);
        expect(r.json().error.message).toContain('Invalid top');
      }
      await app.close();
      await tsdb.close();
    });
  }

  it('is served by the server with the read role', async () => {
    const { tsdb } = await openFixture();
    await tsdb.ingest.write([pt('m', T0, 1)]);
    const app = await buildServer({ tsdb });
    const res = await app.inject({ method: 'GET', url: '/api/v1/horae/cardinality' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ series: 1, metrics: [{ name: 'm', series: 1 }] });
    await app.close();
    await tsdb.close();
  });
});
