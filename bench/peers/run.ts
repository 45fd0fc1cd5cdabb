/**
 * One measured ingest run against a Target (bench/peers/targets.ts), shared by
 * bench/ingest-bench.ts (Horae) and bench/peers.ts (Horae and the peers side by side):
 *
 *   1. (untimed) the data file of the wire format exists; the load client
 *      (bench/ingest-client.ts) is forked and has opened its connections
 *   2. t0, server CPU (/proc/<pid>/stat, all threads); the client is told to go
 *      (in-process: the server child writes the dataset itself)
 *   3. the client has sent everything (HTTP: every request answered)
 *   4. polled every 50 ms until every point is visible (Target.ingested()); then t1, CPU,
 *      VmHWM of the server. The query path then counts the points (untimed); if it has
 *      fewer, it is polled until it has them and t1 moves there (`countGated`)
 *   5. (untimed for throughput) settle: flush and merge/compact as the system allows, CPU
 *      of that phase, then bytes on disk: sum of file sizes and du -sB1 of the data dir
 *   6. Horae: every series read back and compared with the dataset (`verify`)
 *   7. `afterSettle` (bench:peers: the query set, bench/peers/query-run.ts) on the settled
 *      server, before it is stopped
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
import { IpcChannel, benchScript, diskUsage, forkScript, pollUntil, procCpuSeconds, procRss, sleep } from './proc.js';
import type { DiskUsage } from './proc.js';
import type { QuerySetResult } from './query-run.js';
import type { Target } from './targets.js';

export type Workload = 'ingest-inproc' | 'ingest-telnet' | 'ingest-http-json' | 'ingest-http-msgpack';

export const WORKLOADS: readonly Workload[] = ['ingest-inproc', 'ingest-telnet', 'ingest-http-json', 'ingest-http-msgpack'];

export const WORKLOAD_FORMAT: Readonly<Record<Workload, WireFormat | undefined>> = {
  'ingest-inproc': undefined,
  'ingest-telnet': 'telnet',
  'ingest-http-json': 'json',
  'ingest-http-msgpack': 'msgpack',
};

export interface RunOptions {
  /** Telnet connections / HTTP requests in flight. */
  readonly conns: number;
  /** In-process write calls in flight. */
  readonly inflight: number;
  readonly storage: boolean;
  readonly verify: boolean;
  /** Stop the target at the end of the run and measure its directory again. */
  readonly measureAfterStop: boolean;
  readonly stallSeconds: number;
  readonly timeoutSeconds: number;
  readonly log: (msg: string) => void;
  /** Runs on the settled (and verified) server before it is stopped. */
  readonly afterSettle?: (t: Target) => Promise<QuerySetResult>;
}

export interface StorageResult {
  readonly settle: Record<string, unknown>;
  readonly settleCpuSeconds: number;
  readonly disk: DiskUsage;
  readonly bytesPerPoint: number;
  readonly allocatedPerPoint: number;
  /** Horae: bytes/point of the files other than the write-ahead log (*.log). */
  readonly bytesPerPointExclWal?: number;
  /** The same directory after the server stopped (graceful close). */
  readonly afterStop?: { readonly bytesPerPoint: number; readonly allocatedPerPoint: number; readonly byExt: Record<string, number> };
}

export interface RunResult {
  readonly system: string;
  readonly version: string;
  readonly workload: Workload;
  readonly values: ValueMode;
  readonly points: number;
  readonly seconds: number;
  readonly pointsPerSec: number;
  /** Until the client had sent everything (in-process: every write call resolved). */
  readonly sendSeconds: number;
  /** From then until every point was visible. */
  readonly drainSeconds: number;
  readonly serverCpuSeconds: number;
  readonly serverCpuPerM: number;
  readonly clientCpuSeconds: number;
  readonly clientCpuPerM: number;
  readonly peakRssMiB: number;
  readonly peakRssAfterSettleMiB: number;
  /** The server's RSS once a second from t0 until every point was visible (MiB). */
  readonly rssTimelineMiB: readonly number[];
  readonly rejected: number;
  readonly failedPoints: number;
  readonly countedByQuery: number;
  readonly countGated: boolean;
  readonly load1m: readonly [number, number];
  readonly client?: ClientDone;
  readonly inproc?: Record<string, unknown>;
  readonly storage?: StorageResult;
  readonly verify?: Record<string, unknown>;
  readonly queries?: QuerySetResult;
}

const MiB = 2 ** 20;
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

/** Forks the load client and waits until it is connected. */
async function startClient(spec: ClientSpec): Promise<IpcChannel> {
  const child = forkScript(benchScript(import.meta.url, '../ingest-client.js'), [JSON.stringify(spec)]);
  const ipc = new IpcChannel(child, 'ingest-client');
  await ipc.next('ready', 120_000);
  return ipc;
}

