/**
 * peers: Horae side by side with VictoriaMetrics 1.79 and InfluxDB 1.6 (their OpenTSDB
 * listeners), fed the same devops-cpu dataset (bench/devops-data.ts) by the same load
 * client (bench/ingest-client.ts) in one script. Usage:
 *
 *   npx tsx bench/peers.ts [--scale x] [--systems horae,victoriametrics,influxdb]
 *        [--workloads telnet,http-json] [--values full,2dec] [--runs N] [--conns 4]
 *        [--no-storage] [--no-install] [--out DIR]
 *   ./bench/build.sh && node /tmp/horae-bench-build/bench/peers.js …
 *
 * Installs the peers when missing (`apt-get install -y --no-install-recommends
 * victoria-metrics influxdb`, Debian 12) unless --no-install. Every run starts a fresh
 * server process on loopback with a fresh data dir under os.tmpdir() (flags and config as
 * /work/shared/reference/peers.md: bench/peers/targets.ts), measures as bench/peers/run.ts
 * says (points/s until every point is visible, then counted by a query; server CPU from
 * /proc/<pid>/stat; VmHWM; bytes/point after each system's flush and merge), and stops the
 * server by PID (also on errors and on exit). Runs are interleaved (for each value mode and
 * run: each workload on each system in turn) so load changes hit all systems alike.
 * Workloads a system lacks (msgpack, in-process for the peers) are skipped.
 *
 * Results: bench/results/ingest-peers-<commit>[-tsx][-s<scale>].json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describeDataset, devopsOptions } from './devops-data.js';
import type { DevopsOptions, ValueMode } from './devops-data.js';
import { environment, printHeader } from './harness.js';
import { WORKLOADS, WORKLOAD_FORMAT, runLine, runOnce, summarize, summaryTable } from './peers/run.js';
import type { RunResult, Workload } from './peers/run.js';
import { codeFingerprint } from './peers/proc.js';
import { startTarget } from './peers/targets.js';
import type { SystemName, Target } from './peers/targets.js';

const { values: args } = parseArgs({
  options: {
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
    out: { type: 'string', default: 'bench/results' },
  },
});

const COMPILED = import.meta.url.endsWith('.js');
const systems = args.systems.split(',') as SystemName[];
for (const s of systems) if (!['horae', 'victoriametrics', 'influxdb'].includes(s)) throw new Error(`unknown system ${s}`);
const workloads = args.workloads.split(',').map((w) => (w.startsWith('ingest-') ? w : `ingest-${w}`)) as Workload[];
for (const w of workloads) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w} (${WORKLOADS.join(', ')})`);
const valueModes = args.values.split(',') as ValueMode[];
const scale = Number(args.scale);
const datasets = valueModes.map((values): DevopsOptions => devopsOptions({
  scale,
  values,
  ...(args.hosts === undefined ? {} : { hosts: Number(args.hosts) }),
  ...(args.hours === undefined ? {} : { hours: Number(args.hours) }),
}));
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
  if (args['no-install']) throw new Error(`not installed: ${missing.join(', ')}`);
  log(`installing ${missing.join(', ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = (): void => void execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
    install();
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
    runtime: COMPILED ? 'compiled JS (bench/build.sh)' : 'tsx',
    code: codeFingerprint(import.meta.url),
    systems,
    workloads,
    runs: Number(args.runs),
    conns: Number(args.conns),
    datasets: datasets.map(describeDataset),
  };
  printHeader(header);
  const results: RunResult[] = [];
  const failures: Array<Record<string, string>> = [];
  const versions: Record<string, string> = {};
  for (const o of datasets) {
    for (let r = 1; r <= Number(args.runs); r++) {
      for (const w of workloads) {
        for (const system of systems) {
          if (!supported(system, w)) continue;
          let target: Target | undefined;
          try {
            target = await startTarget(system, { version: String(header['commit']) });
            versions[system] = target.version;
            const res = await runOnce(target, w, o, {
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
  console.log('\n' + summaryTable(summary));
  mkdirSync(args.out, { recursive: true });
  const suffix = `${COMPILED ? '' : '-tsx'}${scale === 1 && args.hosts === undefined && args.hours === undefined ? '' : `-s${args.hosts ?? ''}${args.hours ?? scale}`}`;
  const file = path.join(args.out, `ingest-peers-${String(header['commit'])}${suffix}.json`);
  writeFileSync(file, JSON.stringify({ header, summary, runs: results, failures }, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
  if (failures.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
