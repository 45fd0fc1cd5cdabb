/**
 * ingest-bench: the ingest benchmarks of issue 3 — Horae fed the TSBS-like devops-cpu
 * dataset (bench/devops-data.ts: 100 hosts × 10 metrics × 24 h at 10 s = 8.64 M points,
 * 8 tags per series) in-process, over telnet and over HTTP, each run on a fresh server
 * process with the default config. Usage:
 *
 *   npx tsx bench/ingest-bench.ts [workload…] [--scale x] [--values full|2dec|full,2dec]
 *        [--runs N] [--conns 4] [--inflight 4] [--hosts H] [--hours h] [--no-storage]
 *        [--no-verify] [--profile DIR] [--config JSON] [--store JSON] [--out DIR]
 *   ./bench/build.sh && node /tmp/horae-bench-build/bench/ingest-bench.js …   (plain JS)
 *
 * Workloads (default: all four, in this order; each repeated --runs times, default 3):
 *   ingest-inproc        Tsdb.ingest.write() inside the server process, 5k-point batches,
 *                        --inflight calls in flight (default 4); the batches are generated
 *                        in that process (~0.1 CPU-s per million points, reported as
 *                        `generatorCpuPerM` in the header)
 *   ingest-telnet        `put` lines over --conns connections (default 4)
 *   ingest-http-json     POST /api/put, JSON arrays of 5k points, --conns in flight, keep-alive
 *   ingest-http-msgpack  the same with msgpack bodies (application/x-msgpack)
 *
 * Every run: a fresh data dir under os.tmpdir() and a fresh server process
 * (bench/peers/horae-server.ts); the load client is another process
 * (bench/ingest-client.ts), so server CPU (/proc/<pid>/stat, all threads) and peak RSS
 * (VmHWM) are the server's alone. Throughput counts until every point is visible
 * (a 204 means synced; telnet: until the writer has stored the total). Then storage: hour
 * compaction of everything, flush and major compaction of the data and UID tables, and
 * bytes/point over all files of the data dir (apparent sizes and du -sB1); then every
 * series is read back and compared with the dataset. Protocol of a run: bench/peers/run.ts.
 *
 * --values full,2dec (the default) runs every workload in both value modes.
 * Results: bench/results/ingest-<commit>[-tsx][-s<scale>].json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { TsdbConfig } from '../tsdb/config.js';
import { DevopsFormatter, describeDataset, devopsChunks, devopsOptions } from './devops-data.js';
import type { DevopsOptions, ValueMode } from './devops-data.js';
import { environment, printHeader } from './harness.js';
import { WORKLOADS, runLine, runOnce, summarize, summaryTable } from './peers/run.js';
import type { RunResult, Workload } from './peers/run.js';
import { codeFingerprint } from './peers/proc.js';
import { startHorae } from './peers/targets.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    workloads: { type: 'string' },
    scale: { type: 'string', default: '1' },
    hosts: { type: 'string' },
    hours: { type: 'string' },
    values: { type: 'string', default: 'full,2dec' },
    runs: { type: 'string', default: '3' },
    conns: { type: 'string', default: '4' },
    inflight: { type: 'string', default: '4' },
    'no-storage': { type: 'boolean', default: false },
    'no-verify': { type: 'boolean', default: false },
    profile: { type: 'string' },
    config: { type: 'string' },
    store: { type: 'string' },
    stall: { type: 'string', default: '60' },
    timeout: { type: 'string', default: '1800' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const COMPILED = import.meta.url.endsWith('.js');
const workloads = [...positionals, ...(args.workloads?.split(',') ?? [])].map((w) => (w.startsWith('ingest-') ? w : `ingest-${w}`)) as Workload[];
if (workloads.length === 0) workloads.push(...WORKLOADS);
for (const w of workloads) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w} (${WORKLOADS.join(', ')})`);
const valueModes = args.values.split(',') as ValueMode[];
for (const v of valueModes) if (v !== 'full' && v !== '2dec') throw new Error(`--values: full or 2dec, not ${v}`);
const scale = Number(args.scale);
const datasets = valueModes.map((values): DevopsOptions => devopsOptions({
  scale,
  values,
  ...(args.hosts === undefined ? {} : { hosts: Number(args.hosts) }),
  ...(args.hours === undefined ? {} : { hours: Number(args.hours) }),
}));
const config = args.config === undefined ? undefined : (JSON.parse(args.config) as Partial<TsdbConfig>);
const storeOpts = args.store === undefined ? undefined : (JSON.parse(args.store) as Record<string, unknown>);
const runs = Number(args.runs);
const log = (msg: string): void => console.log(msg);

/** CPU seconds per million points to generate IncomingPoint batches (what ingest-inproc adds to the server). */
function generatorCpuPerM(o: DevopsOptions): number {
  const f = new DevopsFormatter(o);
  const cpu0 = process.cpuUsage();
  let n = 0;
  for (const c of devopsChunks(o)) n += f.points(c).length;
  const cpu = process.cpuUsage(cpu0);
  return Math.round(((cpu.user + cpu.system) / 1e6 / (n / 1e6)) * 1000) / 1000;
}

