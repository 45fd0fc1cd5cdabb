/**
 * TsdbConfig: every knob of the time-series layer, with its default and the OpenTSDB key
 * it corresponds to (a config file may use either name; see config-file.ts).
 */
import { availableParallelism } from 'node:os';
import type { Durability } from '../core/api/store.js';

export interface TsdbConfig {
  /** UID widths in bytes (tsd.storage.uid.width.metric|tagk|tagv). Fixed once data exists. */
  readonly uidWidthMetric: number;
  readonly uidWidthTagk: number;
  readonly uidWidthTagv: number;
  /** Salt bytes before the metric UID (tsd.storage.salt.width); 0 turns salting off. */
  readonly saltWidth: number;
  /** Salt buckets (tsd.storage.salt.buckets); the data table is pre-split on them. */
  readonly saltBuckets: number;
  /** Create UIDs for unknown metric names on write (tsd.core.auto_create_metrics; OpenTSDB: false). */
  readonly autoCreateMetrics: boolean;
  readonly autoCreateTagks: boolean;
  readonly autoCreateTagvs: boolean;
  /** Tags per series, at most (tsd.storage.max_tags). */
  readonly maxTags: number;
  /** Characters allowed in names besides a-z A-Z 0-9 - _ . / and letters (tsd.core.tag.allow_specialchars). */
  readonly allowSpecialChars: string;
  /** Entries per UID cache direction and kind; the caches evict beyond it. */
  readonly uidCacheEntries: number;
  /** Series whose row-key template is cached by the writer. */
  readonly seriesCacheEntries: number;
  /**
   * What an acknowledged write means. 'sync' (default): in the WAL and fsynced by group
   * commit before 204. 'buffered' (the relaxed mode, horae.write.durability=buffered):
   * in the WAL, fsynced within the store's buffered window, so a power loss can lose the
   * last ~100 ms of acknowledged points (a process crash loses nothing).
   */
  readonly durability: Durability;
  /** Points accepted but not yet durable, across all clients; beyond it HTTP gets 503 and telnet stops reading. */
  readonly maxInflightPoints: number;
  /** Largest /api/put body in bytes, after gzip decoding (tsd.http.request.max_chunk). */
  readonly maxBodyBytes: number;
  /** Rewrite closed hours into one compressed cell (tsd.storage.enable_compaction). */
  readonly compactHours: boolean;
  /** An hour is compacted once it ended this long ago and its row saw no write for compactIdleMs. */
  readonly compactGraceMs: number;
  readonly compactIdleMs: number;
  /** How often the compactor looks for due rows. */
  readonly compactIntervalMs: number;
  /** Reply to telnet put errors (tsd.rpc.telnet.return_errors). */
  readonly telnetReturnErrors: boolean;
  /** CORS: `*` or a comma-separated list of origins; empty turns CORS off (tsd.http.request.cors_domains). */
  readonly corsDomains: string;
  /** Headers a CORS preflight allows (tsd.http.request.cors_headers). */
  readonly corsHeaders: string;
  /** DELETE /api/query (and `delete: true`) removes the matched data (tsd.http.query.allow_delete). */
  readonly queryAllowDelete: boolean;
  /** A query reading more series than this gets 413 (tsd.query.limits.series — Horae's). */
  readonly queryMaxSeries: number;
  /** A query reading more points than this gets 413 (tsd.query.limits.data_points.default). */
  readonly queryMaxPoints: number;
  /** A query still running after this many ms is stopped with 413 (tsd.query.timeout; 0: none). */
  readonly queryTimeoutMs: number;
  /** Queries running at once, at most; more wait (tsdb/server/query-admission.ts). 0: no limit. */
  readonly queryMaxConcurrent: number;
  /** How long a query may wait for a slot before 503 with Retry-After. */
  readonly queryQueueMs: number;
  /** Worker threads that decode big queries and format big answers beside the main thread (0: none). */
  readonly queryDecodeThreads: number;
  /** A sub-query expected to read at least this many rows is decoded in parallel. */
  readonly queryParallelMinRows: number;
  /**
   * A sub-query whose series (from the series index) × hours come to at most this many
   * rows reads exactly those rows (batched gets) instead of scanning every salt bucket.
   * 0: always scan.
   */
  readonly queryExactMaxRows: number;
  /**
   * Series whose newest point /api/query/last keeps in memory (meta/last-values.ts; only
   * when this process is the data's only writer: the embedded and memory stores). 0: none.
   */
  readonly queryLastCacheSeries: number;
  /**
   * Authentication (tsdb/server/auth.ts, docs/SECURITY.md): a file of `token role` lines
   * (horae.auth.tokens_file) and/or inline entries `token role[, token role…]`
   * (horae.auth.tokens, env HORAE_AUTH_TOKENS). Both empty: authentication is off.
   */
  readonly authTokensFile: string;
  readonly authTokens: string;
  /** Largest request head (request line + headers) in bytes; 431 beyond (Node's maxHeaderSize). */
  readonly httpMaxHeaderBytes: number;
  /** Longest request URL (path + query) in bytes; 414 beyond. */
  readonly httpMaxUrlBytes: number;
  /**
   * Plain POST /api/query requests are answered before fastify's routing and hooks
   * (server/query-lane.ts): the same answers, ~10% less CPU a small query. Off: every
   * request goes through fastify.
   */
  readonly httpQueryLane: boolean;
  /** A request's head must arrive within this many ms of its first byte (slowloris; Node's headersTimeout). */
  readonly httpHeadersTimeoutMs: number;
  /** A whole request (head and body) must arrive within this many ms (Node's requestTimeout). */
  readonly httpRequestTimeoutMs: number;
  /** An idle keep-alive HTTP connection is closed after this many ms. */
  readonly httpKeepAliveTimeoutMs: number;
  /** A telnet connection without traffic is closed after this many ms; 0 = never. */
  readonly telnetIdleTimeoutMs: number;
  /** Longest telnet line in bytes; a longer one gets an error line and the connection is closed. */
  readonly telnetMaxLineBytes: number;
  /**
   * /api/put JSON bodies of 64 KiB or more are scanned on a query decode worker
   * (routes/put.ts). On by default since the group window: on 2 cores HTTP JSON ingest
   * gained 8-13% points/s for 8-10% more CPU a point (bench/README.md).
   */
  readonly ingestPutWorkerScan: boolean;
  /**
   * The group window (horae.ingest.group_window_ms): while writers stream (the last write
   * group held 4096 points or more), a group smaller than the biggest of the last four
   * waits for more points, up to this many ms after the last group started. 0: write each group as soon as the
   * previous one is durable. Light load never waits, nor does a group while a telnet
   * connection is blocked on its acknowledgements (tsdb/write/ingest.ts).
   */
  readonly ingestGroupWindowMs: number;
  /** Open connections (HTTP and telnet) at most; more are closed on accept. 0 = no limit (tsd.core.connections.limit). */
  readonly maxConnections: number;
}

