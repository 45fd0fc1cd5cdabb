/**
 * tsdb/server/listener.ts: HTTP (fastify through createHttpServerForFastify, never
 * listen()ed) and the telnet protocol on one loopback port, told apart by the first byte.
 * HTTP must behave as if Node owned the socket: keep-alive, pipelining (also with the
 * request split across the sniffed chunk), bodies of several MiB (Content-Length and
 * chunked), gzip bodies through a test content parser. close() must resolve promptly with
 * idle telnet, idle keep-alive and silent connections open, wait for in-flight work, and
 * force its way out after its timeout; socket resets must not crash anything.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpServerForFastify, listen, looksLikeHttp } from '../../../tsdb/server/listener.js';
import type { Listener } from '../../../tsdb/server/listener.js';
import type { PutLines, TelnetBackend } from '../../../tsdb/server/telnet/telnet-backend.js';
import { putWords } from '../../../tsdb/server/telnet/line-splitter.js';

class HoldingBackend implements TelnetBackend {
  lines = 0;
  hold = false;
  private held: (() => void)[] = [];
  async putBatch(raw: PutLines): Promise<string[]> {
    const batch = raw.lines().map((l) => putWords(l));
    this.lines += batch.length;
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    return batch.filter((w) => !Number.isFinite(Number(w[2]))).map((w) => `put: invalid value: ${w[2]!}`);
  }
  release(): void { this.hold = false; for (const r of this.held.splice(0)) r(); }
  overloaded(): boolean { return false; }
  async whenWritable(): Promise<void> {}
  versionLines(): string[] { return ['net.opentsdb.tools 2.4.1 built at revision test (MINT)', 'Built on today']; }
  async statsLines(): Promise<string[]> { return []; }
  async dropCaches(): Promise<void> {}
  status(): string { return 'ok'; }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function buildApp(): Promise<FastifyInstance> {
  const app = Fastify({ serverFactory: createHttpServerForFastify, bodyLimit: 64 * 1024 * 1024 });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    try {
      const raw = req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
      done(null, JSON.parse(raw.toString('utf8')));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.get('/hello', async (req) => ({ hello: 'world', peerPort: req.socket.remotePort }));
  app.post('/hash', async (req) => {
    const body = req.body as Buffer;
    return { bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') };
  });
  app.post('/json', async (req) => ({ count: (req.body as unknown[]).length }));
  app.get('/slow', async () => { await sleep(300); return { slow: true }; });
  await app.ready();
  return app;
}

interface Env { app: FastifyInstance; listener: Listener; backend: HoldingBackend }

async function startEnv(): Promise<Env> {
  const app = await buildApp();
  const backend = new HoldingBackend();
  const listener = await listen({ host: '127.0.0.1', port: 0, http: app.server, telnet: backend });
  cleanups.push(async () => { backend.release(); await listener.close(1000); await app.close(); });
  return { app, listener, backend };
}

interface Reply { status: number; body: Buffer; localPort: number }

function httpRequest(port: number, method: string, path: string, opts: { headers?: OutgoingHttpHeaders; body?: Buffer | Buffer[]; agent?: Agent } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: opts.headers, agent: opts.agent ?? false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), localPort: req.socket?.localPort ?? -1 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const body = opts.body;
    if (Array.isArray(body)) for (const b of body) req.write(b);
    else if (body !== undefined) req.write(body);
    req.end();
  });
}

async function rawClient(port: number): Promise<{ socket: Socket; text: () => string; closed: () => boolean }> {
  const socket = connect({ host: '127.0.0.1', port });
  let text = '';
  let closed = false;
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => { text += d; });
  socket.on('error', () => {});
  socket.on('close', () => { closed = true; });
  cleanups.push(() => { socket.destroy(); });
  await once(socket, 'connect');
  return { socket, text: () => text, closed: () => closed };
}

const waitFor = (fn: () => void, timeout = 5000): Promise<void> => vi.waitFor(fn, { timeout, interval: 5 });

describe('listener: one port, HTTP and telnet', () => {
  it('classifies by the first byte like OpenTSDB', () => {
    expect(looksLikeHttp('G'.charCodeAt(0))).toBe(true);
    expect(looksLikeHttp('Z'.charCodeAt(0))).toBe(true);
    expect(looksLikeHttp('p'.charCodeAt(0))).toBe(false);
    expect(looksLikeHttp('v'.charCodeAt(0))).toBe(false);
    expect(looksLikeHttp(0x16)).toBe(false);
  });

  it('serves fastify routes and telnet commands on the same port', async () => {
    const { listener, backend } = await startEnv();
    expect(listener.address).toBe('127.0.0.1');
    const r = await httpRequest(listener.port, 'GET', '/hello');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toMatchObject({ hello: 'world' });
    const t = await rawClient(listener.port);
    t.socket.write('version\nput m 1 x a=b\n');
    await waitFor(() => expect(t.text().split('\n').length).toBe(4));
    expect(t.text()).toBe(`${backend.versionLines().join('\n')}\nput: invalid value: x\n`);
    // An uppercase first byte is HTTP, even when it is a telnet word: Node answers 400.
    const u = await rawClient(listener.port);
    u.socket.write('VERSION\r\n\r\n');
    await waitFor(() => expect(u.text()).toMatch(/^HTTP\/1\.1 400 /));
    const s = listener.stats();
    expect(s.accepted).toEqual({ http: 2, telnet: 1, total: 3 });
    expect(s.telnet.putLines).toBe(1);
  });

  it('POST bodies of several MiB: Content-Length and chunked', async () => {
    const { listener } = await startEnv();
    const body = randomBytes(6 * 1024 * 1024 + 17);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const a = await httpRequest(listener.port, 'POST', '/hash', { headers: { 'content-type': 'application/octet-stream', 'content-length': body.length }, body });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body.toString())).toEqual({ bytes: body.length, sha256 });
    const pieces = [body.subarray(0, 1000), body.subarray(1000, 3_000_000), body.subarray(3_000_000)];
    const b = await httpRequest(listener.port, 'POST', '/hash', { headers: { 'content-type': 'application/octet-stream' }, body: pieces });
    expect(JSON.parse(b.body.toString())).toEqual({ bytes: body.length, sha256 });
  });

  it('gzip request bodies reach a content parser intact', async () => {
    const { listener } = await startEnv();
    const points = Array.from({ length: 200_000 }, (_, i) => ({ metric: 'm', timestamp: i + 1, value: `${i}.5`, tags: { host: 'a' } }));
    const gz = gzipSync(Buffer.from(JSON.stringify(points)));
    const r = await httpRequest(listener.port, 'POST', '/json', { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gz.length }, body: gz });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toEqual({ count: 200_000 });
  });

  it('keeps an HTTP connection alive across requests', async () => {
    const { listener } = await startEnv();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const a = await httpRequest(listener.port, 'GET', '/hello', { agent });
    const b = await httpRequest(listener.port, 'GET', '/hello', { agent });
    expect(a.localPort).toBe(b.localPort);
    expect(JSON.parse(a.body.toString()).peerPort).toBe(a.localPort);
    expect(JSON.parse(b.body.toString()).peerPort).toBe(a.localPort);
    expect(listener.stats().accepted.http).toBe(1);
  });

  it('pipelined requests, also when the first request is split across the sniffed chunk', async () => {
    const { listener } = await startEnv();
    const req = 'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n';
    const a = await rawClient(listener.port);
    a.socket.write(req + req + req);
    await waitFor(() => expect(a.text().match(/HTTP\/1\.1 200 OK/g)?.length).toBe(3));
    const b = await rawClient(listener.port);
    b.socket.write('G');
    await sleep(20);
    b.socket.write(`${req.slice(1)}${req.slice(0, 10)}`);
    await sleep(20);
    b.socket.write(req.slice(10));
    await waitFor(() => expect(b.text().match(/HTTP\/1\.1 200 OK/g)?.length).toBe(2));
    expect(b.text()).toContain('"hello":"world"');
  });

  it('socket resets do not crash anything; the port keeps serving', async () => {
    const { listener } = await startEnv();
    const t = await rawClient(listener.port);
    t.socket.write('put m 1 1 a=b\nput m 2');
    await waitFor(() => expect(listener.stats().telnet.putLines).toBe(1));
    t.socket.resetAndDestroy();
    const h = await rawClient(listener.port);
    h.socket.write('POST /hash HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\nabc');
    await sleep(20);
    h.socket.resetAndDestroy();
    const silent = await rawClient(listener.port);
    silent.socket.resetAndDestroy();
    await waitFor(() => expect(listener.stats().open).toEqual({ http: 0, telnet: 0, unclassified: 0 }));
    const r = await httpRequest(listener.port, 'GET', '/hello');
    expect(r.status).toBe(200);
  });
});

describe('listener.close()', () => {
  it('resolves promptly with idle telnet, idle keep-alive and silent connections open', async () => {
    const app = await buildApp();
    const backend = new HoldingBackend();
    const listener = await listen({ host: '127.0.0.1', port: 0, http: app.server, telnet: backend });
    cleanups.push(async () => { await listener.close(100); await app.close(); });
    const t = await rawClient(listener.port);
    t.socket.write('version\n');
    await waitFor(() => expect(t.text()).toContain('Built on today'));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    await httpRequest(listener.port, 'GET', '/hello', { agent });
    const h = await rawClient(listener.port);
    h.socket.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => expect(h.text()).toContain('"hello"'));
    const silent = await rawClient(listener.port);
    await waitFor(() => expect(listener.stats().open).toEqual({ http: 2, telnet: 1, unclassified: 1 }));
    const t0 = Date.now();
    await listener.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    await waitFor(() => expect([t.closed(), h.closed(), silent.closed()]).toEqual([true, true, true]));
    expect(listener.stats().open).toEqual({ http: 0, telnet: 0, unclassified: 0 });
    await expect(app.close()).resolves.toBeUndefined();
    // No longer accepting.
    const refused = connect({ host: '127.0.0.1', port: listener.port });
    const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(err.code).toBe('ECONNREFUSED');
  });

  it('waits for an in-flight HTTP request and a held telnet batch, whose reply is still sent', async () => {
    const { listener, backend } = await startEnv();
    const slow = httpRequest(listener.port, 'GET', '/slow', { agent: new Agent({ keepAlive: true }) });
    backend.hold = true;
    const t = await rawClient(listener.port);
    t.socket.write('put m 1 bad a=b\n');
    await waitFor(() => expect(backend.lines).toBe(1));
    await sleep(50);
    let closed = false;
    const t0 = Date.now();
    const closing = listener.close().then(() => { closed = true; });
    await sleep(100);
    expect(closed).toBe(false);
    backend.release();
    const r = await slow;
    expect(JSON.parse(r.body.toString())).toEqual({ slow: true });
    await closing;
    // The keep-alive socket is closed as soon as its response is done, not at the timeout.
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(t.text()).toBe('put: invalid value: bad\n');
    expect(t.closed()).toBe(true);
  });

  it('destroys what is left after the timeout', async () => {
    const { listener, backend } = await startEnv();
    backend.hold = true;
    const t = await rawClient(listener.port);
    t.socket.write('put m 1 1 a=b\n');
    await waitFor(() => expect(backend.lines).toBe(1));
    const t0 = Date.now();
    await listener.close(200);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(150);
    expect(took).toBeLessThan(1500);
    await waitFor(() => expect(t.closed()).toBe(true));
  });

  it('fastify app.close() does not throw on the never-listened server, before or after listen()', async () => {
    const plain = await buildApp();
    await expect(plain.close()).resolves.toBeUndefined();
    const app = await buildApp();
    const listener = await listen({ host: '127.0.0.1', port: 0, http: app.server, telnet: new HoldingBackend() });
    await expect(app.close()).resolves.toBeUndefined();
    await listener.close();
    expect(listener.stats().open).toEqual({ http: 0, telnet: 0, unclassified: 0 });
  });
});
