/**
 * One measured run against a Target (bench/peers/targets.ts) as users run the server,
 * shared by bench/record.ts and bench/query-bench.ts:
 *
 *   1. (untimed) the data file of the wire format exists; the load client
 *      (bench/ingest-client.ts) is forked and has opened its connections
 *   2. t0, CPU of the server's process tree (/proc, bench/peers/proc.ts treeCpuSeconds);
 *      the client is told to go
 *   3. the client has sent everything (HTTP: every request answered)
 *   4. polled every 50 ms until every point is stored (Target.ingested()), then until the
 *      query path counts every point (Target.count()): t1, CPU. Points/s = points ÷ (t1 − t0)
 *   5. bytes on disk right after the load (du -sB1 of the data directory, and file sizes)
 *   6. left alone for `waitSeconds` (default 180): nothing is sent, nothing forced; the
 *      tree's CPU over the wait is the idle CPU; RSS (tree and server process) after the
 *      load and after the wait; bytes on disk after the wait
 *   7. `atRest` (bench/record.ts: the query set, bench/peers/query-run.ts) in that state
 *   8. a clean stop (SIGTERM / SIGINT), bytes on disk after it
 *   9. with `readyProbe`: started again on the same data; ready = from the spawn of the
 *      process to the first query `readyProbe` accepts (polled every 25 ms); stopped cleanly
 *
 * A run fails (throws) when points stop arriving for `stallSeconds` before all are
 * visible, or on any timeout; the caller stops the target either way.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { DevopsOptions, ValueMode, WireFormat } from '../devops-data.js';
import { totalPoints } from '../devops-data.js';
import { ensureDataFile, warmPageCache } from '../ingest-client.js';
import type { ClientDone, ClientSpec } from '../ingest-client.js';
import { median } from '../harness.js';
import { IpcChannel, benchScript, diskUsage, forkScript, pollUntil, procRss, sleep, treeCpuSeconds, treePss, treeRss } from './proc.js';
import type { QuerySetResult } from './query-run.js';
import { startTarget } from './targets.js';
import type { Target } from './targets.js';

export type Workload = 'ingest-telnet' | 'ingest-http-json' | 'ingest-http-msgpack';

export const WORKLOADS: readonly Workload[] = ['ingest-telnet', 'ingest-http-json', 'ingest-http-msgpack'];

export const WORKLOAD_FORMAT: Readonly<Record<Workload, WireFormat>> = {
  'ingest-telnet': 'telnet',
  'ingest-http-json': 'json',
  'ingest-http-msgpack': 'msgpack',
};

export interface RunOptions {
  /** Telnet connections / HTTP requests in flight. */
  readonly conns: number;
  /** How long the server is left alone after the load. */
  readonly waitSeconds: number;
  readonly stallSeconds: number;
  readonly timeoutSeconds: number;
  readonly log: (msg: string) => void;
  /** Runs on the server left alone after the load, before it is stopped. */
  readonly atRest?: (t: Target) => Promise<QuerySetResult>;
  /** Restart on the data and time until this query succeeds (resolves true). */
  readonly readyProbe?: (t: Target) => Promise<boolean>;
  /** Keep the server running after the run (the caller stops it); no stop, no restart. */
  readonly keepRunning?: boolean;
}

/** du -sB1 of the data directory over the points, and the apparent sizes. */
export interface DiskFigures {
  readonly bytesPerPoint: number;
  readonly apparentPerPoint: number;
  readonly byExt: Record<string, number>;
}

export interface RunResult {
  readonly system: string;
  readonly version: string;
  readonly workload: Workload;
  readonly values: ValueMode;
  readonly points: number;
  readonly seconds: number;
  readonly pointsPerSec: number;
  /** Until the client had sent everything. */
  readonly sendSeconds: number;
  /** From then until every point was counted by a query. */
  readonly drainSeconds: number;
  readonly serverCpuSeconds: number;
  readonly serverCpuPerM: number;
  readonly clientCpuSeconds: number;
  readonly clientCpuPerM: number;
  /** The tree's RSS once a second from t0 until every point was counted (MiB). */
  readonly rssTimelineMiB: readonly number[];
  readonly peakRssMiB: number;
  /** Process tree (Horae: npm, sh and the server) and the server process alone, MiB. */
  readonly rssAfterLoadMiB: number;
  readonly rssAfterWaitMiB: number;
  /** The tree's proportional set size (shared pages counted once): proc.ts treePss. */
  readonly pssAfterLoadMiB?: number;
  readonly pssAfterWaitMiB?: number;
  readonly serverRssAfterLoadMiB: number;
  readonly serverRssAfterWaitMiB: number;
  readonly waitSeconds: number;
  /** CPU-s of the tree while left alone. */
  readonly idleCpuSeconds: number;
  readonly diskAfterLoad: DiskFigures;
  readonly diskAfterWait: DiskFigures;
  readonly diskAfterStop?: DiskFigures;
  /** Restart on the data: spawn → first accepted query. */
  readonly readySeconds?: number;
  readonly rejected: number;
  readonly failedPoints: number;
  readonly countedByQuery: number;
  readonly load1m: readonly [number, number];
  readonly client: ClientDone;
  readonly queries?: QuerySetResult;
}