/**
 * Decode workers by default: cores − 1, at most 3 (none on one core). The main thread scans every
 * bucket whatever the workers do; it scans the workers' buckets first, sending their rows
 * as it goes, then decodes its own share while they decode theirs (scanner.ts). On 2 cores,
 * q4 of the devops set (a day of 100 series by 5 m) ran ×0.71-0.78 with one worker; before
 * that ordering a worker got its rows only after the main thread had decoded its share, and
 * slowed the query (bench/README.md).
 */
export function defaultDecodeThreads(cores: number): number {
  return cores <= 1 ? 0 : Math.min(3, cores - 1);
}

export const DEFAULT_TSDB_CONFIG: TsdbConfig = {
  uidWidthMetric: 3,
  uidWidthTagk: 3,
  uidWidthTagv: 3,
  saltWidth: 1,
  saltBuckets: 20,
  autoCreateMetrics: true,
  autoCreateTagks: true,
  autoCreateTagvs: true,
  maxTags: 8,
  allowSpecialChars: '',
  uidCacheEntries: 1_000_000,
  seriesCacheEntries: 1_000_000,
  durability: 'sync',
  maxInflightPoints: 2_000_000,
  maxBodyBytes: 64 * 1024 * 1024,
  compactHours: true,
  compactGraceMs: 60_000,
  compactIdleMs: 30_000,
  compactIntervalMs: 10_000,
  telnetReturnErrors: true,
  corsDomains: '',
  corsHeaders: 'Authorization, Content-Type, Accept, Origin, User-Agent, DNT, Cache-Control, X-Mx-ReqToken, Keep-Alive, X-Requested-With, If-Modified-Since',
  queryAllowDelete: false,
  queryMaxSeries: 200_000,
  queryMaxPoints: 100_000_000,
  queryTimeoutMs: 120_000,
  queryMaxConcurrent: 8,
  queryQueueMs: 5000,
  queryDecodeThreads: defaultDecodeThreads(availableParallelism()),
  queryParallelMinRows: 1000,
  queryExactMaxRows: 256,
  queryLastCacheSeries: 1_000_000,
  authTokensFile: '',
  authTokens: '',
  httpMaxHeaderBytes: 32 * 1024,
  httpMaxUrlBytes: 16 * 1024,
  httpQueryLane: true,
  httpHeadersTimeoutMs: 10_000,
  httpRequestTimeoutMs: 120_000,
  httpKeepAliveTimeoutMs: 65_000,
  telnetIdleTimeoutMs: 600_000,
  telnetMaxLineBytes: 64 * 1024,
  ingestPutWorkerScan: true,
  ingestGroupWindowMs: 40,
  maxConnections: 4096,
};

