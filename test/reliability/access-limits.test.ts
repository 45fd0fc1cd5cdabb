/**
 * Request and connection limits over real sockets (docs/SECURITY.md "Limits"): 431 for a
 * head over horae.http.max_header_bytes, 414 for a URL over horae.http.max_url_bytes, 413
 * for a body over horae.http.max_body_bytes; slowloris (a head trickled a byte at a time,
 * a body that stalls, a connection that never speaks) is cut off at its deadline while
 * other clients are served; idle keep-alive and telnet connections are closed; a telnet
 * line over horae.telnet.max_line_bytes closes the connection after the lines before it
 * were stored; connections beyond horae.network.max_connections are refused and the
 * server serves again once slots free up. Timeouts are set small (hundreds of ms) so the
 * file runs in a few seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../tsdb/server/server.js';
import { NOW_MS, RawClient, httpText, parseResponse, rawRequest, sleep, startSecServer } from './helpers/sec-server.js';

const TS = Math.floor(NOW_MS / 1000) - 60;
const HEADERS_MS = 400;
const REQUEST_MS = 700;
const KEEPALIVE_MS = 300;
const TELNET_IDLE_MS = 300;

async function stat(port: number, name: string): Promise<number> {
  const r = await rawRequest(port, httpText('GET', '/api/stats'));
  const pts = JSON.parse(r.body) as Array<{ metric: string; value: number }>;
  return pts.find((p) => p.metric === name)?.value ?? Number.NaN;
}

describe('HTTP limits', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({
      httpMaxHeaderBytes: 4096, httpMaxUrlBytes: 1024, maxBodyBytes: 2048,
      httpHeadersTimeoutMs: HEADERS_MS, httpRequestTimeoutMs: REQUEST_MS, httpKeepAliveTimeoutMs: KEEPALIVE_MS,
    });
  });
  afterAll(async () => srv.stop());

  it('431 for a head over the limit, 414 for a long URL, 413 for a large body', async () => {
    const big = await rawRequest(srv.port, httpText('GET', '/api/version', { 'x-pad': 'a'.repeat(5000) }));
    expect(big.status).toBe(431);
    const url = await rawRequest(srv.port, httpText('GET', `/api/query?m=sum:${'a'.repeat(1100)}`));
    expect(url.status).toBe(414);
    expect(JSON.parse(url.body).error.message).toContain('horae.http.max_url_bytes');
    const body = JSON.stringify([{ metric: 'm', timestamp: TS, value: 1, tags: { host: 'x'.repeat(3000) } }]);
    expect((await rawRequest(srv.port, httpText('POST', '/api/put', {}, body))).status).toBe(413);
    // Just under every limit still works.
    expect((await rawRequest(srv.port, httpText('GET', `/api/version?x=${'a'.repeat(900)}`))).status).toBe(200);
  });

  it('a head trickled a byte at a time is cut off at the head deadline; others are served meanwhile', async () => {
    const slow = await RawClient.open(srv.port);
    const head = httpText('GET', '/api/version', { 'x-slow': 'y'.repeat(200) });
    const started = Date.now();
    let i = 0;
    const trickle = setInterval(() => { if (i < head.length - 2) slow.write(head[i++]!); }, 10);
    try {
      await sleep(150);
      const other = await rawRequest(srv.port, httpText('GET', '/api/version'));
      expect(other.status).toBe(200);
      await slow.untilClosed(HEADERS_MS + 2000);
      const took = slow.closedAt - started;
      expect(took).toBeGreaterThanOrEqual(HEADERS_MS - 50);
      expect(took).toBeLessThan(HEADERS_MS + 1500);
      expect(i).toBeLessThan(head.length - 2); // it was still sending
      if (slow.text !== '') expect(slow.text).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(trickle);
      slow.destroy();
    }
  });

  it('a body that stalls is cut off at the request deadline and stores nothing', async () => {
    const c = await RawClient.open(srv.port);
    const started = Date.now();
    try {
      const body = JSON.stringify([{ metric: 'stall.m', timestamp: TS, value: 1, tags: { host: 'a' } }]);
      c.write(`POST /api/put HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 20)}`);
      await c.untilClosed(REQUEST_MS + 2500);
      expect(c.closedAt - started).toBeGreaterThanOrEqual(REQUEST_MS - 50);
      if (c.text !== '') expect(c.text).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      c.destroy();
    }
    const q = await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:stall.m`));
    expect(q.status).toBe(404);
  });

  it('an idle keep-alive connection and a connection that never speaks are closed', async () => {
    const ka = await RawClient.open(srv.port);
    const silent = await RawClient.open(srv.port);
    try {
      ka.write(httpText('GET', '/api/version', { connection: 'keep-alive' }));
      await ka.until((t) => parseResponse(t) !== undefined);
      const answered = Date.now();
      await ka.untilClosed(KEEPALIVE_MS + 2000);
      expect(ka.closedAt - answered).toBeGreaterThanOrEqual(KEEPALIVE_MS - 50);
      await silent.untilClosed(HEADERS_MS + 2000);
      expect(silent.text).toBe('');
    } finally {
      ka.destroy();
      silent.destroy();
    }
    expect(await stat(srv.port, 'horae.connections.first_byte_timeouts')).toBeGreaterThanOrEqual(1);
  });
});

describe('telnet limits', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ telnetIdleTimeoutMs: TELNET_IDLE_MS, telnetMaxLineBytes: 1024 });
  });
  afterAll(async () => srv.stop());

  it('an idle telnet connection is closed after the idle timeout', async () => {
    const c = await RawClient.open(srv.port);
    try {
      c.write('version\n');
      await c.until((t) => t.includes('net.opentsdb'));
      const last = Date.now();
      await c.untilClosed(TELNET_IDLE_MS + 2000);
      expect(c.closedAt - last).toBeGreaterThanOrEqual(TELNET_IDLE_MS - 50);
    } finally {
      c.destroy();
    }
  });

  it('a line over the limit gets an error line and closes; the lines before it are stored', async () => {
    const c = await RawClient.open(srv.port);
    try {
      c.write(`put line.ok ${TS} 1 host=a\nput line.big ${TS} 1 host=${'x'.repeat(2000)}\nput line.after ${TS} 1 host=a\n`);
      await c.untilClosed(3000);
      expect(c.text).toContain('error: line too long (over 1024 bytes); closing the connection');
    } finally {
      c.destroy();
    }
    const ok = await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:line.ok`));
    expect(ok.status).toBe(200);
    for (const m of ['line.big', 'line.after']) {
      expect((await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:${m}`))).status).toBe(404);
    }
  });
});

describe('connection limit', () => {
  const MAX = 6;
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ maxConnections: MAX, httpHeadersTimeoutMs: 800, telnetIdleTimeoutMs: 0 });
  });
  afterAll(async () => srv.stop());

  it('refuses connections beyond the maximum; slow clients free their slots at the head deadline', async () => {
    const hogs: RawClient[] = [];
    try {
      // Half stuck telnet sessions (they never time out here), half slowloris heads.
      for (let i = 0; i < MAX; i++) {
        const c = await RawClient.open(srv.port);
        c.write(i % 2 === 0 ? 'version\n' : 'GET /api/version HTTP/1.1\r\nhost: x\r\n');
        hogs.push(c);
      }
      await hogs[0]!.until((t) => t.includes('net.opentsdb'));
      await sleep(50);
      const extra = await RawClient.open(srv.port);
      extra.write('version\n');
      await extra.untilClosed(2000);
      expect(extra.text).toBe('');
      // The slowloris heads are cut at 800 ms; their slots serve new clients.
      await sleep(1400);
      const r = await rawRequest(srv.port, httpText('GET', '/api/version'));
      expect(r.status).toBe(200);
      expect(hogs.filter((h) => h.closed)).toHaveLength(MAX / 2);
      expect(await stat(srv.port, 'horae.connections.refused')).toBeGreaterThanOrEqual(1);
    } finally {
      for (const h of hogs) h.destroy();
    }
  });
});
