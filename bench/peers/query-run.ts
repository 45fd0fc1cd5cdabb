/**
 * The query set of `bench:record` against one loaded target left alone after the load
 * (bench/peers/run.ts `atRest`):
 *
 *   1. check: the first answer of every query is compared with the answer computed from the
 *      regenerated dataset (bench/query/queries.ts; the same expected answer for every
 *      system, so systems that pass gave the same answer)
 *   2. latency: `warmup` requests, then `runs` requests one at a time on a keep-alive
 *      connection; client-side time from request to the last body byte; median, p90, min,
 *      max; server CPU per query (its process tree, /proc) over the timed runs
 *   3. throughput: `conc` requests in flight for `seconds` (q1 rotates over the hosts, so
 *      no answer cache can serve it; VictoriaMetrics gets `nocache=1` anyway), requests/s
 *      and server CPU per request
 *
 * The load client is this process (node:http), sharing the machine's cores with the server,
 * as the ingest load client does.
 */
import os from 'node:os';
import { median } from '../harness.js';
import { HttpClient, loadFor, percentileOf } from '../query/http-client.js';
import type { HttpReq } from '../query/http-client.js';
import { compare, horaeAnswer, influxAnswer, q1, vmAnswer } from '../query/queries.js';
import type { Answer, BenchQuery, Check, QueryId } from '../query/queries.js';
import type { DevopsOptions } from '../devops-data.js';
import { http, treeCpuSeconds, treeRss } from './proc.js';
import type { Target } from './targets.js';

export interface QueryRunOptions {
  readonly runs: number;
  readonly warmup: number;
  readonly conc: number;
  readonly seconds: number;
  readonly log: (msg: string) => void;
}

export interface QueryFigures {
  readonly id: QueryId;
  readonly title: string;
  readonly request: HttpReq;
  readonly check: Check;
  readonly medianMs: number;
  readonly p90Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly serverCpuMsPerQuery: number;
  readonly responseBytes: number;
  readonly requestsPerSec: number;
  readonly loadP50Ms: number;
  readonly loadP99Ms: number;
  readonly loadErrors: number;
  readonly loadFirstError?: string;
  readonly serverCpuMsPerRequest: number;
  readonly load1m: number;
}

export interface QuerySetResult {
  readonly system: string;
  readonly runs: number;
  readonly conc: number;
  readonly seconds: number;
  readonly queries: readonly QueryFigures[];
  /** RSS of the process tree after the queries. */
  readonly rssAfterMiB: number;
}

const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

export function requestOf(system: string, q: BenchQuery): HttpReq {
  switch (system) {
    case 'horae': return q.horae;
    case 'victoriametrics': return q.vm;
    case 'influxdb': return q.influx;
    default: throw new Error(`no query requests for ${system}`);
  }
}

export function answerOf(system: string, q: BenchQuery, body: Buffer): Answer {
  switch (system) {
    case 'horae': return horaeAnswer(q, body).answer;
    case 'victoriametrics': return vmAnswer(q, body, 'opentsdb');
    case 'influxdb': return influxAnswer(q, body);
    default: throw new Error(`no answer parser for ${system}`);
  }
}

function failedCheck(msg: string): Check {
  return {
    ok: false, series: 0, points: 0, expectedSeries: 0, expectedPoints: 0, missingSeries: 0, extraSeries: 0,
    missingPoints: 0, extraPoints: 0, wrongValues: 0, maxAbsDiff: NaN, samples: [msg],
  };
}

/** Whether `t` answers `q` now as `want` says (the readiness probe after a restart); false on any failure. */
export async function answersNow(t: Target, q: BenchQuery, want: Answer): Promise<boolean> {
  const req = requestOf(t.system, q);
  try {
    const r = await http(`http://127.0.0.1:${t.queryPort}${req.path}`, {
      method: req.method, timeoutMs: 10_000, ...(req.body === undefined ? {} : { body: req.body, headers: { 'content-type': 'application/json' } }),
    });
    return r.status === 200 && compare(answerOf(t.system, q, Buffer.from(r.body)), want).ok;
  } catch {
    return false;
  }
}

