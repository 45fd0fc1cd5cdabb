/**
 * The config table: every setting of `horae serve` and the tools, once. Each entry is a
 * field name (of TsdbConfig, the store options or the server settings, by its `part`)
 * with its canonical `horae.*` key, the other names a config file may use (OpenTSDB's own
 * first, then old Horae names), its type and range, its default, the part that reads
 * it, and one line of help. Everything else is derived from it (tsdb/config.ts): the
 * TsdbConfig type and its defaults, the config-file/command-line/environment parser, the
 * validator, `horae help config`, GET /api/config and docs/CONFIG.md.
 *
 * To add a key: add an entry here (the part picks the object it lands in), read the field
 * where it is used, then `npm run docs:config` to regenerate docs/CONFIG.md.
 */
import { availableParallelism, totalmem } from 'node:os';
import { DEFAULT_ENGINE_OPTIONS } from '../core/index.js';
import { CATALOG_SHARES, LAST_VALUE_BYTES, SERIES_BYTES_PER_ENTRY, UID_ENTRY_BYTES } from './memory/catalog-memory.js';

/**
 * Who reads a key. `server` (tsdb/main.ts, cli/) and `store` (the embedded engine's
 * options) land in their own objects; every other part is a TsdbConfig field.
 */
export const CONFIG_PARTS = {
  server: 'the `horae` command: where to listen and where the store is (tsdb/main.ts, tsdb/cli/)',
  store: 'the embedded store\'s LSM engine (core/lsm), as opened by `horae serve` and the tools',
  schema: 'the row-key layout (tsdb/schema); fixed once data exists',
  uid: 'the UID tables and caches (tsdb/uid)',
  write: 'the write path (tsdb/write)',
  'hour-compaction': 'compressed hour cells: written by the store as it flushes (embedded), or by the read-back hour compactor on other stores (tsdb/compact)',
  retention: 'how long points are kept (tsdb/compact/retention.ts, tsdb/SCHEMA.md "Retention")',
  query: 'queries (tsdb/query, tsdb/server/routes/query.ts)',
  http: 'the HTTP server (tsdb/server)',
  telnet: 'telnet-style put lines (tsdb/server/telnet)',
  network: 'the shared port\'s listener (tsdb/server/listener.ts)',
  auth: 'token authentication (tsdb/server/auth.ts, docs/SECURITY.md)',
  memory: 'the memory budget: the heap limit and the shares of every memory bound not set on its own (tsdb/memory/budget.ts)',
  limits: 'cardinality limits on new series (tsdb/limits/series-limiter.ts)',
  index: 'the series index\'s in-memory copy (tsdb/meta/series-index.ts, active-series.ts; its bytes: horae.catalog.memory_bytes)',
} as const;

export type ConfigPart = keyof typeof CONFIG_PARTS;

interface KeyBase {
  /** Canonical name; the one /api/config, the docs and the help print first. */
  readonly key: `horae.${string}`;
  /** Other accepted names: OpenTSDB's first (opentsdb.conf works as is), then old Horae names. */
  readonly aliases?: readonly string[];
  readonly part: ConfigPart;
  readonly help: string;
  /** The default as the docs print it, when it depends on the machine. */
  readonly defaultDoc?: string;
  /** Environment variable that sets it (empty: unset). */
  readonly env?: string;
  /** Command-line options that set it (the first is canonical). */
  readonly flags?: readonly string[];
  /** Never shown by /api/config. */
  readonly secret?: true;
  /** A valid value, for a text key whose default is empty and whose value has a syntax. */
  readonly example?: string;
}

/** An integer in min..max. */
export interface IntKey extends KeyBase { readonly type: 'int'; readonly min: number; readonly max: number; readonly default: number }
/** true/yes/1 or false/no/0. */
export interface BoolKey extends KeyBase { readonly type: 'bool'; readonly default: boolean }
/** One of `values`. */
export interface EnumKey extends KeyBase { readonly type: 'enum'; readonly values: readonly string[]; readonly default: string }
/** Text: verbatim, or trimmed; `required`: not empty. */
export interface TextKey extends KeyBase { readonly type: 'text'; readonly trim?: boolean; readonly required?: boolean; readonly default: string }
/** A file or directory; relative paths in a config file are taken relative to the file. */
export interface PathKey extends KeyBase { readonly type: 'path'; readonly required?: boolean; readonly default: string }

export type KeyDef = IntKey | BoolKey | EnumKey | TextKey | PathKey;

