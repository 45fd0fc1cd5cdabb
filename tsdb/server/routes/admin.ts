/**
 * Introspection endpoints: /api/version, /api/stats (OpenTSDB's list of self-metric
 * points), /api/stats/store (the store's own counters), /api/regions, /api/dropcaches,
 * /api/status (2.5: startup|ok|shutting-down). Each also answers under /api/v1/.
 */
import type { FastifyInstance } from 'fastify';
import { toHex } from '../../../core/api/bytes.js';
import { configStrings } from '../../config.js';
import type { RouteRole } from '../auth.js';
import type { Tsdb } from '../../tsdb.js';
import type { ServerRegistry } from '../../meta/servers.js';
import { clusterStats } from '../overview/cluster-stats.js';
import { VERSION } from '../../version.js';

export interface AdminRouteDeps {
  readonly tsdb: Tsdb;
  /** The servers sharing the store (meta/servers.ts). */
  readonly servers?: ServerRegistry;
  readonly status: () => string;
  /** Extra self-metrics (listener counters) merged into /api/stats. */
  readonly extraStats?: () => Record<string, number>;
  /** Damaged store files (store-check.ts), listed by /api/status. */
  readonly damagedFiles?: () => ReadonlyArray<{ readonly file: string; readonly offset: number | undefined; readonly message: string }>;
  /** Takes in damaged files the store found since; awaited before /api/status and /api/stats answer. */
  readonly refreshHealth?: () => Promise<void>;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminRouteDeps): void {
  const { tsdb } = deps;
  const both = (method: 'GET' | 'POST' | ('GET' | 'POST')[], path: string, role: RouteRole, handler: () => Promise<unknown>): void => {
    for (const p of [`/api/${path}`, `/api/v1/${path}`]) app.route({ method, url: p, config: { role }, handler });
  };
  // version and status are open: health checks carry no token.
  both(['GET', 'POST'], 'version', 'open', async () => ({
    version: VERSION,
    short_revision: 'horae',
    full_revision: 'horae',
    repo: 'horae',
    host: 'localhost',
    user: 'horae',
    repo_status: 'MINT',
    timestamp: '0',
  }));
  both(['GET', 'POST'], 'stats', 'read', async () => {
    await deps.refreshHealth?.();
    const points = await tsdb.statsPoints(deps.extraStats?.() ?? {});
    if (deps.servers !== undefined) points.push(...clusterStats(tsdb, await deps.servers.list()));
    return points;
  });
  both('GET', 'stats/store', 'read', async () => tsdb.store.stats());
  both(['GET', 'POST'], 'dropcaches', 'write', async () => {
    tsdb.dropCaches();
    return { message: 'Caches dropped', status: '200' };
  });
  both('GET', 'status', 'open', async () => {
    await deps.refreshHealth?.();
    const damaged = deps.damagedFiles?.() ?? [];
    return damaged.length === 0 ? { status: deps.status() }
      : { status: deps.status(), damagedFiles: damaged.map((p) => ({ file: p.file, offset: p.offset ?? null, message: p.message })) };
  });
  both(['GET', 'POST'], 'config', 'read', async () => configStrings(tsdb.config));
  both('GET', 'regions', 'read', async () => {
    const out: Record<string, unknown> = {};
    for (const name of await tsdb.store.listTables()) {
      const regions = await (await tsdb.store.openTable(name)).regions();
      out[name] = regions.map((r) => ({ ...r, start: toHex(r.start), end: toHex(r.end) }));
    }
    return out;
  });
}
