/**
 * The servers the ingest benchmarks feed, each a fresh process on loopback with a fresh
 * data directory under os.tmpdir(), stopped by PID:
 *
 *   horae            bench/peers/horae-server.ts (a child with an IPC channel), default
 *                    config, telnet and HTTP on one ephemeral port
 *   victoriametrics  `victoria-metrics` 1.79 (Debian package), started with
 *                    -retentionPeriod=100y, HTTP 127.0.0.1:18428, OpenTSDB telnet
 *                    :14242, OpenTSDB HTTP :14243
 *   influxdb         `influxd run` 1.6 with a generated config: HTTP 127.0.0.1:18086, RPC
 *                    :18088, [[opentsdb]] on :14244 (telnet and /api/put), inmem index,
 *                    cache-snapshot-write-cold-duration 10s, compact-full-write-cold-duration
 *                    30s, monitor store off; database `opentsdb` created before the load
 *
 * `ingested()` is the cheap poll of what is visible to queries (Horae: the writer's
 * pointsWritten — a point counts once its write call resolved, i.e. it is in the memstore;
 * VictoriaMetrics: rows added to storage minus rows still pending in its in-memory buffer;
 * InfluxDB: points written to shards); `count()` asks the query path itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TSDB_CONFIG } from '../../tsdb/config.js';
import type { TsdbConfig } from '../../tsdb/config.js';
import type { DevopsOptions, WireFormat } from '../devops-data.js';
import { METRICS } from '../devops-data.js';
import { IpcChannel, benchScript, forkScript, http, pollUntil, sleep, spawnLogged, stopProcess, waitPort } from './proc.js';
import type { ChildProcess } from 'node:child_process';

export type SystemName = 'horae' | 'victoriametrics' | 'influxdb';

export interface Endpoint {
  readonly proto: 'telnet' | 'http';
  readonly host: string;
  readonly port: number;
  readonly path?: string;
  readonly contentType?: string;
}

export interface Target {
  readonly system: SystemName;
  readonly version: string;
  readonly pid: number;
  /** The directory whose files are the stored data (measured for bytes/point). */
  readonly dataDir: string;
  /** The loopback port of the query API (Horae /api/query, VictoriaMetrics /api/v1, InfluxDB /query). */
  readonly queryPort: number;
  endpoint(format: WireFormat): Endpoint | undefined;
  ingested(): Promise<{ points: number; rejected: number }>;
  /** Points counted by the query path. */
  count(o: DevopsOptions): Promise<number>;
  /** Writes the dataset in-process (Horae only). */
  inproc?(o: DevopsOptions, inflight: number): Promise<Record<string, unknown>>;
  /** Flushes and merges so the files are what stays on disk; says which stage was reached. */
  settle(): Promise<Record<string, unknown>>;
  /** Reads everything back and compares with the dataset (Horae only). */
  verify?(o: DevopsOptions): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
  /** Removes the temporary directory (after stop). */
  cleanup(): void;
}

const HOST = '127.0.0.1';

function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