const E = DEFAULT_ENGINE_OPTIONS;
const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Decode workers by default: cores − 1, at most 3 (none on one core). The main thread scans every
 * bucket whatever the workers do; it scans the workers' buckets first, sending their rows
 * as it goes, then decodes its own share while they decode theirs (scanner.ts). On 2 cores,
 * q4 of the devops set (a day of 100 series by 5 m) ran ×0.71-0.78 with one worker; before
 * that ordering a worker got its rows only after the main thread had decoded its share, and
 * slowed the query (bench/results/query-ab-decode-order-c72c910.json).
 */
export function defaultDecodeThreads(cores: number): number {
  return cores <= 1 ? 0 : Math.min(3, cores - 1);
}

/** The default of horae.catalog.memory_bytes (a budget lowers it to its share: memory/budget.ts). */
export const DEFAULT_CATALOG_MEMORY_BYTES = 1024 * MiB;

/** The smallest memory budget (below it the server's own code does not fit). */
export const MIN_MEMORY_BUDGET_BYTES = 64 * MiB;

/** The default memory budget: half the machine's memory, at least MIN_MEMORY_BUDGET_BYTES. */
export function defaultMemoryBudget(totalMemBytes: number): number {
  return Math.max(MIN_MEMORY_BUDGET_BYTES, Math.floor(totalMemBytes / 2));
}

