/**
 * query-bench: Horae's query path against VictoriaMetrics 1.79 on the devops-cpu dataset
 * (bench/devops-data.ts: 100 hosts × 10 metrics × 24 h at 10 s = 8.64 M points), both
 * loaded in the same run. Usage:
 *
 *   npx tsx bench/query-bench.ts [--values 2dec|full] [--scale x | --hosts H --hours h]
 *        [--queries q1,q2,q2-host,q3,q4] [--runs 31] [--warmup 5] [--warmup-seconds 3]
 *        [--warmup-max-seconds 20] [--conc 16]
 *        [--conc-seconds 5] [--conc-runs 3] [--conc-warmup-seconds 3] [--vm-buckets opentsdb|prom]
 *        [--systems horae,victoriametrics] [--wait 180] [--profile DIR] [--timeout 3600]
 *   OUT=/tmp/horae-query-build ./bench/build.sh && node /tmp/horae-query-build/bench/query-bench.js …
 *
 * 1. Load (bench/peers/run.ts runOnce, as record.ts): each server started fresh on loopback
 *    as users run it (bench/peers/targets.ts: Horae by `npm start`), fed the dataset over
 *    telnet (4 connections; 2-decimal values by default, as agents send), polled until
 *    every point is counted by a query, then left alone for `--wait` seconds (nothing
 *    forced on either system). `--profile DIR`: Horae is then restarted on its data
 *    directory with NODE_OPTIONS=--cpu-prof (profiles of npm and the build land there too;
 *    the server's is the large one; caches start cold, the warm-up fills them).
 * 2. Expected answers from the regenerated dataset (bench/query/queries.ts); every query's
 *    first answer from each system is compared with them (same series, same buckets,
 *    values within 1e-9 relative).
 * 3. Latency: per query, `warmup` requests per system (and more until `warmup-seconds`
 *    have passed, then one-second blocks until the median stops improving by more than
 *    3%, at most `warmup-max-seconds`: steady state, see runQuery), then `runs` requests per system,
 *    alternating Horae and VictoriaMetrics (the order flips every run), one at a time on a
 *    keep-alive connection; client-side time from request to last body byte. Median, p90,
 *    min, max; server CPU per query from /proc/<pid>/stat over the timed runs (10 ms ticks).
 * 4. Horae's statsSummary (showSummary: datapoints, rowsScanned, queryTimeMs) for each
 *    /api/query query, 5 runs; decode rate for q4 = datapoints / server CPU-s per query.
 * 5. Throughput: q1 (the host rotating over all hosts) with `conc` requests in flight for
 *    `conc-seconds`, `conc-runs` times per system alternating, after one unrecorded load of
 *    `conc-warmup-seconds` per system (the latency phase warmed one host's q1 only, and a
 *    first timed run was a server's slowest); the load client is this
 *    process (a keep-alive Agent with `conc` sockets), sharing the machine's cores.
 *
 * Servers are stopped by PID at the end, on errors, and when `--timeout` expires.
 * Results: bench/results/query-<commit>[-tsx][-s<scale>][-full].json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { METRICS, describeDataset, devopsOptions } from './devops-data.js';
import type { DevopsOptions, ValueMode } from './devops-data.js';
import { environment, median, printHeader } from './harness.js';
import { runLine, runOnce } from './peers/run.js';
import type { RunResult } from './peers/run.js';
import { codeFingerprint, sleep, treeCpuSeconds, treeRss } from './peers/proc.js';
import { startTarget } from './peers/targets.js';
import type { SystemName, Target } from './peers/targets.js';
import { HttpClient, loadFor, percentileOf } from './query/http-client.js';
import type { HttpReq, LoadResult } from './query/http-client.js';
import { MetricValues, QUERY_IDS, compare, expectedAnswer, horaeAnswer, q1, querySet, vmAnswer } from './query/queries.js';
import type { Answer, BenchQuery, Check, QueryId, VmBuckets } from './query/queries.js';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    hosts: { type: 'string' },
    hours: { type: 'string' },
    values: { type: 'string', default: '2dec' },
    systems: { type: 'string', default: 'horae,victoriametrics' },
    queries: { type: 'string', default: QUERY_IDS.join(',') },
    runs: { type: 'string', default: '31' },
    warmup: { type: 'string', default: '5' },
    'warmup-seconds': { type: 'string', default: '3' },
    'warmup-max-seconds': { type: 'string', default: '20' },
    conc: { type: 'string', default: '16' },
    'conc-seconds': { type: 'string', default: '5' },
    'conc-runs': { type: 'string', default: '3' },
    'conc-warmup-seconds': { type: 'string', default: '3' },
    'vm-buckets': { type: 'string', default: 'opentsdb' },
    conns: { type: 'string', default: '4' },
    wait: { type: 'string', default: '180' },
    profile: { type: 'string' },
    timeout: { type: 'string', default: '3600' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const COMPILED = import.meta.url.endsWith('.js');
const HOST = '127.0.0.1';

const systems = args.systems.split(',') as SystemName[];
for (const s of systems) if (s !== 'horae' && s !== 'victoriametrics') throw new Error(`unknown system ${s} (horae, victoriametrics)`);
const queryIds = args.queries.split(',') as QueryId[];
for (const q of queryIds) if (!QUERY_IDS.includes(q)) throw new Error(`unknown query ${q} (${QUERY_IDS.join(', ')})`);
const vmBuckets = args['vm-buckets'] as VmBuckets;
if (vmBuckets !== 'opentsdb' && vmBuckets !== 'prom') throw new Error('--vm-buckets opentsdb|prom');
const values = args.values as ValueMode;
if (values !== 'full' && values !== '2dec') throw new Error('--values full|2dec');
const scale = Number(args.scale);
const o: DevopsOptions = devopsOptions({
  scale,
  values,
  ...(args.hosts === undefined ? {} : { hosts: Number(args.hosts) }),
  ...(args.hours === undefined ? {} : { hours: Number(args.hours) }),
});
const RUNS = Number(args.runs);
const WARMUP = Number(args.warmup);
const WARMUP_SECONDS = Number(args['warmup-seconds']);
const WARMUP_MAX_SECONDS = Math.max(WARMUP_SECONDS, Number(args['warmup-max-seconds']));
const CONC = Number(args.conc);
const log = (msg: string): void => console.log(msg);
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

/** A loaded server the queries go to. */
interface Server {
  readonly system: SystemName;
  readonly version: string;
  readonly pid: number;
  readonly client: HttpClient;
  stop(): Promise<void>;
  cleanup(): void;
}

