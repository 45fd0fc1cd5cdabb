/**
 * The config file: OpenTSDB's Java-properties format (`key = value`, `key: value` or
 * `key value`; `#` and `!` comment lines; a trailing backslash continues the line; the
 * escapes \t \n \r \f \uXXXX; the last occurrence of a key wins).
 *
 * Keys: OpenTSDB's own where they map onto Horae (opentsdb.conf can be used as is) and
 * `horae.*` for every TsdbConfig field, in one table (CONFIG_KEYS) of key → field + parser.
 * Unknown keys outside `horae.*` are warnings (OpenTSDB configs carry many keys Horae has
 * no use for); unknown `horae.*` keys and bad values are errors naming file:line.
 * A relative horae.data_dir is taken relative to the config file's directory.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Durability } from '../../core/api/store.js';
import { resolveTsdbConfig } from '../config.js';
import type { TsdbConfig } from '../config.js';

export type MutableTsdbConfig = { -readonly [K in keyof TsdbConfig]?: TsdbConfig[K] };

/** What a config file sets; fields it does not mention are absent. */
export interface ParsedConfigFile {
  port?: number;
  bind?: string;
  dataDir?: string;
  tsdb: MutableTsdbConfig;
  /** Storage engine settings (horae.storage.*); absent when none is set. */
  store?: StoreSettings;
  /** `file:line: …` for keys that were ignored. */
  warnings: string[];
}

/** The embedded store's options a config file may set (the engine's defaults otherwise). */
export type StoreSettings = {
  -readonly [K in 'memstoreFlushBytes' | 'memstoreTotalBytes' | 'walFileBytes' | 'regionSplitBytes' | 'compactionMinFiles' | 'blockCacheBytes']?: number;
};

/** A bad config file, command line or environment variable (exit status 2). */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Apply = (out: ParsedConfigFile, raw: string, baseDir: string) => void;

interface KeySpec {
  readonly apply: Apply;
  /** One line for `horae help config`. */
  readonly help: string;
}

// ---- value parsers: each throws Error(message) on a bad value -------------------------

export function parseIntValue(raw: string, lo: number, hi: number): number {
  const s = raw.trim();
  const n = /^[+-]?\d+$/.test(s) ? Number(s) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < lo || n > hi) throw new Error(`expected an integer in ${lo}..${hi}, got '${s}'`);
  return n;
}

export function parseBoolValue(raw: string): boolean {
  const s = raw.trim().toLowerCase();
  if (s === 'true' || s === 'yes' || s === '1') return true;
  if (s === 'false' || s === 'no' || s === '0') return false;
  throw new Error(`expected true or false, got '${raw.trim()}'`);
}

function parseDurability(raw: string): Durability {
  const s = raw.trim();
  if (s === 'sync' || s === 'buffered') return s;
  throw new Error(`expected sync or buffered, got '${s}'`);
}

function nonEmpty(raw: string): string {
  const s = raw.trim();
  if (s.length === 0) throw new Error('expected a value');
  return s;
}

// ---- the key table --------------------------------------------------------------------

const int = (lo: number, hi: number) => (raw: string): number => parseIntValue(raw, lo, hi);

function field<K extends keyof TsdbConfig>(name: K, parse: (raw: string) => TsdbConfig[K], help: string): KeySpec {
  return { apply: (out, raw) => { out.tsdb[name] = parse(raw); }, help: `${name}: ${help}` };
}

function storeField(name: keyof StoreSettings, lo: number, hi: number, help: string): KeySpec {
  return { apply: (out, raw) => { (out.store ??= {})[name] = parseIntValue(raw, lo, hi); }, help: `store ${name}: ${help}` };
}

const PORT: KeySpec = { apply: (out, raw) => { out.port = parseIntValue(raw, 0, 65535); }, help: 'TCP port (HTTP and telnet)' };
const BIND: KeySpec = { apply: (out, raw) => { out.bind = nonEmpty(raw); }, help: 'address to listen on' };
const DATA_DIR: KeySpec = {
  apply: (out, raw, baseDir) => { out.dataDir = resolve(baseDir, nonEmpty(raw)); },
  help: 'directory of the store (relative to this file)',
};

