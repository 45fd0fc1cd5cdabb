/**
 * The servers the benchmarks feed, each a process on loopback with a fresh data directory
 * under os.tmpdir() (or, for a restart, the directory of a stopped one), stopped by PID:
 *
 *   horae            as users run it: `npm start -- --port P --bind 127.0.0.1 --data-dir D`
 *                    in the Horae checkout (HORAE_DIR, else the nearest ancestor of this
 *                    file whose package.json is Horae's, else the working directory), default
 *                    config (extra server arguments: StartOptions.args), telnet and HTTP on
 *                    one free port. Fed and read only through telnet and HTTP; the CPU and
 *                    RSS measured are those of the whole `npm start` process tree
 *   victoriametrics  `victoria-metrics` 1.79 (Debian package), started with
 *                    -retentionPeriod=100y, HTTP 127.0.0.1:18428, OpenTSDB telnet
 *                    :14242, OpenTSDB HTTP :14243
 *   influxdb         `influxd run` 1.6 with a generated config: HTTP 127.0.0.1:18086, RPC
 *                    :18088, [[opentsdb]] on :14244 (telnet and /api/put), inmem index,
 *                    cache-snapshot-write-cold-duration 10s, compact-full-write-cold-duration
 *                    30s, monitor store off; database `opentsdb` created before the load
 *
 * `ingested()` is the cheap poll of what is stored (Horae: /api/stats `tsd.rpc.received`
 * minus `tsd.rpc.errors{type=invalid_values}`, points whose write resolved;
 * VictoriaMetrics: rows added to storage minus rows still pending in its in-memory buffer;
 * InfluxDB: points written to shards); `count()` asks the query path itself. Nothing here
 * forces a flush, a merge or a compaction: a target is left alone between the calls.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { DevopsOptions, WireFormat } from '../devops-data.js';
import { metricNames } from '../devops-data.js';
import { http, parentPid, pollUntil, processTree, sleep, spawnLogged, stopProcess, waitPort } from './proc.js';
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
  /** The process started (Horae: `npm`); CPU and RSS are measured over its process tree. */
  readonly pid: number;
  /** The process that serves (Horae: the node process under npm; a peer: `pid`), for /proc/<pid>/io. */
  readonly serverPid: number;
  /** performance.now() when the process was spawned. */
  readonly spawnedAt: number;
  /** The directory of this server (data, log): given again to restart on its data, removed by cleanup. */
  readonly root: string;
  /** The directory whose files are the stored data (measured for bytes/point). */
  readonly dataDir: string;
  /** The loopback port of the query API (Horae /api/query, VictoriaMetrics /api/v1, InfluxDB /query). */
  readonly queryPort: number;
  endpoint(format: WireFormat): Endpoint | undefined;
  ingested(): Promise<{ points: number; rejected: number }>;
  /** Points counted by the query path. */
  count(o: DevopsOptions): Promise<number>;
  /** Self-reported figures: Horae's /api/stats by name (`metric{k=v}`), a peer's /metrics samples. */
  selfStats(): Promise<Record<string, number>>;
  /** A clean stop (SIGTERM to Horae's server, SIGINT to a peer); resolves when the whole tree has exited. */
  stop(): Promise<void>;
  /** Removes `root` (after stop). */
  cleanup(): void;
}

export interface StartOptions {
  /** The root of a stopped target of the same system: restart on its data. */
  readonly root?: string;
  readonly version?: string;
  /** Horae: extra `npm start` arguments (e.g. --config FILE). */
  readonly args?: readonly string[];
  /** Horae: extra environment (e.g. NODE_OPTIONS for a CPU profile). */
  readonly env?: Readonly<Record<string, string>>;
}

const HOST = '127.0.0.1';

function rootDir(prefix: string, given: string | undefined): string {
  return given ?? mkdtempSync(path.join(os.tmpdir(), prefix));
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

/**
 * A free port below the kernel's ephemeral range (32768-60999), so that no test server
 * bound to port 0 on this machine takes it while `npm start` builds.
 */
async function freePort(): Promise<number> {
  for (let i = 0; ; i++) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, HOST, () => s.close(() => resolve(true)));
    });
    if (free) return port;
    if (i === 50) throw new Error('no free port in 20000-29999');
  }
}

// ---------------------------------------------------------------------------------------
// Horae

