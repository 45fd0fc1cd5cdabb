/**
 * A paced run (bench/live-client.ts) against a Target, shared by bench/live.ts and the churn
 * mode of bench/cardinality.ts, and the figures made of it:
 *
 *   runPaced        forks the client, sends it, and every `sampleSec` records the client's
 *                   counts with the server's du -sB1, process-tree RSS and CPU,
 *                   /proc/<server>/io write_bytes and its self-reported figures; returns the
 *                   samples, the acks and the first and last measurements
 *   ackStats        acknowledgement latencies near hour boundaries (of the data's clock and
 *                   of the wall clock) against those elsewhere
 *   boundaryOffsetMs  the clock offset that puts a data hour boundary `afterSec` into a run
 *   codecBytesPerPoint  the hour codec's size for the paced data's shape
 */
import { Random } from '../../core/util/random.js';
import { encodeHourBlock } from '../../tsdb/codec/hour-codec.js';
import { blockOf, devopsOffsets, walk } from '../../test/tsdb/codec/codec-data.js';
import type { Ack, PacedDone, PacedSpec } from '../live-client.js';
import { median } from '../harness.js';
import { percentileOf } from '../query/http-client.js';
import { IpcChannel, benchScript, diskUsage, forkScript, procIo, treeCpuSeconds, treeRss } from './proc.js';
import type { ProcIo } from './proc.js';
import type { Target } from './targets.js';

const HOUR_MS = 3_600_000;
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

export interface PacedSample {
  /** Seconds since the client started. */
  readonly t: number;
  readonly sent: number;
  readonly acked: number;
  readonly failed: number;
  /** Series the client has made so far (churn: old ones included). */
  readonly created: number;
  readonly duBytes: number;
  readonly rssMiB: number;
  readonly cpuSeconds: number;
  readonly writeBytes: number;
  /** The server's own figures (Target.selfStats), when it answered. */
  readonly self?: Record<string, number>;
}

export interface PacedRun {
  readonly done: PacedDone;
  readonly samples: readonly PacedSample[];
  readonly du0: number;
  readonly duEnd: number;
  readonly io0: ProcIo;
  readonly ioEnd: ProcIo;
  readonly cpuSeconds: number;
}

/** Runs the paced client against `t` (its JSON /api/put endpoint) and samples the server. */
export async function runPaced(t: Target, spec: Omit<PacedSpec, 'host' | 'port' | 'path'>, sampleSec: number, log: (m: string) => void): Promise<PacedRun> {
  const ep = t.endpoint('json');
  if (ep === undefined) throw new Error(`${t.system} has no HTTP /api/put`);
  const child = forkScript(benchScript(import.meta.url, '../live-client.js'), [JSON.stringify({ ...spec, host: ep.host, port: ep.port, path: ep.path ?? '/api/put' })]);
  const ipc = new IpcChannel(child, 'live-client');
  await ipc.next('ready', 60_000);
  const du0 = diskUsage(t.dataDir).allocated;
  const io0 = procIo(t.serverPid);
  const cpu0 = treeCpuSeconds(t.pid);
  let last: Record<string, number> = { t: 0, sent: 0, acked: 0, failed: 0, created: 0 };
  const samples: PacedSample[] = [];
  let sampling = false;
  const sample = async (): Promise<void> => {
    if (sampling) return;
    sampling = true;
    try {
      const self = await t.selfStats().catch(() => undefined);
      const s: PacedSample = {
        t: round(last['t']!, 1), sent: last['sent']!, acked: last['acked']!, failed: last['failed']!, created: last['created']!,
        duBytes: diskUsage(t.dataDir).allocated, rssMiB: Math.round(treeRss(t.pid) / 2 ** 20), cpuSeconds: round(treeCpuSeconds(t.pid) - cpu0, 2),
        writeBytes: procIo(t.serverPid).writeBytes - io0.writeBytes, ...(self === undefined ? {} : { self }),
      };
      samples.push(s);
      log(`  ${t.system} t=${s.t.toFixed(0)} s: ${s.acked.toLocaleString('en-US')} points acked (${s.failed} failed), ${s.created.toLocaleString('en-US')} series made, ` +
        `du ${(s.duBytes / 2 ** 20).toFixed(0)} MiB, RSS ${s.rssMiB} MiB, CPU ${s.cpuSeconds.toFixed(0)} s, written ${(s.writeBytes / 2 ** 20).toFixed(0)} MiB`);
    } finally {
      sampling = false;
    }
  };
  const onProgress = (m: Record<string, unknown>): void => {
    if (m['type'] === 'progress') last = m as Record<string, number>;
  };
  child.on('message', onProgress);
  const timer = setInterval(() => void sample(), sampleSec * 1000);
  try {
    const done = ipc.next('done', (spec.durationSec + spec.drainSec + 120) * 1000);
    ipc.send({ cmd: 'go' });
    const d = (await done) as unknown as PacedDone;
    clearInterval(timer);
    last = { t: d.seconds, sent: d.pointsSent, acked: d.pointsAcked, failed: d.pointsFailed, created: d.seriesCreated };
    await sample();
    return { done: d, samples, du0, duEnd: samples[samples.length - 1]!.duBytes, io0, ioEnd: procIo(t.serverPid), cpuSeconds: round(treeCpuSeconds(t.pid) - cpu0, 2) };
  } finally {
    clearInterval(timer);
    child.off('message', onProgress);
    ipc.send({ cmd: 'exit' });
  }
}

