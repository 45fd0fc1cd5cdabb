/**
 * startServer(): a Tsdb on a Store, served on one port — HTTP (fastify) and the telnet
 * line protocol, told apart by the first byte (listener.ts). stop() is the graceful
 * shutdown: stop accepting, let in-flight telnet batches and HTTP requests finish, stop
 * the hour compactor, then close the store (which flushes it). The store is closed by
 * stop() only when `ownsStore` (the default).
 */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../core/api/store.js';
import type { TsdbConfig } from '../config.js';
import { randomBytes } from 'node:crypto';
import { MemoryGuard } from '../memory/guard.js';
import { Tsdb } from '../tsdb.js';
import { ServerRegistry, serversTableSpec } from '../meta/servers.js';
import { VERSION } from '../version.js';
import { tokenAuthOf } from './auth.js';
import type { Authenticator } from './auth.js';
import { buildServer } from './build-server.js';
import { HEALTH_REFRESH_MS, StoreHealth } from './store-check.js';
import type { StoreFileProblem } from './store-check.js';
import { listen } from './listener.js';
import type { Listener } from './listener.js';
import type { TelnetOptions } from './telnet/telnet-session.js';
import { tsdbTelnetBackend } from './telnet/tsdb-telnet-backend.js';

export interface StartServerOptions {
  readonly store: Store;
  readonly port: number;
  readonly bind: string;
  readonly config?: Partial<TsdbConfig>;
  readonly telnet?: Partial<TelnetOptions>;
  readonly ownsStore?: boolean;
  readonly now?: () => number;
  readonly log?: (msg: string) => void;
  /** Damaged files found before the store opened (checkBeforeOpen), reported with the rest. */
  readonly damagedFiles?: readonly StoreFileProblem[];
  /** Token authentication; absent: from the config's inline horae.auth.tokens (a tokens file is loaded by tsdb/cli/auth-file.ts). */
  readonly auth?: Authenticator;
}

export interface RunningServer {
  readonly port: number;
  readonly address: string;
  readonly tsdb: Tsdb;
  readonly app: FastifyInstance;
  readonly listener: Listener;
  /** Damaged store files found so far (before the open, and by reads since: store-check.ts). */
  readonly storeHealth: StoreHealth;
  /** Graceful shutdown; idempotent. */
  stop(): Promise<void>;
}