function packageVersion(pkg: string): string {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** Fails early when a fixed peer port is taken (a leftover peer from an earlier run). */
async function assertPortFree(port: number): Promise<void> {
  const taken = await waitPort(HOST, port, 0).then(() => true, () => false);
  if (taken) throw new Error(`127.0.0.1:${port} is in use (a peer left running?)`);
}

// ---------------------------------------------------------------------------------------
// Horae

export interface HoraeStartOptions {
  readonly config?: Partial<TsdbConfig>;
  /** Store options over the defaults (openEmbeddedStore), e.g. { memstoreTotalBytes }. */
  readonly store?: Record<string, unknown>;
  /** Extra node flags for the server process (e.g. --cpu-prof --cpu-prof-dir=DIR). */
  readonly nodeArgs?: readonly string[];
  readonly version?: string;
}

export async function startHorae(opts: HoraeStartOptions = {}): Promise<Target> {
  // A misspelt key (or a config-file name such as horae.ingest.group_window_ms) would
  // otherwise be ignored, and the run measure the defaults under another name.
  const unknown = Object.keys(opts.config ?? {}).filter((k) => !(k in DEFAULT_TSDB_CONFIG));
  if (unknown.length > 0) throw new Error(`unknown TsdbConfig field(s) ${unknown.join(', ')} (use field names, e.g. ingestGroupWindowMs)`);
  const dir = tempDir('horae-ingest-');
  const child = forkScript(benchScript(import.meta.url, './horae-server.js'), [JSON.stringify({ dir, ...(opts.config === undefined ? {} : { config: opts.config }), ...(opts.store === undefined ? {} : { store: opts.store }) })], opts.nodeArgs ?? []);
  const ipc = new IpcChannel(child, 'horae-server');
  const ready = await ipc.next('ready', 60_000);
  const port = Number(ready['port']);
  const ingested = async (): Promise<{ points: number; rejected: number }> => {
    const r = await ipc.request({ cmd: 'stats' }, 30_000);
    const s = r['ingest'] as { pointsWritten: number; pointsRejected: number };
    return { points: s.pointsWritten, rejected: s.pointsRejected };
  };
  return {
    system: 'horae',
    version: opts.version ?? 'working tree',
    pid: child.pid!,
    dataDir: dir,
    queryPort: port,
    endpoint(format) {
      if (format === 'telnet') return { proto: 'telnet', host: HOST, port };
      return { proto: 'http', host: HOST, port, path: '/api/put', contentType: format === 'msgpack' ? 'application/x-msgpack' : 'application/json' };
    },
    ingested,
    // Points count once their write call resolved (they are in the memstore, readable).
    count: async () => (await ingested()).points,
    inproc: (o, inflight) => ipc.request({ cmd: 'inproc', dataset: o, inflight }),
    settle: () => ipc.request({ cmd: 'settle' }),
    verify: (o) => ipc.request({ cmd: 'verify', dataset: o }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      try {
        await ipc.request({ cmd: 'stop' }, 120_000);
        await Promise.race([exited, sleep(30_000)]);
      } finally {
        await stopProcess(child, 'SIGKILL', 5_000);
      }
    },
    // HORAE_BENCH_KEEP_DIR=1 keeps the loaded data directory (to query it again by hand).
    cleanup: () => (process.env['HORAE_BENCH_KEEP_DIR'] === '1' ? console.log(`kept ${dir}`) : rmSync(dir, { recursive: true, force: true })),
  };
}

// ---------------------------------------------------------------------------------------
// Metrics helpers

/** Prometheus text → sum of the samples whose name and labels match. */
function promSum(text: string, name: string, labelFilter?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labelFilter !== undefined && !rest.includes(labelFilter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function stopPeer(child: ChildProcess): Promise<void> {
  await stopProcess(child, 'SIGINT', 60_000);
}

// ---------------------------------------------------------------------------------------
// VictoriaMetrics

const VM = { http: 18428, telnet: 14242, opentsdbHttp: 14243 };

export async function startVictoria(): Promise<Target> {
  for (const p of Object.values(VM)) await assertPortFree(p);
  const root = tempDir('vm-ingest-');
  const dataDir = path.join(root, 'data');
  const child = spawnLogged('victoria-metrics', [
    `-storageDataPath=${dataDir}`, '-retentionPeriod=100y',
    `-httpListenAddr=${HOST}:${VM.http}`,
    `-opentsdbListenAddr=${HOST}:${VM.telnet}`,
    `-opentsdbHTTPListenAddr=${HOST}:${VM.opentsdbHttp}`,
  ], path.join(root, 'victoria-metrics.log'));
  const base = `http://${HOST}:${VM.http}`;
  try {
    await pollUntil('VictoriaMetrics /health', 60_000, 100, async () => ((await http(`${base}/health`)).status === 200 ? true : undefined));
    await waitPort(HOST, VM.telnet, 30_000);
    await waitPort(HOST, VM.opentsdbHttp, 30_000);
  } catch (err) {
    await stopPeer(child);
    throw err;
  }
  const metrics = async (): Promise<string> => (await http(`${base}/metrics`)).body;
  return {
    system: 'victoriametrics',
    version: packageVersion('victoria-metrics'),
    pid: child.pid!,
    dataDir,
    queryPort: VM.http,
    endpoint(format) {
      if (format === 'telnet') return { proto: 'telnet', host: HOST, port: VM.telnet };
      if (format === 'json') return { proto: 'http', host: HOST, port: VM.opentsdbHttp, path: '/api/put', contentType: 'application/json' };
      return undefined;
    },
    async ingested() {
      const m = await metrics();
      const added = promSum(m, 'vm_rows_added_to_storage_total');
      const pending = promSum(m, 'vm_pending_rows', 'type="storage"');
      const rejected = promSum(m, 'vm_rows_invalid_total') + promSum(m, 'vm_rows_ignored_total') +
        promSum(m, 'vm_protoparser_read_errors_total') + promSum(m, 'vm_protoparser_unmarshal_errors_total');
      return { points: added - pending, rejected };
    },
    async count(o) {
      const end = o.startSec + o.steps * o.intervalSec;
      const q = new URLSearchParams({
        query: `sum(count_over_time({__name__=~"cpu[.].*"}[${Math.ceil((end - o.startSec) / 3600) + 1}h]))`,
        time: String(end + 1),
        nocache: '1',
      });
      const r = await http(`${base}/api/v1/query?${q}`, { timeoutMs: 120_000 });
      const j = JSON.parse(r.body) as { data?: { result?: Array<{ value: [number, string] }> } };
      return Number(j.data?.result?.[0]?.value[1] ?? 0);
    },
    async settle() {
      const t0 = Date.now();
      await http(`${base}/internal/force_flush`, { timeoutMs: 300_000 });
      await http(`${base}/internal/force_merge`, { timeoutMs: 600_000 });
      // force_merge is asynchronous in 1.79: wait until no merge has run for 3 s.
      let quietSince = 0;
      await pollUntil('VictoriaMetrics merges to finish', 900_000, 500, async () => {
        const active = promSum(await metrics(), 'vm_active_merges');
        if (active > 0) quietSince = 0;
        else if (quietSince === 0) quietSince = Date.now();
        return quietSince > 0 && Date.now() - quietSince >= 3000 && Date.now() - t0 >= 2000 ? true : undefined;
      });
      return { stage: 'force_flush + force_merge, no active merges for 3 s', seconds: (Date.now() - t0) / 1000 };
    },
    stop: () => stopPeer(child),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------
// InfluxDB

const INFLUX = { http: 18086, rpc: 18088, opentsdb: 14244 };

export async function startInflux(): Promise<Target> {
  for (const p of Object.values(INFLUX)) await assertPortFree(p);
  const root = tempDir('influx-ingest-');
  const dataDir = path.join(root, 'influxdb');
  mkdirSync(dataDir);
  const conf = path.join(root, 'influxdb.conf');
  writeFileSync(conf, `reporting-enabled = false
bind-address = "${HOST}:${INFLUX.rpc}"
[meta]
  dir = "${dataDir}/meta"
[data]
  dir = "${dataDir}/data"
  wal-dir = "${dataDir}/wal"
  index-version = "inmem"
  query-log-enabled = false
  cache-snapshot-write-cold-duration = "10s"
  compact-full-write-cold-duration = "30s"
[monitor]
  store-enabled = false
[http]
  bind-address = "${HOST}:${INFLUX.http}"
  log-enabled = false
[[opentsdb]]
  enabled = true
  bind-address = "${HOST}:${INFLUX.opentsdb}"
  database = "opentsdb"
`);
  const child = spawnLogged('influxd', ['run', '-config', conf], path.join(root, 'influxd.log'));
  const base = `http://${HOST}:${INFLUX.http}`;
  try {
    await pollUntil('InfluxDB /ping', 60_000, 100, async () => ((await http(`${base}/ping`)).status === 204 ? true : undefined));
    const r = await http(`${base}/query`, { method: 'POST', body: new URLSearchParams({ q: 'CREATE DATABASE opentsdb' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    if (r.status !== 200) throw new Error(`CREATE DATABASE: ${r.status} ${r.body}`);
    await waitPort(HOST, INFLUX.opentsdb, 30_000);
  } catch (err) {
    await stopPeer(child);
    throw err;
  }
  type Vars = Record<string, { name?: string; values?: Record<string, number> }>;
  const vars = async (): Promise<Vars> => JSON.parse((await http(`${base}/debug/vars`)).body) as Vars;
  const sumOf = (v: Vars, name: string, fields: readonly string[]): number => {
    let s = 0;
    for (const e of Object.values(v)) {
      if (e === null || typeof e !== 'object' || e.name !== name || e.values === undefined) continue;
      for (const f of fields) s += Number(e.values[f] ?? 0);
    }
    return s;
  };
  return {
    system: 'influxdb',
    version: packageVersion('influxdb'),
    pid: child.pid!,
    dataDir,
    queryPort: INFLUX.http,
    endpoint(format) {
      if (format === 'telnet') return { proto: 'telnet', host: HOST, port: INFLUX.opentsdb };
      if (format === 'json') return { proto: 'http', host: HOST, port: INFLUX.opentsdb, path: '/api/put', contentType: 'application/json' };
      return undefined;
    },
    async ingested() {
      const v = await vars();
      return {
        points: sumOf(v, 'shard', ['writePointsOk']),
        rejected: sumOf(v, 'shard', ['writePointsDropped', 'writePointsErr']) +
          sumOf(v, 'opentsdb', ['droppedPointsInvalid', 'tlBadLine', 'tlBadTime', 'tlBadTag', 'tlBadFloat']),
      };
    },
    async count() {
      const q = new URLSearchParams({ db: 'opentsdb', q: `SELECT count(value) FROM ${METRICS.map((m) => `"${m}"`).join(',')}` });
      const r = await http(`${base}/query?${q}`, { timeoutMs: 300_000 });
      const j = JSON.parse(r.body) as { results?: Array<{ series?: Array<{ values: Array<[string, number]> }> }> };
      let n = 0;
      for (const s of j.results?.[0]?.series ?? []) for (const row of s.values) n += Number(row[1]);
      return n;
    },
    async settle() {
      // InfluxDB snapshots its cache after 10 s without writes and fully compacts a shard
      // after 30 s (the config above): wait until the cache is empty, nothing is queued or
      // running, and no compaction counter has moved for 45 s.
      const t0 = Date.now();
      const counters = ['cacheCompactions', 'tsmLevel1Compactions', 'tsmLevel2Compactions', 'tsmLevel3Compactions', 'tsmOptimizeCompactions', 'tsmFullCompactions'];
      const busy = ['cacheCompactionsActive', 'tsmLevel1CompactionsActive', 'tsmLevel2CompactionsActive', 'tsmLevel3CompactionsActive', 'tsmOptimizeCompactionsActive', 'tsmFullCompactionsActive',
        'tsmLevel1CompactionQueue', 'tsmLevel2CompactionQueue', 'tsmLevel3CompactionQueue', 'tsmOptimizeCompactionQueue', 'tsmFullCompactionQueue'];
      let last = '';
      let since = Date.now();
      let full = 0;
      await pollUntil('InfluxDB snapshots and compactions to settle', 900_000, 1000, async () => {
        const v = await vars();
        const sig = counters.map((c) => sumOf(v, 'tsm1_engine', [c])).join(',');
        if (sig !== last) {
          last = sig;
          since = Date.now();
        }
        full = sumOf(v, 'tsm1_engine', ['tsmFullCompactions']);
        const quiet = sumOf(v, 'tsm1_cache', ['memBytes']) === 0 && sumOf(v, 'tsm1_engine', busy) === 0;
        return quiet && Date.now() - since >= 45_000 ? true : undefined;
      });
      return {
        stage: `cache snapshotted (10 s cold), ${full} full compaction(s) (30 s cold), no compaction for 45 s`,
        seconds: (Date.now() - t0) / 1000,
        fullCompactions: full,
      };
    },
    stop: () => stopPeer(child),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export function startTarget(system: SystemName, horae: HoraeStartOptions = {}): Promise<Target> {
  switch (system) {
    case 'horae': return startHorae(horae);
    case 'victoriametrics': return startVictoria();
    case 'influxdb': return startInflux();
  }
}
