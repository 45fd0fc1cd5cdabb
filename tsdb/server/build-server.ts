/**
 * buildServer(): the fastify app with every HTTP route, error handler and body parser.
 * It never listens by itself — tests use `app.inject()`, and the server (server.ts)
 * hands it the HTTP connections of the shared port.
 */
import Fastify from 'fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { MemoryGuard } from '../memory/guard.js';
import type { Tsdb } from '../tsdb.js';
import { installAuth, requireRouteRoles, tokenAuthOf } from './auth.js';
import type { Authenticator } from './auth.js';
import { installBodyParsers } from './body-parsers.js';
import { installCompression } from './compress.js';
import { installCors } from './cors.js';
import { installErrorHandlers } from './http-errors.js';
import { installUrlLimit } from './limits.js';
import { installQueryAdmission } from './query-admission.js';
import { createHttpServerForFastify } from './listener.js';
import { registerAdminRoutes } from './routes/admin.js';
import type { AdminRouteDeps } from './routes/admin.js';
import { registerAnnotationRoutes } from './routes/annotation.js';
import { registerCardinalityRoutes } from './routes/cardinality.js';
import { registerDeleteSeriesRoutes } from './routes/delete-series.js';
import { registerLastRoutes } from './routes/last.js';
import { registerLookupRoutes } from './routes/lookup.js';
import { registerOverviewRoutes } from './routes/overview.js';
import { registerUidRoutes } from './routes/uid.js';
import { registerPutRoutes } from './routes/put.js';
import { registerQueryRoutes } from './routes/query.js';
import { registerUiRoutes } from './routes/ui.js';
import type { ServerRegistry } from '../meta/servers.js';

export interface BuildServerOptions {
  readonly tsdb: Tsdb;
  /** Server health for /api/status and telnet `status`. */
  readonly status?: () => string;
  readonly extraStats?: () => Record<string, number>;
  /** Token authentication (auth.ts); absent: loaded from the config's horae.auth.* keys. */
  readonly auth?: Authenticator;
  /** Damaged store files for /api/status (store-check.ts). */
  readonly damagedFiles?: AdminRouteDeps['damagedFiles'];
  /** Takes in damaged files the store found since (before /api/status and /api/stats answer). */
  readonly refreshHealth?: AdminRouteDeps['refreshHealth'];
  /** The servers sharing the store (meta/servers.ts), for /api/stats and the operator page. */
  readonly servers?: ServerRegistry;
  /** The memory guard (server.ts shares it with telnet); absent: the app makes its own and closes it with itself. */
  readonly memory?: MemoryGuard;
}

/** Stands in for fastify's schema compilers: a route that declares a schema is refused when it is registered. */
function noSchemaCompiler(): () => never {
  return () => {
    throw new Error('Horae routes declare no JSON schemas: fastify\'s schema compilers are not loaded (tsdb/server/build-server.ts)');
  };
}

/** The fastify options of the app (its limits, timeouts and listener, from the config). */
export function fastifyOptions(c: BuildServerOptions['tsdb']['config']): FastifyServerOptions {
  return {
    logger: false,
    bodyLimit: c.maxBodyBytes,
    keepAliveTimeout: c.httpKeepAliveTimeoutMs,
    requestTimeout: c.httpRequestTimeoutMs,
    routerOptions: { caseSensitive: false },
    // No route declares a JSON schema (bodies are parsed and checked by the routes), so
    // fastify's compilers (ajv, fast-json-stringify: ~550 KiB of JS) are never loaded.
    schemaController: { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } },
    serverFactory: (handler, options) => createHttpServerForFastify(handler, options as Record<string, unknown>,
      { maxHeaderBytes: c.httpMaxHeaderBytes, headersTimeoutMs: c.httpHeadersTimeoutMs }),
  };
}

export async function buildServer(opts: BuildServerOptions): Promise<FastifyInstance> {
  const { tsdb } = opts;
  const c = tsdb.config;
  const app = Fastify(fastifyOptions(c));
  // First: every route registered below must declare its role (config: { role }).
  requireRouteRoles(app);
  installErrorHandlers(app);
  installUrlLimit(app, c.httpMaxUrlBytes);
  installCors(app, c);
  installAuth(app, opts.auth ?? tokenAuthOf(c));
  installCompression(app);
  installBodyParsers(app);
  let memory = opts.memory;
  if (memory === undefined) {
    const own = (memory = new MemoryGuard({ budgetBytes: c.memoryBudgetBytes }));
    own.onPressure(() => tsdb.dropCaches());
    app.addHook('onClose', async () => own.close());
  }
  installQueryAdmission(app, { maxConcurrent: c.queryMaxConcurrent, queueMs: c.queryQueueMs, memory });
  registerPutRoutes(app, tsdb, memory);
  registerLookupRoutes(app, tsdb);
  registerLastRoutes(app, tsdb);
  registerUidRoutes(app, tsdb);
  registerAnnotationRoutes(app, tsdb);
  registerQueryRoutes(app, tsdb);
  registerDeleteSeriesRoutes(app, tsdb);
  registerOverviewRoutes(app, tsdb, opts.servers === undefined ? {} : { servers: opts.servers });
  registerCardinalityRoutes(app, tsdb);
  registerAdminRoutes(app, {
    tsdb, status: opts.status ?? (() => 'ok'),
    ...(opts.servers === undefined ? {} : { servers: opts.servers }),
    ...(opts.extraStats === undefined ? {} : { extraStats: opts.extraStats }),
    ...(opts.damagedFiles === undefined ? {} : { damagedFiles: opts.damagedFiles }),
    ...(opts.refreshHealth === undefined ? {} : { refreshHealth: opts.refreshHealth }),
  });
  registerUiRoutes(app);
  await app.ready();
  return app;
}
