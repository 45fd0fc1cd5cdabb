/**
 * query-ab: two or more Horae builds answering the same queries on the same data, with
 * their requests interleaved one by one, so the machine's drift hits every build alike.
 * For a change on the query path, where a whole query-bench run per build (load, settle,
 * then queries) leaves minutes between the builds' measurements. Usage:
 *
 *   HORAE_BENCH_KEEP_DIR=1 node <build>/bench/query-bench.js --systems horae --queries q1 …
 *      (prints `kept <dir>`: a loaded data directory, left alone after the load)
 *   npx tsc -p tsconfig.build.json   (in each checkout: dist/tsdb/main.js)
 *   npx tsx bench/query-ab.ts --data-dir <dir> --builds old=/a/dist/tsdb/main.js,new=dist/tsdb/main.js
 *        [--queries q1,q2,q2-host,q3,q4] [--runs 40] [--warmup 10] [--out bench/results]
 *        [--conc-rounds 10 --conc 16 --conc-seconds 4]
 *
 * Each build serves a copy of the data directory (`npm start`'s entry point with --port
 * and --data-dir, on loopback). Per query: `warmup` requests per build, then `runs`
 * rounds of one request per build, the order flipped every round. Client time from
 * request to last body byte; server CPU per request from /proc/<pid>/stat (10 ms ticks,
 * summed over the runs). Every answer must be 200 and the builds' bodies must be equal
 * (after the first run), or the run stops. With --conc-rounds R: then q1 under load as
 * query-bench measures it (the host rotating over all hosts, `conc` requests in flight for
 * `conc-seconds`), R rounds of one burst per build, the order flipped every round:
 * requests/s and server CPU per request, medians over the rounds. The dataset is bench/devops-data.ts's at full
 * size (the one query-bench loads by default).
 * Results: bench/results/query-ab-<commit>.json (or --out DIR).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devopsOptions } from './devops-data.js';
import { environment, median, printHeader } from './harness.js';
import type { ChildProcess } from 'node:child_process';
import { procCpuSeconds, spawnLogged, stopProcess, waitPort } from './peers/proc.js';
import { HttpClient, loadFor } from './query/http-client.js';
import { QUERY_IDS, q1, querySet } from './query/queries.js';
import type { BenchQuery, QueryId } from './query/queries.js';

const { values: args } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    builds: { type: 'string' },
    queries: { type: 'string', default: QUERY_IDS.join(',') },
    runs: { type: 'string', default: '40' },
    warmup: { type: 'string', default: '10' },
    'conc-rounds': { type: 'string', default: '0' },
    conc: { type: 'string', default: '16' },
    'conc-seconds': { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench/results' },
  },
});

interface Build {
  readonly name: string;
  readonly main: string;
  readonly port: number;
  readonly dir: string;
  proc?: ChildProcess;
  client?: HttpClient;
}

async function main(): Promise<void> {
  const dataDir = args['data-dir'];
  if (dataDir === undefined || args.builds === undefined) throw new Error('usage: --data-dir DIR --builds name=main.js,name=main.js (see the file header)');
  const work = mkdtempSync(path.join(os.tmpdir(), 'horae-query-ab-'));
  const builds: Build[] = args.builds.split(',').map((spec, i) => {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new Error(`--builds: "${spec}" is not name=path/to/main.js`);
    return { name: spec.slice(0, eq), main: path.resolve(spec.slice(eq + 1)), port: 4391 + i, dir: path.join(work, `data-${i}`) };
  });
  const ids = args.queries.split(',') as QueryId[];
  for (const id of ids) if (!QUERY_IDS.includes(id)) throw new Error(`--queries: unknown ${id}`);
  const runs = Number(args.runs);
  const warmup = Number(args.warmup);
  const o = devopsOptions({});
  const set = new Map<QueryId, BenchQuery>(querySet(o, { vmBuckets: 'opentsdb' }).map((q) => [q.id, q]));
  set.set('q1', q1(o, { vmBuckets: 'opentsdb' }, 42));

  const env = environment(work);
  const header = { ...env, benchmark: 'query A/B (Horae builds, interleaved requests)', dataDir, builds: builds.map((b) => ({ name: b.name, main: b.main })), runs, warmup };
  printHeader(header);
  const results: Record<string, unknown>[] = [];
  try {
    for (const b of builds) {
      cpSync(dataDir, b.dir, { recursive: true });
      b.proc = spawnLogged(process.execPath, [b.main, '--port', String(b.port), '--data-dir', b.dir], path.join(work, `${b.name}.log`));
    }
    for (const b of builds) {
      await waitPort('127.0.0.1', b.port, 120_000);
      b.client = new HttpClient('127.0.0.1', b.port, 1);
    }
    for (const id of ids) {
      const q = set.get(id)!;
      const bodies: (Buffer | undefined)[] = builds.map(() => undefined);
      for (const b of builds) for (let i = 0; i < warmup; i++) await b.client!.request(q.horae);
      const ms: number[][] = builds.map(() => []);
      const cpu = builds.map(() => 0);
      for (let r = 0; r < runs; r++) {
        const order = builds.map((_, i) => (r % 2 === 0 ? i : builds.length - 1 - i));
        for (const i of order) {
          const b = builds[i]!;
          const c0 = procCpuSeconds(b.proc!.pid!);
          const res = await b.client!.request(q.horae);
          cpu[i]! += procCpuSeconds(b.proc!.pid!) - c0;
          if (res.status !== 200) throw new Error(`${id} on ${b.name}: status ${res.status}: ${res.body.toString().slice(0, 200)}`);
          ms[i]!.push(res.ms);
          bodies[i] ??= res.body;
        }
      }
      for (let i = 1; i < builds.length; i++) {
        if (!bodies[i]!.equals(bodies[0]!)) throw new Error(`${id}: ${builds[i]!.name} answers differently from ${builds[0]!.name}`);
      }
      const row = {
        query: id, title: q.title, bytes: bodies[0]!.length,
        builds: builds.map((b, i) => ({ name: b.name, medianMs: round(median(ms[i]!)), minMs: round(Math.min(...ms[i]!)), serverCpuMsPerQuery: round((cpu[i]! * 1000) / runs) })),
      };
      results.push(row);
      console.log(`${id.padEnd(8)} ${row.builds.map((b) => `${b.name}: median ${b.medianMs} ms, min ${b.minMs}, CPU ${b.serverCpuMsPerQuery} ms/q`).join(' | ')}`);
    }
    const rounds = Number(args['conc-rounds']);
    if (rounds > 0) results.push(await underLoad(builds, o, rounds, Number(args.conc), Number(args['conc-seconds'])));
  } finally {
    for (const b of builds) {
      b.client?.close();
      if (b.proc !== undefined) await stopProcess(b.proc);
    }
    rmSync(work, { recursive: true, force: true });
  }
  mkdirSync(args.out, { recursive: true });
  const file = path.join(args.out, `query-ab-${String(env['commit'])}.json`);
  writeFileSync(file, `${JSON.stringify({ header, results }, null, 1)}\n`);
  console.log(`wrote ${file}`);
}

/** q1 under load (see the file header): rounds of one burst per build, interleaved. */
async function underLoad(builds: readonly Build[], o: ReturnType<typeof devopsOptions>, rounds: number, conc: number, seconds: number): Promise<Record<string, unknown>> {
  const qs = Array.from({ length: o.hosts }, (_, h) => q1(o, { vmBuckets: 'opentsdb' }, h).horae);
  const clients = builds.map((b) => new HttpClient('127.0.0.1', b.port, conc));
  const perRound: { name: string; round: number; requestsPerSec: number; serverCpuMsPerRequest: number; errors: number }[] = [];
  try {
    for (let i = 0; i < builds.length; i++) for (const q of qs) await clients[i]!.request(q);
    for (let r = 0; r < rounds; r++) {
      const order = builds.map((_, i) => (r % 2 === 0 ? i : builds.length - 1 - i));
      for (const i of order) {
        const b = builds[i]!;
        const c0 = procCpuSeconds(b.proc!.pid!);
        const res = await loadFor(clients[i]!, conc, seconds, (k) => qs[k % qs.length]!);
        const cpu = procCpuSeconds(b.proc!.pid!) - c0;
        if (res.errors > 0) throw new Error(`q1 under load on ${b.name}: ${res.errors} errors (${res.firstError})`);
        perRound.push({ name: b.name, round: r, requestsPerSec: Math.round(res.requestsPerSec), serverCpuMsPerRequest: Math.round((cpu * 1e6) / res.requests) / 1000, errors: res.errors });
      }
    }
  } finally {
    for (const c of clients) c.close();
  }
  const row = {
    query: 'q1-load', title: `q1 rotating over ${o.hosts} hosts, ${conc} in flight, ${rounds} rounds of ${seconds} s`,
    builds: builds.map((b) => {
      const mine = perRound.filter((x) => x.name === b.name);
      return {
        name: b.name,
        medianRequestsPerSec: median(mine.map((x) => x.requestsPerSec)),
        medianServerCpuMsPerRequest: median(mine.map((x) => x.serverCpuMsPerRequest)),
        rounds: mine.map((x) => [x.requestsPerSec, x.serverCpuMsPerRequest]),
      };
    }),
  };
  console.log(`q1-load  ${row.builds.map((b) => `${b.name}: ${b.medianRequestsPerSec} req/s, ${b.medianServerCpuMsPerRequest} CPU-ms/req`).join(' | ')}`);
  return row;
}

const round = (x: number): number => Math.round(x * 100) / 100;

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