/** Defaults overridden by `overrides`, with every value range-checked. */
export function resolveTsdbConfig(overrides: Partial<TsdbConfig> = {}): TsdbConfig {
  const c: TsdbConfig = { ...DEFAULT_TSDB_CONFIG, ...overrides };
  const int = (name: keyof TsdbConfig, lo: number, hi: number): void => {
    const v = c[name];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
      throw new RangeError(`config ${name} must be an integer in ${lo}..${hi}, got ${String(v)}`);
    }
  };
  int('uidWidthMetric', 1, 7);
  int('uidWidthTagk', 1, 7);
  int('uidWidthTagv', 1, 7);
  int('saltWidth', 0, 2);
  int('saltBuckets', 1, c.saltWidth === 0 ? 1 : 2 ** (8 * c.saltWidth));
  int('maxTags', 1, 64);
  int('uidCacheEntries', 16, 1e9);
  int('seriesCacheEntries', 16, 1e9);
  int('maxInflightPoints', 1000, 1e9);
  int('maxBodyBytes', 1024, 2 ** 31);
  int('compactGraceMs', 0, 1e9);
  int('compactIdleMs', 0, 1e9);
  int('compactIntervalMs', 10, 1e9);
  int('queryMaxSeries', 1, 1e9);
  int('queryMaxPoints', 1, 1e12);
  int('httpMaxHeaderBytes', 1024, 1024 * 1024);
  int('httpMaxUrlBytes', 256, 1024 * 1024);
  int('httpHeadersTimeoutMs', 100, 1e9);
  int('httpRequestTimeoutMs', 100, 1e9);
  int('httpKeepAliveTimeoutMs', 100, 1e9);
  int('telnetIdleTimeoutMs', 0, 1e9);
  int('telnetMaxLineBytes', 1024, 64 * 1024 * 1024);
  int('ingestGroupWindowMs', 0, 1000);
  int('maxConnections', 0, 1e7);
  int('queryTimeoutMs', 0, 1e9);
  int('queryMaxConcurrent', 0, 1e6);
  int('queryQueueMs', 0, 1e9);
  int('queryDecodeThreads', 0, 64);
  int('queryParallelMinRows', 0, 1e12);
  int('queryExactMaxRows', 0, 1e6);
  int('queryLastCacheSeries', 0, 1e9);
  if (c.durability !== 'sync' && c.durability !== 'buffered') {
    throw new RangeError(`config durability must be 'sync' or 'buffered', got ${String(c.durability)}`);
  }
  return c;
}