const HORAE_FIELDS: Readonly<Record<string, KeySpec>> = {
  'horae.port': PORT,
  'horae.bind': BIND,
  'horae.data_dir': DATA_DIR,
  'horae.uid.width.metric': field('uidWidthMetric', int(1, 7), 'metric UID bytes'),
  'horae.uid.width.tagk': field('uidWidthTagk', int(1, 7), 'tag key UID bytes'),
  'horae.uid.width.tagv': field('uidWidthTagv', int(1, 7), 'tag value UID bytes'),
  'horae.salt.width': field('saltWidth', int(0, 2), 'salt bytes (0 = no salt)'),
  'horae.salt.buckets': field('saltBuckets', int(1, 65536), 'salt buckets'),
  'horae.auto_create.metrics': field('autoCreateMetrics', parseBoolValue, 'create unknown metrics on write'),
  'horae.auto_create.tagks': field('autoCreateTagks', parseBoolValue, 'create unknown tag keys on write'),
  'horae.auto_create.tagvs': field('autoCreateTagvs', parseBoolValue, 'create unknown tag values on write'),
  'horae.max_tags': field('maxTags', int(1, 64), 'tags per series, at most'),
  'horae.allow_specialchars': field('allowSpecialChars', (s) => s, 'extra characters allowed in names'),
  'horae.uid.cache_entries': field('uidCacheEntries', int(16, 1e9), 'UID cache entries per kind and direction'),
  'horae.write.series_cache_entries': field('seriesCacheEntries', int(16, 1e9), 'series cached by the writer'),
  'horae.write.durability': field('durability', parseDurability, 'sync | buffered'),
  'horae.write.max_inflight_points': field('maxInflightPoints', int(1000, 1e9), 'points accepted but not yet durable, at most'),
  'horae.http.max_body_bytes': field('maxBodyBytes', int(1024, 2 ** 31), 'largest /api/put body'),
  'horae.compaction.enable': field('compactHours', parseBoolValue, 'compress closed hours'),
  'horae.compaction.grace_ms': field('compactGraceMs', int(0, 1e9), 'wait after an hour ends'),
  'horae.compaction.idle_ms': field('compactIdleMs', int(0, 1e9), 'row idle time before compaction'),
  'horae.compaction.interval_ms': field('compactIntervalMs', int(10, 1e9), 'compactor period'),
  'horae.telnet.return_errors': field('telnetReturnErrors', parseBoolValue, 'answer telnet put errors'),
  'horae.http.cors_domains': field('corsDomains', (s) => s, 'CORS origins: * or a comma list (empty: off)'),
  'horae.http.cors_headers': field('corsHeaders', (s) => s, 'headers a CORS preflight allows'),
  'horae.query.allow_delete': field('queryAllowDelete', parseBoolValue, 'let DELETE /api/query remove data'),
  'horae.query.max_series': field('queryMaxSeries', int(1, 1e9), 'series one query may read (413 beyond)'),
  'horae.query.max_points': field('queryMaxPoints', int(1, 1e12), 'points one query may read (413 beyond)'),
  'horae.storage.memstore_flush_bytes': storeField('memstoreFlushBytes', 4096, 2 ** 31, 'a region memstore is flushed at this size'),
  'horae.storage.memstore_total_bytes': storeField('memstoreTotalBytes', 4096, 2 ** 40, 'all memstores together; writers wait at twice this'),
  'horae.storage.wal_file_bytes': storeField('walFileBytes', 4096, 2 ** 31, 'the WAL rolls to a new file past this size'),
  'horae.storage.region_split_bytes': storeField('regionSplitBytes', 4096, 2 ** 40, 'a region splits past this size'),
  'horae.storage.compaction_min_files': storeField('compactionMinFiles', 2, 1000, 'files of a region that start a compaction'),
  'horae.storage.block_cache_bytes': storeField('blockCacheBytes', 0, 2 ** 40, 'block cache capacity'),
  'horae.query.timeout_ms': field('queryTimeoutMs', int(0, 1e9), 'ms a query may run (413 beyond; 0: no limit)'),
  'horae.query.max_concurrent': field('queryMaxConcurrent', int(0, 1e6), 'queries running at once (0: no limit); more wait'),
  'horae.query.queue_ms': field('queryQueueMs', int(0, 1e9), 'ms a query waits for a slot before 503'),
  'horae.query.decode_threads': field('queryDecodeThreads', int(0, 64), 'worker threads decoding big queries and formatting big answers (default: cores - 1, at most 3; 0 on one core)'),
  'horae.query.parallel_min_rows': field('queryParallelMinRows', int(0, 1e12), 'rows a sub-query must expect to be decoded in parallel'),
  'horae.query.exact_max_rows': field('queryExactMaxRows', int(0, 1e6), 'most rows a sub-query reads by exact gets (series index × hours) instead of scanning every salt bucket; 0: always scan'),
  'horae.query.last_cache_series': field('queryLastCacheSeries', int(0, 1e9), 'series whose newest point /api/query/last keeps in memory (embedded store only; 0: none)'),
  'horae.auth.tokens_file': {
    apply: (out, raw, baseDir) => { out.tsdb.authTokensFile = raw.trim() === '' ? '' : resolve(baseDir, raw.trim()); },
    help: 'authTokensFile: file of `token role` lines (role read|write); auth is off without tokens',
  },
  'horae.auth.tokens': field('authTokens', (s) => s.trim(), 'inline `token role, ...` (env HORAE_AUTH_TOKENS)'),
  'horae.http.max_header_bytes': field('httpMaxHeaderBytes', int(1024, 1024 * 1024), 'largest request line + headers (431 beyond)'),
  'horae.http.max_url_bytes': field('httpMaxUrlBytes', int(256, 1024 * 1024), 'longest request URL (414 beyond)'),
  'horae.http.query_lane': field('httpQueryLane', parseBoolValue, 'answer plain POST /api/query before fastify\'s routing (same answers, less CPU)'),
  'horae.http.headers_timeout_ms': field('httpHeadersTimeoutMs', int(100, 1e9), 'time to receive a request head (slowloris)'),
  'horae.http.request_timeout_ms': field('httpRequestTimeoutMs', int(100, 1e9), 'time to receive a whole request (408 beyond)'),
  'horae.http.keep_alive_timeout_ms': field('httpKeepAliveTimeoutMs', int(100, 1e9), 'idle keep-alive connections closed after'),
  'horae.telnet.idle_timeout_ms': field('telnetIdleTimeoutMs', int(0, 1e9), 'idle telnet connections closed after (0: never)'),
  'horae.telnet.max_line_bytes': field('telnetMaxLineBytes', int(1024, 64 * 1024 * 1024), 'longest telnet line (connection closed beyond)'),
  'horae.ingest.put_worker_scan': field('ingestPutWorkerScan', parseBoolValue, 'scan /api/put JSON bodies of 64 KiB or more on a query decode worker (default on: more points/s for a little more CPU a point; see tsdb/OPERATOR.md)'),
  'horae.ingest.group_window_ms': field('ingestGroupWindowMs', int(0, 1000), 'while writers stream, a write group smaller than the recent ones waits for more points, up to this many ms after the last (0: never; see tsdb/OPERATOR.md)'),
  'horae.network.max_connections': field('maxConnections', int(0, 1e7), 'open connections at most (0: no limit)'),
};

