import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { javaDouble } from '../../../tsdb/query/format-json.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(nowMs = (T0 + 1000) * 1000): Promise<{ app: FastifyInstance; tsdb: Tsdb; clock: { now: number } }> {
  const f = await openFixture({}, nowMs);
  app = await buildServer({ tsdb: f.tsdb });
  return { app, tsdb: f.tsdb, clock: f.clock };
}

describe('/api/uid', () => {
  it('assigns, reports existing names per kind with 400, renames and reads uidmeta', async () => {
    const { app } = await server();
    const r = await app.inject({ method: 'POST', url: '/api/uid/assign', payload: { metric: ['sys.cpu.0', 'sys.cpu.1'], tagk: ['host'] } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ metric: { 'sys.cpu.0': '000001', 'sys.cpu.1': '000002' }, tagk: { host: '000001' } });
    const again = await app.inject({ method: 'GET', url: '/api/uid/assign?metric=sys.cpu.1,sys.cpu.2&tagv=bad%20name' });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({
      metric: { 'sys.cpu.2': '000003' },
      metric_errors: { 'sys.cpu.1': 'Name already exists with UID: 000002' },
      tagv: {},
      tagv_errors: { 'bad name': 'Invalid tag value ("bad name"): illegal character:  ' },
    });
    expect((await app.inject({ method: 'GET', url: '/api/uid/rename?metric=sys.cpu.0&name=sys.cpu.zero' })).json()).toEqual({ result: 'true' });
    const clash = await app.inject({ method: 'GET', url: '/api/uid/rename?metric=sys.cpu.zero&name=sys.cpu.1' });
    expect(clash.statusCode).toBe(400);
    expect(clash.json().result).toBe('false');
    const meta = await app.inject({ method: 'GET', url: '/api/uid/uidmeta?uid=000001&type=metric' });
    expect(meta.json()).toMatchObject({ uid: '000001', type: 'METRIC', name: 'sys.cpu.zero' });
    expect((await app.inject({ method: 'GET', url: '/api/uid/uidmeta?uid=000009&type=metric' })).statusCode).toBe(404);
  });
});