export const CONFIG_KEYS = {
  // ---- server ------------------------------------------------------------------------
  port: {
    key: 'horae.port', aliases: ['tsd.network.port'], part: 'server', type: 'int', min: 0, max: 65535, default: 4242,
    env: 'HORAE_PORT', flags: ['--port', '-p'], help: 'TCP port of HTTP and telnet (one port for both)',
  },
  bind: {
    key: 'horae.bind', aliases: ['tsd.network.bind'], part: 'server', type: 'text', trim: true, required: true, default: '127.0.0.1',
    env: 'HORAE_BIND', flags: ['--bind', '--host'], help: 'address to listen on',
  },
  dataDir: {
    key: 'horae.data_dir', part: 'server', type: 'path', required: true, default: './data',
    env: 'HORAE_DATA_DIR', flags: ['--data-dir'], help: 'directory of the embedded store',
  },
  // ---- store (the LSM engine) -------------------------------------------------------
  memstoreFlushBytes: {
    key: 'horae.storage.memstore_flush_bytes', part: 'store', type: 'int', min: 4096, max: 2 ** 31, default: E.memstoreFlushBytes,
    help: 'a region\'s memstore is flushed to an SST file at this size',
  },
  memstoreTotalBytes: {
    key: 'horae.storage.memstore_total_bytes', part: 'store', type: 'int', min: 4096, max: 2 ** 40, default: E.memstoreTotalBytes,
    help: 'all memstores together; the largest is flushed beyond it, writers wait at twice it',
  },
  memstoreIdleFlushMs: {
    key: 'horae.storage.memstore_idle_flush_ms', part: 'store', type: 'int', min: 0, max: 2 ** 31, default: E.memstoreIdleFlushMs,
    help: 'a region\'s memstore that took no write for this long is flushed (0: never), so a server left alone reaches its compact state',
  },
  walFileBytes: {
    key: 'horae.storage.wal_file_bytes', part: 'store', type: 'int', min: 4096, max: 2 ** 31, default: E.walFileBytes,
    help: 'the WAL rolls to a new file past this size',
  },
  regionSplitBytes: {
    key: 'horae.storage.region_split_bytes', part: 'store', type: 'int', min: 4096, max: 2 ** 40, default: E.regionSplitBytes,
    help: 'a region splits in two past this size',
  },
  compactionMinFiles: {
    key: 'horae.storage.lsm_compaction_min_files', aliases: ['horae.storage.compaction_min_files'], part: 'store', type: 'int',
    min: 2, max: 1000, default: E.compactionMinFiles,
    help: 'SST files of a region that start an LSM compaction (merging files; not the hour compaction)',
  },
  blockCacheBytes: {
    key: 'horae.storage.block_cache_bytes', part: 'store', type: 'int', min: 0, max: 2 ** 40, default: E.blockCacheBytes,
    help: 'block cache capacity',
  },
  // ---- schema ------------------------------------------------------------------------
  uidWidthMetric: {
    key: 'horae.uid.width.metric', aliases: ['tsd.storage.uid.width.metric'], part: 'schema', type: 'int', min: 1, max: 7, default: 3,
    help: 'metric UID bytes',
  },
  uidWidthTagk: {
    key: 'horae.uid.width.tagk', aliases: ['tsd.storage.uid.width.tagk'], part: 'schema', type: 'int', min: 1, max: 7, default: 3,
    help: 'tag key UID bytes',
  },
  uidWidthTagv: {
    key: 'horae.uid.width.tagv', aliases: ['tsd.storage.uid.width.tagv'], part: 'schema', type: 'int', min: 1, max: 7, default: 3,
    help: 'tag value UID bytes',
  },
  saltWidth: {
    key: 'horae.salt.width', aliases: ['tsd.storage.salt.width'], part: 'schema', type: 'int', min: 0, max: 2, default: 1,
    help: 'salt bytes before the metric UID (0: no salt; the bucket count is then 1)',
  },
  saltBuckets: {
    key: 'horae.salt.buckets', aliases: ['tsd.storage.salt.buckets'], part: 'schema', type: 'int', min: 1, max: 65536, default: 20,
    help: 'salt buckets, at most 256 per salt byte; the data table is pre-split on them',
  },
  // ---- uid ---------------------------------------------------------------------------
  // ---- write -------------------------------------------------------------------------
  autoCreateMetrics: {
    key: 'horae.auto_create.metrics', aliases: ['tsd.core.auto_create_metrics'], part: 'write', type: 'bool', default: true,
    help: 'create UIDs for unknown metric names on write (OpenTSDB\'s default: false)',
  },
  autoCreateTagks: {
    key: 'horae.auto_create.tagks', aliases: ['tsd.core.auto_create_tagks'], part: 'write', type: 'bool', default: true,
    help: 'create UIDs for unknown tag keys on write',
  },
  autoCreateTagvs: {
    key: 'horae.auto_create.tagvs', aliases: ['tsd.core.auto_create_tagvs'], part: 'write', type: 'bool', default: true,
    help: 'create UIDs for unknown tag values on write',
  },
  maxTags: {
    key: 'horae.max_tags', aliases: ['tsd.storage.max_tags'], part: 'write', type: 'int', min: 1, max: 64, default: 8,
    help: 'tags per series, at most',
  },
  allowSpecialChars: {
    key: 'horae.allow_specialchars', aliases: ['tsd.core.tag.allow_specialchars'], part: 'write', type: 'text', default: '',
    help: 'characters allowed in names besides a-z A-Z 0-9 - _ . / and letters',
  },
  durability: {
    key: 'horae.write.durability', part: 'write', type: 'enum', values: ['sync', 'buffered'], default: 'sync',
    help: 'sync: a write is acknowledged once fsynced; buffered: once in the WAL, fsynced within ~100 ms (docs/DURABILITY.md)',
  },
  maxInflightPoints: {
    key: 'horae.write.max_inflight_points', part: 'write', type: 'int', min: 1000, max: 1e9, default: 2_000_000,
    help: 'points accepted but not yet durable, across all clients; beyond it HTTP gets 503 and telnet stops reading',
  },
  ingestPutWorkerScan: {
    key: 'horae.ingest.put_worker_scan', part: 'write', type: 'bool', default: true,
    help: '/api/put JSON bodies of 64 KiB or more are scanned on a query decode worker (tsdb/OPERATOR.md)',
  },
  ingestGroupWindowMs: {
    key: 'horae.ingest.group_window_ms', part: 'write', type: 'int', min: 0, max: 1000, default: 40,
    help: 'while writers stream, a write group smaller than the recent ones waits for more points up to this many ms (0: never; tsdb/OPERATOR.md)',
  },
  // ---- hour compaction -----------------------------------------------------------------
  compactHours: {
    key: 'horae.hour_compaction.enable', aliases: ['tsd.storage.enable_compaction', 'horae.compaction.enable'], part: 'hour-compaction',
    type: 'bool', default: true, help: 'rewrite each closed hour of a series into one compressed cell',
  },
  compactGraceMs: {
    key: 'horae.hour_compaction.grace_ms', aliases: ['horae.compaction.grace_ms'], part: 'hour-compaction', type: 'int', min: 0, max: 1e9,
    default: 60_000, help: 'an hour is compacted once it ended this long ago (and its row is idle)',
  },
  compactIdleMs: {
    key: 'horae.hour_compaction.idle_ms', aliases: ['horae.compaction.idle_ms'], part: 'hour-compaction', type: 'int', min: 0, max: 1e9,
    default: 30_000, help: 'and once its row saw no write for this long',
  },
  compactIntervalMs: {
    key: 'horae.hour_compaction.interval_ms', aliases: ['horae.compaction.interval_ms'], part: 'hour-compaction', type: 'int',
    min: 10, max: 1e9, default: 10_000, help: 'how often the compactor looks for due rows',
  },
  // ---- retention ---------------------------------------------------------------------
  retention: {
    key: 'horae.retention', part: 'retention', type: 'text', trim: true, default: '', example: '30d',
    help: 'keep points this long, e.g. 30d, 12h, 1y (empty or forever: always); reads return no older point, and whole hours past it are dropped',
  },
  retentionMetrics: {
    key: 'horae.retention.metrics', part: 'retention', type: 'text', trim: true, default: '', example: 'sys.cpu.*=7d, audit=forever',
    help: 'per metric, overriding horae.retention: name=7d, prefix.*=90d, name=forever (exact names before prefixes)',
  },
  retentionCleanup: {
    key: 'horae.retention.cleanup', part: 'retention', type: 'bool', default: false,
    help: 'remove the series-index rows of series whose points have all expired, and the names (UIDs) only they used (off: names are forever, as in OpenTSDB; safe with any number of servers on one store)',
  },
  // ---- query -------------------------------------------------------------------------
  queryAllowDelete: {
    key: 'horae.query.allow_delete', aliases: ['tsd.http.query.allow_delete'], part: 'query', type: 'bool', default: false,
    help: 'DELETE /api/query (and "delete": true) removes the matched data',
  },
  queryMaxSeries: {
    key: 'horae.query.max_series', part: 'query', type: 'int', min: 1, max: 1e9, default: 200_000,
    help: 'series one query may read (413 beyond)',
  },
  queryMaxPoints: {
    key: 'horae.query.max_points', aliases: ['tsd.query.limits.data_points.default'], part: 'query', type: 'int', min: 1, max: 1e12,
    default: 100_000_000, help: 'points one query may read (413 beyond)',
  },
  queryTimeoutMs: {
    key: 'horae.query.timeout_ms', aliases: ['tsd.query.timeout'], part: 'query', type: 'int', min: 0, max: 1e9, default: 120_000,
    help: 'a query still running after this many ms is stopped with 413 (0: no limit)',
  },
  queryMaxConcurrent: {
    key: 'horae.query.max_concurrent', part: 'query', type: 'int', min: 0, max: 1e6, default: 8,
    help: 'queries running at once (0: no limit); more wait (tsdb/server/query-admission.ts)',
  },
  queryQueueMs: {
    key: 'horae.query.queue_ms', part: 'query', type: 'int', min: 0, max: 1e9, default: 5000,
    help: 'how long a query waits for a slot before 503 with Retry-After',
  },
  queryDecodeThreads: {
    key: 'horae.query.decode_threads', part: 'query', type: 'int', min: 0, max: 64, default: defaultDecodeThreads(availableParallelism()),
    defaultDoc: 'cores − 1, at most 3 (0 on one core)',
    help: 'worker threads that decode big queries and format big answers beside the main thread (0: none)',
  },
  queryParallelMinRows: {
    key: 'horae.query.parallel_min_rows', part: 'query', type: 'int', min: 0, max: 1e12, default: 1000,
    help: 'a sub-query expected to read at least this many rows is decoded in parallel',
  },
  queryExactMaxRows: {
    key: 'horae.query.exact_max_rows', part: 'query', type: 'int', min: 0, max: 1e6, default: 256,
    help: 'a sub-query of at most this many rows (series index × hours) reads them by exact gets instead of scanning every salt bucket (0: always scan)',
  },
  queryLastCache: {
    key: 'horae.query.last_cache', part: 'query', type: 'bool', default: true,
    help: '/api/query/last keeps each asked series\' newest point in memory (within its share of horae.catalog.memory_bytes)',
  },
  // ---- http --------------------------------------------------------------------------
  maxBodyBytes: {
    key: 'horae.http.max_body_bytes', aliases: ['tsd.http.request.max_chunk'], part: 'http', type: 'int', min: 1024, max: 2 ** 31,
    default: 64 * MiB, help: 'largest request body in bytes, after gzip decoding (413 beyond)',
  },
  corsDomains: {
    key: 'horae.http.cors_domains', aliases: ['tsd.http.request.cors_domains'], part: 'http', type: 'text', default: '',
    help: 'CORS: * or a comma-separated list of origins (empty: CORS off)',
  },
  corsHeaders: {
    key: 'horae.http.cors_headers', aliases: ['tsd.http.request.cors_headers'], part: 'http', type: 'text',
    default: 'Authorization, Content-Type, Accept, Origin, User-Agent, DNT, Cache-Control, X-Mx-ReqToken, Keep-Alive, X-Requested-With, If-Modified-Since',
    help: 'headers a CORS preflight allows',
  },
  httpMaxHeaderBytes: {
    key: 'horae.http.max_header_bytes', part: 'http', type: 'int', min: 1024, max: MiB, default: 32 * KiB,
    help: 'largest request line + headers (431 beyond)',
  },
  httpMaxUrlBytes: {
    key: 'horae.http.max_url_bytes', part: 'http', type: 'int', min: 256, max: MiB, default: 16 * KiB,
    help: 'longest request URL, path and query (414 beyond)',
  },
  httpHeadersTimeoutMs: {
    key: 'horae.http.headers_timeout_ms', part: 'http', type: 'int', min: 100, max: 1e9, default: 10_000,
    help: 'a request\'s head must arrive within this many ms of its first byte (slowloris)',
  },
  httpRequestTimeoutMs: {
    key: 'horae.http.request_timeout_ms', part: 'http', type: 'int', min: 100, max: 1e9, default: 120_000,
    help: 'a whole request must arrive within this many ms (408 beyond)',
  },
  httpKeepAliveTimeoutMs: {
    key: 'horae.http.keep_alive_timeout_ms', part: 'http', type: 'int', min: 100, max: 1e9, default: 65_000,
    help: 'an idle keep-alive connection is closed after this many ms',
  },
  // ---- telnet ------------------------------------------------------------------------
  telnetReturnErrors: {
    key: 'horae.telnet.return_errors', aliases: ['tsd.rpc.telnet.return_errors'], part: 'telnet', type: 'bool', default: true,
    help: 'answer telnet put errors with an error line',
  },
  telnetIdleTimeoutMs: {
    key: 'horae.telnet.idle_timeout_ms', part: 'telnet', type: 'int', min: 0, max: 1e9, default: 600_000,
    help: 'a telnet connection without traffic is closed after this many ms (0: never)',
  },
  telnetMaxLineBytes: {
    key: 'horae.telnet.max_line_bytes', part: 'telnet', type: 'int', min: 1024, max: 64 * MiB, default: 64 * KiB,
    help: 'longest telnet line; a longer one gets an error line and the connection is closed',
  },
  // ---- network -----------------------------------------------------------------------
  maxConnections: {
    key: 'horae.network.max_connections', aliases: ['tsd.core.connections.limit'], part: 'network', type: 'int', min: 0, max: 1e7,
    default: 4096, help: 'open connections (HTTP and telnet) at most; more are closed on accept (0: no limit)',
  },
  // ---- memory ------------------------------------------------------------------------
  memoryBudgetBytes: {
    key: 'horae.memory.budget_bytes', part: 'memory', type: 'int', min: MIN_MEMORY_BUDGET_BYTES, max: 2 ** 50,
    default: defaultMemoryBudget(totalmem()), defaultDoc: 'half the machine\'s memory', env: 'HORAE_MEMORY_BUDGET_BYTES',
    help: 'memory of the whole server: `horae serve` sets the V8 heap limit to 3/4 of it, and every memory bound not set on its own takes its share (tsdb/memory/budget.ts); past the heap share writes and queries get 503',
  },
  catalogMemoryBytes: {
    key: 'horae.catalog.memory_bytes', part: 'memory', type: 'int', min: 16 * KiB, max: 2 ** 50, default: DEFAULT_CATALOG_MEMORY_BYTES, defaultDoc: 'a quarter of horae.memory.budget_bytes (1 GiB where no budget is applied)',
    help: 'all per-series and per-name state in memory together (UID caches, series entries, the series index\'s copy, names, plans, newest points, the hour compactor\'s dirty rows), each structure a fixed share sized in bytes (tsdb/memory/catalog-memory.ts); past its share a structure evicts its least used part, read again from the store when needed',
  },
  // ---- limits ------------------------------------------------------------------------
  limitNewSeriesPerHour: {
    key: 'horae.limits.new_series_per_hour', part: 'limits', type: 'int', min: 0, max: 1e12, default: 0,
    help: 'new series admitted in any 60 minutes (VictoriaMetrics\' -storage.maxHourlySeries); beyond it their points are refused (0: no limit)',
  },
  limitNewSeriesPerDay: {
    key: 'horae.limits.new_series_per_day', part: 'limits', type: 'int', min: 0, max: 1e12, default: 0,
    help: 'new series admitted in any 24 hours (VictoriaMetrics\' -storage.maxDailySeries); beyond it their points are refused (0: no limit)',
  },
  limitSeriesPerMetric: {
    key: 'horae.limits.series_per_metric', part: 'limits', type: 'int', min: 0, max: 1e12, default: 0,
    help: 'series one metric may have; the points of a new series beyond it are refused (0: no limit; tags per series: horae.max_tags)',
  },
  // ---- index -------------------------------------------------------------------------
  indexIdleMs: {
    key: 'horae.index.idle_ms', part: 'index', type: 'int', min: 0, max: 1e12, default: 7_200_000,
    help: 'a series not written for this long leaves the series index\'s in-memory copy (it stays on disk; 0: only the byte bound); a series counts as written at its first point of each hour, so keep it above 1 h',
  },
  // ---- auth --------------------------------------------------------------------------
  authTokensFile: {
    key: 'horae.auth.tokens_file', part: 'auth', type: 'path', default: '',
    help: 'file of `token role` lines (role read or write); no token at all: authentication is off',
  },
  authTokens: {
    key: 'horae.auth.tokens', part: 'auth', type: 'text', trim: true, default: '', env: 'HORAE_AUTH_TOKENS', secret: true,
    help: 'inline `token role` entries separated by commas (the environment keeps them out of files and ps)',
  },
} as const satisfies Readonly<Record<string, KeyDef>>;

