/**
 * live: a server fed at a fixed rate with current timestamps for a long time, across hour
 * boundaries, as a fleet feeds it (issue 31's live-rate targets). Usage:
 *
 *   npm run bench:live -- [--systems horae[,victoriametrics]] [--rate 100000] [--interval 1]
 *        [--metrics 10] [--minutes 130] [--boundary-after 600|none] [--conns 4] [--batch 5000]
 *        [--window-before 10] [--window-after 120] [--warmup 300] [--sample 10] [--out DIR]
 *
 * Series: rate × interval devops hosts' series (default 100 k: 10,000 hosts × 10 metrics,
 * one point a second each), sent by bench/live-client.ts as JSON /api/put batches of
 * `--batch` points, `--conns` in flight, each due at its time (the rate stays fixed; a
 * server that falls behind shows as lag). Timestamps: the wall clock, or with
 * `--boundary-after S` (default 600) the wall clock shifted back by less than an hour so
 * that the data's first hour boundary falls S seconds into the run (a short run then
 * crosses one; the server's own clock still turns its hours at wall-clock boundaries, which
 * are reported apart). Acks of the first `--warmup` seconds (every series new) count in no
 * latency figure. Each system is started fresh as users run it (bench/peers/targets.ts)
 * and measured (bench/peers/paced.ts) for `--minutes`:
 *
 *   disk growth per point   (du -sB1 at the end − du before) ÷ points acknowledged, beside
 *                           the hour codec's bytes/point for this data (codecBytesPerPoint)
 *                           and the growth over the second half of the run; du again
 *                           after a clean stop
 *   write amplification     bytes the server process wrote (/proc/<pid>/io write_bytes,
 *                           from the start of the load to its end, before the stop) ÷ the
 *                           compressed data: ÷ the du growth at the end, and ÷ the codec's
 *                           size of the points
 *   ack latency             HTTP 204 latencies sent within [−before, +after) s of an hour
 *                           boundary (data clock, wall clock) vs elsewhere, all after the
 *                           warm-up: p50, p99, max; p99 at boundaries ÷ median elsewhere
 *   also                    CPU-s per M points, RSS over time, self-reported figures
 *
 * Results: bench/results/live-<commit>[-tsx].json and a one-screen summary.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { environment, printHeader } from './harness.js';
import { ackStats, boundaryOffsetMs, codecBytesPerPoint, runPaced } from './peers/paced.js';
import type { AckStats, PacedRun } from './peers/paced.js';
import { codeFingerprint, diskUsage } from './peers/proc.js';
import { formatFigure } from './peers/report.js';
import { startTarget } from './peers/targets.js';
import type { SystemName, Target } from './peers/targets.js';

const { values: args } = parseArgs({
  options: {
    systems: { type: 'string', default: 'horae' },
    rate: { type: 'string', default: '100000' },
    interval: { type: 'string', default: '1' },
    metrics: { type: 'string', default: '10' },
    minutes: { type: 'string', default: '130' },
    'boundary-after': { type: 'string', default: '600' },
    conns: { type: 'string', default: '4' },
    batch: { type: 'string', default: '5000' },
    'window-before': { type: 'string', default: '10' },
    'window-after': { type: 'string', default: '120' },
    warmup: { type: 'string', default: '300' },
    sample: { type: 'string', default: '10' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const systems = args.systems.split(',') as SystemName[];
const rate = Number(args.rate);
const intervalSec = Number(args.interval);
const metrics = Number(args.metrics);
const hosts = (rate * intervalSec) / metrics;
if (!Number.isInteger(intervalSec) || intervalSec < 1) throw new Error('--interval: whole seconds, at least 1');
if (!Number.isInteger(hosts) || hosts < 1) throw new Error(`--rate × --interval ÷ --metrics must be a whole number of hosts (got ${hosts})`);
const durationSec = Number(args.minutes) * 60;
const log = (m: string): void => console.log(m);
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

interface LiveResult {
  readonly system: SystemName;
  readonly version: string;
  readonly clockOffsetMs: number;
  readonly pointsAcked: number;
  readonly pointsFailed: number;
  readonly achievedRate: number;
  readonly cpuPerM: number;
  readonly growthPerPoint: number;
  readonly growthPerPointSecondHalf: number;
  readonly growthPerPointAfterStop: number;
  readonly growthOverCodec: number;
  readonly writeBytes: number;
  readonly writeAmpOverDisk: number;
  readonly writeAmpOverCodec: number;
  readonly acks: AckStats;
  readonly rssMiBEnd: number;
  readonly run: Omit<PacedRun, 'done'> & { done: Omit<PacedRun['done'], 'acks'> };
  readonly ackSamples: PacedRun['done']['acks'];
}

async function measure(t: Target, codec: number): Promise<LiveResult> {
  const afterSec = args['boundary-after'] === 'none' ? undefined : Number(args['boundary-after']);
  const clockOffsetMs = afterSec === undefined ? 0 : boundaryOffsetMs(Date.now(), afterSec);
  log(`${t.system}: ${hosts.toLocaleString('en-US')} hosts × ${metrics} metrics every ${intervalSec} s = ${rate.toLocaleString('en-US')} points/s for ${args.minutes} min, clock offset ${(clockOffsetMs / 1000).toFixed(0)} s`);
  const run = await runPaced(t, {
    activeHosts: hosts, metrics, intervalSec, clockOffsetMs, durationSec, drainSec: 120, batchPoints: Number(args.batch), conns: Number(args.conns),
    replaceHosts: 0, replaceEverySec: 0, progressSec: 2, seed: 20260101,
  }, Number(args.sample), log);
  const points = run.done.pointsAcked;
  await t.stop();
  const duStop = diskUsage(t.dataDir).allocated;
  const grown = run.duEnd - run.du0;
  const half = run.samples.find((s) => s.t >= run.done.seconds / 2) ?? run.samples[0]!;
  const last = run.samples[run.samples.length - 1]!;
  const writeBytes = run.ioEnd.writeBytes - run.io0.writeBytes;
  const { acks, ...done } = run.done;
  return {
    system: t.system,
    version: t.version,
    clockOffsetMs,
    pointsAcked: points,
    pointsFailed: run.done.pointsFailed,
    achievedRate: Math.round(points / run.done.seconds),
    cpuPerM: round(run.cpuSeconds / (points / 1e6)),
    growthPerPoint: round(grown / points),
    growthPerPointSecondHalf: round((last.duBytes - half.duBytes) / Math.max(1, last.acked - half.acked)),
    growthPerPointAfterStop: round((duStop - run.du0) / points),
    growthOverCodec: round(grown / points / codec),
    writeBytes,
    writeAmpOverDisk: round(writeBytes / grown, 2),
    writeAmpOverCodec: round(writeBytes / (codec * points), 2),
    acks: ackStats(acks, {
      startWallMs: run.done.startWallMs, clockOffsetMs, beforeSec: Number(args['window-before']), afterSec: Number(args['window-after']), warmupSec: Number(args.warmup),
    }),
    rssMiBEnd: last.rssMiB,
    run: { ...run, done },
    ackSamples: acks,
  };
}

function summary(rs: readonly LiveResult[], codec: number): string {
  const f = formatFigure;
  const rows: Array<[string, (r: LiveResult) => number]> = [
    ['points/s acknowledged (offered ' + f(rate) + ')', (r) => r.achievedRate],
    ['points failed', (r) => r.pointsFailed],
    ['server CPU-s / M points', (r) => r.cpuPerM],
    ['disk growth B/point (du, end of load)', (r) => r.growthPerPoint],
    ['  over the second half of the run', (r) => r.growthPerPointSecondHalf],
    ['  after a clean stop', (r) => r.growthPerPointAfterStop],
    [`  ÷ codec's ${codec} B/point (target ≤ 1.2)`, (r) => r.growthOverCodec],
    ['write amplification: written ÷ du growth (≤ 4)', (r) => r.writeAmpOverDisk],
    ['  written ÷ codec size of the points', (r) => r.writeAmpOverCodec],
    ['ack p50 ms elsewhere', (r) => r.acks.elsewhere.p50Ms],
    ['ack p99 ms elsewhere', (r) => r.acks.elsewhere.p99Ms],
    ['ack p99 ms at data-hour boundaries', (r) => r.acks.dataBoundary.p99Ms],
    ['ack p99 ms at wall-hour boundaries', (r) => r.acks.wallBoundary.p99Ms],
    ['  p99 at boundaries ÷ median elsewhere (≤ 2)', (r) => r.acks.p99AtBoundaryOverMedianElsewhere],
    ['send lag p99 ms (behind schedule)', (r) => r.acks.lagP99Ms],
    ['RSS MiB at the end', (r) => r.rssMiBEnd],
  ];
  const lines = [`| figure | ${rs.map((r) => r.system).join(' | ')} |`, `|---|${rs.map(() => '---:').join('|')}|`];
  for (const [name, get] of rows) lines.push(`| ${name} | ${rs.map((r) => f(get(r))).join(' | ')} |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const header: Record<string, unknown> = {
    ...environment(os.tmpdir()),
    benchmark: 'live (fixed rate, current timestamps)',
    code: codeFingerprint(import.meta.url),
    systems, rate, intervalSec, hosts, metrics, series: hosts * metrics, minutes: Number(args.minutes),
    boundaryAfterSec: args['boundary-after'], conns: Number(args.conns), batchPoints: Number(args.batch),
    window: { beforeSec: Number(args['window-before']), afterSec: Number(args['window-after']), warmupSec: Number(args.warmup) },
    values: 'clamped random walk, 2 decimals (JSON /api/put)',
  };
  const codec = codecBytesPerPoint(intervalSec);
  header['codecBytesPerPoint'] = codec;
  printHeader(header);
  const results: LiveResult[] = [];
  const failures: Array<Record<string, string>> = [];
  for (const system of systems) {
    let t: Target | undefined;
    try {
      t = await startTarget(system, { version: String(header['commit']) });
      results.push(await measure(t, codec));
    } catch (err) {
      failures.push({ system, error: (err as Error).stack ?? String(err) });
      log(`${system} FAILED: ${(err as Error).stack ?? String(err)}`);
    } finally {
      if (t !== undefined) {
        await t.stop().catch((err: unknown) => log(`stop ${system} failed: ${(err as Error).message}`));
        t.cleanup();
      }
    }
  }
  const text = summary(results, codec);
  console.log('\n' + text);
  mkdirSync(args.out, { recursive: true });
  const file = path.join(args.out, `live-${String(header['commit'])}${import.meta.url.endsWith('.js') ? '' : '-tsx'}.json`);
  writeFileSync(file, JSON.stringify({ header, summary: text, results, failures }, null, 1) + '\n');
  console.log(`\nwrote ${file}`);
  if (failures.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
