/**
 * peers: Horae side by side with VictoriaMetrics 1.79 and InfluxDB 1.6 (their OpenTSDB
 * listeners), fed the same devops-cpu dataset (bench/devops-data.ts) by the same load
 * client (bench/ingest-client.ts) in one script. Usage:
 *
 *   npm run bench:peers -- [--quick] [--scale x | --hosts H --hours h]
 *        [--systems horae,victoriametrics,influxdb] [--workloads telnet,http-json]
 *        [--values full,2dec] [--runs N] [--conns 4] [--queries q1,q2,q2-host,q3,q4|none]
 *        [--query-values 2dec] [--query-runs 21] [--query-warmup 3] [--query-conc 8]
 *        [--query-seconds 5] [--no-storage] [--no-install] [--out DIR]
 *   ./bench/build.sh && node /tmp/horae-bench-build/bench/peers.js …
 *
 * Default size: 100 hosts × 24 h at 10 s = 8.64 M points per value mode. `--quick`: 100
 * hosts × 3 h (1.08 M points), 11 query runs, 2 s of load per query: a run of minutes.
 *
 * Checks that the peers are installed (`victoria-metrics`, `influxd` on PATH); if not,
 * says how to install them (`apt-get install -y --no-install-recommends victoria-metrics
 * influxdb`, Debian 12) and, unless --no-install, tries it. Every run starts a fresh
 * server process on loopback with a fresh data dir under os.tmpdir() (flags and config in
 * bench/peers/targets.ts), measures as bench/peers/run.ts
 * says (points/s until every point is visible, then counted by a query; server CPU from
 * /proc/<pid>/stat; VmHWM; bytes/point after each system's flush and merge), and stops the
 * server by PID (also on errors and on exit). Runs are interleaved (for each value mode and
 * run: each workload on each system in turn) so load changes hit all systems alike.
 * Workloads a system lacks (msgpack, in-process for the peers) are skipped.
 *
 * The query set (bench/peers/query-run.ts, bench/query/queries.ts) runs on every system
 * after its first run of the first workload with `--query-values` values, once settled:
 * every answer checked against the one computed from the dataset, latency median of
 * `--query-runs`, requests/s with `--query-conc` in flight.
 *
 * Output: the figures of every system and Horae / peer ratios (bench/peers/report.ts), and
 * bench/results/peers-<commit>[-tsx][-quick|-s<size>].json (header: date, commit, code
 * fingerprint, machine, Node and peer versions, load averages; summary, ratios, every run).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { METRICS, describeDataset, devopsOptions } from './devops-data.js';
import type { DevopsOptions, ValueMode } from './devops-data.js';
import { environment, printHeader } from './harness.js';
import { WORKLOADS, WORKLOAD_FORMAT, runLine, runOnce, summarize, summaryTable } from './peers/run.js';
import type { RunResult, Workload } from './peers/run.js';
import { codeFingerprint } from './peers/proc.js';
import { runQuerySet } from './peers/query-run.js';
import type { QuerySetResult } from './peers/query-run.js';
import { answerTable, ingestFigures, queryFigures, ratioTable, ratios } from './peers/report.js';
import { MetricValues, QUERY_IDS, expectedAnswer, querySet } from './query/queries.js';
import type { Answer, QueryId } from './query/queries.js';
import { startTarget } from './peers/targets.js';
import type { SystemName, Target } from './peers/targets.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scale: { type: 'string', default: '1' },
    hosts: { type: 'string' },
    hours: { type: 'string' },
    systems: { type: 'string', default: 'horae,victoriametrics,influxdb' },
    workloads: { type: 'string', default: 'telnet,http-json' },
    values: { type: 'string', default: 'full,2dec' },
    runs: { type: 'string', default: '1' },
    conns: { type: 'string', default: '4' },
    inflight: { type: 'string', default: '4' },
    'no-storage': { type: 'boolean', default: false },
    'no-install': { type: 'boolean', default: false },
    stall: { type: 'string', default: '60' },
    timeout: { type: 'string', default: '1800' },
    queries: { type: 'string', default: QUERY_IDS.join(',') },
    'query-values': { type: 'string', default: '2dec' },
    'query-runs': { type: 'string' },
    'query-warmup': { type: 'string' },
    'query-conc': { type: 'string', default: '8' },
    'query-seconds': { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const COMPILED = import.meta.url.endsWith('.js');
/** The commit a bench/snapshot.sh build was made from (its COMMIT file), if this is one. */
const SNAPSHOT = ((): string | undefined => {
  try {
    return readFileSync(new URL('../COMMIT', import.meta.url), 'utf8').trim();
  } catch {
    return undefined;
  }
})();
const systems = args.systems.split(',') as SystemName[];
for (const s of systems) if (!['horae', 'victoriametrics', 'influxdb'].includes(s)) throw new Error(`unknown system ${s}`);
const workloads = args.workloads.split(',').map((w) => (w.startsWith('ingest-') ? w : `ingest-${w}`)) as Workload[];
for (const w of workloads) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w} (${WORKLOADS.join(', ')})`);
const valueModes = args.values.split(',') as ValueMode[];
const scale = Number(args.scale);
const QUICK_HOURS = 3;
const hoursArg = args.hours ?? (args.quick ? String(QUICK_HOURS) : undefined);
const datasets = valueModes.map((values): DevopsOptions => devopsOptions({
  scale,
  values,
  ...(args.hosts === undefined ? {} : { hosts: Number(args.hosts) }),
  ...(hoursArg === undefined ? {} : { hours: Number(hoursArg) }),
}));
const queryIds = args.queries === 'none' ? [] : (args.queries.split(',') as QueryId[]);
for (const q of queryIds) if (!QUERY_IDS.includes(q)) throw new Error(`unknown query ${q} (${QUERY_IDS.join(', ')})`);
const queryValues = (valueModes.includes(args['query-values'] as ValueMode) ? args['query-values'] : valueModes[0]) as ValueMode;
const queryOpts = {
  runs: Number(args['query-runs'] ?? (args.quick ? 11 : 21)),
  warmup: Number(args['query-warmup'] ?? (args.quick ? 2 : 3)),
  conc: Number(args['query-conc']),
  seconds: Number(args['query-seconds'] ?? (args.quick ? 2 : 5)),
};
const log = (msg: string): void => console.log(msg);

function onPath(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function ensurePeersInstalled(): void {
  const missing = [
    ...(systems.includes('victoriametrics') && !onPath('victoria-metrics') ? ['victoria-metrics'] : []),
    ...(systems.includes('influxdb') && !onPath('influxd') ? ['influxdb'] : []),
  ];
  if (missing.length === 0) return;
  const how = `sudo apt-get install -y --no-install-recommends ${missing.join(' ')} (Debian 12; or leave them out with --systems horae)`;
  if (args['no-install']) throw new Error(`not installed: ${missing.join(', ')}. Install with: ${how}`);
  log(`not installed: ${missing.join(', ')}. Install with: ${how}`);
  log(`installing ${missing.join(', ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = (): void => void execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  try {
    try {
      install();
    } catch {
      execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
      install();
    }
  } catch (err) {
    throw new Error(`could not install ${missing.join(', ')} (${(err as Error).message}). Install with: ${how}`);
  }
}

