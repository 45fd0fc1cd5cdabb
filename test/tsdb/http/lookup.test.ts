import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { deleteSeries } from '../../../tsdb/write/delete-series.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

let fixture: Awaited<ReturnType<typeof openFixture>> | undefined;

async function loaded(): Promise<FastifyInstance> {
  const { tsdb } = (fixture = await openFixture());
  app = await buildServer({ tsdb });
  const points = [];
  for (const host of ['web01', 'web02', 'db01']) {
    for (const cpu of ['0', '1']) points.push({ metric: 'sys.cpu.user', timestamp: T0, value: 1, tags: { host, cpu } });
  }
  points.push({ metric: 'sys.mem.free', timestamp: T0, value: 1, tags: { host: 'web01', dc: 'lga' } });
  expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
  return app;
}

describe('/api/search/lookup', () => {
  it('lists the series of a metric from the series index (no meta sync needed)', async () => {
    const a = await loaded();
    const r = await a.inject({ method: 'GET', url: '/api/search/lookup?m=sys.cpu.user&limit=1000' });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ type: 'LOOKUP', metric: 'sys.cpu.user', limit: 1000, startIndex: 0, totalResults: 6 });
    expect(body.results).toHaveLength(6);
    expect(new Set(body.results.map((x: { tags: { host: string } }) => x.tags.host))).toEqual(new Set(['web01', 'web02', 'db01']));
    for (const x of body.results) expect(x.tsuid).toMatch(/^[0-9A-F]{30}$/);
  });

  it('filters by tag patterns as Grafana sends them: values ORed per key, keys ANDed, * wildcards', async () => {
    const a = await loaded();
    const get = async (m: string) => (await a.inject({ method: 'GET', url: `/api/search/lookup?m=${encodeURIComponent(m)}` })).json();
    expect((await get('sys.cpu.user{host=web01}')).totalResults).toBe(2);
    expect((await get('sys.cpu.user{host=web01,host=db01,cpu=1}')).totalResults).toBe(2);
    expect((await get('sys.cpu.user{cpu=*}')).totalResults).toBe(6);
    expect((await get('*{host=web01}')).totalResults).toBe(3);
    expect((await get('{*=lga}')).results.map((x: { metric: string }) => x.metric)).toEqual(['sys.mem.free']);
    expect((await get('sys.cpu.user{dc=*}')).totalResults).toBe(0);
    expect((await get('sys.cpu.user{host=nohost}')).totalResults).toBe(0);
    expect((await get('sys.cpu.user{host=nohost,host=web02}')).totalResults).toBe(2);
    expect((await get('sys.cpu.user{nokey=web01}')).totalResults).toBe(0);
    expect((await get('sys.cpu.user{host=*,*=0}')).totalResults).toBe(3);
    // A metric's lookup by tag reads postings (tsdb/SCHEMA.md "Series postings"), not its series list.
    const read = fixture!.tsdb.index.postings.postingsRead;
    expect((await get('sys.cpu.user{cpu=1}')).totalResults).toBe(3);
    expect(fixture!.tsdb.index.postings.postingsRead - read).toBe(3);
    const post = await a.inject({ method: 'POST', url: '/api/search/lookup', payload: { metric: 'sys.cpu.user', tags: [{ key: 'host', value: 'web02' }], limit: 1 } });
    expect(post.json()).toMatchObject({ totalResults: 2, limit: 1 });
    expect(post.json().results).toHaveLength(1);
    const unknown = await a.inject({ method: 'GET', url: '/api/search/lookup?m=nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe("No such name for 'metrics': 'nope'");
  });
});

describe('/api/suggest', () => {
  it('suggests metrics, tag keys and values by prefix, optionally scoped to a metric', async () => {
    const a = await loaded();
    const s = async (qs: string) => (await a.inject({ method: 'GET', url: `/api/suggest?${qs}` })).json();
    expect(await s('type=metrics&q=sys')).toEqual(['sys.cpu.user', 'sys.mem.free']);
    expect(await s('type=metrics&q=sys.m')).toEqual(['sys.mem.free']);
    expect(await s('type=tagk')).toEqual(['cpu', 'dc', 'host']);
    expect(await s('type=tagv&q=web&max=1')).toEqual(['web01']);
    expect(await s('type=tagk&metric=sys.mem.free')).toEqual(['dc', 'host']);
    expect(await s('type=tagv&metric=sys.cpu.user&q=d')).toEqual(['db01']);
    expect(await s('type=tagv&metric=sys.cpu.user')).toEqual(['0', '1', 'db01', 'web01', 'web02']);
    // Read from the metric's tag pairs (its postings' value rows): a deleted series' values go with it.
    await deleteSeries(fixture!.tsdb, 'sys.cpu.user{host=db01}');
    expect(await s('type=tagv&metric=sys.cpu.user&q=d')).toEqual([]);
    expect(await s('type=tagv&metric=sys.cpu.user')).toEqual(['0', '1', 'web01', 'web02']);
    await deleteSeries(fixture!.tsdb, 'sys.cpu.user{cpu=1}');
    expect(await s('type=tagv&metric=sys.cpu.user')).toEqual(['0', 'web01', 'web02']);
    expect(await s('type=tagk&metric=sys.cpu.user')).toEqual(['cpu', 'host']);
    const bad = await a.inject({ method: 'GET', url: '/api/suggest?type=nope' });
    expect(bad.statusCode).toBe(400);
    const post = await a.inject({ method: 'POST', url: '/api/suggest', payload: { type: 'metrics', q: 'sys.c' } });
    expect(post.json()).toEqual(['sys.cpu.user']);
  });
});
