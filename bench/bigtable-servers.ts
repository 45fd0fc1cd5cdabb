/**
 * bench:bigtable with `--servers 1,2,3`: the devops-cpu dataset (bench/devops-data.ts)
 * into N `horae serve --store bigtable://…` processes (default config, from sources) on
 * one emulator table, for each N:
 *
 * 1. Ingest: the data's telnet lines in chunks of `batchPoints` dealt round-robin to the
 *    servers (so every server sees every series, as behind a load balancer), one telnet
 *    connection per server, all at once. Reported: wall time and points/s, and the
 *    data-API calls the servers made during the load (their /api/stats/store `rpcs`,
 *    summed, background polls included), per point and per new series (all the calls of
 *    the load over the series count: an upper bound, the points' own MutateRows included).
 * 2. Settling: the time until every server's hour compaction has compacted what it wrote
 *    (horae.compaction.pending_rows and ledger_pairs 0; default grace and idle times).
 * 3. Queries: the devops set of bench/query/queries.ts (q1, q2, q2-host, q3 last points,
 *    q4) through each server over HTTP: 2 warm-up runs, then `runs` timed (request to last
 *    byte), median and min per server, and the server's data-API calls per query (its
 *    background polls included). Every answer is checked against the one computed from
 *    the regenerated dataset; the run fails on a wrong answer.
 *
 * Each N gets a fresh table prefix on one emulator. The emulator is one in-memory process
 * on this machine, the servers run beside it: the figures compare N = 1, 2, 3 and count
 * RPCs; they do not predict Cloud Bigtable. Results: printed, and with `--record` written
 * to bench/results/bigtable-servers-<commit>.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmulator } from '../test/bigtable/emulator.js';
import { HoraeProcess, configPathOf, telnetPut } from '../test/bigtable/multi-server/horae-process.js';
import { METRICS, describeDataset, devopsChunks, seriesCount, telnetLean, totalPoints } from './devops-data.js';
import type { DevopsOptions } from './devops-data.js';
import { environment, median, printHeader } from './harness.js';
import { HttpClient } from './query/http-client.js';
import { MetricValues, compare, expectedAnswer, horaeAnswer, querySet } from './query/queries.js';

export interface ServersRun {
  readonly servers: number;
  readonly points: number;
  readonly series: number;
  readonly wallMs: number;
  readonly pointsPerSec: number;
  readonly rpcs: Readonly<Record<string, number>>;
  readonly rpcsPerPoint: number;
  readonly rpcsPerNewSeries: number;
  /** Load end → every server's hour compaction done. */
  readonly settleMs: number;
  /** Per server (index as started): query id → timings and data-API calls a run. */
  readonly queries: ReadonlyArray<Readonly<Record<string, QueryTiming>>>;
}

export interface QueryTiming {
  readonly medianMs: number;
  readonly minMs: number;
  readonly rpcsPerQuery: number;
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

function sumOf(r: Readonly<Record<string, number>>): number {
  return Object.values(r).reduce((a, b) => a + b, 0);
}

/** A point of a server's /api/stats (undefined when it has none). */
async function statOf(s: HoraeProcess, metric: string): Promise<number | undefined> {
  const stats = JSON.parse((await s.http('GET', '/api/stats')).body) as Array<{ metric: string; value: number }>;
  return stats.find((p) => p.metric === metric)?.value;
}

/** Waits until no server owes hour compaction (10 min at most); the ms waited. */
async function settle(servers: readonly HoraeProcess[]): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    let owed = 0;
    for (const s of servers) owed += ((await statOf(s, 'horae.compaction.pending_rows')) ?? 0) + ((await statOf(s, 'horae.compaction.ledger_pairs')) ?? 0);
    if (owed === 0) return Math.round(performance.now() - t0);
    if (performance.now() - t0 > 600_000) throw new Error(`hour compaction still owes ${owed} rows and pairs 10 min after the load`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The query set through each server in turn; a wrong answer throws. */
async function queryEach(servers: readonly HoraeProcess[], o: DevopsOptions, runs: number): Promise<Array<Record<string, QueryTiming>>> {
  const qs = querySet(o, { metric: METRICS[0]!, vmBuckets: 'opentsdb' });
  const mv = new MetricValues(o, 0);
  const want = new Map(qs.map((q) => [q.id, expectedAnswer(q, mv, 'opentsdb')]));
  const out: Array<Record<string, QueryTiming>> = [];
  for (const s of servers) {
    const client = new HttpClient('127.0.0.1', s.port, 1);
    const per: Record<string, QueryTiming> = {};
    try {
      for (const q of qs) {
        for (let i = 0; i < 2; i++) await client.request(q.horae);
        const before = sumOf(await rpcsOf([s]));
        const times: number[] = [];
        for (let i = 0; i < runs; i++) {
          const r = await client.request(q.horae);
          if (r.status !== 200) throw new Error(`${s.name} ${q.id}: ${r.status} ${r.body.toString().slice(0, 300)}`);
          times.push(r.ms);
          if (i > 0) continue;
          const c = compare(horaeAnswer(q, r.body).answer, want.get(q.id)!);
          if (!c.ok) throw new Error(`${s.name} ${q.id}: wrong answer ${JSON.stringify(c)}`);
        }
        const rpcs = sumOf(await rpcsOf([s])) - before;
        per[q.id] = { medianMs: Number(median(times).toFixed(2)), minMs: Number(Math.min(...times).toFixed(2)), rpcsPerQuery: Number((rpcs / runs).toFixed(2)) };
      }
    } finally {
      client.close();
    }
    out.push(per);
  }
  return out;
}

async function runN(n: number, o: DevopsOptions, emulatorHost: string, dir: string, runs: number): Promise<ServersRun> {
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
    const total = sumOf(rpcs);
    const series = seriesCount(o);
    const settleMs = await settle(servers);
    const queries = await queryEach(servers, o, runs);
    return {
      servers: n, points, series, wallMs: Math.round(wallMs), pointsPerSec: Math.round(points / (wallMs / 1000)), rpcs,
      rpcsPerPoint: Number((total / points).toFixed(4)), rpcsPerNewSeries: Number((total / series).toFixed(2)), settleMs, queries,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** Runs every N of `counts` and prints (and with `record`, writes) the results. */
export async function benchServers(o: DevopsOptions, counts: readonly number[], emulatorKind: string, record: boolean, runs: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'horae-bt-servers-'));
  const emulator = await startEmulator(emulatorKind);
  printHeader({ ...environment(dir), dataset: describeDataset(o), emulator: emulator.kind, servers: counts.join(','), runs });
  try {
    const results: ServersRun[] = [];
    for (const n of counts) {
      const r = await runN(n, o, emulator.host, dir, runs);
      console.log(JSON.stringify(r));
      results.push(r);
    }
    if (record) {
      const out = { environment: environment(dir), dataset: describeDataset(o), emulator: emulator.kind, queryRuns: runs, runs: results };
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
