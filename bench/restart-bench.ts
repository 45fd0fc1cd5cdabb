/**
 * Restart benchmark (issue 31, "Restarts"): how long a server takes, after a clean stop,
 * from `node bin/horae.js --port 0 --data-dir D` (what `npm start` runs) to listening and
 * to its first answered query, on a store as large as the build phase makes it.
 *
 *   npx tsx bench/restart-bench.ts --data-dir /tmp/restart-store [--points 100e6]
 *       [--max-build-s 300] [--rounds 3] [--out bench/results/restart-….json]
 *
 * Build phase (when the directory holds no store): the devops dataset (bench/devops-data.ts,
 * 100 hosts × 10 metrics, 10 s apart, 2-decimal values) written in-process into an embedded
 * store through the time-series layer's writer, until `--points` or `--max-build-s`, then a
 * clean close. Run it under `taskset -c 0` to hold it to one core. Measure phase: `--rounds`
 * starts of the built server (dist/, built first when stale), each stopped with SIGTERM
 * once a query of the newest hour of one series has answered.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openEmbeddedStore } from '../core/index.js';
import { Tsdb } from '../tsdb/tsdb.js';
import { build, isStale } from '../scripts/build.mjs';
import { DevopsFormatter, devopsChunks, devopsOptions, totalPoints } from './devops-data.js';
import type { DevopsOptions } from './devops-data.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function arg(name: string, def?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1];
}

function duBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) n += statSync(join(dir, f)).size;
  return n;
}

async function buildStore(dir: string, o: DevopsOptions, maxMs: number): Promise<{ points: number; ms: number; lastSec: number }> {
  const started = performance.now();
  const store = await openEmbeddedStore({ dir });
  const tsdb = await Tsdb.open(store);
  const f = new DevopsFormatter(o);
  let points = 0;
  let lastSec = o.startSec;
  let reported = started;
  const inflight: Promise<unknown>[] = [];
  for (const c of devopsChunks(o)) {
    const pts = f.points(c);
    inflight.push(tsdb.ingest.write(pts, { durability: 'buffered', admit: 'wait' }));
    if (inflight.length >= 8) await inflight.shift();
    points += c.n;
    lastSec = f.timestampOf(c.start + c.n - 1);
    const now = performance.now();
    if (now - reported > 10_000) {
      reported = now;
      process.stderr.write(`build: ${(points / 1e6).toFixed(1)} M points, ${((now - started) / 1000).toFixed(0)} s\n`);
    }
    if (now - started > maxMs) break;
  }
  await Promise.all(inflight);
  await tsdb.close();
  await store.close();
  return { points, ms: performance.now() - started, lastSec };
}

interface Round { listeningMs: number; firstQueryMs: number; log: string }

function startOnce(dir: string, query: string): Promise<Round> {
  return new Promise((resolveRound, reject) => {
    const t0 = performance.now();
    const proc = spawn(process.execPath, [join(ROOT, 'bin/horae.js'), '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HORAE_NO_REBUILD: '1' } });
    let out = '';
    let listeningMs = 0;
    let firstQueryMs = 0;
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m === null || listeningMs > 0) return;
      listeningMs = performance.now() - t0;
      void fetch(`http://127.0.0.1:${m[1]}${query}`).then(async (r) => {
        const body = await r.text();
        firstQueryMs = performance.now() - t0;
        if (r.status !== 200 || !body.includes('dps')) out += `\nquery failed: ${r.status} ${body.slice(0, 200)}\n`;
        proc.kill('SIGTERM');
      }, (err: Error) => {
        out += `\nquery failed: ${err.message}\n`;
        proc.kill('SIGTERM');
      });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => {
      if (firstQueryMs === 0) reject(new Error(`server exited (${code}) before answering: ${out}`));
      else resolveRound({ listeningMs, firstQueryMs, log: out.trim() });
    });
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = resolve(arg('data-dir') ?? '/tmp/horae-restart-store');
  const want = Number(arg('points', '100e6'));
  const rounds = Number(arg('rounds', '3'));
  const maxMs = Number(arg('max-build-s', '300')) * 1000;
  const o0 = devopsOptions({ hosts: 100, values: '2dec' });
  const steps = Math.ceil(want / (o0.hosts * o0.metrics));
  const o: DevopsOptions = { ...o0, steps };
  let buildInfo: { points: number; ms: number; lastSec: number } | undefined;
  if (!existsSync(join(dir, 'MANIFEST'))) {
    process.stderr.write(`build: up to ${totalPoints(o) / 1e6} M points into ${dir}\n`);
    buildInfo = await buildStore(dir, o, maxMs);
    writeFileSync(join(dir, '..', `${dir.split('/').pop()}.build.json`), JSON.stringify(buildInfo));
  } else {
    const info = join(dir, '..', `${dir.split('/').pop()}.build.json`);
    if (existsSync(info)) buildInfo = JSON.parse((await import('node:fs')).readFileSync(info, 'utf8')) as typeof buildInfo;
  }
  const stale = isStale(ROOT);
  if (stale !== undefined) {
    process.stderr.write(`dist is stale (${stale}): building\n`);
    await build(ROOT);
  }
  const lastSec = buildInfo?.lastSec ?? o.startSec;
  const query = `/api/query?start=${lastSec - 3600}&end=${lastSec + 1}&m=max:1m-max:cpu.usage_user{hostname=host_0}`;
  const results: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const r = await startOnce(dir, query);
    results.push(r);
    process.stderr.write(`round ${i + 1}: listening ${r.listeningMs.toFixed(0)} ms, first query answered ${r.firstQueryMs.toFixed(0)} ms\n`);
  }
  const summary = {
    bench: 'restart',
    date: new Date().toISOString(),
    dataDir: dir,
    points: buildInfo?.points,
    buildSeconds: buildInfo === undefined ? undefined : Math.round(buildInfo.ms / 1000),
    storeBytes: duBytes(dir),
    files: readdirSync(dir).length,
    rounds: results.map((r) => ({ listeningMs: Math.round(r.listeningMs), firstQueryMs: Math.round(r.firstQueryMs) })),
    medianListeningMs: Math.round(median(results.map((r) => r.listeningMs))),
    medianFirstQueryMs: Math.round(median(results.map((r) => r.firstQueryMs))),
    lastLog: results.at(-1)?.log,
  };
  const json = JSON.stringify(summary, null, 2);
  process.stdout.write(`${json}\n`);
  const out = arg('out');
  if (out !== undefined) writeFileSync(out, `${json}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
