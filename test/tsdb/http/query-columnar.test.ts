import { unpack } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
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