export async function startServer(opts: StartServerOptions): Promise<RunningServer> {
  let state = 'startup';
  const health = new StoreHealth();
  health.add(opts.damagedFiles ?? [], opts.log);
  // OpenTSDB 2.5's `partial`: serving, but some stored data cannot be read.
  const status = (): string => (state === 'ok' && health.problems.length > 0 ? 'partial' : state);
  const tsdb = await Tsdb.open(opts.store, {
    ...(opts.config === undefined ? {} : { config: opts.config }),
    ...(opts.now === undefined ? {} : { now: opts.now }),
  });
  await logWalReplay(opts.store, opts.log);
  let listener: Listener | undefined;
  // Where other servers share the store, each writes a heartbeat row (meta/servers.ts).
  const serversTable = opts.store.capabilities.singleWriter ? undefined : await opts.store.createTable(serversTableSpec(), { ifNotExists: true });
  const servers = new ServerRegistry(serversTable, {
    id: randomBytes(8).toString('hex'),
    version: VERSION,
    startedMs: tsdb.now(),
    address: () => (listener === undefined ? '' : `${listener.address}:${listener.port}`),
    counters: () => {
      const ing = tsdb.ingest.stats();
      return { pointsWritten: ing.pointsWritten, pointsRejected: ing.pointsRejected, seriesCreated: ing.seriesCreated, changesApplied: tsdb.catalog.feedStats()?.applied ?? 0 };
    },
  }, tsdb.now);
  const memory = new MemoryGuard({ budgetBytes: tsdb.config.memoryBudgetBytes });
  const telnet = tsdbTelnetBackend(tsdb, status, memory);
  // Past the budget: drop every cache that is rebuilt on demand, so collections can free it.
  memory.onPressure(() => tsdb.dropCaches());
  const auth = opts.auth ?? tokenAuthOf(tsdb.config);
  const app = await buildServer({
    tsdb,
    status,
    memory,
    ...(auth === undefined ? {} : { auth }),
    damagedFiles: () => health.problems,
    refreshHealth: () => health.refresh(opts.store, opts.log),
    servers,
    extraStats: (): Record<string, number> => {
      const s = listener?.stats();
      if (s === undefined) return {};
      return {
        'tsd.connectionmgr.connections.telnet': s.open.telnet,
        'tsd.connectionmgr.connections.http': s.open.http,
        'tsd.rpc.writes_blocked': s.telnet.writesBlocked,
        'tsd.connectionmgr.exceptions': s.socketErrors,
        'horae.connections.refused': s.refused,
        'horae.store.damaged_files': new Set(health.problems.map((p) => p.file)).size,
        'horae.connections.first_byte_timeouts': s.firstByteTimeouts,
        'horae.telnet.idle_timeouts': s.telnet.idleTimeouts,
        'horae.telnet.lines_too_long': s.telnet.linesTooLong,
        'horae.telnet.batches': s.telnet.batches,
        'horae.telnet.pauses': s.telnet.pauses,
        ...memoryStats(memory),
      };
    },
  });
  listener = await listen({
    host: opts.bind,
    port: opts.port,
    http: app.server,
    telnet,
    telnetOptions: {
      idleTimeoutMs: tsdb.config.telnetIdleTimeoutMs,
      maxLineBytes: tsdb.config.telnetMaxLineBytes,
      ...opts.telnet,
    },
    ...(auth === undefined ? {} : { auth }),
    maxConnections: tsdb.config.maxConnections,
    firstByteTimeoutMs: tsdb.config.httpHeadersTimeoutMs,
    ...(opts.log === undefined ? {} : { log: opts.log }),
  });
  await servers.start();
  state = 'ok';
  const healthTimer = setInterval(() => void health.refresh(opts.store, opts.log), HEALTH_REFRESH_MS);
  healthTimer.unref();
  let stopping: Promise<void> | undefined;
  const l = listener;
  return {
    port: l.port,
    address: l.address,
    tsdb,
    app,
    listener: l,
    storeHealth: health,
    stop() {
      stopping ??= (async () => {
        state = 'shutting-down';
        clearInterval(healthTimer);
        memory.close();
        await l.close();
        await app.close();
        await servers.stop();
        await tsdb.close();
        if (opts.ownsStore !== false) await opts.store.close();
      })();
      return stopping;
    },
  };
}

/** One line on what the store's open replayed from its write-ahead log (embedded store). */
async function logWalReplay(store: Store, log: ((msg: string) => void) | undefined): Promise<void> {
  if (log === undefined) return;
  const r = (await store.stats()).walReplay;
  if (r === undefined) return;
  log(`store: WAL replay at open: ${r.records} records, ${r.entries} cells, ${r.bytes} bytes in ${r.files} log files, ${r.ms} ms`);
}

/**
 * The memory guard's figures for /api/stats, and where the process' memory is: its RSS
 * (every thread: the job and decode workers too), and the server thread's V8 heap
 * (committed), external memory and the array buffers within it (socket reads, encoded
 * batches; memstore slabs are not among them: memstore-slab.ts).
 */
function memoryStats(m: MemoryGuard): Record<string, number> {
  const s = m.stats();
  const u = process.memoryUsage();
  return {
    'horae.memory.rss_bytes': u.rss,
    'horae.memory.heap_total_bytes': u.heapTotal,
    'horae.memory.external_bytes': u.external,
    'horae.memory.array_buffers_bytes': u.arrayBuffers,
    'horae.memory.budget_bytes': s.budgetBytes,
    'horae.memory.heap_limit_bytes': s.heapLimitBytes,
    'horae.memory.heap_used_bytes': s.heapUsedBytes,
    'horae.memory.over_budget': s.over ? 1 : 0,
    'horae.memory.pressure_episodes': s.pressureEpisodes,
    'horae.memory.idle_collections': s.idleCollections,
    'horae.memory.refusals': s.refusals,
  };
}
