/**
 * /api/query (routes/query.ts) over a real socket: every answer kind (200, 400, 404, 413,
 * gzip or not, msgpack, GET, the v1 path, a chunked body) with the status, the headers a
 * client reads and the body bytes that `app.inject` gets, which never reaches a socket
 * (the per-connection abort signal, Node's http server as listener.ts makes it); an empty
 * body's 400 and query admission's 503 with Retry-After as a client sees them.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1_356_998_400;

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | undefined>;
  readonly body: Buffer;
}

/** The headers compared: what a client reads of a reply. */
const HEADERS = ['content-type', 'content-length', 'content-encoding', 'vary', 'retry-after'] as const;

function pick(h: Record<string, unknown>): Record<string, string | undefined> {
  return Object.fromEntries(HEADERS.map((k) => [k, h[k] === undefined ? undefined : String(h[k])]));
}

function overSocket(port: number, opts: { method?: string; path?: string; body?: string; headers?: Record<string, string> }): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    const headers: Record<string, string | number> = { ...opts.headers };
    if (body !== undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = body.length;
    const req = http.request({ host: '127.0.0.1', port, method: opts.method ?? 'POST', path: opts.path ?? '/api/query', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: pick(res.headers), body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function viaFastify(app: FastifyInstance, opts: { method?: string; path?: string; body?: string; headers?: Record<string, string> }): Promise<Raw> {
  const r = await app.inject({ method: (opts.method ?? 'POST') as 'POST', url: opts.path ?? '/api/query', headers: opts.headers ?? {}, ...(opts.body === undefined ? {} : { payload: opts.body }) });
  return { status: r.statusCode, headers: pick(r.headers), body: r.rawPayload };
}

interface Opened {
  tsdb: Tsdb;
  app: FastifyInstance;
  port: number;
}

async function open(config: Partial<TsdbConfig> = {}): Promise<Opened> {
  const { tsdb } = await openFixture(config, (T0 + 4 * 3600) * 1000);
  const points = [];
  for (const [i, host] of ['web01', 'web02', 'db01'].entries()) {
    for (let s = 0; s < 3 * 3600; s += 30) {
      points.push(pt('sys.cpu.user', T0 + s, (s / 30 + i * 7) % 97, { host, dc: i < 2 ? 'lga' : 'sjc' }));
      points.push(pt('sys.if.bytes', T0 + s, 1000 * s + i + 0.25, { host, iface: 'eth0' }, false));
    }
  }
  await tsdb.ingest.write(points);
  const app = await buildServer({ tsdb });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { tsdb, app, port: (app.server.address() as { port: number }).port };
}

const q = (queries: unknown[], extra: Record<string, unknown> = {}): string => JSON.stringify({ start: T0, end: T0 + 3 * 3600, queries, ...extra });

/** Plain POSTs: every answer kind of /api/query. */
const PLAIN: Array<{ name: string; body: string; headers?: Record<string, string>; path?: string; status: number }> = [
  { name: 'one series by the minute', body: q([{ metric: 'sys.cpu.user', aggregator: 'max', downsample: '1m-max', tags: { host: 'web01' } }]), status: 200 },
  { name: 'group by, filters', body: q([{ metric: 'sys.cpu.user', aggregator: 'sum', downsample: '10m-avg', filters: [{ type: 'wildcard', tagk: 'host', filter: 'web*', groupBy: true }] }]), status: 200 },
  { name: 'all series, every point', body: q([{ metric: 'sys.cpu.user', aggregator: 'none' }]), status: 200 },
  { name: 'gzip asked for, big answer', body: q([{ metric: 'sys.if.bytes', aggregator: 'sum', tags: { host: '*' } }]), headers: { 'accept-encoding': 'gzip, deflate' }, status: 200 },
  { name: 'headers in capitals', body: q([{ metric: 'sys.if.bytes', aggregator: 'sum', tags: { host: '*' } }]), headers: { 'Accept-Encoding': 'gzip', 'Content-Type': 'application/json; charset=UTF-8' }, status: 200 },
  { name: 'gzip asked for, small answer', body: q([{ metric: 'sys.cpu.user', aggregator: 'avg', downsample: '1h-avg' }]), headers: { 'accept-encoding': 'gzip' }, status: 200 },
  { name: 'rate, counter, fill, two sub-queries', body: q([
    { metric: 'sys.if.bytes', aggregator: 'sum', rate: true, rateOptions: { counter: true, counterMax: 1e12 }, downsample: '5m-avg-zero' },
    { metric: 'sys.cpu.user', aggregator: 'p95', downsample: '30m-p95-nan', filters: [{ type: 'literal_or', tagk: 'dc', filter: 'lga|sjc', groupBy: true }] },
  ]), status: 200 },
  { name: 'showQuery, showTSUIDs, msResolution', body: q([{ metric: 'sys.cpu.user', aggregator: 'min', downsample: '15m-min', tags: { dc: 'lga' } }], { showQuery: true, showTSUIDs: true, msResolution: true }), status: 200 },
  { name: 'nothing matches', body: q([{ metric: 'sys.cpu.user', aggregator: 'sum', tags: { host: 'nope' } }]), status: 200 },
  { name: 'the v1 path, in capitals', body: q([{ metric: 'sys.cpu.user', aggregator: 'count', downsample: '1h-count' }]), path: '/API/V1/QUERY', status: 200 },
  { name: 'unknown metric', body: q([{ metric: 'no.such', aggregator: 'sum' }]), status: 404 },
  { name: 'unknown tag key', body: q([{ metric: 'sys.cpu.user', aggregator: 'sum', tags: { nokey: 'x' } }]), status: 404 },
  { name: 'bad JSON', body: '{"start":', status: 400 },
  { name: 'not an object', body: '[1,2]', status: 400 },
  { name: 'unknown aggregator', body: q([{ metric: 'sys.cpu.user', aggregator: 'nope' }]), status: 400 },
  { name: 'end before start', body: JSON.stringify({ start: T0 + 10, end: T0, queries: [{ metric: 'sys.cpu.user', aggregator: 'sum' }] }), status: 400 },
  { name: 'a delete while deletes are off', body: q([{ metric: 'sys.cpu.user', aggregator: 'sum' }], { delete: true }), status: 400 },
  { name: 'too many points (413)', body: q([{ metric: 'sys.cpu.user', aggregator: 'sum', downsample: '1ms-sum-zero' }]), status: 413 },
];

/** Other request shapes, answered alike. */
const OTHER: Array<{ name: string; method?: string; path?: string; body?: string; headers?: Record<string, string>; status: number }> = [
  { name: 'a query string (arrays)', path: '/api/query?arrays', body: PLAIN[0]!.body, status: 200 },
  { name: 'GET', method: 'GET', path: `/api/query?start=${T0}&end=${T0 + 3600}&m=sum:sys.cpu.user`, status: 200 },
  { name: 'msgpack answer', body: PLAIN[0]!.body, headers: { accept: 'application/x-msgpack' }, status: 200 },
  { name: 'a trailing slash (no such route)', path: '/api/query/', body: PLAIN[0]!.body, status: 404 },
  { name: 'chunked body', body: PLAIN[0]!.body, headers: { 'transfer-encoding': 'chunked' }, status: 200 },
];

describe('/api/query over a real socket', () => {
  let o: Opened;
  beforeAll(async () => {
    o = await open();
  });
  afterAll(async () => {
    await o.app.close();
    await o.tsdb.close();
  });

  it('answers plain POSTs as inject does', async () => {
    for (const c of PLAIN) {
      const got = await overSocket(o.port, { body: c.body, ...(c.path === undefined ? {} : { path: c.path }), ...(c.headers === undefined ? {} : { headers: c.headers }) });
      const ref = await viaFastify(o.app, { body: c.body, ...(c.path === undefined ? {} : { path: c.path }), ...(c.headers === undefined ? {} : { headers: c.headers }) });
      expect(got.status, `${c.name}: ${got.body.toString()}`).toBe(c.status);
      expect(got.status, c.name).toBe(ref.status);
      expect(got.headers, c.name).toEqual(ref.headers);
      expect(got.body.equals(ref.body), `${c.name}: ${got.body.toString('latin1').slice(0, 200)} vs ${ref.body.toString('latin1').slice(0, 200)}`).toBe(true);
    }
    // The gzip cases did compress (big answer) and did not (small one).
    const big = await overSocket(o.port, { body: PLAIN[3]!.body, headers: { 'accept-encoding': 'gzip' } });
    expect(big.headers['content-encoding']).toBe('gzip');
    const small = await overSocket(o.port, { body: PLAIN[5]!.body, headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('answers an empty body 400 Missing request content', async () => {
    const got = await overSocket(o.port, { body: '' });
    const ref = await viaFastify(o.app, { body: '' });
    expect(got.status).toBe(400);
    expect(JSON.parse(got.body.toString())).toEqual({ error: { code: 400, message: 'Missing request content' } });
    expect(got.headers).toEqual(ref.headers);
    expect(got.body.toString()).toBe(ref.body.toString());
  });

  it('answers the other request shapes as inject does', async () => {
    for (const c of OTHER) {
      const got = await overSocket(o.port, c);
      const ref = await viaFastify(o.app, c);
      expect(got.status, c.name).toBe(c.status);
      expect(got.status, c.name).toBe(ref.status);
      expect(got.body.equals(ref.body), c.name).toBe(true);
    }
  });

  it('refuses past query admission with 503 and Retry-After', async () => {
    const s = await open({ queryMaxConcurrent: 1, queryQueueMs: 50 });
    try {
      // Hold the only slot: a fastify request whose reads wait.
      const get = s.tsdb.data.get.bind(s.tsdb.data);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      Object.assign(s.tsdb.data, { get: async (...a: Parameters<typeof get>) => { await gate; return get(...a); } });
      const held = overSocket(s.port, { path: '/api/query?arrays', body: PLAIN[0]!.body });
      for (let i = 0; i < 100; i++) await new Promise((r) => setTimeout(r, 5));
      const refused = await overSocket(s.port, { body: PLAIN[0]!.body });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body.toString())).toEqual({ error: { code: 503, message: 'Too many queries: 1 running and none finished within 50 ms', details: 'Retry later; the limits are horae.query.max_concurrent and horae.query.queue_ms' } });
      release();
      expect((await held).status).toBe(200);
      expect((await overSocket(s.port, { body: PLAIN[0]!.body })).status).toBe(200);
    } finally {
      await s.app.close();
      await s.tsdb.close();
    }
  });
});
