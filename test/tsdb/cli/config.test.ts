/**
 * The `horae` settings: the Java-properties config file (OpenTSDB and horae.* keys,
 * warnings and errors with file:line), environment variables, the command line, and
 * their precedence (command line > environment > config file > defaults).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArgsError, parseServeCommand } from '../../../tsdb/cli/args.js';
import { ConfigError, parseConfigText, parseProperties } from '../../../tsdb/cli/config-file.js';
import { CONFIG_KEYS, DEFAULT_TSDB_CONFIG, defaultDecodeThreads } from '../../../tsdb/config.js';
import type { KeyDef } from '../../../tsdb/config.js';
import { VERSION } from '../../../tsdb/version.js';
import { horae, tempDir } from './cli-helpers.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('properties syntax', () => {
  it('reads separators, comments, continuations and escapes with their line numbers', () => {
    const text = [
      '# comment',
      '! also a comment',
      '',
      'a = 1',
      'b:2',
      'c 3',
      '  d  =  spaced value  ',
      'e = first \\',
      '    second',
      'f = tab\\there \\u0041',
      'g\\=h = x',
      'empty =',
    ].join('\r\n');
    expect(parseProperties(text)).toEqual([
      { key: 'a', value: '1', line: 4 },
      { key: 'b', value: '2', line: 5 },
      { key: 'c', value: '3', line: 6 },
      { key: 'd', value: 'spaced value  ', line: 7 },
      { key: 'e', value: 'first second', line: 8 },
      { key: 'f', value: 'tab\there A', line: 10 },
      { key: 'g=h', value: 'x', line: 11 },
      { key: 'empty', value: '', line: 12 },
    ]);
  });
});

describe('config file keys', () => {
  it('maps OpenTSDB keys onto the settings', () => {
    const c = parseConfigText([
      'tsd.network.port = 4343',
      'tsd.network.bind = 0.0.0.0',
      'tsd.core.auto_create_metrics = false',
      'tsd.core.auto_create_tagks = true',
      'tsd.core.auto_create_tagvs = no',
      'tsd.storage.max_tags = 12',
      'tsd.core.tag.allow_specialchars = !@#',
      'tsd.storage.uid.width.metric = 4',
      'tsd.storage.uid.width.tagk = 2',
      'tsd.storage.uid.width.tagv = 5',
      'tsd.storage.salt.width = 1',
      'tsd.storage.salt.buckets = 8',
      'tsd.http.request.max_chunk = 65536',
      'tsd.storage.enable_compaction = false',
      'tsd.rpc.telnet.return_errors = false',
      'tsd.storage.fix_duplicates = true',
    ].join('\n'), 'opentsdb.conf');
    expect(c.server).toEqual({ port: 4343, bind: '0.0.0.0' });
    expect(c.tsdb).toEqual({
      autoCreateMetrics: false, autoCreateTagks: true, autoCreateTagvs: false, maxTags: 12, allowSpecialChars: '!@#',
      uidWidthMetric: 4, uidWidthTagk: 2, uidWidthTagv: 5, saltWidth: 1, saltBuckets: 8, maxBodyBytes: 65536,
      compactHours: false, telnetReturnErrors: false,
    });
    expect(c.warnings).toEqual([]);
  });

  it('has a horae.* key for every TsdbConfig field', () => {
    const values: Record<string, string> = {
      'horae.uid.width.metric': '3', 'horae.uid.width.tagk': '3', 'horae.uid.width.tagv': '3', 'horae.salt.width': '1',
      'horae.salt.buckets': '20', 'horae.auto_create.metrics': 'true', 'horae.auto_create.tagks': 'true',
      'horae.auto_create.tagvs': 'true', 'horae.max_tags': '8', 'horae.allow_specialchars': '!',
      'horae.catalog.memory_bytes': '1048576', 'horae.write.durability': 'buffered',
      'horae.write.max_inflight_points': '5000', 'horae.http.max_body_bytes': '4096', 'horae.hour_compaction.enable': 'true',
      'horae.hour_compaction.grace_ms': '1', 'horae.hour_compaction.idle_ms': '2', 'horae.hour_compaction.interval_ms': '100',
      'horae.retention': '30d', 'horae.retention.metrics': 'sys.cpu.*=7d, audit=forever', 'horae.retention.cleanup': 'true',
      'horae.telnet.return_errors': 'true', 'horae.http.cors_domains': '*', 'horae.http.cors_headers': 'Content-Type',
      'horae.query.allow_delete': 'true', 'horae.query.max_series': '10', 'horae.query.max_points': '1000',
      'horae.auth.tokens_file': '', 'horae.auth.tokens': 'read-token-0123456789 read', 'horae.http.max_header_bytes': '8192',
      'horae.http.max_url_bytes': '4096', 'horae.http.headers_timeout_ms': '5000', 'horae.http.request_timeout_ms': '9000',
      'horae.http.keep_alive_timeout_ms': '1000', 'horae.telnet.idle_timeout_ms': '0', 'horae.telnet.max_line_bytes': '2048',
      'horae.network.max_connections': '100', 'horae.query.timeout_ms': '30000',
      'horae.query.max_concurrent': '4', 'horae.query.queue_ms': '100',
      'horae.query.decode_threads': '1', 'horae.query.parallel_min_rows': '500', 'horae.query.exact_max_rows': '64',
      'horae.query.last_cache': 'true', 'horae.ingest.put_worker_scan': 'true',
      'horae.ingest.group_window_ms': '40', 'horae.memory.budget_bytes': String(256 * 1024 * 1024),
      'horae.limits.new_series_per_hour': '100', 'horae.limits.new_series_per_day': '1000', 'horae.limits.series_per_metric': '50',
      'horae.index.idle_ms': '600000',
    };
    // horae.port, .bind, .data_dir and horae.storage.* set the server settings and the store's options.
    const tsdbKeys = Object.values(CONFIG_KEYS).filter((d) => d.part !== 'server' && d.part !== 'store').map((d) => d.key);
    expect(tsdbKeys.sort()).toEqual(Object.keys(values).sort());
    const c = parseConfigText(Object.entries(values).map(([k, v]) => `${k} = ${v}`).join('\n'), 'h.conf');
    expect(Object.keys(c.tsdb).sort()).toEqual(Object.keys(DEFAULT_TSDB_CONFIG).sort());
    expect(c.tsdb.durability).toBe('buffered');
    expect(c.tsdb.compactIdleMs).toBe(2);
    expect(c.tsdb.ingestGroupWindowMs).toBe(40);
    expect([c.tsdb.catalogMemoryBytes, c.tsdb.indexIdleMs]).toEqual([1048576, 600000]);
  });

  it('converts the deprecated entry-count keys to catalog bytes, with a warning; the new key wins', () => {
    const old = parseConfigText('horae.write.series_cache_entries = 1000\nhorae.uid.cache_entries = 10\nhorae.query.last_cache_series = 0\n', 'o.conf');
    // 1000 series × 800 B over the series entries' half share; the UID count gives less, so the largest wins.
    expect(old.tsdb.catalogMemoryBytes).toBe(Math.ceil((1000 * 800) / (1 / 2)));
    expect(old.tsdb.queryLastCache).toBe(false);
    expect(old.warnings).toHaveLength(3);
    expect(old.warnings[0]).toMatch(/o\.conf:1: horae\.write\.series_cache_entries is deprecated/);
    const both = parseConfigText('horae.index.memory_bytes = 1048576\nhorae.catalog.memory_bytes = 65536\n', 'b.conf');
    expect(both.tsdb.catalogMemoryBytes).toBe(65536);
    expect(parseConfigText('horae.index.memory_bytes = 1048576\n', 'i.conf').tsdb.catalogMemoryBytes).toBe(8 * 1048576);
    expect(() => parseConfigText('horae.uid.cache_entries = lots\n', 'x.conf')).toThrow(/x\.conf:1: horae\.uid\.cache_entries: expected an integer/);
  });

  it('keeps the old names of the two compactions as aliases', () => {
    const c = parseConfigText([
      'horae.compaction.enable = false',
      'horae.compaction.grace_ms = 5',
      'horae.compaction.idle_ms = 6',
      'horae.compaction.interval_ms = 70',
      'horae.storage.compaction_min_files = 3',
    ].join('\n'), 'old.conf');
    expect(c.tsdb).toEqual({ compactHours: false, compactGraceMs: 5, compactIdleMs: 6, compactIntervalMs: 70 });
    expect(c.store).toEqual({ compactionMinFiles: 3 });
    expect(c.warnings).toEqual([]);
    const n = parseConfigText('horae.hour_compaction.enable = false\nhorae.storage.lsm_compaction_min_files = 3\n', 'new.conf');
    expect(n.tsdb).toEqual({ compactHours: false });
    expect(n.store).toEqual({ compactionMinFiles: 3 });
  });

  it('sets the server settings and the store options from their keys, paths relative to the file', () => {
    const c = parseConfigText([
      'horae.port = 1', 'horae.bind = ::1', 'horae.data_dir = d', 'horae.auth.tokens_file = t',
      'horae.storage.memstore_flush_bytes = 8192', 'horae.storage.memstore_total_bytes = 16384', 'horae.storage.wal_file_bytes = 4096',
      'horae.storage.region_split_bytes = 65536', 'horae.storage.block_cache_bytes = 0',
    ].join('\n'), '/etc/horae/h.conf');
    expect(c.server).toEqual({ port: 1, bind: '::1', dataDir: '/etc/horae/d' });
    expect(c.tsdb).toEqual({ authTokensFile: '/etc/horae/t' });
    expect(c.store).toEqual({ memstoreFlushBytes: 8192, memstoreTotalBytes: 16384, walFileBytes: 4096, regionSplitBytes: 65536, blockCacheBytes: 0 });
  });

  it('accepts every name of every key, and each name belongs to one key', () => {
    const seen = new Set<string>();
    for (const def of Object.values(CONFIG_KEYS)) {
      for (const name of [def.key, ...('aliases' in def ? def.aliases : [])]) {
        expect(seen.has(name), name).toBe(false);
        seen.add(name);
        const v = String(def.default === '' ? ((def as KeyDef).example ?? 'x') : def.default);
        expect(() => parseConfigText(`${name} = ${v}\n`, 'a.conf'), name).not.toThrow();
      }
    }
  });

  it('warns about keys Horae does not use, with file:line', () => {
    const c = parseConfigText('tsd.network.port = 1\ntsd.http.cors_domains = *\nhbase.zookeeper.quorum = zk\n', '/etc/o.conf');
    expect(c.warnings).toEqual([
      '/etc/o.conf:2: tsd.http.cors_domains is not used by Horae; ignored',
      '/etc/o.conf:3: hbase.zookeeper.quorum is not used by Horae; ignored',
    ]);
  });

  it('rejects unknown horae.* keys and bad values, naming every bad line', () => {
    const e = configError(() => parseConfigText([
      '# header',
      'horae.write.durability = sometimes',
      'tsd.network.port = 70000',
      'horae.no_such_key = 1',
      'tsd.core.auto_create_metrics = maybe',
      'tsd.storage.max_tags = 8',
    ].join('\n'), 'bad.conf'));
    expect(e.problems).toEqual([
      "bad.conf:2: horae.write.durability: expected sync or buffered, got 'sometimes'",
      "bad.conf:3: tsd.network.port: expected an integer in 0..65535, got '70000'",
      'bad.conf:4: unknown key horae.no_such_key',
      "bad.conf:5: tsd.core.auto_create_metrics: expected true or false, got 'maybe'",
    ]);
  });

  it('checks values against each other (salt buckets must fit the salt width)', () => {
    const e = configError(() => parseConfigText('horae.salt.width = 1\nhorae.salt.buckets = 300\n', 'x.conf'));
    expect(e.problems).toEqual(['x.conf: config saltBuckets (horae.salt.buckets) must be at most 256 with a salt width of 1, got 300']);
  });

  it('turns salting off with OpenTSDB salt width 0 whatever the bucket count', () => {
    const c = parseConfigText('tsd.storage.salt.width = 0\ntsd.storage.salt.buckets = 20\n', 'o.conf');
    expect(c.tsdb).toEqual({ saltWidth: 0, saltBuckets: 1 });
  });
});

describe('settings precedence', () => {
  let t: { dir: string; cleanup: () => void };
  let conf: string;
  beforeEach(() => {
    t = tempDir();
    conf = join(t.dir, 'horae.conf');
    writeFileSync(conf, 'tsd.network.port = 1111\ntsd.network.bind = 10.0.0.1\nhorae.data_dir = store\nhorae.max_tags = 4\n');
  });
  afterEach(() => t.cleanup());

  it('defaults without anything', () => {
    const s = parseServeCommand([], {});
    expect(s).toMatchObject({ port: 4242, bind: '127.0.0.1', dataDir: './data', tsdb: {}, warnings: [], help: false });
  });

  it('config file < environment < command line', () => {
    const fileOnly = parseServeCommand(['--config', conf], {});
    expect(fileOnly).toMatchObject({ port: 1111, bind: '10.0.0.1', dataDir: join(t.dir, 'store'), tsdb: { maxTags: 4 } });
    const env = { HORAE_PORT: '2222', HORAE_BIND: '10.0.0.2', HORAE_DATA_DIR: '/env/data' };
    expect(parseServeCommand(['--config', conf], env)).toMatchObject({ port: 2222, bind: '10.0.0.2', dataDir: '/env/data' });
    expect(parseServeCommand(['serve', '--config', conf, '--port', '3333', '--bind=10.0.0.3', '--data-dir', 'cli'], env))
      .toMatchObject({ port: 3333, bind: '10.0.0.3', dataDir: 'cli', tsdb: { maxTags: 4 } });
  });

  it('HORAE_CONFIG names the file; --config wins over it', () => {
    const other = join(t.dir, 'other.conf');
    writeFileSync(other, 'tsd.network.port = 5555\n');
    expect(parseServeCommand([], { HORAE_CONFIG: conf }).port).toBe(1111);
    expect(parseServeCommand(['--config', other], { HORAE_CONFIG: conf }).port).toBe(5555);
  });

  it('--host is an alias of --bind', () => {
    expect(parseServeCommand(['--host', '0.0.0.0'], {}).bind).toBe('0.0.0.0');
  });

  it('rejects bad ports, unknown options and stray arguments', () => {
    expect(() => parseServeCommand([], { HORAE_PORT: 'http' })).toThrow(/HORAE_PORT: expected an integer/);
    expect(() => parseServeCommand(['--port', '-1'], {})).toThrow(ConfigError);
    expect(() => parseServeCommand(['--verbose'], {})).toThrow(ArgsError);
    expect(() => parseServeCommand(['serve', 'now'], {})).toThrow(ArgsError);
    expect(() => parseServeCommand(['--port'], {})).toThrow(/--port needs a value/);
  });

  it('a missing config file is an error', () => {
    expect(() => parseServeCommand(['--config', join(t.dir, 'nope.conf')], {})).toThrow(/cannot read config file/);
  });
});

describe('runCli dispatch', () => {
  it('returns undefined for a valid serve command line, usage for --help', async () => {
    expect((await horae(['--port', '1234'], {})).code).toBeUndefined();
    expect((await horae([], {})).code).toBeUndefined();
    const h = await horae(['serve', '--help']);
    expect(h.code).toBe(0);
    expect(h.out).toContain('--bind A');
  });

  it('exits 2 with file:line for a bad config file', async () => {
    const t = tempDir();
    try {
      const conf = join(t.dir, 'bad.conf');
      writeFileSync(conf, '\nhorae.max_tags = lots\n');
      const r = await horae(['serve'], { HORAE_CONFIG: conf });
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${conf}:2: horae.max_tags: expected an integer`);
    } finally {
      t.cleanup();
    }
  });

  it('prints the version, help per command, and refuses unknown commands', async () => {
    expect((await horae(['version'])).out).toContain(`horae ${VERSION}`);
    for (const cmd of ['import', 'uid', 'fsck', 'serve']) {
      const r = await horae(['help', cmd]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^Usage: horae/);
      expect((await horae(cmd === 'serve' ? ['serve', '-h'] : [cmd, '--help'])).out).toBe(r.out);
    }
    expect((await horae(['help', 'config'])).out).toContain('tsd.storage.salt.buckets');
    const bad = await horae(['frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("unknown command 'frobnicate'");
  });
});

describe('defaults that depend on the machine', () => {
  it('decode workers: none on 2 cores or fewer, else cores - 1, at most 3', () => {
    expect([1, 2, 3, 4, 8, 64].map(defaultDecodeThreads)).toEqual([0, 1, 2, 3, 3, 3]);
  });
});