const OPENTSDB_FIELDS: Readonly<Record<string, KeySpec>> = {
  'tsd.network.port': PORT,
  'tsd.network.bind': BIND,
  'tsd.core.auto_create_metrics': HORAE_FIELDS['horae.auto_create.metrics']!,
  'tsd.core.auto_create_tagks': HORAE_FIELDS['horae.auto_create.tagks']!,
  'tsd.core.auto_create_tagvs': HORAE_FIELDS['horae.auto_create.tagvs']!,
  'tsd.storage.max_tags': HORAE_FIELDS['horae.max_tags']!,
  'tsd.core.tag.allow_specialchars': HORAE_FIELDS['horae.allow_specialchars']!,
  'tsd.storage.uid.width.metric': HORAE_FIELDS['horae.uid.width.metric']!,
  'tsd.storage.uid.width.tagk': HORAE_FIELDS['horae.uid.width.tagk']!,
  'tsd.storage.uid.width.tagv': HORAE_FIELDS['horae.uid.width.tagv']!,
  'tsd.storage.salt.width': HORAE_FIELDS['horae.salt.width']!,
  'tsd.storage.salt.buckets': HORAE_FIELDS['horae.salt.buckets']!,
  'tsd.http.request.max_chunk': HORAE_FIELDS['horae.http.max_body_bytes']!,
  'tsd.storage.enable_compaction': HORAE_FIELDS['horae.compaction.enable']!,
  'tsd.rpc.telnet.return_errors': HORAE_FIELDS['horae.telnet.return_errors']!,
  'tsd.http.request.cors_domains': HORAE_FIELDS['horae.http.cors_domains']!,
  'tsd.http.request.cors_headers': HORAE_FIELDS['horae.http.cors_headers']!,
  'tsd.http.query.allow_delete': HORAE_FIELDS['horae.query.allow_delete']!,
  'tsd.query.limits.data_points.default': HORAE_FIELDS['horae.query.max_points']!,
  'tsd.core.connections.limit': HORAE_FIELDS['horae.network.max_connections']!,
  'tsd.query.timeout': HORAE_FIELDS['horae.query.timeout_ms']!,
  // Accepted and checked; Horae always keeps the last write of a timestamp.
  'tsd.storage.fix_duplicates': { apply: (_out, raw) => void parseBoolValue(raw), help: 'accepted; Horae always keeps the last write' },
};

