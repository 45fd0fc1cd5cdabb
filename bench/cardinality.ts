/**
 * cardinality: many series, as users run the servers (issue 32). Usage:
 *
 *   npm run bench:cardinality -- [--series 1000000 | --scales 100000,500000,1000000,2000000,5000000]
 *        [--systems horae,victoriametrics] [--metrics 10] [--max-minutes 30] [--sample 5]
 *        [--query-runs 5] [--no-restart] [--out DIR]
 *   npm run bench:cardinality -- --churn [--active 200000] [--replace 10000] [--every 5]
 *        [--minutes 60] [--interval 60] [--systems …] [--sample 10]
 *
 * Load (default): N series = N ÷ metrics devops hosts (TSBS tags) × `--metrics` cpu
 * metrics, one point per series every 10 minutes for 2 hours (12 steps, in TSBS order:
 * every series gets its first point before any gets its second), over 4 telnet
 * connections; the lines are made while sending (bench/ingest-client.ts `generate`), and
 * the client stops after `--max-minutes` whatever the server has taken. Each system starts
 * fresh (bench/peers/targets.ts; the systems' order alternates by scale) and is sampled
 * every `--sample` s: points stored, series created (Horae /api/stats
 * horae.ingest.series_created; VictoriaMetrics vm_new_timeseries_created_total), RSS and
 * CPU of the process tree, heap (VictoriaMetrics go_memstats_heap_inuse_bytes; Horae
 * /api/stats horae.memory.heap_used_bytes, the server thread's V8 heap). Then, if every point was stored:
 * the queries of bench/query/queries.ts `cardinalityQueries` over one metric of N ÷ metrics
 * series (a group-by over all of them for one hour; a regexp selecting 1,000), first run
 * and median of `--query-runs`, answers compared between the systems; a clean stop, a
 * restart (ready = spawn → the first correct c-filter answer) and the first c-group after
 * it. Figures: points/s and series/s until all were stored / created, series admitted per
 * minute, RSS and heap per series, query times.
 *
 * Churn (`--churn`): A active series (A ÷ metrics hosts) with one point each every
 * `--interval` s at current timestamps (bench/live-client.ts over HTTP), R of them
 * replaced by new hosts every `--every` minutes, for `--minutes`: RSS, series made and
 * the server's figures over time (bench/peers/paced.ts); RSS growth over the second half
 * says whether memory stays flat once the active set is stable.
 *
 * Results: bench/results/cardinality-<commit>[-churn][-tsx].json and a one-screen summary.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { devopsOptions, totalPoints } from './devops-data.js';
import type { DevopsOptions } from './devops-data.js';
import { environment, median, printHeader } from './harness.js';
import type { ClientDone } from './ingest-client.js';
import { runPaced } from './peers/paced.js';
import type { PacedSample } from './peers/paced.js';
import { codeFingerprint, sleep, treeCpuSeconds, treeRss } from './peers/proc.js';
import { answerOf, requestOf } from './peers/query-run.js';
import { formatFigure } from './peers/report.js';
import { startClient } from './peers/run.js';
import { startTarget } from './peers/targets.js';
import type { SystemName, Target } from './peers/targets.js';
import { HttpClient } from './query/http-client.js';
import { cardinalityQueries, compare } from './query/queries.js';
import type { Answer, BenchQuery } from './query/queries.js';

const { values: args } = parseArgs({
  options: {
    systems: { type: 'string', default: 'horae,victoriametrics' },
    series: { type: 'string', default: '1000000' },
    scales: { type: 'string' },
    metrics: { type: 'string', default: '10' },
    'max-minutes': { type: 'string', default: '30' },
    sample: { type: 'string' },
    'query-runs': { type: 'string', default: '5' },
    'no-restart': { type: 'boolean', default: false },
    churn: { type: 'boolean', default: false },
    active: { type: 'string', default: '200000' },
    replace: { type: 'string', default: '10000' },
    every: { type: 'string', default: '5' },
    minutes: { type: 'string', default: '60' },
    interval: { type: 'string', default: '60' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const systems = args.systems.split(',') as SystemName[];
const metrics = Number(args.metrics);
const log = (m: string): void => console.log(m);
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;
const MiB = 2 ** 20;

/** The server's count of series it has created, and its heap, from its self-reported figures. */
function seriesAndHeap(system: SystemName, self: Record<string, number> | undefined): { series?: number; heapBytes?: number } {
  if (self === undefined) return {};
  if (system === 'victoriametrics') return { series: self['vm_new_timeseries_created_total'], heapBytes: self['go_memstats_heap_inuse_bytes'] };
  const heap = self['horae.memory.heap_used_bytes'];
  return { series: self['horae.ingest.series_created'], ...(heap === undefined ? {} : { heapBytes: heap }) };
}

