/**
 * Shared pieces of the workload benchmarks: the timing helpers, latency
 * percentiles, the run summary (median/min/max over runs), the environment header, the
 * printed table and the JSON result file. Workload code lives in the *-bench.ts files.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/** What one run of one workload measured. `ops` are cells (or calls where noted). */
export interface Measured {
  readonly ops: number;
  readonly bytes: number;
  readonly seconds: number;
  /** Latency of every call (or scan batch), in ms. */
  readonly latMs: Float64Array;
  /** Workload-specific figures (flushes, stalls, cache hits...). */
  extra: Record<string, number | string>;
}

export interface RunSummary {
  readonly opsPerSec: number;
  readonly mbPerSec: number;
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly seconds: number;
  readonly extra: Record<string, number | string>;
}

export interface WorkloadResult {
  readonly name: string;
  readonly unit: string;
  readonly note: string;
  readonly runs: RunSummary[];
  /** Medians over runs (min/max for ops/s). */
  readonly opsPerSec: { readonly median: number; readonly min: number; readonly max: number };
  readonly mbPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Sums bytes the benchmarks read, so the JIT cannot drop the work; printed at the end. */
export const sink = { value: 0 };

/**
 * Runs `calls` calls of `body(i)` with `concurrency` of them in flight (each loop takes the
 * next i), timing each call. `body` returns the ops it did; bytes = ops * bytesPerOp.
 */
export async function timeCalls(
  calls: number, concurrency: number, bytesPerOp: number, body: (i: number) => Promise<number>,
): Promise<Measured> {
  const lat = new Float64Array(calls);
  let next = 0;
  let ops = 0;
  const loop = async (): Promise<void> => {
    for (let i = next++; i < calls; i = next++) {
      const t = performance.now();
      const n = await body(i); // not `ops += await ...`: that reads `ops` before awaiting
      lat[i] = performance.now() - t;
      ops += n;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - t0) / 1000;
  return { ops, bytes: ops * bytesPerOp, seconds, latMs: lat, extra: {} };
}

/** Times each batch of an async iterable (the time to get it plus `onBatch`). */
export async function timeBatches<T>(
  iterable: AsyncIterable<T>, bytesPerOp: number, onBatch: (batch: T) => number,
): Promise<Measured> {
  const lat: number[] = [];
  let ops = 0;
  const t0 = performance.now();
  let t = t0;
  for await (const batch of iterable) {
    ops += onBatch(batch);
    const now = performance.now();
    lat.push(now - t);
    t = now;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { ops, bytes: ops * bytesPerOp, seconds, latMs: Float64Array.from(lat), extra: {} };
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >>> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function summarizeRun(m: Measured): RunSummary {
  const sorted = m.latMs.slice().sort();
  return {
    opsPerSec: m.ops / m.seconds,
    mbPerSec: m.bytes / 1048576 / m.seconds,
    calls: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : 0,
    seconds: m.seconds,
    extra: m.extra,
  };
}

export function summarizeWorkload(name: string, unit: string, note: string, runs: RunSummary[]): WorkloadResult {
  const ops = runs.map((r) => r.opsPerSec);
  return {
    name, unit, note, runs,
    opsPerSec: { median: median(ops), min: Math.min(...ops), max: Math.max(...ops) },
    mbPerSec: median(runs.map((r) => r.mbPerSec)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    maxMs: median(runs.map((r) => r.maxMs)),
  };
}

/**
 * Runs `fn` under the V8 CPU profiler of this thread (not the flush/compaction workers)
 * when `file` is given, and writes the profile there (open it in Chrome DevTools or
 * summarize it with bench/profile-summary.ts).
 */
export async function profiled<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (file === undefined) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/** "ext4 /dev/vda" for the mount holding `dir` (longest mount point prefix in /proc/mounts). */
function filesystemOf(dir: string): string {
  try {
    let best = { mount: '', text: 'unknown' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [dev, mount, type, flags] = line.split(' ');
      if (mount === undefined || type === undefined) continue;
      const inside = dir === mount || dir.startsWith(mount.endsWith('/') ? mount : mount + '/');
      if (inside && mount.length >= best.mount.length) best = { mount, text: `${type} ${dev} on ${mount} (${flags})` };
    }
    return best.text;
  } catch {
    return 'unknown';
  }
}

/** The environment header (leveldb db_bench style). */
export function environment(dir: string): Record<string, string | number> {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    commit: sh('git', ['rev-parse', '--short', 'HEAD']),
    dirtyFiles: sh('git', ['status', '--porcelain']).split('\n').filter((l) => l.length > 0).length,
    node: process.version,
    v8: process.versions.v8,
    cpu: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAvg1m: Math.round(os.loadavg()[0]! * 100) / 100,
    platform: `${os.platform()} ${os.release()}`,
    dataDir: dir,
    dataDirFs: filesystemOf(dir),
  };
}

export function printHeader(fields: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(fields).map((k) => k.length));
  for (const [k, v] of Object.entries(fields)) {
    console.log(`${k.padEnd(width)} : ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  }
  console.log('-'.repeat(100));
}

function fmt(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  if (n >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

/** One line per run as it finishes. */
export function printRun(name: string, run: number, s: RunSummary, unit: string): void {
  const extra = Object.entries(s.extra).map(([k, v]) => `${k}=${typeof v === 'number' ? fmt(v) : v}`).join(' ');
  console.log(`${name.padEnd(20)} run ${run}: ${fmt(s.opsPerSec).padStart(11)} ${unit}/s ${fmt(s.mbPerSec).padStart(7)} MB/s ` +
    `p50 ${fmt(s.p50Ms)} ms p99 ${fmt(s.p99Ms)} ms max ${fmt(s.maxMs)} ms  ${extra}`);
}

/** The summary table, in Markdown (printed after the runs). */
export function table(results: readonly WorkloadResult[]): string {
  const lines = [
    '| workload | median ops/s | min–max ops/s | MB/s | p50 ms/call | p99 ms/call | max ms/call | notes |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    lines.push(`| ${r.name} | ${fmt(r.opsPerSec.median)} ${r.unit}/s | ${fmt(r.opsPerSec.min)}–${fmt(r.opsPerSec.max)} | ` +
      `${fmt(r.mbPerSec)} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${fmt(r.maxMs)} | ${r.note} |`);
  }
  return lines.join('\n');
}

/** Writes <dir>/<prefix>-<YYYY-MM-DD>-<commit>.json (core-2026-11-21-b34fc16.json) and returns its path. */
export function writeResults(dir: string, prefix: string, header: Record<string, unknown>, results: readonly WorkloadResult[]): string {
  mkdirSync(dir, { recursive: true });
  const day = String(header['date']).slice(0, 10);
  const file = path.join(dir, `${prefix}-${day}-${String(header['commit'])}.json`);
  writeFileSync(file, JSON.stringify({ header, results, sink: sink.value }, null, 2) + '\n');
  return file;
}