/**
 * OpenTSDB keys that are not settings here: what /api/config reports for them (what
 * Horae always does) and, when `accepted`, a config file may set them to true or false
 * (checked; the value changes nothing). Other OpenTSDB keys are warned about.
 */
export const FIXED_OPENTSDB_KEYS = [
  { key: 'tsd.storage.fix_duplicates', value: 'true', accepted: true, help: 'accepted and checked; Horae always keeps the last write of a timestamp' },
  { key: 'tsd.http.request.enable_chunked', value: 'true', help: 'chunked requests are always accepted' },
  { key: 'tsd.mode', value: 'rw', help: 'always read-write' },
] as const;

/** What a deprecated key's value sets (config-file.ts applies it). */
export interface DeprecatedEffect {
  readonly catalogMemoryBytes?: number;
  readonly queryLastCache?: boolean;
}

/** Name bytes taken for a UID or TSUID when converting an entry count to bytes. */
const NAME_BYTES = 24;

/**
 * Keys of earlier versions that counted entries or sized one structure alone: a config
 * file may still use them (each gets a warning naming what replaced it). An entry count is
 * converted to the horae.catalog.memory_bytes that gives its structure that many entries
 * (by the structure's estimate and share, tsdb/memory/catalog-memory.ts); when several are
 * given, the largest wins; horae.catalog.memory_bytes given too wins over all of them.
 */
