/**
 * Access control over real sockets (tsdb/server/auth.ts, docs/SECURITY.md): loopback by
 * default; authentication off by default; with tokens, 401 + WWW-Authenticate for a
 * missing or unknown token (before the body is read), 403 for a read token on anything
 * that writes (put, annotations, UID assign/rename, dropcaches, deletes — also spelled
 * /API/PUT or /api/v1/put, also a query body with "delete": true), Basic with the token
 * as password; telnet's `auth <token>`; tokens files and HORAE_AUTH_TOKENS; CORS only for
 * listed origins; DELETE off by default. Each refused write is checked to store nothing.
 */
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeCommand } from '../../tsdb/cli/args.js';
import { loadTokenAuth } from '../../tsdb/cli/auth-file.js';
import { AuthConfigError, tokenOfAuthorization } from '../../tsdb/server/auth.js';
import type { RunningServer } from '../../tsdb/server/server.js';
import { NOW_MS, RawClient, httpText, rawRequest, startSecServer } from './helpers/sec-server.js';

const READ = 'read-token-0123456789abcdef';
const WRITE = 'write-token-0123456789abcdef';
const TS = Math.floor(NOW_MS / 1000) - 60;
const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });
const point = (metric: string, value = 1): string => JSON.stringify([{ metric, timestamp: TS, value, tags: { host: 'a' } }]);