const MiB = 2 ** 20;
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

function diskFigures(dir: string, points: number): DiskFigures {
  const d = diskUsage(dir);
  return { bytesPerPoint: round(d.allocated / points), apparentPerPoint: round(d.bytes / points), byExt: d.byExt };
}

/** Forks the load client and waits until it is connected. */
export async function startClient(spec: ClientSpec): Promise<IpcChannel> {
  const child = forkScript(benchScript(import.meta.url, '../ingest-client.js'), [JSON.stringify(spec)]);
  const ipc = new IpcChannel(child, 'ingest-client');
  await ipc.next('ready', 120_000);
  return ipc;
}

/** Polls `ingested()` until `expected` points are stored; throws when none arrive for `stallSeconds`. */
export async function untilStored(t: Target, expected: number, stallSeconds: number, timeoutSeconds: number): Promise<{ points: number; rejected: number }> {
  let last = -1;
  let lastChange = performance.now();
  return pollUntil(`all ${expected} points stored in ${t.system}`, timeoutSeconds * 1000, 50, async () => {
    const s = await t.ingested();
    if (s.points + s.rejected >= expected) return s;
    if (s.points !== last) {
      last = s.points;
      lastChange = performance.now();
    } else if (performance.now() - lastChange > stallSeconds * 1000) {
      throw new Error(`${t.system} stalled at ${s.points} of ${expected} points (${s.rejected} rejected) for ${stallSeconds} s`);
    }
    return undefined;
  });
}

/** Starts `t` again on its data and measures spawn → first query `probe` accepts; stops it cleanly. */
export async function restartReady(t: Target, probe: (t: Target) => Promise<boolean>, timeoutSeconds: number): Promise<number> {
  const r = await startTarget(t.system, { root: t.root, version: t.version });
  try {
    const at = await pollUntil(`${t.system} to answer after a restart`, timeoutSeconds * 1000, 25, async () => ((await probe(r)) ? performance.now() : undefined));
    return round((at - r.spawnedAt) / 1000);
  } finally {
    await r.stop();
  }
}

