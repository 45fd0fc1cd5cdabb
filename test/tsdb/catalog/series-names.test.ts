/**
 * Series names are resolved once per TSUID and kept (tsdb/catalog/series-names.ts): the
 * answers must follow every rename of a tag key or value, and dropped caches, exactly as
 * resolving each time would.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { TwoGenCache } from '../../../tsdb/uid/two-gen-cache.js';
import { putOk } from '../helpers/http-cases.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = Date.UTC(2026, 0, 1) / 1000;
const open: Array<{ app: FastifyInstance; tsdb: Tsdb }> = [];

afterAll(async () => {
  for (const o of open) {
    await o.app.close();
    await o.tsdb.close();
  }
});

async function server(catalogMemoryBytes?: number): Promise<FastifyInstance> {
  const { tsdb } = await openFixture({ saltBuckets: 4, ...(catalogMemoryBytes === undefined ? {} : { catalogMemoryBytes }) }, (T0 + 3 * 3600) * 1000);
  const app = await buildServer({ tsdb });
  open.push({ app, tsdb });
  return app;
}

type Answer = Array<{ tags: Record<string, string>; aggregateTags: string[] }>;

async function tagsOf(app: FastifyInstance, m = 'sum:cpu{host=*}'): Promise<Answer> {
  const r = await app.inject({ method: 'GET', url: `/api/query?start=${T0}&end=${T0 + 7200}&m=${encodeURIComponent(m)}` });
  expect(r.statusCode, r.body).toBe(200);
  return (JSON.parse(r.body) as Answer).map((s) => ({ tags: s.tags, aggregateTags: s.aggregateTags }));
}

/** /api/query/last with resolveNames: the tags of each series (sorted by host). */
async function lastTags(app: FastifyInstance): Promise<Array<Record<string, string>>> {
  const r = await app.inject({ method: 'POST', url: '/api/query/last', payload: { queries: [{ metric: 'cpu', tags: {} }], resolveNames: true } });
  expect(r.statusCode, r.body).toBe(200);
  return (JSON.parse(r.body) as Array<{ tags: Record<string, string> }>).map((x) => x.tags).sort((a, b) => (a['host']! < b['host']! ? -1 : 1));
}

async function rename(app: FastifyInstance, kind: string, from: string, to: string): Promise<void> {
  const r = await app.inject({ method: 'GET', url: `/api/uid/rename?${kind}=${from}&name=${to}` });
  expect(r.statusCode, r.body).toBe(200);
}

describe('series names kept per TSUID', () => {
  it('follow renames of tag values and tag keys, and dropped caches', async () => {
    const app = await server();
    await putOk(app, ['web1', 'web2'].flatMap((host) => [0, 60, 3700].map((s) => ({ metric: 'cpu', timestamp: T0 + s, value: s, tags: { host, dc: 'east' } }))));
    const before = [{ tags: { dc: 'east', host: 'web1' }, aggregateTags: [] }, { tags: { dc: 'east', host: 'web2' }, aggregateTags: [] }];
    expect(await tagsOf(app)).toEqual(before);
    expect(await tagsOf(app)).toEqual(before);
    expect(await tagsOf(app, 'sum:cpu')).toEqual([{ tags: { dc: 'east' }, aggregateTags: ['host'] }]);

    await rename(app, 'tagv', 'web1', 'db1');
    expect(await tagsOf(app)).toEqual([{ tags: { dc: 'east', host: 'db1' }, aggregateTags: [] }, { tags: { dc: 'east', host: 'web2' }, aggregateTags: [] }]);
    expect(await lastTags(app)).toEqual([{ dc: 'east', host: 'db1' }, { dc: 'east', host: 'web2' }]);
    await rename(app, 'tagk', 'dc', 'zone');
    expect(await tagsOf(app)).toEqual([{ tags: { host: 'db1', zone: 'east' }, aggregateTags: [] }, { tags: { host: 'web2', zone: 'east' }, aggregateTags: [] }]);
    expect(await lastTags(app)).toEqual([{ host: 'db1', zone: 'east' }, { host: 'web2', zone: 'east' }]);
    const lookup = await app.inject({ method: 'GET', url: '/api/search/lookup?m=cpu{zone=east}' });
    expect((JSON.parse(lookup.body) as { results: Array<{ tags: Record<string, string> }> }).results.map((x) => x.tags.host).sort()).toEqual(['db1', 'web2']);
    expect(await tagsOf(app, 'sum:cpu')).toEqual([{ tags: { zone: 'east' }, aggregateTags: ['host'] }]);

    expect((await app.inject({ method: 'GET', url: '/api/dropcaches' })).statusCode).toBe(200);
    await rename(app, 'tagv', 'east', 'west');
    expect(await tagsOf(app)).toEqual([{ tags: { host: 'db1', zone: 'west' }, aggregateTags: [] }, { tags: { host: 'web2', zone: 'west' }, aggregateTags: [] }]);
  });

  it('stay right while the UID caches evict names', async () => {
    const app = await server(16 * 1024);
    const hosts = Array.from({ length: 40 }, (_, i) => `h${String(i).padStart(2, '0')}`);
    await putOk(app, hosts.map((host) => ({ metric: 'cpu', timestamp: T0, value: 1, tags: { host } })));
    const want = hosts.map((host) => ({ tags: { host }, aggregateTags: [] }));
    for (let i = 0; i < 3; i++) expect(await tagsOf(app)).toEqual(want);
    await rename(app, 'tagv', 'h07', 'x07');
    expect((await tagsOf(app)).map((s) => s.tags.host)).toEqual(hosts.map((h) => (h === 'h07' ? 'x07' : h)));
  });
});

describe('TwoGenCache', () => {
  it('delete removes a key from both generations', () => {
    const c = new TwoGenCache<string, string>(4, () => 1);
    c.set('a', '1');
    c.set('b', '2');
    c.set('c', '3'); // young was full: {a, b} aged
    c.set('a', 'x'); // now in both generations
    c.delete('a');
    expect(c.get('a')).toBeUndefined();
  });
});
