/**
 * record: Horae as users run it, beside VictoriaMetrics (and optionally InfluxDB 1.6) on
 * the same data in the same run — the recorded figures of issue 31. Usage:
 *
 *   npm run bench:record -- [--quick] [--scale x | --hosts H --hours h]
 *        [--systems horae,victoriametrics[,influxdb]] [--workloads telnet[,http-json]]
 *        [--values 2dec,full] [--runs 2] [--wait 180] [--conns 4] [--no-restart]
 *        [--queries q1,q2,q2-host,q3,q4|none] [--query-runs 21] [--query-warmup 3]
 *        [--query-conc 8] [--query-seconds 5] [--no-install] [--out DIR]
 *
 * Default size: the devops data (bench/devops-data.ts), 100 hosts × 24 h at 10 s × 10
 * metrics = 8.64 M points, in each value mode (2-decimal and full-precision floats).
 * `--quick`: 100 hosts × 3 h (1.08 M points), a 60 s wait, 11 query runs: minutes.
 *
 * Every run starts a fresh server (bench/peers/targets.ts: Horae by `npm start -- --port P
 * --data-dir D`, a child process whose whole tree is measured from /proc), feeds it
 * through its public protocol only (telnet, 4 connections, or HTTP /api/put), then leaves
 * it alone: bench/peers/run.ts says what is measured when (points/s until all queryable,
 * CPU-s per M points, du bytes/point after the load, `--wait` s later and after a clean
 * stop, idle CPU-s over the wait, RSS after the load and the wait, ready time after a
 * restart). After the wait, the query set (bench/peers/query-run.ts,
 * bench/query/queries.ts) runs on that state in every run of the `--query-values` mode:
 * every answer checked against the one computed from the dataset (the same for every
 * system, so systems that pass answered alike), latency medians, q1 requests/s with
 * `--query-conc` in flight. Runs alternate the order of the systems (listed order in odd
 * runs, reversed in even ones). Nothing private of Horae is called and nothing is forced
 * on any system (no flush, merge or compaction request). Horae's budgets (its /api/config
 * and /api/stats/store: memstore and cache sizes) are kept in the header.
 *
 * Output: the figures of every system with Horae ÷ peer ratios (medians of the runs,
 * bench/peers/report.ts), and bench/results/record-<commit>[-tsx][-quick|-s<size>].json
 * (header: date, commit, code fingerprint, machine, Node and peer versions; summary,
 * ratios, every run). Checks that the peers are installed (`victoria-metrics`, `influxd`);
 * if not, says how and, unless --no-install, tries apt-get.
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
import { codeFingerprint, http } from './peers/proc.js';
import { answersNow, runQuerySet } from './peers/query-run.js';
import type { QuerySetResult } from './peers/query-run.js';
import { answerTable, ingestFigures, queryFigures, ratioTable, ratios } from './peers/report.js';
import { MetricValues, QUERY_IDS, expectedAnswer, querySet } from './query/queries.js';
import type { Answer, BenchQuery, QueryId } from './query/queries.js';
import { startTarget } from './peers/targets.js';
import type { SystemName, Target } from './peers/targets.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scale: { type: 'string', default: '1' },
    hosts: { type: 'string' },
    hours: { type: 'string' },
    systems: { type: 'string', default: 'horae,victoriametrics' },
    workloads: { type: 'string', default: 'telnet' },
    values: { type: 'string', default: '2dec,full' },
    runs: { type: 'string', default: '2' },
    wait: { type: 'string' },
    conns: { type: 'string', default: '4' },
    'no-restart': { type: 'boolean', default: false },
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
const waitSeconds = Number(args.wait ?? (args.quick ? 60 : 180));
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
  const f = WORKLOAD_FORMAT[w];
  return system === 'horae' || f === 'telnet' || f === 'json';
}

async function horaeBudgets(t: Target): Promise<Record<string, unknown>> {
  const get = async (p: string): Promise<unknown> => {
    const r = await http(`http://127.0.0.1:${t.queryPort}${p}`).catch((err: unknown) => ({ status: 0, body: (err as Error).message }));
    return r.status === 200 ? JSON.parse(r.body) : `HTTP ${r.status}: ${r.body.slice(0, 200)}`;
  };
  return { config: await get('/api/config'), store: await get('/api/stats/store') };
}

async function main(): Promise<void> {
  ensurePeersInstalled();
  const header: Record<string, unknown> = {
    ...environment(os.tmpdir()),
    benchmark: 'record (as users run it, side by side)',
    runtime: COMPILED ? 'compiled JS (bench/build.sh or bench/snapshot.sh)' : 'tsx',
    source: SNAPSHOT === undefined ? process.env['BENCH_SOURCE'] ?? 'working tree' : `git archive ${SNAPSHOT} (bench/snapshot.sh)`,
    ...(SNAPSHOT === undefined ? {} : { commit: SNAPSHOT, dirtyFiles: 0 }),
    code: codeFingerprint(import.meta.url),
    systems,
    workloads,
    runs: Number(args.runs),
    order: 'systems in the listed order in odd runs, reversed in even runs',
    horae: 'npm start -- --port P --bind 127.0.0.1 --data-dir D (default config); CPU and RSS of its process tree',
    leftAloneSeconds: waitSeconds,
    restart: !args['no-restart'],
    conns: Number(args.conns),
    httpBatchesInFlight: Number(args.conns),
    size: args.quick ? `quick (${QUICK_HOURS} h)` : 'default',
    datasets: datasets.map(describeDataset),
    queries: queryIds.length === 0 ? 'none' : { ids: queryIds, values: queryValues, metric: METRICS[0], ...queryOpts, after: `every ${workloads[0]} run, ${waitSeconds} s after the load` },
  };
  printHeader(header);
  const results: RunResult[] = [];
  const querySets: QuerySetResult[] = [];
  // Expected answers, computed from the regenerated dataset of each value mode (q1 also
  // serves as the probe of readiness after a restart).
  const expected = new Map<ValueMode, { qs: BenchQuery[]; want: Map<QueryId, Answer> }>();
  for (const o of datasets) {
    const all = querySet(o, { metric: METRICS[0]!, vmBuckets: 'opentsdb' });
    const mv = new MetricValues(o, 0);
    const want = new Map(all.map((q) => [q.id, expectedAnswer(q, mv, 'opentsdb')]));
    expected.set(o.values, { qs: all, want });
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
            // The budgets Horae ran with (memstores, caches): its /api/config and store counters.
            if (system === 'horae' && header['horaeConfig'] === undefined) header['horaeConfig'] = await horaeBudgets(target);
            const { qs: all, want } = expected.get(o.values)!;
            const qs = all.filter((q) => queryIds.includes(q.id));
            const withQueries = qs.length > 0 && w === workloads[0] && o.values === queryValues;
            const res = await runOnce(target, w, o, {
              ...(withQueries ? {
                atRest: (t: Target) => {
                  log(`  queries on ${system} (${queryOpts.runs} runs, ${queryOpts.conc} in flight for ${queryOpts.seconds} s):`);
                  return runQuerySet(t, o, qs, want, { ...queryOpts, log });
                },
              } : {}),
              ...(args['no-restart'] ? {} : { readyProbe: (t: Target) => answersNow(t, all[0]!, want.get('q1')!) }),
              conns: Number(args.conns),
              waitSeconds,
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
  const file = path.join(args.out, `record-${String(header['commit'])}${suffix}.json`);
  writeFileSync(file, JSON.stringify({ header, summary, figures, ratios: ratios(figures), table, answers, summaryTable: summaryTable(summary), wrongAnswers: wrong, runs: results, failures }, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
  if (wrong.length > 0) console.log(`wrong answers: ${wrong.join(', ')}`);
  if (failures.length > 0 || wrong.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