describe('/api/query/last', () => {
  it('keeps a metric\'s series between requests, and lists a series new since at once', async () => {
    const { app, tsdb } = await server();
    const put = (points: unknown[]) => app.inject({ method: 'POST', url: '/api/put', payload: points });
    const last = async () => (await app.inject({ method: 'POST', url: '/api/query/last', payload: { queries: [{ metric: 'm', tags: {} }], resolveNames: true } })).json() as Array<{ tags: { host: string } }>;
    expect((await put([{ metric: 'm', timestamp: T0, value: 1, tags: { host: 'a' } }])).statusCode).toBe(204);
    const reads = vi.spyOn(tsdb.index, 'ofMetric');
    expect((await last()).map((p) => p.tags.host)).toEqual(['a']);
    expect((await last()).map((p) => p.tags.host)).toEqual(['a']);
    expect(reads).toHaveBeenCalledTimes(1);
    expect((await put([{ metric: 'm', timestamp: T0 + 1, value: 2, tags: { host: 'b' } }])).statusCode).toBe(204);
    expect((await last()).map((p) => p.tags.host).sort()).toEqual(['a', 'b']);
    expect(reads).toHaveBeenCalledTimes(2);
    tsdb.dropCaches();
    expect((await last()).map((p) => p.tags.host).sort()).toEqual(['a', 'b']);
    expect(reads).toHaveBeenCalledTimes(3);
  });

  it('returns the newest point per series, however old without a back-scan, within it with one', async () => {
    const { app, tsdb, clock } = await server();
    const put = (points: unknown[]) => app.inject({ method: 'POST', url: '/api/put', payload: points });
    expect((await put([
      { metric: 'm', timestamp: T0, value: 42, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 1, value: 24, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 2, value: 1.5, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 7, value: 7, tags: { host: 'b', dc: 'x' } },
    ])).statusCode).toBe(204);
    clock.now = (T0 + 1023 * 3600) * 1000; // 1023 hours later
    const post = await app.inject({ method: 'POST', url: '/api/query/last', payload: { queries: [{ metric: 'm', tags: { host: 'a' } }], resolveNames: true } });
    expect(post.json()).toEqual([{ timestamp: (T0 + 2) * 1000, value: '1.5', tsuid: '000001000001000001', metric: 'm', tags: { host: 'a' } }]);
    // The body is written by hand: byte for byte JSON.stringify's text, keys in this order.
    expect(post.body).toBe(JSON.stringify([{ timestamp: (T0 + 2) * 1000, value: '1.5', tsuid: '000001000001000001', metric: 'm', tags: { host: 'a' } }]));
    expect(post.headers['content-type']).toBe('application/json; charset=utf-8');
    const named = await app.inject({ method: 'GET', url: '/api/query/last?timeseries=m&resolve=true' });
    expect(named.body).toBe(JSON.stringify(named.json()));
    expect(named.json().map((x: { tags: Record<string, string> }) => x.tags)).toEqual(expect.arrayContaining([{ host: 'a' }, { dc: 'x', host: 'b' }]));
    const all = await app.inject({ method: 'GET', url: '/api/query/last?timeseries=m' });
    expect(all.json().map((x: { value: string }) => x.value).sort()).toEqual(['1.5', '7']);
    const scan1022 = await app.inject({ method: 'POST', url: '/api/query/last', payload: { queries: [{ metric: 'm', tags: { host: 'a' } }], backScan: 1022 } });
    expect(scan1022.json()).toEqual([]);
    expect(scan1022.body).toBe('[]');
    const scan1024 = await app.inject({ method: 'POST', url: '/api/query/last', payload: { queries: [{ tsuids: ['000001000001000001'] }], backScan: 1024 } });
    expect(scan1024.json()).toEqual([{ timestamp: (T0 + 2) * 1000, value: '1.5', tsuid: '000001000001000001' }]);
    const unknown = await app.inject({ method: 'POST', url: '/api/query/last', payload: { queries: [{ metric: 'nope', tags: {} }] } });
    expect(unknown.statusCode).toBe(400);
  });

  it('k=* matches the series that have the tag key, with any value; TSUIDs print the same by metric and by TSUID', async () => {
    const { app } = await server();
    expect((await app.inject({ method: 'POST', url: '/api/put', payload: [
      { metric: 'm', timestamp: T0, value: 1, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0, value: 2, tags: { host: 'b', dc: 'x' } },
      { metric: 'm', timestamp: T0, value: 3, tags: { dc: 'y' } },
    ] })).statusCode).toBe(204);
    const last = async (payload: Record<string, unknown>): Promise<Array<{ value: string; tsuid: string }>> =>
      (await app.inject({ method: 'POST', url: '/api/query/last', payload })).json();
    const byHost = await last({ queries: [{ metric: 'm', tags: { host: '*' } }] });
    expect(byHost.map((p) => p.value).sort()).toEqual(['1', '2']);
    expect((await last({ queries: [{ metric: 'm', tags: { dc: '*', host: '*' } }] })).map((p) => p.value)).toEqual(['2']);
    const every = await last({ queries: [{ metric: 'm', tags: {} }] });
    expect(every.map((p) => p.value).sort()).toEqual(['1', '2', '3']);
    // The hex the metric query prints (from the series' kept names) is the TSUID that
    // finds the same point when asked for directly.
    for (const p of every) {
      expect(p.tsuid).toMatch(/^[0-9A-F]+$/);
      expect(await last({ queries: [{ tsuids: [p.tsuid.toLowerCase()] }] })).toEqual([p]);
    }
  });

  it('prints doubles as Java does', () => {
    expect([javaDouble(2), javaDouble(0.5), javaDouble(1e-5), javaDouble(12345678), javaDouble(-3.25)]).toEqual(['2.0', '0.5', '1.0E-5', '1.2345678E7', '-3.25']);
  });
});