export async function runOnce(target: Target, workload: Workload, o: DevopsOptions, ro: RunOptions): Promise<RunResult> {
  const total = totalPoints(o);
  const format = WORKLOAD_FORMAT[workload];
  let client: IpcChannel | undefined;
  if (format !== undefined) {
    const ep = target.endpoint(format);
    if (ep === undefined) throw new Error(`${target.system} has no ${format} endpoint`);
    const file = ensureDataFile(o, format);
    warmPageCache(file);
    client = await startClient({ ...ep, conns: ro.conns, file });
  } else if (target.inproc === undefined) {
    throw new Error(`${target.system} cannot ingest in-process`);
  }
  const load0 = os.loadavg()[0]!;
  let rssTimer: NodeJS.Timeout | undefined;
  try {
    const rssTimeline: number[] = [];
    const sampleRss = (): void => {
      try {
        rssTimeline.push(Math.round(procRss(target.pid).rss / MiB));
      } catch {
        // gone
      }
    };
    rssTimer = setInterval(sampleRss, 1000);
    const cpu0 = procCpuSeconds(target.pid);
    const t0 = performance.now();
    let clientDone: ClientDone | undefined;
    let inproc: Record<string, unknown> | undefined;
    if (client !== undefined) {
      const c = client;
      const done = c.next('done', ro.timeoutSeconds * 1000);
      c.send({ cmd: 'go' });
      clientDone = (await done) as unknown as ClientDone;
    } else {
      inproc = await target.inproc!(o, ro.inflight);
    }
    const tSent = performance.now();
    const failed = clientDone?.failedPoints ?? 0;
    const expected = total - failed;
    if (failed > 0) ro.log(`  ${failed} points failed at the client: ${clientDone?.errors.join(' | ')}`);
    let last = -1;
    let lastChange = performance.now();
    const seen = await pollUntil(`all ${expected} points visible in ${target.system}`, ro.timeoutSeconds * 1000, 50, async () => {
      const s = await target.ingested();
      if (s.points + s.rejected >= expected) return s;
      if (s.points !== last) {
        last = s.points;
        lastChange = performance.now();
      } else if (performance.now() - lastChange > ro.stallSeconds * 1000) {
        throw new Error(`${target.system} stalled at ${s.points} of ${expected} points visible (${s.rejected} rejected) for ${ro.stallSeconds} s`);
      }
      return undefined;
    }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; client: ${JSON.stringify(clientDone ?? inproc)}`);
    });
    let t1 = performance.now();
    let cpu1 = procCpuSeconds(target.pid);
    const rss = procRss(target.pid);
    // The query path must agree; if it lags, the run lasts until it does.
    let counted = await target.count(o);
    let countGated = false;
    if (counted < seen.points) {
      countGated = true;
      counted = await pollUntil(`${target.system} queries to count ${seen.points} points`, 300_000, 200, async () => {
        const n = await target.count(o);
        return n >= seen.points ? n : undefined;
      });
      t1 = performance.now();
      cpu1 = procCpuSeconds(target.pid);
    }
    clearInterval(rssTimer);
    sampleRss();
    const load1 = os.loadavg()[0]!;
    const seconds = (t1 - t0) / 1000;
    const serverCpu = cpu1 - cpu0;
    const clientCpu = clientDone?.cpuSeconds ?? 0;
    client?.send({ cmd: 'exit' });
    client = undefined;

    let storage: StorageResult | undefined;
    let verify: Record<string, unknown> | undefined;
    let rssEnd = rss.hwm;
    if (ro.storage) {
      const c0 = procCpuSeconds(target.pid);
      const settle = await target.settle();
      const settleCpu = procCpuSeconds(target.pid) - c0;
      rssEnd = procRss(target.pid).hwm;
      await sleep(200);
      const disk = diskUsage(target.dataDir);
      storage = {
        settle,
        settleCpuSeconds: round(settleCpu),
        disk,
        bytesPerPoint: round(disk.bytes / total),
        allocatedPerPoint: round(disk.allocated / total),
        ...(target.system === 'horae' ? { bytesPerPointExclWal: round((disk.bytes - (disk.byExt['.log'] ?? 0)) / total) } : {}),
      };
    }
    if (ro.verify && target.verify !== undefined) verify = await target.verify(o);
    const queries = ro.afterSettle === undefined ? undefined : await ro.afterSettle(target);
    if (storage !== undefined && ro.measureAfterStop) {
      await target.stop();
      const d = diskUsage(target.dataDir);
      storage = { ...storage, afterStop: { bytesPerPoint: round(d.bytes / total), allocatedPerPoint: round(d.allocated / total), byExt: d.byExt } };
    }
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
      clientCpuSeconds: round(clientCpu),
      clientCpuPerM: round(clientCpu / (total / 1e6)),
      peakRssMiB: round(rss.hwm / MiB, 1),
      peakRssAfterSettleMiB: round(rssEnd / MiB, 1),
      rssTimelineMiB: rssTimeline,
      rejected: seen.rejected,
      failedPoints: failed,
      countedByQuery: counted,
      countGated,
      load1m: [round(load0, 2), round(load1, 2)],
      ...(clientDone === undefined ? {} : { client: clientDone }),
      ...(inproc === undefined ? {} : { inproc }),
      ...(storage === undefined ? {} : { storage }),
      ...(verify === undefined ? {} : { verify }),
      ...(queries === undefined ? {} : { queries }),
    };
  } finally {
    clearInterval(rssTimer);
    client?.send({ cmd: 'exit' });
  }
}

/** One line per run as it finishes. */
export function runLine(r: RunResult): string {
  const st = r.storage === undefined ? '' : ` | ${r.storage.bytesPerPoint.toFixed(2)} B/pt files, ${r.storage.allocatedPerPoint.toFixed(2)} B/pt du, settle ${Number(r.storage.settle['seconds']).toFixed(1)} s ${r.storage.settleCpuSeconds.toFixed(1)} CPU-s`;
  const v = r.verify === undefined ? '' : ` | verify ${String(r.verify['points'])} pts, ${String(r.verify['mismatches'])} mismatches, ${String(r.verify['missing'])} missing`;
  return `${r.system.padEnd(15)} ${r.workload.padEnd(19)} ${r.values.padEnd(4)} ${r.pointsPerSec.toLocaleString('en-US').padStart(10)} pts/s ` +
    `in ${r.seconds.toFixed(1)} s (drain ${r.drainSeconds.toFixed(2)} s) | server ${r.serverCpuPerM.toFixed(2)} CPU-s/M, client ${r.clientCpuPerM.toFixed(2)} | ` +
    `RSS ${r.peakRssMiB.toFixed(0)} MiB | rejected ${r.rejected} failed ${r.failedPoints} | load ${r.load1m[0]}→${r.load1m[1]}${st}${v}`;
}

export interface Summary {
  readonly system: string;
  readonly version: string;
  readonly workload: Workload;
  readonly values: ValueMode;
  readonly runs: number;
  readonly pointsPerSec: { readonly median: number; readonly min: number; readonly max: number };
  readonly serverCpuPerM: number;
  readonly clientCpuPerM: number;
  readonly peakRssMiB: number;
  readonly bytesPerPoint?: number;
  readonly allocatedPerPoint?: number;
  readonly bytesPerPointExclWal?: number;
  readonly bytesPerPointAfterStop?: number;
  readonly settleCpuPerM?: number;
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
    const st = g.filter((r) => r.storage !== undefined).map((r) => r.storage!);
    return {
      system: r0.system,
      version: r0.version,
      workload: r0.workload,
      values: r0.values,
      runs: g.length,
      pointsPerSec: { median: Math.round(median(pps)), min: Math.min(...pps), max: Math.max(...pps) },
      serverCpuPerM: round(median(g.map((r) => r.serverCpuPerM))),
      clientCpuPerM: round(median(g.map((r) => r.clientCpuPerM))),
      peakRssMiB: round(median(g.map((r) => r.peakRssMiB)), 1),
      ...(st.length === 0 ? {} : {
        bytesPerPoint: round(median(st.map((s) => s.bytesPerPoint))),
        allocatedPerPoint: round(median(st.map((s) => s.allocatedPerPoint))),
        ...(st[0]!.bytesPerPointExclWal === undefined ? {} : { bytesPerPointExclWal: round(median(st.map((s) => s.bytesPerPointExclWal ?? NaN))) }),
        ...(st[0]!.afterStop === undefined ? {} : { bytesPerPointAfterStop: round(median(st.map((s) => s.afterStop?.bytesPerPoint ?? NaN))) }),
        settleCpuPerM: round(median(st.map((s, i) => s.settleCpuSeconds / (g[i]!.points / 1e6)))),
      }),
    };
  });
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const f2 = (n: number | undefined): string => (n === undefined ? '' : n.toFixed(2));

/** The Markdown table of the summaries (printed, and kept in the result file). */
export function summaryTable(rows: readonly Summary[]): string {
  const lines = [
    '| system | workload | values | runs | points/s (median) | min–max | server CPU-s / M points | client CPU-s / M | peak RSS MiB | bytes/point (files) | bytes/point (du -sB1) | excl. WAL | after stop | settle CPU-s / M |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.system} | ${r.workload} | ${r.values} | ${r.runs} | ${int(r.pointsPerSec.median)} | ${int(r.pointsPerSec.min)}–${int(r.pointsPerSec.max)} | ` +
      `${r.serverCpuPerM.toFixed(2)} | ${r.clientCpuPerM.toFixed(2)} | ${int(r.peakRssMiB)} | ` +
      `${f2(r.bytesPerPoint)} | ${f2(r.allocatedPerPoint)} | ${f2(r.bytesPerPointExclWal)} | ${f2(r.bytesPerPointAfterStop)} | ${f2(r.settleCpuPerM)} |`);
  }
  return lines.join('\n');
}