const servers: Server[] = [];
const targets: Target[] = [];

async function stopAll(): Promise<void> {
  for (const s of servers.splice(0)) {
    s.client.close();
    await s.stop().catch((err: unknown) => log(`stop ${s.system} failed: ${(err as Error).message}`));
    s.cleanup();
  }
  for (const t of targets.splice(0)) {
    await t.stop().catch((err: unknown) => log(`stop ${t.system} failed: ${(err as Error).message}`));
    t.cleanup();
  }
}

function serverOfTarget(t: Target): Server {
  return { system: t.system, version: t.version, pid: t.pid, client: new HttpClient(HOST, t.queryPort, Math.max(CONC, 4)), stop: () => t.stop(), cleanup: () => t.cleanup() };
}

/** Horae restarted on the data directory of `t` under --cpu-prof (t is stopped first). */
async function restartHoraeProfiled(t: Target, dir: string): Promise<Server> {
  await t.stop();
  mkdirSync(dir, { recursive: true });
  const r = await startTarget('horae', { root: t.root, version: t.version, env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=200` } });
  return serverOfTarget(r);
}

function reqOf(s: Server, q: BenchQuery): HttpReq {
  return s.system === 'horae' ? q.horae : q.vm;
}

function answerOf(s: Server, q: BenchQuery, body: Buffer): Answer {
  return s.system === 'horae' ? horaeAnswer(q, body).answer : vmAnswer(q, body, vmBuckets);
}

async function ok200(s: Server, req: HttpReq): Promise<{ ms: number; body: Buffer }> {
  const r = await s.client.request(req, 120_000);
  if (r.status !== 200) throw new Error(`${s.system} ${req.method} ${req.path}: HTTP ${r.status}: ${r.body.toString('utf8', 0, 400)}`);
  return r;
}

interface Latency {
  readonly medianMs: number;
  readonly p90Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly serverCpuMsPerQuery: number;
  readonly responseBytes: number;
  /** Median of the first 5 requests of the warm-up (the first answers the check). */
  readonly firstRunsMedianMs: number;
  /** How long the warm-up ran, and its one-second blocks' medians (see runQuery). */
  readonly warmupSeconds: number;
  readonly warmupBlocksMs: readonly number[];
  readonly samplesMs: readonly number[];
}

interface QueryResult {
  readonly id: QueryId;
  readonly title: string;
  readonly horaeRequest: HttpReq;
  readonly promql: string;
  readonly vmRequest: HttpReq;
  readonly checks: Partial<Record<SystemName, Check>>;
  readonly latency: Partial<Record<SystemName, Latency>>;
  /** Horae's statsSummary over 5 runs with showSummary (medians). */
  horaeSummary?: { datapoints: number; rowsScanned: number; queryTimeMs: number; saltScanners: number };
}

async function runQuery(q: BenchQuery, want: Map<SystemName, Answer>): Promise<QueryResult> {
  const checks: Partial<Record<SystemName, Check>> = {};
  const firstBytes = new Map<SystemName, number>();
  const firstRuns = new Map<SystemName, number>();
  const warmups = new Map<SystemName, { seconds: number; blocksMs: number[] }>();
  for (const s of servers) {
    const first = await ok200(s, reqOf(s, q));
    firstBytes.set(s.system, first.body.length);
    let c: Check;
    try {
      c = compare(answerOf(s, q, first.body), want.get(s.system)!);
    } catch (err) {
      c = { ok: false, series: 0, points: 0, expectedSeries: 0, expectedPoints: 0, missingSeries: 0, extraSeries: 0, missingPoints: 0, extraPoints: 0, wrongValues: 0, maxAbsDiff: NaN, samples: [(err as Error).message] };
    }
    checks[s.system] = c;
    log(`  ${q.id} ${s.system.padEnd(15)} check: ${c.ok ? 'OK' : 'MISMATCH'} ${c.series} series, ${c.points} points (expected ${c.expectedSeries}, ${c.expectedPoints}), max |diff| ${c.maxAbsDiff.toExponential(2)}${c.samples.length > 0 ? ` — ${c.samples.join('; ')}` : ''}`);
    // Warm-up: `warmup` requests, then more until `warmup-seconds` have passed, and then
    // on in blocks of one second until a block's median is no more than 3% below the
    // block before (at most `warmup-max-seconds` in all), so that a JIT-compiled server
    // (Horae on V8) is measured in its steady state, as a dashboard server runs: V8
    // optimizes a function once it has run enough bytecode, so code that runs once a
    // request (most of q1's) needs thousands of requests, more than 3 s of them. The
    // first requests' median is kept as `firstRunsMedianMs`, the blocks' medians as
    // `warmupBlocksMs`.
    const first5: number[] = [first.ms];
    const t0 = performance.now();
    for (let i = 1; i < WARMUP || performance.now() - t0 < WARMUP_SECONDS * 1000; i++) {
      const r = await ok200(s, reqOf(s, q));
      if (first5.length < 5) first5.push(r.ms);
    }
    const blocks: number[] = [];
    while (performance.now() - t0 < WARMUP_MAX_SECONDS * 1000) {
      const xs: number[] = [];
      for (const b0 = performance.now(); performance.now() - b0 < 1000; ) xs.push((await ok200(s, reqOf(s, q))).ms);
      blocks.push(round(median(xs)));
      if (blocks.length >= 2 && blocks[blocks.length - 1]! >= 0.97 * blocks[blocks.length - 2]!) break;
    }
    firstRuns.set(s.system, median(first5));
    warmups.set(s.system, { seconds: round((performance.now() - t0) / 1000, 1), blocksMs: blocks });
  }
  const lat = new Map<SystemName, number[]>(servers.map((s) => [s.system, []]));
  const cpu0 = new Map(servers.map((s) => [s.system, treeCpuSeconds(s.pid)]));
  for (let r = 0; r < RUNS; r++) {
    const order = r % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      const res = await ok200(s, reqOf(s, q));
      lat.get(s.system)!.push(res.ms);
    }
  }
  const latency: Partial<Record<SystemName, Latency>> = {};
  for (const s of servers) {
    const cpu = treeCpuSeconds(s.pid) - cpu0.get(s.system)!;
    const xs = lat.get(s.system)!;
    const sorted = [...xs].sort((a, b) => a - b);
    latency[s.system] = {
      medianMs: round(median(xs)),
      p90Ms: round(percentileOf(sorted, 0.9)),
      minMs: round(sorted[0]!),
      maxMs: round(sorted[sorted.length - 1]!),
      serverCpuMsPerQuery: round((cpu * 1000) / RUNS, 2),
      responseBytes: firstBytes.get(s.system)!,
      firstRunsMedianMs: round(firstRuns.get(s.system)!),
      warmupSeconds: warmups.get(s.system)!.seconds,
      warmupBlocksMs: warmups.get(s.system)!.blocksMs,
      samplesMs: xs.map((x) => round(x)),
    };
  }
  const res: QueryResult = { id: q.id, title: q.title, horaeRequest: q.horae, promql: q.promql, vmRequest: q.vm, checks, latency };
  const horae = servers.find((s) => s.system === 'horae');
  if (horae !== undefined && q.horae.path === '/api/query') {
    const body = JSON.stringify({ ...(JSON.parse(q.horae.body!) as object), showSummary: true });
    const sums: Array<Record<string, number>> = [];
    for (let i = 0; i < 5; i++) {
      const r = await ok200(horae, { ...q.horae, body });
      const s = horaeAnswer(q, r.body).summary;
      if (s !== undefined) sums.push(s);
    }
    if (sums.length > 0) {
      const med = (k: string): number => round(median(sums.map((x) => Number(x[k]))));
      res.horaeSummary = { datapoints: med('datapoints'), rowsScanned: med('rowsScanned'), queryTimeMs: med('queryTimeMs'), saltScanners: med('saltScanners') };
    }
  }
  const line = servers.map((s) => `${s.system} ${latency[s.system]!.medianMs} ms (p90 ${latency[s.system]!.p90Ms}, first 5 ${latency[s.system]!.firstRunsMedianMs}, warm-up ${latency[s.system]!.warmupSeconds} s, CPU ${latency[s.system]!.serverCpuMsPerQuery} ms/q, ${latency[s.system]!.responseBytes} B)`).join(' | ');
  log(`  ${q.id} median of ${RUNS}: ${line}${res.horaeSummary === undefined ? '' : ` | Horae summary ${JSON.stringify(res.horaeSummary)}`}`);
  return res;
}

interface ConcResult extends LoadResult {
  readonly system: SystemName;
  readonly run: number;
  readonly serverCpuMsPerRequest: number;
  readonly serverCores: number;
  readonly load1m: number;
}

async function runConcurrency(): Promise<ConcResult[]> {
  const out: ConcResult[] = [];
  const qs = Array.from({ length: o.hosts }, (_, h) => q1(o, { vmBuckets }, h));
  // warm every host's request once, then under load (unrecorded), each system alike
  for (const s of servers) for (const q of qs) await ok200(s, reqOf(s, q));
  const warmSeconds = Number(args['conc-warmup-seconds']);
  if (warmSeconds > 0) {
    for (const s of servers) {
      const w = await loadFor(s.client, CONC, warmSeconds, (i) => reqOf(s, qs[i % qs.length]!));
      log(`  q1 × ${CONC} in flight, ${s.system.padEnd(15)} warm-up ${warmSeconds} s: ${Math.round(w.requestsPerSec)} req/s, ${w.errors} errors (not recorded)`);
    }
  }
  for (let r = 1; r <= Number(args['conc-runs']); r++) {
    const order = r % 2 === 1 ? servers : [...servers].reverse();
    for (const s of order) {
      await sleep(500);
      const cpu0 = treeCpuSeconds(s.pid);
      const res = await loadFor(s.client, CONC, Number(args['conc-seconds']), (i) => reqOf(s, qs[i % qs.length]!));
      const cpu = treeCpuSeconds(s.pid) - cpu0;
      const c: ConcResult = {
        ...res, system: s.system, run: r,
        serverCpuMsPerRequest: round((cpu * 1000) / Math.max(1, res.requests), 3),
        serverCores: round(cpu / res.seconds, 2),
        load1m: round(os.loadavg()[0]!, 2),
      };
      out.push(c);
      log(`  q1 × ${CONC} in flight, ${s.system.padEnd(15)} run ${r}: ${Math.round(c.requestsPerSec)} req/s, p50 ${round(c.p50Ms)} ms, p99 ${round(c.p99Ms)} ms, ${c.errors} errors${c.firstError === undefined ? '' : ` (${c.firstError})`}, server ${c.serverCpuMsPerRequest} CPU-ms/req (${c.serverCores} cores)`);
    }
  }
  return out;
}

const NAMES: Record<SystemName, string> = { horae: 'Horae', victoriametrics: 'VictoriaMetrics', influxdb: 'InfluxDB' };
const f = (n: number | undefined, d = 2): string => (n === undefined || !Number.isFinite(n) ? '' : n >= 1000 ? Math.round(n).toLocaleString('en-US') : n.toFixed(d));

function tables(results: readonly QueryResult[], conc: readonly ConcResult[]): string {
  // The systems measured, from the results: the servers may be stopped by now.
  const measured = new Set<SystemName>(results.flatMap((r) => Object.keys(r.latency) as SystemName[]));
  for (const c of conc) measured.add(c.system);
  const servers = systems.filter((s) => measured.has(s)).map((system) => ({ system }));
  const lines = [
    `| query | answer | ${servers.map((s) => `${NAMES[s.system]} median ms | p90 | CPU ms/q`).join(' | ')} |${servers.length === 2 ? ' Horae / VM (median) |' : ''} check |`,
    `|---|---|${servers.map(() => '---:|---:|---:').join('|')}|${servers.length === 2 ? '---:|' : ''}---|`,
  ];
  for (const r of results) {
    const c0 = Object.values(r.checks)[0];
    const cells = servers.map((s) => {
      const l = r.latency[s.system]!;
      return `${f(l.medianMs)} | ${f(l.p90Ms)} | ${f(l.serverCpuMsPerQuery, 1)}`;
    });
    const ratio = servers.length === 2 ? ` ${f(r.latency.horae!.medianMs / r.latency.victoriametrics!.medianMs)}× |` : '';
    const chk = Object.entries(r.checks).map(([k, c]) => `${NAMES[k as SystemName]} ${c!.ok ? 'ok' : 'WRONG'}`).join(', ');
    lines.push(`| ${r.id} | ${c0?.expectedSeries ?? '?'} × ${c0 === undefined ? '?' : c0.expectedPoints / Math.max(1, c0.expectedSeries)} | ${cells.join(' | ')} |${ratio} ${chk} |`);
  }
  const out = [lines.join('\n')];
  if (conc.length > 0) {
    const cl = [
      `| system | q1, ${CONC} in flight, ${args['conc-seconds']} s | req/s (median of ${args['conc-runs']}) | min–max | p50 ms | p99 ms | server CPU ms/req | server cores | errors |`,
      '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ];
    for (const s of servers) {
      const g = conc.filter((c) => c.system === s.system);
      const rps = g.map((c) => c.requestsPerSec);
      const mid = g.find((c) => c.requestsPerSec === median(rps)) ?? g[0]!;
      cl.push(`| ${NAMES[s.system]} | host rotating | ${f(median(rps), 0)} | ${f(Math.min(...rps), 0)}–${f(Math.max(...rps), 0)} | ${f(mid.p50Ms)} | ${f(mid.p99Ms)} | ${f(median(g.map((c) => c.serverCpuMsPerRequest)), 3)} | ${f(median(g.map((c) => c.serverCores)))} | ${g.reduce((a, c) => a + c.errors, 0)} |`);
    }
    out.push(cl.join('\n'));
  }
  return out.join('\n\n');
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    log(`timed out after ${args.timeout} s: stopping the servers`);
    void stopAll().finally(() => process.exit(2));
  }, Number(args.timeout) * 1000);
  watchdog.unref();
  const header: Record<string, unknown> = {
    ...environment(os.tmpdir()),
    benchmark: 'query (Horae vs VictoriaMetrics)',
    runtime: COMPILED ? 'compiled JS (bench/build.sh)' : 'tsx',
    code: codeFingerprint(import.meta.url),
    systems,
    dataset: describeDataset(o),
    load: `telnet, ${args.conns} connections, then left alone for ${args.wait} s (nothing forced)`,
    runs: RUNS,
    warmup: WARMUP,
    warmupSeconds: WARMUP_SECONDS,
    warmupMaxSeconds: WARMUP_MAX_SECONDS,
    concurrency: CONC,
    concSeconds: Number(args['conc-seconds']),
    concRuns: Number(args['conc-runs']),
    concWarmupSeconds: Number(args['conc-warmup-seconds']),
    vmBuckets,
    client: 'node:http keep-alive Agent in the bench process; time from request to last body byte',
    profile: args.profile ?? null,
  };
  printHeader(header);
  const loads: RunResult[] = [];
  const versions: Record<string, string> = {};
  const rss: Record<string, Record<string, number>> = {};
  let results: QueryResult[] = [];
  let conc: ConcResult[] = [];
  try {
    for (const system of systems) {
      log(`loading ${system} …`);
      const t = await startTarget(system, { version: String(header['commit']) });
      targets.push(t);
      versions[system] = t.version;
      const r = await runOnce(t, 'ingest-telnet', o, {
        conns: Number(args.conns), waitSeconds: Number(args.wait), keepRunning: true,
        stallSeconds: 60, timeoutSeconds: Number(args.timeout),
        log,
      });
      loads.push(r);
      log(`  ${runLine(r)}`);
    }
    for (const t of targets.splice(0)) {
      const s = t.system === 'horae' && args.profile !== undefined ? await restartHoraeProfiled(t, path.resolve(args.profile)) : serverOfTarget(t);
      servers.push(s);
      rss[s.system] = { afterLoadMiB: round(treeRss(s.pid) / 2 ** 20, 1) };
    }
    log('expected answers from the regenerated dataset …');
    const mv = new MetricValues(o, 0);
    const qs = querySet(o, { metric: METRICS[0]!, vmBuckets }).filter((q) => queryIds.includes(q.id));
    header['queries'] = qs.map((q) => ({ id: q.id, title: q.title, horae: q.horae, promql: q.promql, vm: q.vm }));
    for (const q of qs) {
      log(`${q.id}: ${q.title}`);
      const want = new Map<SystemName, Answer>();
      want.set('horae', expectedAnswer(q, mv, 'opentsdb'));
      want.set('victoriametrics', expectedAnswer(q, mv, vmBuckets));
      results.push(await runQuery(q, want));
    }
    if (queryIds.includes('q1') && Number(args['conc-runs']) > 0) {
      log(`q1 under load: ${CONC} requests in flight, ${args['conc-seconds']} s …`);
      conc = await runConcurrency();
    }
    for (const s of servers) rss[s.system] = { ...rss[s.system], afterQueriesMiB: round(treeRss(s.pid) / 2 ** 20, 1) };
  } finally {
    await stopAll();
    clearTimeout(watchdog);
  }
  header['versions'] = versions;
  header['loadAvg1mEnd'] = round(os.loadavg()[0]!, 2);
  const q4 = results.find((r) => r.id === 'q4');
  const decode = q4?.horaeSummary === undefined || q4.latency.horae === undefined ? undefined : {
    query: 'q4',
    datapoints: q4.horaeSummary.datapoints,
    rowsScanned: q4.horaeSummary.rowsScanned,
    queryTimeMs: q4.horaeSummary.queryTimeMs,
    serverCpuMsPerQuery: q4.latency.horae.serverCpuMsPerQuery,
    pointsPerCpuSecond: Math.round(q4.horaeSummary.datapoints / (q4.latency.horae.serverCpuMsPerQuery / 1000)),
    pointsPerSecondOfQueryTime: Math.round(q4.horaeSummary.datapoints / (q4.horaeSummary.queryTimeMs / 1000)),
    note: 'datapoints from statsSummary; CPU = the whole server process over the timed runs (HTTP, JSON out included) / runs; queryTimeMs = executeQuery only (scan, decode, downsample, group), wall clock on one event loop',
  };
  const summary = {
    queries: results.map((r) => ({
      id: r.id,
      ...Object.fromEntries(Object.entries(r.latency).map(([k, l]) => [k, { medianMs: l!.medianMs, p90Ms: l!.p90Ms, firstRunsMedianMs: l!.firstRunsMedianMs, serverCpuMsPerQuery: l!.serverCpuMsPerQuery }])),
      checksOk: Object.fromEntries(Object.entries(r.checks).map(([k, c]) => [k, c!.ok])),
    })),
    concurrency: servers.length === 0 ? [] : systems.map((s) => {
      const g = conc.filter((c) => c.system === s);
      return { system: s, requestsPerSecMedian: g.length === 0 ? NaN : Math.round(median(g.map((c) => c.requestsPerSec))) };
    }),
    decode,
  };
  const text = tables(results, conc);
  console.log('\n' + text);
  if (decode !== undefined) {
    console.log(`\nHorae q4 decode: ${decode.datapoints.toLocaleString('en-US')} points in ${decode.rowsScanned} rows; executeQuery ${decode.queryTimeMs} ms ` +
      `(${decode.pointsPerSecondOfQueryTime.toLocaleString('en-US')} points/s); server ${decode.serverCpuMsPerQuery} CPU-ms per query → ${decode.pointsPerCpuSecond.toLocaleString('en-US')} points per CPU-second`);
  }
  mkdirSync(args.out, { recursive: true });
  const full = args.hosts === undefined && args.hours === undefined && scale === 1;
  const suffix = `${COMPILED ? '' : '-tsx'}${full ? '' : `-s${args.hosts ?? ''}${args.hours ?? scale}`}${values === 'full' ? '-full' : ''}${vmBuckets === 'prom' ? '-prom' : ''}`;
  const file = path.join(args.out, `query-${String(header['commit'])}${suffix}.json`);
  writeFileSync(file, JSON.stringify({ header, summary, table: text, results, concurrency: conc, rss, load: loads }, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
  const bad = results.some((r) => Object.values(r.checks).some((c) => c?.ok !== true));
  if (bad) {
    console.log('some answers differ from the expected ones (see the checks above)');
    process.exitCode = 1;
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
