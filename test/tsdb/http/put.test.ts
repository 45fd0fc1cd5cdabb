import { gzipSync } from 'node:zlib';
import { pack } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
let app: FastifyInstance | undefined;

async function server(config: Partial<TsdbConfig> = {}): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture(config);
  app = await buildServer({ tsdb });
  return { app, tsdb };
}

afterEach(async () => {
  await app?.close();
  app = undefined;
});

const point = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ metric: 'sys.cpu.user', timestamp: T0, value: 42, tags: { host: 'web01' }, ...over });
const all = (tsdb: Tsdb, metric = 'sys.cpu.user', tags: Record<string, string> = { host: 'web01' }) => readSeries(tsdb, metric, tags, (T0 - 86400) * 1000, (T0 + 86400) * 1000);

describe('POST /api/put', () => {
  it('answers 204 with no body for one point and for an array', async () => {
    const { app, tsdb } = await server();
    const one = await app.inject({ method: 'POST', url: '/api/put', payload: point() });
    expect(one.statusCode).toBe(204);
    expect(one.body).toBe('');
    const many = await app.inject({ method: 'POST', url: '/api/put', payload: [point({ timestamp: T0 + 1, value: '1.5' }), point({ timestamp: (T0 + 2) * 1000 })] });
    expect(many.statusCode).toBe(204);
    expect((await all(tsdb)).map((p) => [p.ts, p.value])).toEqual([[T0 * 1000, 42], [(T0 + 1) * 1000, 1.5], [(T0 + 2) * 1000, 42]]);
  });

  it('stores the good points and answers 400 in OpenTSDB shape for the bad ones', async () => {
    const { app, tsdb } = await server();
    const body = [point(), point({ metric: '' }), point({ timestamp: T0 + 5 })];
    const plain = await app.inject({ method: 'POST', url: '/api/put', payload: body });
    expect(plain.statusCode).toBe(400);
    expect(plain.json()).toEqual({ error: { code: 400, message: 'One or more data points had errors', details: 'Please see the TSD logs or append "details" to the put request' } });
    const summary = await app.inject({ method: 'POST', url: '/api/put?summary', payload: body });
    expect(summary.statusCode).toBe(400);
    expect(summary.json()).toEqual({ success: 2, failed: 1 });
    const details = await app.inject({ method: 'POST', url: '/api/put?details&summary', payload: [point({ value: 'abc' }), point({ tags: {} }), point({ timestamp: 'x' }), point()] });
    expect(details.json()).toEqual({
      success: 1,
      failed: 3,
      errors: [
        { datapoint: point({ value: 'abc' }), error: 'Unable to parse value to a number: abc' },
        { datapoint: point({ tags: {} }), error: 'Missing tags' },
        { datapoint: point({ timestamp: 'x' }), error: 'Invalid timestamp' },
      ],
    });
    expect((await all(tsdb)).map((p) => p.ts / 1000 - T0)).toEqual([0, 5]);
    const ok = await app.inject({ method: 'POST', url: '/api/put?summary', payload: point() });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ success: 1, failed: 0 });
  });

  it('rejects bodies that are not points with OpenTSDB messages and stores nothing', async () => {
    const { app, tsdb } = await server();
    const cases: Array<[string, string]> = [
      ['', 'Missing request content'],
      ['{"metric":', 'Unable to parse the given JSON'],
      ['42', 'The JSON must start as an object or an array'],
      ['[]', 'No datapoints found in content'],
    ];
    for (const [payload, message] of cases) {
      const r = await app.inject({ method: 'POST', url: '/api/put', payload, headers: { 'content-type': 'application/json' } });
      expect(r.statusCode, payload).toBe(400);
      expect(r.json().error.message, payload).toBe(message);
    }
    expect(await all(tsdb)).toEqual([]);
  });

  it('accepts gzip bodies, odd content types and numeric strings (Telegraf)', async () => {
    const { app, tsdb } = await server();
    const body = gzipSync(JSON.stringify([point({ value: '0.430000' }), point({ timestamp: T0 + 10, value: '17' })]));
    const r = await app.inject({ method: 'POST', url: '/api/put', payload: body, headers: { 'content-type': 'applicaton/json', 'content-encoding': 'gzip' } });
    expect(r.statusCode).toBe(204);
    expect(await all(tsdb)).toEqual([
      { ts: T0 * 1000, value: 0.43, isInt: false },
      { ts: (T0 + 10) * 1000, value: 17, isInt: true },
    ]);
    const broken = await app.inject({ method: 'POST', url: '/api/put', payload: Buffer.from('not gzip'), headers: { 'content-encoding': 'gzip' } });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error.code).toBe(400);
  });

  it('stores points of known series from their bytes exactly as the general path does', async () => {
    const { app, tsdb } = await server();
    const first = await app.inject({ method: 'POST', url: '/api/put', payload: [point({ value: 1 })], headers: { 'content-type': 'application/json' } });
    expect(first.statusCode).toBe(204);
    // the series is known now: these take the byte path, mixed with a bad and a new point
    const body = '[{"metric":"sys.cpu.user","timestamp":1356998401,"value":2.5,"tags":{"host":"web01"}},' +
      '{"metric":"sys.cpu.user","timestamp":1356998402,"value":"x","tags":{"host":"web01"}},' +
      '{"tags":{"host":"web01"},"value":"17","metric":"sys.cpu.user","timestamp":"1356998403"},' +
      '{"metric":"sys.cpu.user","timestamp":1356998404000,"value":-3,"tags":{"host":"web02"}}]';
    const r = await app.inject({ method: 'POST', url: '/api/put?details', payload: body, headers: { 'content-type': 'application/json' } });
    expect(r.json()).toEqual({ success: 3, failed: 1, errors: [{ datapoint: JSON.parse(body)[1], error: 'Unable to parse value to a number: x' }] });
    expect(await all(tsdb)).toEqual([
      { ts: T0 * 1000, value: 1, isInt: true },
      { ts: (T0 + 1) * 1000, value: 2.5, isInt: false },
      { ts: (T0 + 3) * 1000, value: 17, isInt: true },
    ]);
    expect(await all(tsdb, 'sys.cpu.user', { host: 'web02' })).toEqual([{ ts: (T0 + 4) * 1000, value: -3, isInt: true }]);
  });

  it('accepts msgpack bodies of the same shape', async () => {
    const { app, tsdb } = await server();
    const r = await app.inject({ method: 'POST', url: '/api/put', payload: pack([point(), point({ timestamp: T0 + 1, value: 2.5 })]), headers: { 'content-type': 'application/x-msgpack' } });
    expect(r.statusCode).toBe(204);
    expect((await all(tsdb)).map((p) => p.value)).toEqual([42, 2.5]);
  });

  it('answers 413 beyond the body limit, also for a small gzip body that inflates past it', async () => {
    const { app, tsdb } = await server({ maxBodyBytes: 64 * 1024 });
    const big = JSON.stringify(Array.from({ length: 2000 }, (_, i) => point({ timestamp: T0 + i })));
    const r = await app.inject({ method: 'POST', url: '/api/put', payload: big, headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(413);
    expect(r.json().error.code).toBe(413);
    const bomb = gzipSync(big);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const g = await app.inject({ method: 'POST', url: '/api/put', payload: bomb, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } });
    expect(g.statusCode).toBe(413);
    expect(await all(tsdb)).toEqual([]);
  });

  it('answers 503 with Retry-After when the write pipeline is full', async () => {
    const { app, tsdb } = await server({ maxInflightPoints: 1000 });
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    const mutate = tsdb.data.mutate.bind(tsdb.data);
    Object.assign(tsdb.data, { mutate: async (...args: Parameters<typeof mutate>) => { await gate; return mutate(...args); } });
    const pending = tsdb.ingest.write(Array.from({ length: 1000 }, (_, i) => ({ metric: 'm', timestamp: T0 + i, value: i, isInt: true, tags: [['host', 'a']] as const })));
    const r = await app.inject({ method: 'POST', url: '/api/put', payload: point() });
    expect(r.statusCode).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.json().error.code).toBe(503);
    open();
    await pending;
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: point() })).statusCode).toBe(204);
  });

  it('answers under /api/v1 and 404 in OpenTSDB shape elsewhere', async () => {
    const { app } = await server();
    expect((await app.inject({ method: 'POST', url: '/api/v1/put', payload: point() })).statusCode).toBe(204);
    const nf = await app.inject({ method: 'GET', url: '/api/nope' });
    expect(nf.statusCode).toBe(404);
    expect(nf.json()).toEqual({ error: { code: 404, message: 'Endpoint not found' } });
  });
});
