/**
 * Roles per route (tsdb/server/auth.ts): every route declares its role in its own
 * definition; a route without one stops the start; every route kept the role the old URL
 * table gave it (that table is kept below as the reference); and the one onRequest hook
 * enforces the declared roles: no token → 401 except open routes, a read token → 403 on
 * every write route and only there.
 */
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenAuth, requireRouteRoles, routeRoles } from '../../../tsdb/server/auth.js';
import type { RouteRole } from '../../../tsdb/server/auth.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const READ = 'read-token-0123456789abcdef';
const WRITE = 'write-token-0123456789abcdef';

/**
 * The URL table auth.ts had before routes declared their roles, verbatim (the reference),
 * plus the one route added since with the admin role (deleting whole series).
 */
function oldRequiredRole(method: string, route: string): RouteRole {
  if (method === 'OPTIONS') return 'open';
  const r = route.toLowerCase();
  if (/^\/api(\/v1)?\/admin\/tsdb\/delete_series$/.test(r)) return 'admin';
  const both = (ps: string[]): Set<string> => new Set(ps.flatMap((p) => [`/api/${p}`, `/api/v1/${p}`]));
  if (both(['version', 'status']).has(r) || new Set(['/', '/operator', '/ui/*']).has(r)) return 'open';
  if (method === 'DELETE' || both(['put', 'uid/assign', 'uid/rename', 'dropcaches']).has(r)) return 'write';
  if (/^\/api(\/v1)?\/annotations?(\/bulk)?$/.test(r) && method !== 'GET' && method !== 'HEAD') return 'write';
  return 'read';
}

let app: FastifyInstance;

beforeAll(async () => {
  const { tsdb } = await openFixture({ corsDomains: '*', queryAllowDelete: false });
  const auth = TokenAuth.fromSources([{ name: 'test', text: `${READ} read\n${WRITE} write`, separator: /\n/ }]);
  app = await buildServer({ tsdb, auth });
});

afterAll(async () => {
  await app.close();
});

/** A URL that reaches the route (wildcards filled in). */
const urlOf = (route: string): string => route.replace('*', 'x');

describe('roles per route', () => {
  it('every route declares the role the old URL table gave it', () => {
    const routes = routeRoles(app);
    expect(routes.length).toBeGreaterThan(50);
    for (const path of ['/api/put', '/api/v1/query', '/api/annotation/bulk', '/api/uid/rename', '/ui/*', '/*']) {
      expect(routes.some((r) => r.url === path), path).toBe(true);
    }
    const wrong = routes.filter((r) => r.role !== oldRequiredRole(r.method, r.url)).map((r) => `${r.method} ${r.url}: ${r.role}`);
    expect(wrong).toEqual([]);
  });

  it('a route registered without a role stops the start, naming it', () => {
    const bare = Fastify();
    requireRouteRoles(bare);
    bare.get('/fine', { config: { role: 'read' } }, async () => 'ok');
    expect(() => bare.post('/api/new/thing', async () => 'oops'))
      .toThrow("route POST /api/new/thing declares no role: give it config: { role: 'open' | 'read' | 'write' | 'admin' }");
    expect(() => bare.route({ method: 'GET', url: '/odd', config: { role: 'root' as RouteRole }, handler: async () => 'x' }))
      .toThrow('route GET /odd declares no role');
    expect(routeRoles(bare).map((r) => `${r.method} ${r.url} ${r.role}`)).toEqual(['GET /fine read', 'HEAD /fine read']);
  });

  it('enforces each route\'s role: 401 without a token unless open, 403 for a read token on write and admin routes only', async () => {
    const problems: string[] = [];
    for (const r of routeRoles(app)) {
      const url = urlOf(r.url);
      const method = r.method as 'GET';
      const none = await app.inject({ method, url });
      if ((none.statusCode === 401) !== (r.role !== 'open')) problems.push(`${r.method} ${url} without a token: ${none.statusCode}`);
      const read = await app.inject({ method, url, headers: { authorization: `Bearer ${READ}` } });
      if (r.role !== 'open' && read.statusCode === 401) problems.push(`${r.method} ${url} read token: 401`);
      if ((read.statusCode === 403) !== (r.role === 'write' || r.role === 'admin')) problems.push(`${r.method} ${url} read token: ${read.statusCode}`);
      if (r.role === 'write' && r.method !== 'HEAD' && !read.body.includes('needs a write token')) problems.push(`${r.method} ${url} read token: ${read.body}`);
      if (r.role === 'admin' && !read.body.includes('needs an admin token')) problems.push(`${r.method} ${url} read token: ${read.body}`);
    }
    expect(problems).toEqual([]);
  });

  it('a request no route matches needs a token; a preflight does not', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/no/such/route' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/api/no/such/route', headers: { authorization: `Bearer ${READ}` } })).statusCode).toBe(404);
    expect((await app.inject({ method: 'OPTIONS', url: '/api/put', headers: { origin: 'https://a.example' } })).statusCode).toBe(200);
  });
});