interface LoadSample {
  readonly t: number;
  readonly points: number;
  readonly series?: number;
  readonly heapBytes?: number;
  readonly rssMiB: number;
  readonly cpuSeconds: number;
}

interface QueryTimes {
  readonly id: string;
  readonly firstMs: number;
  readonly medianMs: number;
  readonly series: number;
  readonly points: number;
  readonly answer: Answer;
}

interface LoadResult {
  readonly system: SystemName;
  readonly series: number;
  readonly points: number;
  readonly stored: number;
  readonly complete: boolean;
  readonly seconds: number;
  readonly pointsPerSec: number;
  /** Until the server's series count reached N (undefined if it never did). */
  readonly seriesSeconds?: number;
  readonly seriesPerSec?: number;
  readonly seriesPerMinute: readonly number[];
  readonly peakRssMiB: number;
  readonly rssEndMiB: number;
  readonly heapPerSeriesBytes?: number;
  readonly rssPerSeriesBytes: number;
  readonly cpuPerM: number;
  readonly client: ClientDone;
  readonly queries: readonly Omit<QueryTimes, 'answer'>[];
  readonly readySeconds?: number;
  readonly firstAfterRestartMs?: Record<string, number>;
  readonly samples: readonly LoadSample[];
}

/** Times `q` on `t`: the first answer and the median of `runs` more. */
async function timeQuery(t: Target, q: BenchQuery, runs: number): Promise<QueryTimes> {
  const c = new HttpClient('127.0.0.1', t.queryPort, 2);
  try {
    const once = async (): Promise<{ ms: number; body: Buffer }> => {
      const r = await c.request(requestOf(t.system, q), 600_000);
      if (r.status !== 200) throw new Error(`${t.system} ${q.id}: HTTP ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
      return r;
    };
    const first = await once();
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) ms.push((await once()).ms);
    const answer = answerOf(t.system, q, first.body);
    let points = 0;
    for (const m of answer.values()) points += m.size;
    return { id: q.id, firstMs: round(first.ms, 1), medianMs: round(median(ms), 1), series: answer.size, points, answer };
  } finally {
    c.close();
  }
}

async function load(system: SystemName, o: DevopsOptions, version: string): Promise<{ result: LoadResult; answers: Map<string, Answer> }> {
  const n = o.hosts * o.metrics;
  const total = totalPoints(o);
  const sampleSec = Number(args.sample ?? 5);
  const t = await startTarget(system, { version });
  const answers = new Map<string, Answer>();
  let timer: NodeJS.Timeout | undefined;
  try {
    const client = await startClient({ ...t.endpoint('telnet')!, conns: 4, generate: o, maxSeconds: Number(args['max-minutes']) * 60 });
    const samples: LoadSample[] = [];
    const cpu0 = treeCpuSeconds(t.pid);
    const t0 = performance.now();
    let stored = 0;
    const sample = async (): Promise<void> => {
      const self = await t.selfStats().catch(() => undefined);
      stored = (await t.ingested().catch(() => ({ points: stored }))).points;
      const s: LoadSample = { t: round((performance.now() - t0) / 1000, 1), points: stored, ...seriesAndHeap(system, self), rssMiB: Math.round(treeRss(t.pid) / MiB), cpuSeconds: round(treeCpuSeconds(t.pid) - cpu0, 1) };
      samples.push(s);
      log(`  ${system} t=${s.t.toFixed(0)} s: ${s.points.toLocaleString('en-US')} points, ${s.series?.toLocaleString('en-US') ?? '?'} series, RSS ${s.rssMiB} MiB${s.heapBytes === undefined ? '' : `, heap ${Math.round(s.heapBytes / MiB)} MiB`}, CPU ${s.cpuSeconds} s`);
    };
    let busy = false;
    timer = setInterval(() => {
      if (busy) return;
      busy = true;
      void sample().finally(() => (busy = false));
    }, sampleSec * 1000);
    const done = client.next('done', (Number(args['max-minutes']) * 60 + 120) * 1000);
    client.send({ cmd: 'go' });
    const c = (await done) as unknown as ClientDone;
    client.send({ cmd: 'exit' });
    // What was sent must be stored, unless it stalls for a minute or the time limit passes.
    const limit = t0 + (Number(args['max-minutes']) * 60 + 600) * 1000;
    let last = -1;
    let lastChange = performance.now();
    while (stored < c.points - c.failedPoints && performance.now() < limit && performance.now() - lastChange < 60_000) {
      await sleep(500);
      // A server too busy to answer counts as no progress (the run then ends a minute later
      // with what it stored), not as a failed run that loses every sample.
      stored = (await t.ingested().catch(() => ({ points: stored }))).points;
      if (stored !== last) {
        last = stored;
        lastChange = performance.now();
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = treeCpuSeconds(t.pid) - cpu0;
    clearInterval(timer);
    while (busy) await sleep(50);
    await sample();
    const complete = stored >= total;
    const firstAll = samples.find((s) => (s.series ?? 0) >= n);
    const perMinute: number[] = [];
    for (let m = 60; m <= samples[samples.length - 1]!.t + 59; m += 60) {
      const at = (x: number): number => [...samples].reverse().find((s) => s.t <= x)?.series ?? 0;
      perMinute.push(at(m) - at(m - 60));
    }
    const end = samples[samples.length - 1]!;
    const queries: QueryTimes[] = [];
    if (complete) {
      for (const q of cardinalityQueries(o)) {
        const r = await timeQuery(t, q, Number(args['query-runs']));
        queries.push(r);
        answers.set(q.id, r.answer);
        log(`  ${system} ${q.id}: first ${r.firstMs} ms, median ${r.medianMs} ms (${r.series} series, ${r.points} points)`);
      }
    } else log(`  ${system}: ${stored.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} points stored: no queries`);
    let readySeconds: number | undefined;
    const firstAfterRestartMs: Record<string, number> = {};
    await t.stop();
    if (complete && !args['no-restart']) {
      const [group, filter] = cardinalityQueries(o);
      const r = await startTarget(system, { root: t.root, version });
      try {
        const c2 = new HttpClient('127.0.0.1', r.queryPort, 1);
        let probeMs = NaN;
        const at = await pollUntilAnswered(async () => {
          const res = await c2.request(requestOf(system, filter!), 600_000).catch(() => undefined);
          if (res?.status !== 200) return false;
          probeMs = res.ms;
          return compare(answerOf(system, filter!, res.body), answers.get('c-filter')!).ok;
        });
        readySeconds = round((at - r.spawnedAt) / 1000);
        firstAfterRestartMs['c-filter'] = round(probeMs, 1);
        firstAfterRestartMs['c-group'] = (await timeQuery(r, group!, 0)).firstMs;
        c2.close();
        log(`  ${system} restart: ready in ${readySeconds} s, then c-filter ${firstAfterRestartMs['c-filter']} ms, c-group ${firstAfterRestartMs['c-group']} ms`);
      } finally {
        await r.stop();
      }
    }
    const admitted = firstAll === undefined ? undefined : firstAll.t;
    return {
      answers,
      result: {
        system, series: n, points: total, stored, complete, seconds: round(seconds, 1), pointsPerSec: Math.round(stored / seconds),
        ...(admitted === undefined ? {} : { seriesSeconds: admitted, seriesPerSec: Math.round(n / admitted) }),
        seriesPerMinute: perMinute,
        peakRssMiB: Math.max(...samples.map((s) => s.rssMiB)),
        rssEndMiB: end.rssMiB,
        ...(end.heapBytes === undefined ? {} : { heapPerSeriesBytes: Math.round(end.heapBytes / Math.max(1, end.series ?? n)) }),
        rssPerSeriesBytes: Math.round((end.rssMiB * MiB) / Math.max(1, end.series ?? n)),
        cpuPerM: round(cpu / (stored / 1e6)),
        client: c,
        queries: queries.map(({ answer: _a, ...rest }) => rest),
        ...(readySeconds === undefined ? {} : { readySeconds, firstAfterRestartMs }),
        samples,
      },
    };
  } finally {
    clearInterval(timer);
    await t.stop().catch(() => undefined);
    t.cleanup();
  }
}

/** Polls `ok` every 25 ms (10 minutes at most); resolves with performance.now() of the first true. */
async function pollUntilAnswered(ok: () => Promise<boolean>): Promise<number> {
  const deadline = performance.now() + 600_000;
  for (;;) {
    if (await ok().catch(() => false)) return performance.now();
    if (performance.now() > deadline) throw new Error('no correct answer within 10 minutes of a restart');
    await sleep(25);
  }
}

function loadSummary(rs: readonly LoadResult[]): string {
  const f = formatFigure;
  const scales = [...new Set(rs.map((r) => r.series))];
  const lines = [`| series | figure | ${systems.join(' | ')} |${systems.length === 2 ? ' Horae ÷ peer |' : ''}`, `|---:|---|${systems.map(() => '---:').join('|')}|${systems.length === 2 ? '---:|' : ''}`];
  const rows: Array<[string, (r: LoadResult) => number | undefined]> = [
    ['points/s until all stored', (r) => r.pointsPerSec],
    ['new series/s until all created', (r) => r.seriesPerSec],
    ['points stored ÷ sent', (r) => r.stored / r.points],
    ['peak RSS MiB', (r) => r.peakRssMiB],
    ['RSS bytes / series (end)', (r) => r.rssPerSeriesBytes],
    ['heap bytes / series (end)', (r) => r.heapPerSeriesBytes],
    ['server CPU-s / M points', (r) => r.cpuPerM],
    ['c-group first ms', (r) => r.queries.find((q) => q.id === 'c-group')?.firstMs],
    ['c-group median ms', (r) => r.queries.find((q) => q.id === 'c-group')?.medianMs],
    ['c-filter first ms', (r) => r.queries.find((q) => q.id === 'c-filter')?.firstMs],
    ['c-filter median ms', (r) => r.queries.find((q) => q.id === 'c-filter')?.medianMs],
    ['ready after restart s', (r) => r.readySeconds],
    ['c-filter first after restart ms', (r) => r.firstAfterRestartMs?.['c-filter']],
    ['c-group first after restart ms', (r) => r.firstAfterRestartMs?.['c-group']],
  ];
  for (const n of scales) {
    for (const [name, get] of rows) {
      const vals = systems.map((s) => {
        const r = rs.find((x) => x.series === n && x.system === s);
        return r === undefined ? undefined : get(r);
      });
      const ratio = systems.length === 2 && vals[0] !== undefined && vals[1] !== undefined ? ` ${f(vals[0] / vals[1])} |` : systems.length === 2 ? ' |' : '';
      lines.push(`| ${f(n)} | ${name} | ${vals.map((v) => (v === undefined ? 'missing' : f(v))).join(' | ')} |${ratio}`);
    }
  }
  return lines.join('\n');
}

interface ChurnResult {
  readonly system: SystemName;
  readonly seriesMade: number;
  readonly pointsAcked: number;
  readonly pointsFailed: number;
  readonly rssMiB: { readonly quarter: number; readonly half: number; readonly end: number; readonly peak: number };
  readonly rssGrowthSecondHalfMiB: number;
  readonly samples: readonly PacedSample[];
}

async function churn(system: SystemName, version: string): Promise<ChurnResult> {
  const active = Number(args.active);
  const replace = Number(args.replace);
  if (active % metrics !== 0 || replace % metrics !== 0) throw new Error('--active and --replace: multiples of --metrics');
  const t = await startTarget(system, { version });
  try {
    const run = await runPaced(t, {
      activeHosts: active / metrics, metrics, intervalSec: Number(args.interval), clockOffsetMs: 0, durationSec: Number(args.minutes) * 60, drainSec: 120,
      batchPoints: 5000, conns: 4, replaceHosts: replace / metrics, replaceEverySec: Number(args.every) * 60, progressSec: 2, seed: 20260101,
    }, Number(args.sample ?? 10), log);
    const s = run.samples;
    const at = (frac: number): number => (s.find((x) => x.t >= run.done.seconds * frac) ?? s[s.length - 1]!).rssMiB;
    return {
      system, seriesMade: run.done.seriesCreated, pointsAcked: run.done.pointsAcked, pointsFailed: run.done.pointsFailed,
      rssMiB: { quarter: at(0.25), half: at(0.5), end: s[s.length - 1]!.rssMiB, peak: Math.max(...s.map((x) => x.rssMiB)) },
      rssGrowthSecondHalfMiB: s[s.length - 1]!.rssMiB - at(0.5),
      samples: s,
    };
  } finally {
    await t.stop().catch(() => undefined);
    t.cleanup();
  }
}

async function main(): Promise<void> {
  const header: Record<string, unknown> = {
    ...environment(os.tmpdir()),
    benchmark: args.churn ? 'cardinality, churn' : 'cardinality, load',
    code: codeFingerprint(import.meta.url),
    systems, metrics,
    ...(args.churn
      ? { active: Number(args.active), replace: Number(args.replace), everyMinutes: Number(args.every), minutes: Number(args.minutes), intervalSec: Number(args.interval) }
      : { scales: (args.scales ?? args.series).split(',').map(Number), steps: '12 × 10 min (2 h), TSBS order, telnet × 4', maxMinutes: Number(args['max-minutes']) }),
  };
  printHeader(header);
  const version = String(header['commit']);
  const failures: Array<Record<string, string>> = [];
  let out: Record<string, unknown>;
  if (args.churn) {
    const results: ChurnResult[] = [];
    for (const system of systems) {
      try {
        results.push(await churn(system, version));
      } catch (err) {
        failures.push({ system, error: (err as Error).stack ?? String(err) });
        log(`${system} FAILED: ${(err as Error).stack ?? String(err)}`);
      }
    }
    const text = [`| figure | ${results.map((r) => r.system).join(' | ')} |`, `|---|${results.map(() => '---:').join('|')}|`,
      ...([['series made', (r: ChurnResult) => r.seriesMade], ['points acked', (r: ChurnResult) => r.pointsAcked], ['points failed', (r: ChurnResult) => r.pointsFailed],
        ['RSS MiB at ¼ of the run', (r: ChurnResult) => r.rssMiB.quarter], ['RSS MiB at ½', (r: ChurnResult) => r.rssMiB.half], ['RSS MiB at the end', (r: ChurnResult) => r.rssMiB.end],
        ['RSS growth MiB over the second half', (r: ChurnResult) => r.rssGrowthSecondHalfMiB], ['peak RSS MiB', (r: ChurnResult) => r.rssMiB.peak]] as const)
        .map(([name, get]) => `| ${name} | ${results.map((r) => formatFigure(get(r))).join(' | ')} |`)].join('\n');
    console.log('\n' + text);
    out = { header, summary: text, results, failures };
  } else {
    const results: LoadResult[] = [];
    const checks: Array<Record<string, unknown>> = [];
    const scales = (args.scales ?? args.series).split(',').map(Number);
    for (const [i, n] of scales.entries()) {
      if (n % metrics !== 0) throw new Error(`${n} series: not a multiple of ${metrics} metrics`);
      const o = devopsOptions({ hosts: n / metrics, metrics, values: '2dec' });
      const dataset = { ...o, steps: 12, intervalSec: 600 };
      const answers = new Map<SystemName, Map<string, Answer>>();
      for (const system of i % 2 === 0 ? systems : [...systems].reverse()) {
        log(`${system}: ${n.toLocaleString('en-US')} series (${dataset.hosts.toLocaleString('en-US')} hosts × ${metrics} metrics), ${totalPoints(dataset).toLocaleString('en-US')} points`);
        try {
          const r = await load(system, dataset, version);
          results.push(r.result);
          answers.set(system, r.answers);
        } catch (err) {
          failures.push({ system, series: String(n), error: (err as Error).stack ?? String(err) });
          log(`${system} FAILED: ${(err as Error).stack ?? String(err)}`);
        }
      }
      const [a, b] = [...answers.values()];
      if (a !== undefined && b !== undefined) {
        for (const id of ['c-group', 'c-filter']) {
          if (a.get(id) === undefined || b.get(id) === undefined) continue;
          const c = compare(a.get(id)!, b.get(id)!);
          checks.push({ series: n, id, equal: c.ok, samples: c.samples });
          log(`  ${id} at ${n.toLocaleString('en-US')} series: answers ${c.ok ? 'equal' : `DIFFER: ${c.samples.join('; ')}`}`);
        }
      }
    }
    const text = loadSummary(results);
    console.log('\n' + text);
    if (!results.some((r) => r.system === 'horae' && r.heapPerSeriesBytes !== undefined)) console.log("\nHorae's /api/stats reports no heap figure: heap per series is missing for Horae.");
    out = { header, summary: text, checks, results, failures };
    if (checks.some((c) => c['equal'] !== true)) process.exitCode = 1;
  }
  mkdirSync(args.out, { recursive: true });
  const file = path.join(args.out, `cardinality-${version}${args.churn ? '-churn' : ''}${import.meta.url.endsWith('.js') ? '' : '-tsx'}.json`);
  writeFileSync(file, JSON.stringify(out, null, 1) + '\n');
  console.log(`\nwrote ${file}`);
  if (failures.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