/** The wire format a system lacks makes the pair a skip, not a failure. */
function supported(system: SystemName, w: Workload): boolean {
  if (system === 'horae') return true;
  const f = WORKLOAD_FORMAT[w];
  return f === 'telnet' || f === 'json';
}

async function main(): Promise<void> {
  ensurePeersInstalled();
  const header: Record<string, unknown> = {
    ...environment(os.tmpdir()),
    benchmark: 'peers (ingest side by side)',
    runtime: COMPILED ? 'compiled JS (bench/build.sh or bench/snapshot.sh)' : 'tsx',
    source: SNAPSHOT === undefined ? process.env['BENCH_SOURCE'] ?? 'working tree' : `git archive ${SNAPSHOT} (bench/snapshot.sh)`,
    ...(SNAPSHOT === undefined ? {} : { commit: SNAPSHOT, dirtyFiles: 0 }),
    code: codeFingerprint(import.meta.url),
    systems,
    workloads,
    runs: Number(args.runs),
    order: 'systems in the listed order in odd runs, reversed in even runs',
    conns: Number(args.conns),
    httpBatchesInFlight: Number(args.conns),
    size: args.quick ? `quick (${QUICK_HOURS} h)` : 'default',
    datasets: datasets.map(describeDataset),
    queries: queryIds.length === 0 ? 'none' : { ids: queryIds, values: queryValues, metric: METRICS[0], ...queryOpts, after: `the first ${workloads[0]} run, settled` },
  };
  printHeader(header);
  const results: RunResult[] = [];
  const querySets: QuerySetResult[] = [];
  // Expected answers, computed once from the regenerated dataset of the query value mode.
  const qo = datasets.find((d) => d.values === queryValues)!;
  const qs = querySet(qo, { metric: METRICS[0]!, vmBuckets: 'opentsdb' }).filter((q) => queryIds.includes(q.id));
  const want = new Map<QueryId, Answer>();
  if (qs.length > 0) {
    const mv = new MetricValues(qo, 0);
    for (const q of qs) want.set(q.id, expectedAnswer(q, mv, 'opentsdb'));
  }
  const failures: Array<Record<string, string>> = [];
  const versions: Record<string, string> = {};
  for (const o of datasets) {
    for (let r = 1; r <= Number(args.runs); r++) {
      for (const w of workloads) {
        // The order alternates by run, so that neither system always goes first (Horae's
        // first runs were its slowest in several sessions; the page cache and the machine
        // are left as the previous run left them).
        for (const system of r % 2 === 1 ? systems : [...systems].reverse()) {
          if (!supported(system, w)) continue;
          let target: Target | undefined;
          try {
            target = await startTarget(system, { version: String(header['commit']) });
            versions[system] = target.version;
            const withQueries = qs.length > 0 && r === 1 && w === workloads[0] && o.values === queryValues && !args['no-storage'];
            const res = await runOnce(target, w, o, {
              ...(withQueries ? {
                afterSettle: (t: Target) => {
                  log(`  queries on ${system} (${queryOpts.runs} runs, ${queryOpts.conc} in flight for ${queryOpts.seconds} s):`);
                  return runQuerySet(t, o, qs, want, { ...queryOpts, log });
                },
              } : {}),
              conns: Number(args.conns),
              inflight: Number(args.inflight),
              storage: !args['no-storage'],
              verify: true,
              measureAfterStop: true,
              stallSeconds: Number(args.stall),
              timeoutSeconds: Number(args.timeout),
              log,
            });
            results.push(res);
            if (res.queries !== undefined) querySets.push(res.queries);
            log(`run ${r}: ${runLine(res)}`);
          } catch (err) {
            const msg = (err as Error).stack ?? String(err);
            failures.push({ system, workload: w, values: o.values, run: String(r), error: msg });
            log(`run ${r}: ${system} ${w} ${o.values} FAILED: ${msg}`);
          } finally {
            if (target !== undefined) {
              await target.stop().catch((err: unknown) => log(`stop ${system} failed: ${(err as Error).message}`));
              target.cleanup();
            }
          }
        }
      }
    }
  }
  header['versions'] = versions;
  header['loadAvg1mEnd'] = Math.round(os.loadavg()[0]! * 100) / 100;
  const summary = summarize(results);
  const figures = [...ingestFigures(summary), ...queryFigures(querySets)];
  const table = ratioTable(figures, systems);
  const answers = querySets.length === 0 ? '' : answerTable(querySets);
  console.log('\n' + summaryTable(summary));
  console.log('\n' + table);
  if (answers !== '') console.log('\n' + answers);
  const wrong = querySets.flatMap((s) => s.queries.filter((q) => !q.check.ok).map((q) => `${s.system} ${q.id}`));
  mkdirSync(args.out, { recursive: true });
  const size = args.quick && args.hosts === undefined && args.hours === undefined && scale === 1 ? '-quick'
    : scale === 1 && args.hosts === undefined && hoursArg === undefined ? '' : `-s${args.hosts ?? ''}${hoursArg ?? scale}`;
  const suffix = `${COMPILED ? '' : '-tsx'}${size}`;
  const file = path.join(args.out, `peers-${String(header['commit'])}${suffix}.json`);
  writeFileSync(file, JSON.stringify({ header, summary, figures, ratios: ratios(figures), table, answers, summaryTable: summaryTable(summary), wrongAnswers: wrong, runs: results, failures }, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
  if (wrong.length > 0) console.log(`wrong answers: ${wrong.join(', ')}`);
  if (failures.length > 0 || wrong.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