async function series(port: number, metric: string): Promise<number> {
  const r = await rawRequest(port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:${metric}`, bearer(WRITE)));
  if (r.status === 404 || r.status === 400) return 0;
  expect(r.status).toBe(200);
  return (JSON.parse(r.body) as unknown[]).length;
}

describe('defaults', () => {
  it('binds to 127.0.0.1 unless told otherwise', async () => {
    const s = parseServeCommand([], {});
    expect(s.bind).toBe('127.0.0.1');
    const srv = await startSecServer();
    try {
      expect(srv.address).toBe('127.0.0.1');
    } finally {
      await srv.stop();
    }
  });

  it('without tokens everything is open (as OpenTSDB), DELETE is refused and CORS sends nothing', async () => {
    const srv = await startSecServer();
    try {
      expect((await rawRequest(srv.port, httpText('POST', '/api/put', {}, point('open.m')))).status).toBe(204);
      const del = await rawRequest(srv.port, httpText('DELETE', `/api/query?start=${TS - 10}&m=sum:open.m`));
      expect(del.status).toBe(400);
      expect(del.body).toContain('tsd.http.query.allow_delete');
      expect(await series(srv.port, 'open.m')).toBe(1);
      const cors = await rawRequest(srv.port, httpText('GET', '/api/version', { origin: 'https://evil.example' }));
      expect(cors.status).toBe(200);
      expect(cors.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await srv.stop();
    }
  });
});

describe('HTTP with tokens', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ authTokens: `${READ} read, ${WRITE} write`, corsDomains: 'https://grafana.example' });
  });
  afterAll(async () => srv.stop());

  it('401 with WWW-Authenticate (Bearer and Basic) for a missing, unknown or malformed token', async () => {
    for (const headers of [{}, bearer('not-a-valid-token-xxxxxxxx'), { authorization: 'Bearer' }, { authorization: `Token ${WRITE}` },
      { authorization: `Basic ${Buffer.from(`u:${WRITE}x`).toString('base64')}` }]) {
      const r = await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:x`, headers));
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/Bearer realm="horae".*Basic realm="horae"/);
      expect(JSON.parse(r.body).error.code).toBe(401);
      expect(r.body).not.toContain('/work/');
    }
  });

  it('refuses an unauthenticated put before reading its body', async () => {
    const c = await RawClient.open(srv.port);
    try {
      // Announces 50 MB and sends none of it: the 401 must come anyway.
      c.write('POST /api/put HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 50000000\r\n\r\n');
      const text = await c.until((t) => t.includes('\r\n\r\n'), 3000);
      expect(text).toMatch(/^HTTP\/1\.1 401/);
    } finally {
      c.destroy();
    }
  });

  it('a read token queries but every write path answers 403 and stores nothing', async () => {
    expect((await rawRequest(srv.port, httpText('POST', '/api/put', bearer(WRITE), point('w.m')))).status).toBe(204);
    expect((await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:w.m`, bearer(READ)))).status).toBe(200);
    expect((await rawRequest(srv.port, httpText('GET', '/api/stats', bearer(READ)))).status).toBe(200);
    const writes: Array<[string, string, string]> = [
      ['POST', '/api/put', point('r.m')],
      ['POST', '/API/PUT', point('r.m')],
      ['POST', '/api/v1/put?details', point('r.m')],
      ['GET', '/api/uid/assign?metric=r.assigned', ''],
      ['POST', '/api/uid/rename', JSON.stringify({ metric: 'w.m', name: 'w.renamed' })],
      ['GET', '/api/dropcaches', ''],
      ['POST', '/api/annotation', JSON.stringify({ startTime: TS, description: 'x' })],
      ['DELETE', `/api/query?start=${TS - 10}&m=sum:w.m`, ''],
      ['POST', '/api/query', JSON.stringify({ start: TS - 10, delete: true, queries: [{ aggregator: 'sum', metric: 'w.m' }] })],
    ];
    for (const [method, path, body] of writes) {
      const r = await rawRequest(srv.port, httpText(method, path, bearer(READ), body));
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(r.body).error.message).toContain('read-only');
    }
    expect(await series(srv.port, 'r.m')).toBe(0);
    expect(await series(srv.port, 'w.m')).toBe(1);
    const uid = await rawRequest(srv.port, httpText('GET', '/api/uid/uidmeta?type=metric&uid=000001', bearer(READ)));
    expect(uid.status).not.toBe(401);
    const renamed = await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 10}&m=sum:w.renamed`, bearer(WRITE)));
    expect(renamed.status).toBe(404);
  });

  it('a write token writes; Basic with the token as password works', async () => {
    const basic = { authorization: `Basic ${Buffer.from(`grafana:${WRITE}`).toString('base64')}` };
    expect((await rawRequest(srv.port, httpText('POST', '/api/put', basic, point('b.m')))).status).toBe(204);
    expect((await rawRequest(srv.port, httpText('GET', '/api/dropcaches', bearer(WRITE)))).status).toBe(200);
    expect(await series(srv.port, 'b.m')).toBe(1);
    // Deletes stay off even for a write token until tsd.http.query.allow_delete.
    const del = await rawRequest(srv.port, httpText('DELETE', `/api/query?start=${TS - 10}&m=sum:b.m`, bearer(WRITE)));
    expect(del.status).toBe(400);
  });

  it('version, status, CORS preflights and the UI pages are open', async () => {
    expect((await rawRequest(srv.port, httpText('GET', '/api/version'))).status).toBe(200);
    expect((await rawRequest(srv.port, httpText('GET', '/api/v1/status'))).status).toBe(200);
    const pre = await rawRequest(srv.port, httpText('OPTIONS', '/api/query', { origin: 'https://grafana.example', 'access-control-request-method': 'POST' }));
    expect(pre.status).toBe(200);
    expect(pre.headers['access-control-allow-origin']).toBe('https://grafana.example');
    const ui = await rawRequest(srv.port, httpText('GET', '/'));
    expect([200, 503]).toContain(ui.status);
  });

  it('CORS answers only the configured origin', async () => {
    const ok = await rawRequest(srv.port, httpText('GET', '/api/version', { origin: 'https://grafana.example' }));
    expect(ok.headers['access-control-allow-origin']).toBe('https://grafana.example');
    const evil = await rawRequest(srv.port, httpText('GET', '/api/version', { origin: 'https://evil.example' }));
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    expect(evil.status).toBe(400);
  });
});

