/**
 * query-ab-inproc: two compiled builds of Horae answering the same /api/query bodies in ONE
 * process, each on its own copy of a loaded data directory, their rounds interleaved. For
 * CPU-bound changes on the query path (decode, downsampling, aggregation, output), where
 * query-ab's HTTP round trips and this machine's drift between processes hide effects of
 * 5-15%: both builds share the process's heap, JIT state and CPU conditions. It runs what
 * the route runs (parseQueryJson, executeQuery, formatQueryResultsBytes), not fastify.
 * Usage:
 *
 *   npx tsc -p tsconfig.build.json   (in each checkout: <checkout>/dist)
 *   npx tsx bench/query-ab-inproc.ts --data-dir <dir> --builds old=/a/dist,new=dist
 *        [--queries q1,q2,q2-host,q4] [--rounds 40] [--out bench/results]
 *
 * `<dir>` is a loaded data directory (HORAE_BENCH_KEEP_DIR=1 query-bench prints
 * one), at the full devops size. q1 rotates over every host, 100 queries a round; the others
 * run once a round. Reported per query: each build's median ms per query over the rounds,
 * and the median of the per-round ratios to the first build. The answers of every build
 * must be byte-equal to the first's, or the run stops.
 * Results: bench/results/query-ab-inproc-<commit>.json (or --out DIR).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { devopsOptions } from './devops-data.js';
import { environment, median, printHeader } from './harness.js';
import { q1, querySet } from './query/queries.js';
import type { QueryId } from './query/queries.js';

const { values: args } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    builds: { type: 'string' },
    queries: { type: 'string', default: 'q1,q2,q2-host,q4' },
    rounds: { type: 'string', default: '40' },
    out: { type: 'string', default: 'bench/results' },
  },
});

/** What one build's route does with a POST body, and its store to close. */
interface Runner {
  readonly name: string;
  answer(body: Buffer): Promise<Buffer>;
  close(): Promise<void>;
}

async function loadBuild(name: string, dist: string, dataDir: string): Promise<Runner> {
  const mod = (p: string): Promise<Record<string, any>> => import(pathToFileURL(path.join(dist, p)).href) as Promise<Record<string, any>>;
  const [core, tsdbMod, execute, spec, format] = await Promise.all([
    mod('core/index.js'), mod('tsdb/tsdb.js'), mod('tsdb/query/execute.js'), mod('tsdb/query/query-spec.js'), mod('tsdb/query/format-json.js'),
  ]);
  const store = await core['openEmbeddedStore']({ dir: dataDir });
  const tsdb = await tsdbMod['Tsdb'].open(store, { background: false });
  const limits = { maxSeries: 1e7, maxPoints: 1e10, timeoutMs: 600_000 };
  return {
    name,
    async answer(body) {
      const q = spec['parseQueryJson'](body, Date.now(), { queryString: {} });
      const run = await execute['executeQuery'](tsdb, q, limits, new AbortController().signal);
      return format['formatQueryResultsBytes'](run.series, { arrays: q.arrays, msResolution: q.msResolution }) as Buffer;
    },
    close: () => store.close() as Promise<void>,
  };
}

async function main(): Promise<void> {
  const dataDir = args['data-dir'];
  if (dataDir === undefined || args.builds === undefined) throw new Error('usage: --data-dir DIR --builds name=dist,name=dist (see the file header)');
  const specs = args.builds.split(',').map((spec) => {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new Error(`--builds: "${spec}" is not name=path/to/dist`);
    return { name: spec.slice(0, eq), dist: path.resolve(spec.slice(eq + 1)) };
  });
  const rounds = Number(args.rounds);
  const o = devopsOptions({});
  const set = new Map(querySet(o, { vmBuckets: 'opentsdb' }).map((q) => [q.id, q]));
  const ids = args.queries.split(',') as QueryId[];
  const bodiesOf = (id: QueryId): Buffer[] => {
    if (id === 'q1') return Array.from({ length: o.hosts }, (_, h) => Buffer.from(q1(o, { vmBuckets: 'opentsdb' }, h).horae.body!));
    const q = set.get(id);
    if (q === undefined || q.horae.path !== '/api/query' || q.horae.body === undefined) throw new Error(`--queries: ${id} is not an /api/query POST`);
    return [Buffer.from(q.horae.body)];
  };
  const work = mkdtempSync(path.join(os.tmpdir(), 'horae-query-ab-inproc-'));
  const env = environment(work);
  const header = { ...env, benchmark: 'query A/B in one process (Horae builds, interleaved rounds)', dataDir, builds: specs, rounds };
  printHeader(header);
  const runners: Runner[] = [];
  const results: Record<string, unknown>[] = [];
  try {
    for (const [i, s] of specs.entries()) {
      const dir = path.join(work, `data-${i}`);
      cpSync(dataDir, dir, { recursive: true });
      runners.push(await loadBuild(s.name, s.dist, dir));
    }
    for (const id of ids) {
      const bodies = bodiesOf(id);
      const first: Buffer[] = [];
      for (const [i, r] of runners.entries()) {
        for (let w = 0; w < 5; w++) {
          for (const [k, b] of bodies.entries()) {
            const out = await r.answer(b);
            if (i === 0 && w === 0) first.push(out);
            else if (!out.equals(first[k]!)) throw new Error(`${id}: ${r.name} answers differently from ${runners[0]!.name}`);
          }
        }
      }
      const ms: number[][] = runners.map(() => []);
      for (let round = 0; round < rounds; round++) {
        const order = runners.map((_, i) => (round % 2 === 0 ? i : runners.length - 1 - i));
        for (const i of order) {
          const t0 = performance.now();
          for (const b of bodies) await runners[i]!.answer(b);
          ms[i]!.push((performance.now() - t0) / bodies.length);
        }
      }
      const row = {
        query: id, queriesPerRound: bodies.length, bytes: first.reduce((n, b) => n + b.length, 0),
        builds: runners.map((r, i) => ({
          name: r.name,
          medianMs: round3(median(ms[i]!)),
          ratioToFirst: round3(median(ms[i]!.map((x, k) => x / ms[0]![k]!))),
        })),
      };
      results.push(row);
      console.log(`${id.padEnd(8)} ${row.builds.map((b) => `${b.name}: ${b.medianMs} ms/query (×${b.ratioToFirst})`).join(' | ')}`);
    }
  } finally {
    for (const r of runners) await r.close();
    rmSync(work, { recursive: true, force: true });
  }
  mkdirSync(args.out, { recursive: true });
  const file = path.join(args.out, `query-ab-inproc-${String(env['commit'])}.json`);
  writeFileSync(file, `${JSON.stringify({ header, results }, null, 1)}\n`);
  console.log(`wrote ${file}`);
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
