/**
 * Grafana's OpenTSDB data source, replayed: both request shapes it sends (the current
 * backend path A, and the legacy frontend path B),
 * checking the fields Grafana reads.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const NOW_MS = (T0 + 7200) * 1000;
let app: FastifyInstance;

beforeAll(async () => {
  const { tsdb } = await openFixture({}, NOW_MS);
  app = await buildServer({ tsdb });
  const points = [];
  for (const host of ['web01', 'web02']) {
    for (let i = 0; i < 120; i++) {
      points.push({ metric: 'sys.cpu.user', timestamp: T0 + i * 60, value: host === 'web01' ? i : 2 * i, tags: { host, env: 'prod' } });
      points.push({ metric: 'net.bytes', timestamp: T0 + i * 60, value: i * 1000, tags: { host, env: 'prod' } });
    }
  }
  expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
  await app.inject({ method: 'POST', url: '/api/annotation', payload: { startTime: T0 + 600, description: 'deploy' } });
});

afterAll(async () => {
  await app.close();
});

type Series = { metric: string; tags: Record<string, string>; aggregateTags: string[]; dps: unknown; query?: { index: number }; globalAnnotations?: Array<{ description: string; startTime: number }> };

describe('Grafana path A (backend plugin)', () => {
  it('health check: GET /api/suggest?q=cpu&type=metrics answers 200 with a string array', async () => {
    const r = await app.inject({ method: 'GET', url: '/api/suggest?q=cpu&type=metrics' });
    expect(r.statusCode).toBe(200);
    expect(Array.isArray(r.json())).toBe(true);
  });

  it('one query per refId, seconds, ?arrays=true: dps as [[seconds, number]]', async () => {
    const body = { start: T0, end: T0 + 3600, queries: [{ metric: 'sys.cpu.user', aggregator: 'sum', downsample: '10m-avg', filters: [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: true }] }] };
    const r = await app.inject({ method: 'POST', url: '/api/query?arrays=true', payload: body, headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(200);
    const out = r.json() as Series[];
    expect(out.map((s) => s.tags.host).sort()).toEqual(['web01', 'web02']);
    for (const s of out) {
      expect(Array.isArray(s.dps)).toBe(true);
      for (const [t, v] of s.dps as Array<[number, number]>) {
        expect(Number.isInteger(t) && t < 1e10).toBe(true);
        expect(typeof v).toBe('number');
      }
      expect((s.dps as unknown[]).length).toBe(7);
    }
  });

  it('rate with counter options, tags map, explicitTags; dps keys are integer seconds', async () => {
    const body = { start: T0, end: T0 + 1800, queries: [{ metric: 'net.bytes', aggregator: 'sum', rate: true, rateOptions: { counter: true, dropResets: true }, tags: { host: 'web01', env: 'prod' }, explicitTags: true }] };
    const out = (await app.inject({ method: 'POST', url: '/api/query', payload: body })).json() as Series[];
    expect(out).toHaveLength(1);
    const dps = out[0]!.dps as Record<string, number>;
    expect(Object.keys(dps).every((k) => /^\d{10}$/.test(k))).toBe(true);
    expect(Object.values(dps).every((v) => Math.abs(v - 1000 / 60) < 1e-9)).toBe(true);
  });

  it('tag keys and values through /api/search/lookup, percent-encoded, limit=0 accepted', async () => {
    const keys = (await app.inject({ method: 'GET', url: '/api/search/lookup?limit=1000&m=sys.cpu.user' })).json();
    expect(new Set(keys.results.flatMap((x: { tags: Record<string, string> }) => Object.keys(x.tags)))).toEqual(new Set(['host', 'env']));
    const values = (await app.inject({ method: 'GET', url: `/api/search/lookup?limit=0&m=${encodeURIComponent('sys.cpu.user{host=*,env=prod}')}` })).json();
    expect(values.results.map((x: { tags: { host: string } }) => x.tags.host).sort()).toEqual(['web01', 'web02']);
  });

  it('aggregators and filter types for the editor', async () => {
    const aggs = (await app.inject({ method: 'GET', url: '/api/aggregators' })).json() as string[];
    expect(aggs).toEqual(expect.arrayContaining(['avg', 'sum', 'min', 'max', 'none', 'p99', 'zimsum', 'count', 'dev']));
    const filters = (await app.inject({ method: 'GET', url: '/api/config/filters' })).json() as Record<string, unknown>;
    expect(Object.keys(filters).sort()).toEqual(['iliteral_or', 'iwildcard', 'literal_or', 'not_iliteral_or', 'not_literal_or', 'regexp', 'wildcard']);
  });

  it('gzip responses when asked', async () => {
    const r = await app.inject({ method: 'GET', url: '/api/query?start=1356998400&m=sum:sys.cpu.user', headers: { 'accept-encoding': 'gzip' } });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(Object.keys(JSON.parse(gunzipSync(r.rawPayload).toString())[0].dps)).toHaveLength(120);
    const small = await app.inject({ method: 'GET', url: '/api/version', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
  });
});

describe('Grafana path B (legacy frontend)', () => {
  it('all targets in one request, ms start, end omitted, showQuery: results map back by query.index', async () => {
    const body = {
      start: T0 * 1000, queries: [
        { metric: 'net.bytes', aggregator: 'avg', downsample: '30m-max', tags: {} },
        { metric: 'sys.cpu.user', aggregator: 'sum', tags: { host: 'web01|web02' } },
      ], msResolution: false, globalAnnotations: true, showQuery: true,
    };
    const out = (await app.inject({ method: 'POST', url: '/api/query', payload: body, headers: { accept: 'application/json, text/plain, */*' } })).json() as Series[];
    // the legacy tags map groups by host (host=web01|web02 is literal_or with group by)
    expect(out.map((s) => s.query!.index)).toEqual([0, 1, 1]);
    expect(out[0]).toMatchObject({ metric: 'net.bytes', tags: { env: 'prod' }, aggregateTags: ['host'] });
    const cpu = out.filter((s) => s.query!.index === 1);
    expect(cpu.map((s) => s.tags)).toEqual([{ env: 'prod', host: 'web01' }, { env: 'prod', host: 'web02' }]);
    for (const s of cpu) {
      expect(s.aggregateTags).toEqual([]);
      expect(Object.keys(s.dps as object)).toHaveLength(120);
      expect(s.globalAnnotations?.[0]).toMatchObject({ description: 'deploy', startTime: T0 + 600 });
    }
  });

  it('ms resolution, relative and formatted times, GET m= syntax', async () => {
    const ms = (await app.inject({ method: 'POST', url: '/api/query', payload: { start: '2013/01/01-00:00:00', end: '2013/01/01-00:10:00', msResolution: true, queries: [{ metric: 'sys.cpu.user', aggregator: 'max', tags: { host: 'web02' } }] } })).json() as Series[];
    expect(Object.keys(ms[0]!.dps as object)).toEqual(Array.from({ length: 11 }, (_, i) => String((T0 + i * 60) * 1000)));
    const rel = await app.inject({ method: 'GET', url: '/api/query?start=2h-ago&m=sum:1h-avg:sys.cpu.user%7Bhost=web01%7D' });
    expect(rel.statusCode).toBe(200);
    expect(Object.keys((rel.json() as Series[])[0]!.dps as object).length).toBeGreaterThan(0);
  });

  it('errors in OpenTSDB shape: unknown metric 404, bad query 400, nothing matched []', async () => {
    const unknown = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, queries: [{ metric: 'nope', aggregator: 'sum' }] } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe("No such name for 'metrics': 'nope'");
    const bad = await app.inject({ method: 'POST', url: '/api/query', payload: { queries: [{ metric: 'sys.cpu.user', aggregator: 'sum' }] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe(400);
    const none = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, queries: [{ metric: 'sys.cpu.user', aggregator: 'sum', tags: { host: 'db01' } }] } });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual([]);
  });
});