describe('telnet with tokens', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ authTokens: `${READ} read\n${WRITE} write` });
  });
  afterAll(async () => srv.stop());

  it('refuses commands until auth, keeps the connection, then obeys the role', async () => {
    const c = await RawClient.open(srv.port);
    try {
      c.write(`put t.before ${TS} 1 host=a\nstats\nversion\n`);
      await c.until((t) => t.includes('Built on') || t.includes('net.opentsdb'));
      expect(c.text).toContain("put: authentication required: send 'auth <token>' first");
      expect(c.text).toContain("stats: authentication required: send 'auth <token>' first");
      c.write(`auth ${READ}\nput t.read ${TS} 1 host=a\ndropcaches\nstatus\n`);
      await c.until((t) => t.includes('dropcaches: permission denied'));
      expect(c.text).toContain('auth: ok (read)');
      expect(c.text).toContain('put: permission denied: read-only token');
      c.write(`auth ${WRITE}\nput t.write ${TS} 1 host=a\nversion\n`);
      await c.until((t) => t.includes('auth: ok (write)') && t.split('net.opentsdb').length > 2);
      expect(c.closed).toBe(false);
    } finally {
      c.destroy();
    }
    expect(await series(srv.port, 't.before')).toBe(0);
    expect(await series(srv.port, 't.read')).toBe(0);
    expect(await series(srv.port, 't.write')).toBe(1);
  });

  it('an unknown token gets one line and the connection is closed', async () => {
    const c = await RawClient.open(srv.port);
    try {
      c.write(`auth not-the-token-xxxxxxxxxxx\nput t.after ${TS} 1 host=a\n`);
      await c.untilClosed(3000);
      expect(c.text).toBe('auth: invalid token; closing the connection\n');
    } finally {
      c.destroy();
    }
    expect(await series(srv.port, 't.after')).toBe(0);
  });
});

describe('token sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'horae-auth-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a tokens file with comments; the Authorization parser takes Bearer and Basic', () => {
    const f = join(dir, 'tokens');
    writeFileSync(f, `# ops\n${WRITE} write\n\n  ${READ}   read  \n`);
    chmodSync(f, 0o600);
    const warnings: string[] = [];
    const auth = loadTokenAuth({ authTokensFile: f, authTokens: '' }, (m) => warnings.push(m));
    expect(auth?.authenticate(WRITE)).toBe('write');
    expect(auth?.authenticate(READ)).toBe('read');
    expect(auth?.authenticate(`${READ}x`)).toBeUndefined();
    expect(warnings).toEqual([]);
    chmodSync(f, 0o644);
    loadTokenAuth({ authTokensFile: f, authTokens: '' }, (m) => warnings.push(m));
    expect(warnings[0]).toContain('readable by every user');
    expect(tokenOfAuthorization(`bearer ${READ}`)).toBe(READ);
    expect(tokenOfAuthorization(`Basic ${Buffer.from(`x:${READ}`).toString('base64')}`)).toBe(READ);
    expect(tokenOfAuthorization(`Basic ${Buffer.from(READ).toString('base64')}`)).toBeUndefined();
  });

  it('a bad entry stops the start, naming file and line', () => {
    const cases: Array<[string, RegExp]> = [
      [`${WRITE} root\n`, /:1: role must be read, write or admin, got 'root'/],
      [`# c\nshort write\n`, /:2: token shorter than 16 characters/],
      [`${WRITE}\n`, /:1: expected 'token role', got 1 words/],
      [`${WRITE} write\n${WRITE} read\n`, /:2: token listed as both write and read/],
      ['# only comments\n', /no token was given/],
    ];
    for (const [text, re] of cases) {
      const f = join(dir, 'bad');
      writeFileSync(f, text, { mode: 0o600 });
      expect(() => loadTokenAuth({ authTokensFile: f, authTokens: '' }), text).toThrow(re);
    }
    expect(() => loadTokenAuth({ authTokensFile: join(dir, 'missing'), authTokens: '' })).toThrow(AuthConfigError);
    expect(loadTokenAuth({ authTokensFile: '', authTokens: '' })).toBeUndefined();
  });

  it('HORAE_AUTH_TOKENS reaches the server settings', () => {
    const s = parseServeCommand([], { HORAE_AUTH_TOKENS: `${READ} read,${WRITE} write` });
    expect(loadTokenAuth({ authTokensFile: '', authTokens: s.tsdb.authTokens ?? '' })?.authenticate(WRITE)).toBe('write');
  });
});
