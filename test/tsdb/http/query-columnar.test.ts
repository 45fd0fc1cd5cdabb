import { unpack } from 'msgpackr';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('columnar query response', () => {
  it('aligns every output series on one time axis, in JSON and msgpack, matching the OpenTSDB shape', async () => {
    const { tsdb } = await openFixture({}, (T0 + 3600) * 1000);
    app = await buildServer({ tsdb });
    const points = [
      ...[0, 10, 20].map((o) => ({ metric: 'm', timestamp: T0 + o, value: o, tags: { host: 'a' } })),
      ...[10, 30].map((o) => ({ metric: 'm', timestamp: T0 + o, value: o + 0.5, tags: { host: 'b' } })),
    ];
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
    const query = { start: T0, end: T0 + 60, showQuery: true, queries: [{ metric: 'm', aggregator: 'none' }] };
    const json = await app.inject({ method: 'POST', url: '/api/query?format=columnar', payload: query });
    const col = json.json() as { timestamps: number[]; series: Array<{ tags: { host: string }; values: Array<number | null>; index: number }> };
    expect(col.timestamps).toEqual([T0, T0 + 10, T0 + 20, T0 + 30]);
    const byHost = Object.fromEntries(col.series.map((s) => [s.tags.host, s]));
    expect(byHost.a!.values).toEqual([0, 10, 20, null]);
    expect(byHost.b!.values).toEqual([null, 10.5, null, 30.5]);
    expect(col.series.every((s) => s.index === 0)).toBe(true);
    const mp = await app.inject({ method: 'POST', url: '/api/query', payload: query, headers: { accept: 'application/x-msgpack' } });
    expect(mp.headers['content-type']).toContain('application/x-msgpack');
    expect(unpack(mp.rawPayload)).toEqual(col);
    // the same data as OpenTSDB's shape
    const plain = (await app.inject({ method: 'POST', url: '/api/query', payload: query })).json() as Array<{ tags: { host: string }; dps: Record<string, number> }>;
    expect(plain.find((s) => s.tags.host === 'b')!.dps).toEqual({ [T0 + 10]: 10.5, [T0 + 30]: 30.5 });
  });
});

describe('deleting through /api/query', () => {
  it('is refused unless enabled, and then removes the whole hour rows of the matched series only', async () => {
    const off = await openFixture({}, (T0 + 7200) * 1000);
    app = await buildServer({ tsdb: off.tsdb });
    const refused = await app.inject({ method: 'DELETE', url: `/api/query?start=${T0}&m=sum:m` });
    expect(refused.statusCode).toBe(400);
    await app.close();

    const { tsdb } = await openFixture({ queryAllowDelete: true }, (T0 + 7200) * 1000);
    app = await buildServer({ tsdb });
    const points = [
      { metric: 'm', timestamp: T0 + 10, value: 1, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 3700, value: 2, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 10, value: 3, tags: { host: 'b' } },
    ];
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
    const del = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + 60, delete: true, queries: [{ metric: 'm', aggregator: 'sum', tags: { host: 'a' } }] } });
    expect(del.statusCode).toBe(200);
    expect(Object.values((del.json() as Array<{ dps: Record<string, number> }>)[0]!.dps)).toEqual([1]);
    const left = (await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + 7200, queries: [{ metric: 'm', aggregator: 'none' }] } })).json() as Array<{ tags: { host: string }; dps: Record<string, number> }>;
    // host=a lost the hour it was read from (the scan covers whole hours); its next hour and host=b stay
    expect(left.map((s) => [s.tags.host, Object.values(s.dps)]).sort()).toEqual([['a', [2]], ['b', [3]]]);
  });

  it('leaves /api/query/last nothing of the deleted rows (the last-value cache forgets)', async () => {
    const { tsdb } = await openFixture({ queryAllowDelete: true }, (T0 + 7200) * 1000);
    app = await buildServer({ tsdb });
    const points = [
      { metric: 'm', timestamp: T0 + 10, value: 1, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 3700, value: 2, tags: { host: 'a' } },
    ];
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
    const last = async (): Promise<unknown[]> => ((await app!.inject({ method: 'GET', url: '/api/query/last?timeseries=m{host=a}' })).json() as Array<{ timestamp: number; value: string }>).map((p) => [p.timestamp, p.value]);
    expect(await last()).toEqual([[(T0 + 3700) * 1000, '2']]);
    expect(await last()).toEqual([[(T0 + 3700) * 1000, '2']]); // from the cache now (single-writer stores)
    // This file runs on the Bigtable emulator too (test/bigtable/tsdb.bigtable.test.ts): no cache there.
    if (tsdb.lastValues !== undefined) expect(tsdb.lastValues.stats().hits).toBe(1);
    const del = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0 + 3600, end: T0 + 3800, delete: true, queries: [{ metric: 'm', aggregator: 'sum', tags: { host: 'a' } }] } });
    expect(del.statusCode).toBe(200);
    expect(await last()).toEqual([[(T0 + 10) * 1000, '1']]);
  });
});

describe('the query time limit (tsd.query.timeout)', () => {
  it('stops a query that runs longer than the limit with 413 and OpenTSDB-shaped error, and lets others through', async () => {
    const { tsdb } = await openFixture({ queryTimeoutMs: 5000 }, (T0 + 7200) * 1000);
    app = await buildServer({ tsdb });
    const points = [];
    for (let h = 0; h < 20; h++) for (let o = 0; o < 3600; o += 20) points.push({ metric: 'm', timestamp: T0 + o, value: o + h, tags: { host: `h${h}` } });
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
    // A clock that runs 10 s per reading: the query is past its deadline at its first check.
    let fake = performance.now();
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => (fake += 10_000));
    const res = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + 3600, queries: [{ metric: 'm', aggregator: 'none' }] } });
    expect(res.statusCode).toBe(413);
    clock.mockRestore();
    expect((res.json() as { error: { message: string } }).error.message).toContain('ran longer than 5000 ms (tsd.query.timeout)');
    await app.close();

    const roomy = await openFixture({}, (T0 + 7200) * 1000);
    expect(roomy.tsdb.config.queryTimeoutMs).toBeGreaterThan(0);
    app = await buildServer({ tsdb: roomy.tsdb });
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
    const ok = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + 3600, queries: [{ metric: 'm', aggregator: 'sum' }] } });
    expect(ok.statusCode).toBe(200);
    expect(Object.keys((ok.json() as Array<{ dps: object }>)[0]!.dps)).toHaveLength(180);
  });
});
