/**
 * bench:bigtable with `--servers 1,2,3`: the devops-cpu dataset (bench/devops-data.ts)
 * into N `horae serve --store bigtable://…` processes on one emulator table, for each N:
 * the data's telnet lines in chunks of `batchPoints` dealt round-robin to the servers (so
 * every server sees every series, as behind a load balancer), one telnet connection per
 * server, all at once. Reported per N: wall time and points/s, and the data-API calls the
 * servers made during the load (their /api/stats/store `rpcs`, summed), per point and per
 * new series. Each N gets a fresh table prefix on one emulator.
 *
 * The emulator is one in-memory process on this machine, the servers run from sources
 * (tsx) beside it: the figures compare N = 1, 2, 3 and count RPCs; they do not predict
 * Cloud Bigtable. Results: printed, and with `--record` written to
 * bench/results/bigtable-servers-<commit>.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmulator } from '../test/bigtable/emulator.js';
import { HoraeProcess, configPathOf, telnetPut } from '../test/bigtable/multi-server/horae-process.js';
import { describeDataset, devopsChunks, seriesCount, telnetLean, totalPoints } from './devops-data.js';
import type { DevopsOptions } from './devops-data.js';
import { environment, printHeader } from './harness.js';

export interface ServersRun {
  readonly servers: number;
  readonly points: number;
  readonly series: number;
  readonly wallMs: number;
  readonly pointsPerSec: number;
  readonly rpcs: Readonly<Record<string, number>>;
  readonly rpcsPerPoint: number;
  readonly rpcsPerNewSeries: number;
}

async function rpcsOf(servers: readonly HoraeProcess[]): Promise<Record<string, number>> {
  const sum: Record<string, number> = {};
  for (const s of servers) {
    const r = await s.http('GET', '/api/stats/store');
    const rpcs = (JSON.parse(r.body) as { rpcs?: Record<string, number> }).rpcs ?? {};
    for (const [k, v] of Object.entries(rpcs)) sum[k] = (sum[k] ?? 0) + v;
  }
  return sum;
}

async function runN(n: number, o: DevopsOptions, emulatorHost: string, dir: string): Promise<ServersRun> {
  const url = `bigtable://horae-bench/bench?prefix=s${n}_`;
  const env = { BIGTABLE_EMULATOR_HOST: emulatorHost, METADATA_SERVER_DETECTION: 'none' };
  const servers = Array.from({ length: n }, (_, i) => new HoraeProcess(`server ${i}`, { storeArgs: ['--store', url], env, config: {}, configPath: configPathOf(dir, n * 10 + i) }));
  try {
    await servers[0]!.start();
    await Promise.all(servers.slice(1).map((s) => s.start()));
    const lines: string[][] = servers.map(() => []);
    let k = 0;
    for (const c of devopsChunks(o)) lines[k++ % n]!.push(...telnetLean(o, c).split('\n').filter((l) => l !== ''));
    const before = await rpcsOf(servers);
    const t0 = performance.now();
    const acked = await Promise.all(servers.map((s, i) => telnetPut(s.port, lines[i]!, 5000)));
    const wallMs = performance.now() - t0;
    const after = await rpcsOf(servers);
    const points = totalPoints(o);
    const got = acked.reduce((a, r) => a + r.acked, 0);
    if (got !== points || acked.some((r) => r.errors !== '')) throw new Error(`${n} servers acknowledged ${got} of ${points} points: ${acked.map((r) => r.errors).join('')}`);
    const rpcs: Record<string, number> = {};
    for (const key of Object.keys(after)) rpcs[key] = after[key]! - (before[key] ?? 0);
    const total = Object.values(rpcs).reduce((a, b) => a + b, 0);
    const series = seriesCount(o);
    return {
      servers: n, points, series, wallMs: Math.round(wallMs), pointsPerSec: Math.round(points / (wallMs / 1000)), rpcs,
      rpcsPerPoint: Number((total / points).toFixed(4)), rpcsPerNewSeries: Number((total / series).toFixed(2)),
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** Runs every N of `counts` and prints (and with `record`, writes) the results. */
export async function benchServers(o: DevopsOptions, counts: readonly number[], emulatorKind: string, record: boolean): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'horae-bt-servers-'));
  const emulator = await startEmulator(emulatorKind);
  printHeader({ ...environment(dir), dataset: describeDataset(o), emulator: emulator.kind, servers: counts.join(',') });
  try {
    const runs: ServersRun[] = [];
    for (const n of counts) {
      const r = await runN(n, o, emulator.host, dir);
      console.log(JSON.stringify(r));
      runs.push(r);
    }
    if (record) {
      const out = { environment: environment(dir), dataset: describeDataset(o), emulator: emulator.kind, runs };
      mkdirSync('bench/results', { recursive: true });
      const file = `bench/results/bigtable-servers-${String(out.environment.commit)}.json`;
      writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
      console.log(`wrote ${file}`);
    }
  } finally {
    await emulator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