/**
 * The clock offset (ms, ≤ 0: data never in the future) that makes the data's clock, which
 * is the wall clock plus the offset, cross an hour boundary `afterSec` after `nowMs`.
 */
export function boundaryOffsetMs(nowMs: number, afterSec: number): number {
  const h = Math.floor((nowMs + afterSec * 1000) / HOUR_MS) * HOUR_MS;
  return h - afterSec * 1000 - nowMs;
}

export interface LatencyStats {
  readonly n: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface AckStats {
  /** Acks sent within [boundary − before, boundary + after) of an hour of the data's clock. */
  readonly dataBoundary: LatencyStats;
  /** The same for the wall clock's hours (the same as dataBoundary without an offset). */
  readonly wallBoundary: LatencyStats;
  /** Acks sent near neither (all three: after the warm-up). */
  readonly elsewhere: LatencyStats;
  /** p99 at either kind of boundary ÷ the median elsewhere (the target: ≤ 2). */
  readonly p99AtBoundaryOverMedianElsewhere: number;
  readonly failed: number;
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
}

function latencyStats(xs: number[]): LatencyStats {
  const s = xs.sort((a, b) => a - b);
  return { n: s.length, p50Ms: round(percentileOf(s, 0.5)), p99Ms: round(percentileOf(s, 0.99)), maxMs: s.length === 0 ? NaN : round(s[s.length - 1]!) };
}

/** Whether wall/data time `ms` lies in [boundary − beforeSec, boundary + afterSec) of some hour. */
function nearBoundary(ms: number, beforeSec: number, afterSec: number): boolean {
  const into = ((ms % HOUR_MS) + HOUR_MS) % HOUR_MS;
  return into < afterSec * 1000 || into >= HOUR_MS - beforeSec * 1000;
}

/** Splits the successful acks sent after `warmupSec` by where: near a data or wall hour boundary, or elsewhere. */
export function ackStats(acks: readonly Ack[], o: { startWallMs: number; clockOffsetMs: number; beforeSec: number; afterSec: number; warmupSec: number }): AckStats {
  const data: number[] = [];
  const wall: number[] = [];
  const rest: number[] = [];
  const lags: number[] = [];
  let failed = 0;
  for (const a of acks) {
    if (a.status !== 204 && a.status !== 200) {
      failed++;
      continue;
    }
    if (a.sentMs < o.warmupSec * 1000) continue;
    lags.push(a.lagMs);
    const w = o.startWallMs + a.sentMs;
    const nearData = nearBoundary(w + o.clockOffsetMs, o.beforeSec, o.afterSec);
    const nearWall = nearBoundary(w, o.beforeSec, o.afterSec);
    if (nearData) data.push(a.latencyMs);
    if (nearWall) wall.push(a.latencyMs);
    if (!nearData && !nearWall) rest.push(a.latencyMs);
  }
  const lag = latencyStats(lags);
  const d = latencyStats(data);
  const w = latencyStats(wall);
  const e = latencyStats(rest);
  const worst = Math.max(d.n > 0 ? d.p99Ms : -Infinity, w.n > 0 ? w.p99Ms : -Infinity);
  return {
    dataBoundary: d, wallBoundary: w, elsewhere: e,
    p99AtBoundaryOverMedianElsewhere: Number.isFinite(worst) && e.n > 0 ? round(worst / e.p50Ms) : NaN,
    failed, lagP99Ms: lag.p99Ms, lagMaxMs: lag.maxMs,
  };
}

/**
 * Bytes per point of the hour codec (tsdb/codec, encodeHourBlock: the compressed cell's
 * bytes, everything in it) for series-hours shaped as the paced data: one point every
 * `intervalSec`, a clamped random walk rounded to 2 decimals; the median over `series`.
 */
export function codecBytesPerPoint(intervalSec: number, series = 200, seed = 20261207): number {
  const rng = new Random(seed);
  const per: number[] = [];
  for (let i = 0; i < series; i++) {
    const offsets = devopsOffsets(rng, { stepMs: intervalSec * 1000 });
    per.push(encodeHourBlock(blockOf(offsets, walk(rng, offsets.length, 2))).length / offsets.length);
  }
  return round(median(per), 4);
}
