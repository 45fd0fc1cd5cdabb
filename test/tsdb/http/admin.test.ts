import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('introspection endpoints', () => {
  it('answers version, config, stats, status and dropcaches in OpenTSDB shapes, under /api and /api/v1', async () => {
    const { tsdb } = await openFixture({ autoCreateMetrics: false, maxTags: 12 });
    app = await buildServer({ tsdb, status: () => 'ok' });
    for (const v of ['', '/v1']) {
      const version = (await app.inject({ method: 'GET', url: `/api${v}/version` })).json();
      expect(Object.values(version).every((x) => typeof x === 'string')).toBe(true);
      expect(version.version).toMatch(/^\d+\.\d+\.\d+/);
      const config = (await app.inject({ method: 'GET', url: `/api${v}/config` })).json();
      expect(config['tsd.core.auto_create_metrics']).toBe('false');
      expect(config['tsd.storage.max_tags']).toBe('12');
      const stats = (await app.inject({ method: 'GET', url: `/api${v}/stats` })).json();
      expect(Array.isArray(stats)).toBe(true);
      expect(stats.find((p: { metric: string }) => p.metric === 'tsd.uid.ids-used')).toMatchObject({ tags: { kind: 'metrics', host: 'horae' } });
      expect((await app.inject({ method: 'GET', url: `/api${v}/status` })).json()).toEqual({ status: 'ok' });
      expect((await app.inject({ method: 'GET', url: `/api${v}/dropcaches` })).json()).toEqual({ message: 'Caches dropped', status: '200' });
    }
  });
});

describe('CORS', () => {
  it('is off by default and answers configured origins, preflights included', async () => {
    const off = await openFixture();
    app = await buildServer({ tsdb: off.tsdb });
    const plain = await app.inject({ method: 'GET', url: '/api/version', headers: { origin: 'http://grafana' } });
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    await app.close();
    const on = await openFixture({ corsDomains: 'http://grafana, http://other' });
    app = await buildServer({ tsdb: on.tsdb });
    const ok = await app.inject({ method: 'GET', url: '/api/version', headers: { origin: 'http://grafana' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('http://grafana');
    expect(ok.headers['access-control-allow-methods']).toBe('GET, POST, PUT, DELETE');
    const pre = await app.inject({ method: 'OPTIONS', url: '/api/query', headers: { origin: 'http://other', 'access-control-request-method': 'POST' } });
    expect(pre.statusCode).toBe(200);
    expect(pre.headers['access-control-allow-headers']).toContain('Content-Type');
    const bad = await app.inject({ method: 'GET', url: '/api/version', headers: { origin: 'http://evil' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['access-control-allow-origin']).toBeUndefined();
  });
});