export async function runOnce(target: Target, workload: Workload, o: DevopsOptions, ro: RunOptions): Promise<RunResult> {
  const total = totalPoints(o);
  const format = WORKLOAD_FORMAT[workload];
  const ep = target.endpoint(format);
  if (ep === undefined) throw new Error(`${target.system} has no ${format} endpoint`);
  const file = ensureDataFile(o, format);
  warmPageCache(file);
  let client: IpcChannel | undefined = await startClient({ ...ep, conns: ro.conns, file });
  const load0 = os.loadavg()[0]!;
  const rssTimeline: number[] = [];
  const rssTimer = setInterval(() => rssTimeline.push(Math.round(treeRss(target.pid) / MiB)), 1000);
  try {
    const cpu0 = treeCpuSeconds(target.pid);
    const t0 = performance.now();
    const done = client.next('done', ro.timeoutSeconds * 1000);
    client.send({ cmd: 'go' });
    const clientDone = (await done) as unknown as ClientDone;
    const tSent = performance.now();
    const failed = clientDone.failedPoints;
    if (failed > 0) ro.log(`  ${failed} points failed at the client: ${clientDone.errors.join(' | ')}`);
    const seen = await untilStored(target, total - failed, ro.stallSeconds, ro.timeoutSeconds).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; client: ${JSON.stringify(clientDone)}`);
    });
    const counted = await pollUntil(`${target.system} queries to count ${seen.points} points`, ro.timeoutSeconds * 1000, 50, async () => {
      const n = await target.count(o);
      return n >= seen.points ? n : undefined;
    });
    const t1 = performance.now();
    const cpu1 = treeCpuSeconds(target.pid);
    clearInterval(rssTimer);
    client.send({ cmd: 'exit' });
    client = undefined;
    const rssAfterLoad = treeRss(target.pid);
    const serverRssAfterLoad = procRss(target.serverPid).rss;
    const pssAfterLoad = treePss(target.pid);
    const load1 = os.loadavg()[0]!;
    const diskAfterLoad = diskFigures(target.dataDir, total);

    ro.log(`  ${target.system}: loaded in ${round((t1 - t0) / 1000, 1)} s; left alone for ${ro.waitSeconds} s`);
    const idle0 = treeCpuSeconds(target.pid);
    await sleep(ro.waitSeconds * 1000);
    const idleCpu = treeCpuSeconds(target.pid) - idle0;
    const rssAfterWait = treeRss(target.pid);
    const serverRssAfterWait = procRss(target.serverPid).rss;
    const pssAfterWait = treePss(target.pid);
    const diskAfterWait = diskFigures(target.dataDir, total);
    const queries = ro.atRest === undefined ? undefined : await ro.atRest(target);

    let diskAfterStop: DiskFigures | undefined;
    let readySeconds: number | undefined;
    if (ro.keepRunning !== true) {
      await target.stop();
      diskAfterStop = diskFigures(target.dataDir, total);
      if (ro.readyProbe !== undefined) readySeconds = await restartReady(target, ro.readyProbe, ro.timeoutSeconds);
    }
    const seconds = (t1 - t0) / 1000;
    const serverCpu = cpu1 - cpu0;
    return {
      system: target.system,
      version: target.version,
      workload,
      values: o.values,
      points: total,
      seconds: round(seconds),
      pointsPerSec: Math.round(total / seconds),
      sendSeconds: round((tSent - t0) / 1000),
      drainSeconds: round((t1 - tSent) / 1000),
      serverCpuSeconds: round(serverCpu),
      serverCpuPerM: round(serverCpu / (total / 1e6)),
      clientCpuSeconds: round(clientDone.cpuSeconds),
      clientCpuPerM: round(clientDone.cpuSeconds / (total / 1e6)),
      rssTimelineMiB: rssTimeline,
      peakRssMiB: Math.max(Math.round(rssAfterLoad / MiB), ...rssTimeline),
      rssAfterLoadMiB: round(rssAfterLoad / MiB, 1),
      rssAfterWaitMiB: round(rssAfterWait / MiB, 1),
      pssAfterLoadMiB: round(pssAfterLoad / MiB, 1),
      pssAfterWaitMiB: round(pssAfterWait / MiB, 1),
      serverRssAfterLoadMiB: round(serverRssAfterLoad / MiB, 1),
      serverRssAfterWaitMiB: round(serverRssAfterWait / MiB, 1),
      waitSeconds: ro.waitSeconds,
      idleCpuSeconds: round(idleCpu, 2),
      diskAfterLoad,
      diskAfterWait,
      ...(diskAfterStop === undefined ? {} : { diskAfterStop }),
      ...(readySeconds === undefined ? {} : { readySeconds }),
      rejected: seen.rejected,
      failedPoints: failed,
      countedByQuery: counted,
      load1m: [round(load0, 2), round(load1, 2)],
      client: clientDone,
      ...(queries === undefined ? {} : { queries }),
    };
  } finally {
    clearInterval(rssTimer);
    client?.send({ cmd: 'exit' });
  }
}

/** One line per run as it finishes. */
export function runLine(r: RunResult): string {
  const f2 = (x: number | undefined): string => (x === undefined ? '–' : x.toFixed(2));
  return `${r.system.padEnd(15)} ${r.workload.padEnd(19)} ${r.values.padEnd(4)} ${r.pointsPerSec.toLocaleString('en-US').padStart(10)} pts/s ` +
    `in ${r.seconds.toFixed(1)} s (drain ${r.drainSeconds.toFixed(2)} s) | server ${r.serverCpuPerM.toFixed(2)} CPU-s/M, client ${r.clientCpuPerM.toFixed(2)} | ` +
    `du B/pt ${f2(r.diskAfterLoad.bytesPerPoint)} → ${f2(r.diskAfterWait.bytesPerPoint)} after ${r.waitSeconds} s → ${f2(r.diskAfterStop?.bytesPerPoint)} stopped | ` +
    `idle ${r.idleCpuSeconds.toFixed(1)} CPU-s | RSS ${r.rssAfterLoadMiB.toFixed(0)} / ${r.rssAfterWaitMiB.toFixed(0)} MiB | ready ${r.readySeconds === undefined ? '–' : `${r.readySeconds.toFixed(2)} s`} | ` +
    `rejected ${r.rejected} failed ${r.failedPoints} | load ${r.load1m[0]}→${r.load1m[1]}`;
}

export interface Summary {
  readonly system: string;
  readonly version: string;
  readonly workload: Workload;
  readonly values: ValueMode;
  readonly runs: number;
  readonly waitSeconds: number;
  readonly pointsPerSec: { readonly median: number; readonly min: number; readonly max: number };
  readonly serverCpuPerM: number;
  readonly clientCpuPerM: number;
  readonly peakRssMiB: number;
  readonly rssAfterLoadMiB: number;
  readonly rssAfterWaitMiB: number;
  readonly pssAfterLoadMiB?: number;
  readonly pssAfterWaitMiB?: number;
  readonly idleCpuSeconds: number;
  readonly bytesPerPointAfterLoad: number;
  readonly bytesPerPointAfterWait: number;
  readonly bytesPerPointAfterStop?: number;
  readonly readySeconds?: number;
}

/** Medians over the runs of each (system, workload, values), in first-seen order. */
export function summarize(results: readonly RunResult[]): Summary[] {
  const groups = new Map<string, RunResult[]>();
  for (const r of results) {
    const k = `${r.system}|${r.workload}|${r.values}`;
    const g = groups.get(k);
    if (g === undefined) groups.set(k, [r]);
    else g.push(r);
  }
  return [...groups.values()].map((g) => {
    const r0 = g[0]!;
    const pps = g.map((r) => r.pointsPerSec);
    const med = (f: (r: RunResult) => number, d = 3): number => round(median(g.map(f)), d);
    const opt = (f: (r: RunResult) => number | undefined): number | undefined => {
      const xs = g.map(f).filter((x): x is number => x !== undefined);
      return xs.length === 0 ? undefined : round(median(xs));
    };
    const afterStop = opt((r) => r.diskAfterStop?.bytesPerPoint);
    const ready = opt((r) => r.readySeconds);
    const pssLoad = opt((r) => r.pssAfterLoadMiB);
    const pssWait = opt((r) => r.pssAfterWaitMiB);
    return {
      system: r0.system,
      version: r0.version,
      workload: r0.workload,
      values: r0.values,
      runs: g.length,
      waitSeconds: r0.waitSeconds,
      pointsPerSec: { median: Math.round(median(pps)), min: Math.min(...pps), max: Math.max(...pps) },
      serverCpuPerM: med((r) => r.serverCpuPerM),
      clientCpuPerM: med((r) => r.clientCpuPerM),
      peakRssMiB: med((r) => r.peakRssMiB, 1),
      rssAfterLoadMiB: med((r) => r.rssAfterLoadMiB, 1),
      rssAfterWaitMiB: med((r) => r.rssAfterWaitMiB, 1),
      ...(pssLoad === undefined ? {} : { pssAfterLoadMiB: pssLoad }),
      ...(pssWait === undefined ? {} : { pssAfterWaitMiB: pssWait }),
      idleCpuSeconds: med((r) => r.idleCpuSeconds, 2),
      bytesPerPointAfterLoad: med((r) => r.diskAfterLoad.bytesPerPoint),
      bytesPerPointAfterWait: med((r) => r.diskAfterWait.bytesPerPoint),
      ...(afterStop === undefined ? {} : { bytesPerPointAfterStop: afterStop }),
      ...(ready === undefined ? {} : { readySeconds: ready }),
    };
  });
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const f2 = (n: number | undefined): string => (n === undefined ? '' : n.toFixed(2));

/** The Markdown table of the summaries. */
export function summaryTable(rows: readonly Summary[]): string {
  const lines = [
    '| system | workload | values | runs | points/s (median) | min–max | server CPU-s / M points | client CPU-s / M | du B/pt after load | after wait | after stop | idle CPU-s | RSS MiB after load / wait | ready s |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.system} | ${r.workload} | ${r.values} | ${r.runs} | ${int(r.pointsPerSec.median)} | ${int(r.pointsPerSec.min)}–${int(r.pointsPerSec.max)} | ` +
      `${r.serverCpuPerM.toFixed(2)} | ${r.clientCpuPerM.toFixed(2)} | ${f2(r.bytesPerPointAfterLoad)} | ${f2(r.bytesPerPointAfterWait)} | ${f2(r.bytesPerPointAfterStop)} | ` +
      `${r.idleCpuSeconds.toFixed(1)} | ${int(r.rssAfterLoadMiB)} / ${int(r.rssAfterWaitMiB)} | ${f2(r.readySeconds)} |`);
  }
  return lines.join('\n');
}
