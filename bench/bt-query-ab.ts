/**
 * bt-query-ab: the devops queries (bench/query/queries.ts) on the embedded store and on the
 * Bigtable emulator through two source trees of Horae (a base checkout and this one), in one
 * process on one emulator (a table prefix each), on the same data (bigtable-bench's ingest
 * and forced hour compaction), the three answered in alternating order round after round:
 *
 *   git archive BASE | tar -x -C /tmp/ab-base   (then link node_modules and
 *                                                backends/bigtable/node_modules into it)
 *   npx tsx bench/bt-query-ab.ts --base /tmp/ab-base [--hosts 20] [--hours 4] [--rounds 300] [--per 1] [--only q2,q4] [--new-first]
 *
 * Per query and side: median ms, the median of the per-round ratios to the embedded store,
 * ReadRows calls, response bytes (keys, qualifiers, values of the cells received), this
 * process's CPU and the emulator's CPU per query; whether the answers are byte-equal to the
 * embedded store's. The emulator is not Bigtable (docs/SCALING.md): it sends one message per
 * row and costs ~25 µs of its CPU per row whatever the filter.
 * Results: bench/results/bigtable-ab-<commit>.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { devopsChunks, devopsOptions, seriesInfo } from './devops-data.js';
import type { DevopsOptions } from './devops-data.js';
import { environment, median } from './harness.js';
import { querySet } from './query/queries.js';
import { startEmulator } from '../test/bigtable/emulator.js';

const { values: args } = parseArgs({ options: {
  base: { type: 'string' }, hosts: { type: 'string', default: '20' }, hours: { type: 'string', default: '4' },
  rounds: { type: 'string', default: '300' }, per: { type: 'string', default: '1' }, only: { type: 'string' },
  'new-first': { type: 'boolean', default: false },
} });

type Mod = Record<string, any>;
const NEW = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

async function tree(root: string) {
  const m = (p: string): Promise<Mod> => import(pathToFileURL(path.join(root, p)).href) as Promise<Mod>;
  const [core, tsdb, server, bt, client] = await Promise.all([m('core/index.ts'), m('tsdb/tsdb.ts'), m('tsdb/server/build-server.ts'), m('backends/bigtable/src/index.ts'), m('backends/bigtable/src/client.ts')]);
  return { core, tsdb, server, bt, client };
}

function* points(o: DevopsOptions): Generator<any[]> {
  const series = seriesInfo(o);
  for (const c of devopsChunks(o)) {
    const batch: any[] = new Array(c.n);
    for (let j = 0; j < c.n; j++) {
      const i = c.start + j;
      const s = series[i % series.length]!;
      batch[j] = { metric: s.metric, timestamp: o.startSec + Math.floor(i / series.length) * o.intervalSec, value: c.values[j]!, isInt: false, tags: s.tags, seriesText: s.seriesText };
    }
    yield batch;
  }
}

async function load(t: Awaited<ReturnType<typeof tree>>, store: any, o: DevopsOptions) {
  const tsdb = await t.tsdb['Tsdb'].open(store, { config: { saltBuckets: 8 }, background: false, now: () => (o.startSec + o.steps * o.intervalSec + 7200) * 1000 });
  for (const b of points(o)) await tsdb.ingest.write(b);
  await tsdb.compactor.runOnce({ force: true, sweep: true });
  return { tsdb, app: await t.server['buildServer']({ tsdb }) };
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  if (args.base === undefined) throw new Error('--base DIR');
  const o = devopsOptions({ hosts: Number(args.hosts), hours: Number(args.hours) });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bt-ab-'));
  const emu = await startEmulator('auto');
  const [tb, tn] = [await tree(path.resolve(args.base)), await tree(NEW)];
  const conns: Record<string, any> = {};
  const bigtable = async (name: string, t: typeof tn) => {
    const conn = new t.client['Connection']({ projectId: 'p', instanceId: 'i', endpoint: emu.host });
    conns[name] = conn;
    // Count the bytes of the cells received.
    conn.bytes = 0;
    const readRows = conn.readRows.bind(conn);
    conn.readRows = (req: unknown, on: (r: any) => void, signal?: AbortSignal) => readRows(req, (r: any) => {
      for (const c of r.chunks ?? []) conn.bytes += (c.value?.length ?? 0) + (c.rowKey?.length ?? 0) + (c.qualifier?.value?.length ?? 0);
      on(r);
    }, signal);
    return load(t, await t.bt['openBigtableStore']({ projectId: 'p', instanceId: 'i', endpoint: emu.host, connection: conn, reverseScan: false, tablePrefix: `${name}_` }), o);
  };
  try {
    // The emulator serves the table loaded second a little slower (A/A: ~0.5 ms of its CPU
    // on q4): --new-first swaps the loading order.
    const emb = await load(tn, await tn.core['openEmbeddedStore']({ dir }), o);
    const first = args['new-first'] === true ? await bigtable('new', tn) : await bigtable('base', tb);
    const second = args['new-first'] === true ? await bigtable('base', tb) : await bigtable('new', tn);
    const [b, n] = args['new-first'] === true ? [second, first] : [first, second];
    const sides: [string, { app: any; tsdb: any }][] = [['embedded', emb], ['bt-base', b], ['bt-new', n]];
    const results: unknown[] = [];
    const rounds = Number(args.rounds);
    const per = Number(args.per);
    const emuCpu = (): number => { const f = readFileSync(`/proc/${emu.pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
    for (const q of querySet(o, { vmBuckets: 'opentsdb' })) {
      if (args.only !== undefined && !args.only.split(',').includes(q.id)) continue;
      const req = { method: q.horae.method, url: q.horae.path, ...(q.horae.body === undefined ? {} : { payload: q.horae.body, headers: { 'content-type': 'application/json' } }) };
      const bodies: string[] = [];
      for (const [, s] of sides) {
        for (let i = 0; i < 5; i++) await s.app.inject(req);
        bodies.push((await s.app.inject(req)).body);
      }
      const ms: number[][] = sides.map(() => []);
      const cpu: number[] = sides.map(() => 0);
      const ccpu: number[] = sides.map(() => 0);
      const rpcs0 = Object.fromEntries(Object.entries(conns).map(([k, c]) => [k, c.calls.readRows]));
      const bytes0 = Object.fromEntries(Object.entries(conns).map(([k, c]) => [k, c.bytes as number]));
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
        for (const i of order) {
          const e0 = emuCpu();
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          for (let k = 0; k < per; k++) await sides[i]![1].app.inject(req);
          ms[i]!.push((performance.now() - t0) / per);
          cpu[i]! += emuCpu() - e0;
          const c1 = process.cpuUsage(c0);
          ccpu[i]! += (c1.user + c1.system) / 1000;
        }
      }
      const n = rounds * per;
      const ratio = (i: number): string => median(ms[i]!.map((x, k) => x / ms[0]![k]!)).toFixed(2);
      const rr = (k: string): string => ((conns[k].calls.readRows - rpcs0[k]) / n).toFixed(2);
      const side = (i: number, conn?: string) => ({
        medianMs: +median(ms[i]!).toFixed(2), ratioToEmbedded: +median(ms[i]!.map((x, k) => x / ms[0]![k]!)).toFixed(2), cpuMs: +(ccpu[i]! / n).toFixed(2),
        ...(conn === undefined ? {} : { readRows: +((conns[conn].calls.readRows - rpcs0[conn]) / n).toFixed(2), kB: +((conns[conn].bytes - bytes0[conn]) / n / 1000).toFixed(1), emulatorCpuMs: +(cpu[i]! / n).toFixed(2), sameAnswer: bodies[0] === bodies[i] }),
      });
      const row = { query: q.id, embedded: side(0), base: side(1, 'base'), new: side(2, 'new') };
      results.push(row);
      console.log(JSON.stringify(row));
    }
    for (const [, s] of sides) { await s.app.close(); await s.tsdb.close(); }
    const env = environment(dir);
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/bigtable-ab-${String(env['commit'])}.json`;
    writeFileSync(file, `${JSON.stringify({ environment: env, base: args.base, newFirst: args['new-first'], hosts: o.hosts, hours: args.hours, rounds, per, results }, null, 1)}\n`);
    console.log(`wrote ${file}`);
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