/** The Horae checkout whose `npm start` is measured. */
export function horaeDir(): string {
  const env = process.env['HORAE_DIR'];
  if (env !== undefined && env !== '') return path.resolve(env);
  for (let d = path.dirname(fileURLToPath(import.meta.url)); ; d = path.dirname(d)) {
    const pkg = path.join(d, 'package.json');
    if (existsSync(pkg)) {
      const j = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string; scripts?: Record<string, string> };
      if (j.name === 'horae' && j.scripts?.['start'] !== undefined) return d;
    }
    if (path.dirname(d) === d) return process.cwd();
  }
}

/** /api/stats points as { 'metric{k=v,…}': value } (the `host` tag left out; equal keys summed). */
export function statsByName(points: ReadonlyArray<{ metric: string; value: number; tags?: Record<string, string> }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of points) {
    const tags = Object.entries(p.tags ?? {}).filter(([k]) => k !== 'host').map(([k, v]) => `${k}=${v}`).join(',');
    const key = tags === '' ? p.metric : `${p.metric}{${tags}}`;
    out[key] = (out[key] ?? 0) + Number(p.value);
  }
  return out;
}

/** The one live leaf of a process tree: the server under `npm` (and `sh`). */
function isServer(pid: number): boolean {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('tsdb/main.js') || cmd.includes('bin/horae.js');
  } catch {
    return false;
  }
}

function serverOf(root: number): number {
  const tree = processTree(root);
  const parents = new Set(tree.map(parentPid));
  // The server is the node leaf running bin/horae.js (the server on a heap-limited worker
  // thread of it; older builds: a child node running dist/tsdb/main.js; a rebuild of a stale
  // dist/ left esbuild's service beside it).
  const leaves = tree.filter((p) => !parents.has(p) && isServer(p));
  if (leaves.length !== 1) throw new Error(`expected one server process under pid ${root}, found ${leaves.length} (${leaves.join(', ')})`);
  return leaves[0]!;
}