async function main(): Promise<void> {
  const header: Record<string, unknown> = {
    ...environment(os.tmpdir()),
    benchmark: 'ingest-bench',
    runtime: COMPILED ? 'compiled JS (bench/build.sh)' : 'tsx',
    code: codeFingerprint(import.meta.url),
    workloads,
    runs,
    conns: Number(args.conns),
    inflight: Number(args.inflight),
    serverConfig: config ?? 'default',
    storeOptions: storeOpts ?? 'default',
    datasets: datasets.map(describeDataset),
    generatorCpuPerM: workloads.includes('ingest-inproc') ? generatorCpuPerM(datasets[0]!) : undefined,
  };
  printHeader(header);
  const results: RunResult[] = [];
  const failures: Array<Record<string, string>> = [];
  for (const o of datasets) {
    for (const w of workloads) {
      for (let r = 1; r <= runs; r++) {
        const nodeArgs = args.profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.profile)}`, `--cpu-prof-name=horae-${w}-${o.values}-run${r}.cpuprofile`];
        const target = await startHorae({ ...(config === undefined ? {} : { config }), ...(storeOpts === undefined ? {} : { store: storeOpts }), nodeArgs, version: String(header['commit']) });
        try {
          const res = await runOnce(target, w, o, {
            conns: Number(args.conns),
            inflight: Number(args.inflight),
            storage: !args['no-storage'],
            verify: !args['no-verify'],
            measureAfterStop: true,
            stallSeconds: Number(args.stall),
            timeoutSeconds: Number(args.timeout),
            log,
          });
          results.push(res);
          log(`run ${r}: ${runLine(res)}`);
        } catch (err) {
          const msg = (err as Error).stack ?? String(err);
          failures.push({ workload: w, values: o.values, run: String(r), error: msg });
          log(`run ${r}: ${w} ${o.values} FAILED: ${msg}`);
        } finally {
          await target.stop().catch((err: unknown) => log(`stop failed: ${(err as Error).message}`));
          target.cleanup();
        }
      }
    }
  }
  const summary = summarize(results);
  console.log('\n' + summaryTable(summary));
  header['loadAvg1mEnd'] = Math.round(os.loadavg()[0]! * 100) / 100;
  mkdirSync(args.out, { recursive: true });
  const suffix = `${COMPILED ? '' : '-tsx'}${scale === 1 && args.hosts === undefined && args.hours === undefined ? '' : `-s${args.hosts ?? ''}${args.hours ?? scale}`}`;
  const file = path.join(args.out, `ingest-${String(header['commit'])}${suffix}.json`);
  writeFileSync(file, JSON.stringify({ header, summary, runs: results, failures }, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
  if (failures.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
