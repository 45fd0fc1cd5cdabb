/**
 * The UI routes (tsdb/server/routes/ui.ts) on a bare fastify app with a temporary bundle:
 * pages, hashed assets, content types, cache headers, ETag/304, the missing-bundle message,
 * and every way out of ui/dist that a URL can try.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultUiDistDir, isSafeSegment, registerUiRoutes } from '../../../tsdb/server/routes/ui.js';

let root: string;
let dist: string;
let app: FastifyInstance;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'horae-ui-routes-'));
  dist = join(root, 'dist');
  mkdirSync(join(dist, 'dashboard'), { recursive: true });
  mkdirSync(join(dist, 'operator'), { recursive: true });
  writeFileSync(join(dist, 'dashboard', 'index.html'), '<!doctype html><title>dash</title>');
  writeFileSync(join(dist, 'dashboard', 'main-ABCD1234.js'), 'console.log(1)');
  writeFileSync(join(dist, 'dashboard', 'main-ABCD1234.css'), 'body{}');
  writeFileSync(join(dist, 'dashboard', 'main-ABCD1234.js.map'), '{}');
  writeFileSync(join(dist, 'dashboard', 'plain.js'), 'x');
  writeFileSync(join(root, 'secret.txt'), 'TOP-SECRET-CONTENT');
  symlinkSync(join(root, 'secret.txt'), join(dist, 'dashboard', 'link.txt'));
  app = Fastify();
  registerUiRoutes(app, { distDir: dist });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  rmSync(root, { recursive: true, force: true });
});

describe('UI routes', () => {
  it('serves the dashboard at / and pages without caching', async () => {
    const r = await app.inject({ url: '/' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.body).toContain('<title>dash</title>');
  });

  it('serves hashed assets as immutable with their content types, others as no-cache', async () => {
    const cases: [string, string, string][] = [
      ['/ui/dashboard/main-ABCD1234.js', 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/ui/dashboard/main-ABCD1234.css', 'text/css; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/ui/dashboard/main-ABCD1234.js.map', 'application/json; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/ui/dashboard/plain.js', 'text/javascript; charset=utf-8', 'no-cache'],
    ];
    for (const [url, type, cache] of cases) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['content-type'], url).toBe(type);
      expect(r.headers['cache-control'], url).toBe(cache);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('answers If-None-Match with 304 and HEAD without a body', async () => {
    const first = await app.inject({ url: '/ui/dashboard/main-ABCD1234.js' });
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    const again = await app.inject({ url: '/ui/dashboard/main-ABCD1234.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const head = await app.inject({ method: 'HEAD', url: '/ui/dashboard/main-ABCD1234.js' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('says how to build the bundle when a page is missing', async () => {
    const r = await app.inject({ url: '/operator' });
    expect(r.statusCode).toBe(503);
    expect(r.body).toContain('The web UI is not built');
    expect(r.body).toContain('npm run build');
    expect(r.body).toContain(join(dist, 'operator', 'index.html'));
  });

  it('never serves anything outside ui/dist', async () => {
    const escapes = [
      '/ui/../secret.txt',
      '/ui/dashboard/../../secret.txt',
      '/ui/%2e%2e/secret.txt',
      '/ui/dashboard/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/ui/dashboard/..%2f..%2fsecret.txt',
      '/ui/%2e%2e%2fdashboard/main-ABCD1234.js',
      '/ui/dashboard/%2Fetc%2Fpasswd',
      '/ui//etc/passwd',
      '/ui/dashboard//etc/passwd',
      `/ui/dashboard/${encodeURIComponent(join(root, 'secret.txt'))}`,
      '/ui/dashboard/..%5c..%5csecret.txt',
      '/ui/dashboard/index.html%00.js',
      '/ui/dashboard/.hidden',
      '/ui/dashboard/link.txt',
      '/ui/dashboard',
      '/ui/dashboard/',
      '/ui/nope/main.js',
      '/ui/dashboard/%zz',
    ];
    for (const url of escapes) {
      const r = await app.inject({ url });
      // 404 from the route; fastify itself answers 400 to a malformed escape (%zz).
      expect(url === '/ui/dashboard/%zz' ? 400 : 404, url).toBe(r.statusCode);
      expect(r.body, url).not.toContain('TOP-SECRET-CONTENT');
    }
  });

  it('accepts only plain names as path segments', () => {
    for (const ok of ['main-ABCD1234.js', 'index.html', 'a_b.c-d']) expect(isSafeSegment(ok), ok).toBe(true);
    for (const bad of ['', '.', '..', '.hidden', 'a/b', 'a\\b', 'a..b', '/etc', 'a\0b', 'a b']) expect(isSafeSegment(bad), bad).toBe(false);
  });

  it('finds ui/dist of the package by default', () => {
    expect(defaultUiDistDir()).toMatch(/[/\\]ui[/\\]dist$/);
  });
});