export async function startHorae(opts: StartOptions = {}): Promise<Target> {
  const root = rootDir('horae-bench-', opts.root);
  const dataDir = path.join(root, 'data');
  const port = await freePort();
  const spawnedAt = performance.now();
  const child = spawnLogged('npm', ['start', '--', '--port', String(port), '--bind', HOST, '--data-dir', dataDir, ...(opts.args ?? [])],
    path.join(root, 'horae.log'), { cwd: horaeDir(), env: { ...process.env, ...(opts.env ?? {}) } });
  const base = `http://${HOST}:${port}`;
  try {
    await pollUntil('Horae /api/version', 300_000, 25, async () => {
      if (child.exitCode !== null) throw new Error(`npm start exited with code ${child.exitCode} (see ${root}/horae.log)`);
      return (await http(`${base}/api/version`, { timeoutMs: 5_000 })).status === 200 ? true : undefined;
    });
  } catch (err) {
    await stopTree(child, undefined);
    throw err;
  }
  const serverPid = serverOf(child.pid!);
  const selfStats = async (): Promise<Record<string, number>> => {
    const r = await http(`${base}/api/stats`, { timeoutMs: 30_000 });
    if (r.status !== 200) throw new Error(`Horae /api/stats: HTTP ${r.status}: ${r.body.slice(0, 200)}`);
    return statsByName(JSON.parse(r.body) as Array<{ metric: string; value: number; tags?: Record<string, string> }>);
  };
  return {
    system: 'horae',
    version: opts.version ?? 'working tree',
    pid: child.pid!,
    serverPid,
    spawnedAt,
    root,
    dataDir,
    queryPort: port,
    endpoint(format) {
      if (format === 'telnet') return { proto: 'telnet', host: HOST, port };
      return { proto: 'http', host: HOST, port, path: '/api/put', contentType: format === 'msgpack' ? 'application/x-msgpack' : 'application/json' };
    },
    async ingested() {
      const s = await selfStats();
      const rejected = s['tsd.rpc.errors{type=invalid_values}'] ?? 0;
      return { points: (s['tsd.rpc.received{type=put}'] ?? 0) - rejected, rejected };
    },
    async count(o) {
      // One bucket per series over the whole dataset, summed: every stored point of each metric.
      const end = o.startSec + o.steps * o.intervalSec;
      const queries = metricNames(o).map((metric) => ({ metric, aggregator: 'sum', downsample: '0all-count' }));
      const r = await http(`${base}/api/query`, {
        method: 'POST', body: JSON.stringify({ start: o.startSec, end, queries }), headers: { 'content-type': 'application/json' }, timeoutMs: 300_000,
      });
      if (r.status !== 200) throw new Error(`Horae count: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
      let n = 0;
      for (const s of JSON.parse(r.body) as Array<{ dps?: Record<string, number> }>) for (const v of Object.values(s.dps ?? {})) n += v;
      return n;
    },
    selfStats,
    stop: () => stopTree(child, serverPid),
    // HORAE_BENCH_KEEP_DIR=1 keeps the loaded data directory (to query it again by hand).
    cleanup: () => (process.env['HORAE_BENCH_KEEP_DIR'] === '1' ? console.log(`kept ${dataDir}`) : rmSync(root, { recursive: true, force: true })),
  };
}

/**
 * SIGTERM to the server process (as a service manager stops it; before it is known, to
 * npm), then waits until `npm` has exited; after 120 s every live member of the tree gets
 * SIGKILL, by pid.
 */
async function stopTree(child: ChildProcess, serverPid: number | undefined): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    process.kill(serverPid ?? child.pid!, 'SIGTERM');
  } catch {
    // already gone
  }
  if (await Promise.race([exited.then(() => true), sleep(120_000).then(() => false)])) return;
  for (const pid of processTree(child.pid!).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await exited;
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

/** The VictoriaMetrics self-metrics the benchmarks record (sums over labels). */
const VM_STATS = ['vm_new_timeseries_created_total', 'vm_rows_added_to_storage_total', 'process_resident_memory_bytes', 'go_memstats_heap_inuse_bytes', 'go_memstats_sys_bytes', 'vm_cache_size_bytes'];

export async function startVictoria(opts: StartOptions = {}): Promise<Target> {
  for (const p of Object.values(VM)) await assertPortFree(p);
  const root = rootDir('vm-bench-', opts.root);
  const dataDir = path.join(root, 'data');
  const spawnedAt = performance.now();
  const child = spawnLogged('victoria-metrics', [
    `-storageDataPath=${dataDir}`, '-retentionPeriod=100y',
    `-httpListenAddr=${HOST}:${VM.http}`,
    `-opentsdbListenAddr=${HOST}:${VM.telnet}`,
    `-opentsdbHTTPListenAddr=${HOST}:${VM.opentsdbHttp}`,
  ], path.join(root, 'victoria-metrics.log'));
  const base = `http://${HOST}:${VM.http}`;
  try {
    await pollUntil('VictoriaMetrics /health', 120_000, 25, async () => ((await http(`${base}/health`)).status === 200 ? true : undefined));
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
    serverPid: child.pid!,
    spawnedAt,
    root,
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
    async selfStats() {
      const m = await metrics();
      return Object.fromEntries(VM_STATS.map((n) => [n, promSum(m, n)]));
    },
    stop: () => stopPeer(child),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------
// InfluxDB

const INFLUX = { http: 18086, rpc: 18088, opentsdb: 14244 };

export async function startInflux(opts: StartOptions = {}): Promise<Target> {
  for (const p of Object.values(INFLUX)) await assertPortFree(p);
  const root = rootDir('influx-bench-', opts.root);
  const dataDir = path.join(root, 'influxdb');
  mkdirSync(dataDir, { recursive: true });
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
  const spawnedAt = performance.now();
  const child = spawnLogged('influxd', ['run', '-config', conf], path.join(root, 'influxd.log'));
  const base = `http://${HOST}:${INFLUX.http}`;
  try {
    await pollUntil('InfluxDB /ping', 120_000, 25, async () => ((await http(`${base}/ping`)).status === 204 ? true : undefined));
    // (a no-op on a restart)
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
    serverPid: child.pid!,
    spawnedAt,
    root,
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
    async count(o) {
      const q = new URLSearchParams({ db: 'opentsdb', q: `SELECT count(value) FROM ${metricNames(o).map((m) => `"${m}"`).join(',')}` });
      const r = await http(`${base}/query?${q}`, { timeoutMs: 300_000 });
      const j = JSON.parse(r.body) as { results?: Array<{ series?: Array<{ values: Array<[string, number]> }> }> };
      let n = 0;
      for (const s of j.results?.[0]?.series ?? []) for (const row of s.values) n += Number(row[1]);
      return n;
    },
    async selfStats() {
      const m = ((await vars())['memstats'] ?? {}) as unknown as Record<string, number>;
      return { heapInuse: Number(m['HeapInuse'] ?? NaN), sys: Number(m['Sys'] ?? NaN) };
    },
    stop: () => stopPeer(child),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Starts `system` (on the data of a stopped target when `opts.root` is given). */
export function startTarget(system: SystemName, opts: StartOptions = {}): Promise<Target> {
  switch (system) {
    case 'horae': return startHorae(opts);
    case 'victoriametrics': return startVictoria(opts);
    case 'influxdb': return startInflux(opts);
  }
}
