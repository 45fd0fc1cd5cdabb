/**
 * The UI's static files (tsdb/server/routes/ui.ts) cannot escape their folder: raw
 * request lines over a socket (no client normalizes them) try `..`, percent-encoded dots
 * and slashes (once and twice encoded), backslashes, absolute paths, NUL bytes and a
 * symlink inside the folder that points outside. A canary file next to the folder must
 * never appear in any response; a real file is served.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerUiRoutes } from '../../tsdb/server/routes/ui.js';
import { rawRequest } from './helpers/sec-server.js';

const CANARY = 'CANARY-7f3a-do-not-serve';

describe('static UI files stay in their folder', () => {
  const root = mkdtempSync(join(tmpdir(), 'horae-static-'));
  const dist = join(root, 'dist');
  let app: FastifyInstance;
  let port = 0;

  beforeAll(async () => {
    mkdirSync(join(dist, 'dashboard'), { recursive: true });
    writeFileSync(join(dist, 'dashboard', 'index.html'), '<!doctype html><title>ok</title>');
    writeFileSync(join(dist, 'dashboard', 'main-ABCDEFGH.js'), 'console.log(1)');
    writeFileSync(join(root, 'canary.txt'), CANARY);
    writeFileSync(join(dist, 'canary.txt'), CANARY);
    symlinkSync(join(root, 'canary.txt'), join(dist, 'dashboard', 'link.txt'));
    symlinkSync(root, join(dist, 'up'));
    app = Fastify({ logger: false });
    registerUiRoutes(app, { distDir: dist });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves real files', async () => {
    const r = await rawRequest(port, 'GET /ui/dashboard/main-ABCDEFGH.js HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(r.status).toBe(200);
    expect(r.body).toBe('console.log(1)');
    expect((await rawRequest(port, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')).status).toBe(200);
  });

  const attempts = [
    '/ui/../canary.txt', '/ui/../../canary.txt', '/ui/dashboard/../../canary.txt', '/ui/dashboard/../canary.txt',
    '/ui/%2e%2e/canary.txt', '/ui/dashboard/%2e%2e/%2e%2e/canary.txt', '/ui/dashboard/%2e%2e%2f%2e%2e%2fcanary.txt',
    '/ui/dashboard/..%2fcanary.txt', '/ui/dashboard/..%2f..%2fcanary.txt', '/ui/%252e%252e/canary.txt',
    '/ui/dashboard/%252e%252e%252fcanary.txt', '/ui/dashboard/..%5c..%5ccanary.txt', '/ui/dashboard/..\\..\\canary.txt',
    '/ui//canary.txt', '/ui/dashboard//canary.txt', `/ui/dashboard/${encodeURIComponent(join(root, 'canary.txt'))}`,
    `/ui${join(root, 'canary.txt')}`, '/ui/dashboard/index.html%00.js', '/ui/dashboard/canary.txt%00', '/ui/dashboard/%00',
    '/ui/dashboard/link.txt', '/ui/up/canary.txt', '/ui/dashboard/.', '/ui/dashboard/..', '/ui/.', '/ui/..', '/ui/canary.txt',
    '/ui/./canary.txt', '/UI/../canary.txt', '/ui/dashboard/%c0%ae%c0%ae/canary.txt', '/ui/dashboard/.%2e/canary.txt',
    '/ui/%2e%2e%2fcanary.txt', '/ui/dashboard/..;/canary.txt', '/ui/dashboard/?../../canary.txt', '/../canary.txt',
    '/operator/../canary.txt', '/ui/dashboard/%2fcanary.txt',
  ];

  it(`${attempts.length} escape attempts get 4xx and never the canary`, async () => {
    for (const path of attempts) {
      const r = await rawRequest(port, `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
      expect(r.body, path).not.toContain(CANARY);
      expect(r.status, `${path} -> ${r.status}`).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
    }
  });
});