/** Runs every query of `qs` against `t`; `want` holds the expected answer of each. */
export async function runQuerySet(
  t: Target, o: DevopsOptions, qs: readonly BenchQuery[], want: ReadonlyMap<QueryId, Answer>, ro: QueryRunOptions,
): Promise<QuerySetResult> {
  const client = new HttpClient('127.0.0.1', t.queryPort, Math.max(ro.conc, 4));
  const get = async (req: HttpReq): Promise<{ ms: number; body: Buffer }> => {
    const r = await client.request(req, 120_000);
    if (r.status !== 200) throw new Error(`${t.system} ${req.method} ${req.path.slice(0, 120)}: HTTP ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
    return r;
  };
  const out: QueryFigures[] = [];
  try {
    for (const q of qs) {
      const req = requestOf(t.system, q);
      let first: { ms: number; body: Buffer };
      try {
        first = await get(req);
      } catch (err) {
        // A query the system refuses is a wrong answer, not a lost ingest run.
        const msg = (err as Error).message;
        out.push({
          id: q.id, title: q.title, request: req, check: failedCheck(msg), medianMs: NaN, p90Ms: NaN, minMs: NaN, maxMs: NaN,
          serverCpuMsPerQuery: NaN, responseBytes: 0, requestsPerSec: NaN, loadP50Ms: NaN, loadP99Ms: NaN, loadErrors: 1,
          loadFirstError: msg, serverCpuMsPerRequest: NaN, load1m: round(os.loadavg()[0]!, 2),
        });
        ro.log(`  ${q.id.padEnd(7)} ${t.system.padEnd(15)} FAILED: ${msg}`);
        continue;
      }
      let check: Check;
      try {
        check = compare(answerOf(t.system, q, first.body), want.get(q.id)!);
      } catch (err) {
        check = failedCheck((err as Error).message);
      }
      for (let i = 0; i < ro.warmup; i++) await get(req);
      const lat: number[] = [];
      const cpu0 = treeCpuSeconds(t.pid);
      for (let i = 0; i < ro.runs; i++) lat.push((await get(req)).ms);
      const cpu = treeCpuSeconds(t.pid) - cpu0;
      const sorted = [...lat].sort((a, b) => a - b);
      // Throughput: q1 rotates over the hosts; the others repeat the same request.
      const reqAt = q.id === 'q1' ? (i: number): HttpReq => requestOf(t.system, q1(o, { vmBuckets: 'opentsdb' }, i % o.hosts)) : (): HttpReq => req;
      const lc0 = treeCpuSeconds(t.pid);
      const load = await loadFor(client, ro.conc, ro.seconds, reqAt);
      const lcpu = treeCpuSeconds(t.pid) - lc0;
      const f: QueryFigures = {
        id: q.id,
        title: q.title,
        request: req,
        check,
        medianMs: round(median(lat)),
        p90Ms: round(percentileOf(sorted, 0.9)),
        minMs: round(sorted[0]!),
        maxMs: round(sorted[sorted.length - 1]!),
        serverCpuMsPerQuery: round((cpu * 1000) / ro.runs, 2),
        responseBytes: first.body.length,
        requestsPerSec: round(load.requestsPerSec, 1),
        loadP50Ms: round(load.p50Ms),
        loadP99Ms: round(load.p99Ms),
        loadErrors: load.errors,
        ...(load.firstError === undefined ? {} : { loadFirstError: load.firstError }),
        serverCpuMsPerRequest: round((lcpu * 1000) / Math.max(1, load.requests), 3),
        load1m: round(os.loadavg()[0]!, 2),
      };
      out.push(f);
      ro.log(`  ${q.id.padEnd(7)} ${t.system.padEnd(15)} ${check.ok ? 'answer OK' : 'WRONG ANSWER'} (${check.series} series, ${check.points} points${check.samples.length > 0 ? `; ${check.samples.slice(0, 3).join('; ')}` : ''}) | ` +
        `median ${f.medianMs} ms, p90 ${f.p90Ms}, CPU ${f.serverCpuMsPerQuery} ms/q | ${Math.round(f.requestsPerSec)} req/s × ${ro.conc} in flight (p99 ${f.loadP99Ms} ms, ${f.loadErrors} errors) | load ${f.load1m}`);
    }
  } finally {
    client.close();
  }
  return { system: t.system, runs: ro.runs, conc: ro.conc, seconds: ro.seconds, queries: out, rssAfterMiB: round(treeRss(t.pid) / 2 ** 20, 1) };
}
