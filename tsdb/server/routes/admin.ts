/**
 * Introspection endpoints: /api/version, /api/stats (OpenTSDB's list of self-metric
 * points), /api/stats/store (the store's own counters), /api/regions, /api/dropcaches,
 * /api/status (2.5: startup|ok|shutting-down). Each also answers under /api/v1/.
 */
import type { FastifyInstance } from 'fastify';
import { toHex } from '../../../core/api/bytes.js';
import type { TsdbConfig } from '../../config.js';
import type { Tsdb } from '../../tsdb.js';
import { VERSION } from '../../version.js';

export interface AdminRouteDeps {
  readonly tsdb: Tsdb;
  readonly status: () => string;
  /** Extra self-metrics (listener counters) merged into /api/stats. */
  readonly extraStats?: () => Record<string, number>;
  /** Damaged store files (store-check.ts), listed by /api/status. */
  readonly damagedFiles?: () => ReadonlyArray<{ readonly file: string; readonly offset: number | undefined; readonly message: string }>;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminRouteDeps): void {
  const { tsdb } = deps;
  const both = (method: 'GET' | 'POST' | ('GET' | 'POST')[], path: string, handler: () => Promise<unknown>): void => {
    for (const p of [`/api/${path}`, `/api/v1/${path}`]) app.route({ method, url: p, handler });
  };
  both(['GET', 'POST'], 'version', async () => ({
    version: VERSION,
    short_revision: 'horae',
    full_revision: 'horae',
    repo: 'horae',
    host: 'localhost',
    user: 'horae',
    repo_status: 'MINT',
    timestamp: '0',
  }));
  both(['GET', 'POST'], 'stats', async () => tsdb.statsPoints(deps.extraStats?.() ?? {}));
  both('GET', 'stats/store', async () => tsdb.store.stats());
  both(['GET', 'POST'], 'dropcaches', async () => {
    tsdb.dropCaches();
    return { message: 'Caches dropped', status: '200' };
  });
  both('GET', 'status', async () => {
    const damaged = deps.damagedFiles?.() ?? [];
    return damaged.length === 0 ? { status: deps.status() }
      : { status: deps.status(), damagedFiles: damaged.map((p) => ({ file: p.file, offset: p.offset ?? null, message: p.message })) };
  });
  both(['GET', 'POST'], 'config', async () => configMap(tsdb.config));
  both('GET', 'regions', async () => {
    const out: Record<string, unknown> = {};
    for (const name of await tsdb.store.listTables()) {
      const regions = await (await tsdb.store.openTable(name)).regions();
      out[name] = regions.map((r) => ({ ...r, start: toHex(r.start), end: toHex(r.end) }));
    }
    return out;
  });
}

/** The running configuration under OpenTSDB's key names (what clients inspect), plus Horae's. */
export function configMap(c: TsdbConfig): Record<string, string> {
  return {
    'tsd.core.auto_create_metrics': String(c.autoCreateMetrics),
    'tsd.core.auto_create_tagks': String(c.autoCreateTagks),
    'tsd.core.auto_create_tagvs': String(c.autoCreateTagvs),
    'tsd.core.tag.allow_specialchars': c.allowSpecialChars,
    'tsd.storage.max_tags': String(c.maxTags),
    'tsd.storage.uid.width.metric': String(c.uidWidthMetric),
    'tsd.storage.uid.width.tagk': String(c.uidWidthTagk),
    'tsd.storage.uid.width.tagv': String(c.uidWidthTagv),
    'tsd.storage.salt.width': String(c.saltWidth),
    'tsd.storage.salt.buckets': String(c.saltBuckets),
    'tsd.storage.enable_compaction': String(c.compactHours),
    'tsd.storage.fix_duplicates': 'true',
    'tsd.http.request.enable_chunked': 'true',
    'tsd.http.request.max_chunk': String(c.maxBodyBytes),
    'tsd.rpc.telnet.return_errors': String(c.telnetReturnErrors),
    'tsd.mode': 'rw',
    'horae.write.durability': c.durability,
    'horae.write.max_inflight_points': String(c.maxInflightPoints),
    'horae.compaction.grace_ms': String(c.compactGraceMs),
    'horae.compaction.idle_ms': String(c.compactIdleMs),
  };
}