/** Every key Horae understands → what it sets. */
export const CONFIG_KEYS: Readonly<Record<string, KeySpec>> = { ...HORAE_FIELDS, ...OPENTSDB_FIELDS };

// ---- parsing ---------------------------------------------------------------------------

/** One `key = value` of a properties file, with the line it starts on. */
export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  readonly line: number;
}

/** Splits Java-properties text into entries (escapes resolved, comments dropped). */
export function parseProperties(text: string): PropertyEntry[] {
  const lines = text.split(/\r\n|\n|\r/);
  const out: PropertyEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const startLine = i + 1;
    let logical = lines[i]!.replace(/^[ \t\f]+/, '');
    if (logical.length === 0 || logical[0] === '#' || logical[0] === '!') continue;
    while (endsWithContinuation(logical) && i + 1 < lines.length) {
      logical = logical.slice(0, -1) + lines[++i]!.replace(/^[ \t\f]+/, '');
    }
    if (endsWithContinuation(logical)) logical = logical.slice(0, -1);
    // Key: up to the first unescaped '=', ':' or whitespace.
    let k = 0;
    while (k < logical.length && !/[=: \t\f]/.test(logical[k]!)) k += logical[k] === '\\' ? 2 : 1;
    const key = unescape(logical.slice(0, k));
    let v = k;
    while (v < logical.length && /[ \t\f]/.test(logical[v]!)) v++;
    if (v < logical.length && (logical[v] === '=' || logical[v] === ':')) v++;
    while (v < logical.length && /[ \t\f]/.test(logical[v]!)) v++;
    out.push({ key, value: unescape(logical.slice(v)), line: startLine });
  }
  return out;
}

function endsWithContinuation(s: string): boolean {
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

function unescape(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_m, c: string) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16));
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === 'f' ? '\f' : c;
  });
}

/**
 * Parses config text. `file` names it in messages; relative paths in it are taken
 * relative to `dirname(file)`. Throws ConfigError listing every bad line.
 */
export function parseConfigText(text: string, file: string): ParsedConfigFile {
  const out: ParsedConfigFile = { tsdb: {}, warnings: [] };
  const errors: string[] = [];
  const baseDir = dirname(resolve(file));
  for (const e of parseProperties(text)) {
    const spec = CONFIG_KEYS[e.key];
    if (spec === undefined) {
      if (e.key.startsWith('horae.')) errors.push(`${file}:${e.line}: unknown key ${e.key}`);
      else out.warnings.push(`${file}:${e.line}: ${e.key} is not used by Horae; ignored`);
      continue;
    }
    try {
      spec.apply(out, e.value, baseDir);
    } catch (err) {
      errors.push(`${file}:${e.line}: ${e.key}: ${(err as Error).message}`);
    }
  }
  // As in OpenTSDB, the bucket count means nothing without a salt.
  if (out.tsdb.saltWidth === 0) out.tsdb.saltBuckets = 1;
  if (errors.length === 0) {
    try {
      resolveTsdbConfig(out.tsdb);
    } catch (err) {
      errors.push(`${file}: ${(err as Error).message}`);
    }
  }
  if (errors.length > 0) throw new ConfigError(errors);
  return out;
}

/** Reads and parses a config file. Throws ConfigError (also when it cannot be read). */
export function loadConfigFile(file: string): ParsedConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`cannot read config file ${file}: ${(err as Error).message}`]);
  }
  return parseConfigText(text, file);
}

/** The key table as text, for `horae help config`. */
export function configKeysHelp(): string {
  return Object.entries(CONFIG_KEYS).map(([k, s]) => `  ${k.padEnd(36)} ${s.help}\n`).join('');
}