export const DEPRECATED_KEYS: ReadonlyArray<{ readonly key: string; readonly help: string; readonly effect: (v: number) => DeprecatedEffect }> = [
  {
    key: 'horae.uid.cache_entries', help: 'UID cache entries per kind and direction: sets horae.catalog.memory_bytes to hold that many',
    effect: (v) => ({ catalogMemoryBytes: Math.ceil((v * 6 * (UID_ENTRY_BYTES + NAME_BYTES)) / CATALOG_SHARES.uidCaches) }),
  },
  {
    key: 'horae.write.series_cache_entries', help: 'writer series entries: sets horae.catalog.memory_bytes to hold that many',
    effect: (v) => ({ catalogMemoryBytes: Math.ceil((v * SERIES_BYTES_PER_ENTRY) / CATALOG_SHARES.seriesEntries) }),
  },
  {
    key: 'horae.query.last_cache_series', help: '0 sets horae.query.last_cache = false; more sets horae.catalog.memory_bytes to hold that many newest points',
    effect: (v) => (v === 0 ? { queryLastCache: false } : { queryLastCache: true, catalogMemoryBytes: Math.ceil((v * (LAST_VALUE_BYTES + NAME_BYTES)) / CATALOG_SHARES.lastValues) }),
  },
  {
    key: 'horae.index.memory_bytes', help: 'bytes of the series index\'s copy: sets horae.catalog.memory_bytes to give it that many',
    effect: (v) => ({ catalogMemoryBytes: Math.ceil(v / CATALOG_SHARES.index) }),
  },
];
