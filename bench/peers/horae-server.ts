/**
 * A Horae server as a child process of the ingest benchmarks, so its CPU and RSS are its
 * own (/proc/<pid>) and the load client's are not in them, as for the peers. Forked by
 * bench/peers/horae.ts with one argument, JSON `{ dir, config? }`: opens an embedded store
 * in `dir`, starts the server (default config unless given) on 127.0.0.1, an ephemeral
 * port, and answers IPC requests ({cmd, id} → {id, ...} or {id, error}):
 *
 *   stats    the writer's counters (pointsWritten ...), the hour compactor's, the store's
 *   inproc   writes the dataset through tsdb.ingest.write() in 5k-point batches, `inflight`
 *            calls in flight, default durability; replies when every call has resolved
 *   settle   hour compaction of everything (runOnce force + sweep), then flush and major
 *            compaction of every table (data, UID, series index), then store.idle()
 *   verify   reads every series back (readSeries) and compares timestamps and values with
 *            the regenerated dataset
 *   stop     graceful stop (closes the store), then exits
 */
import { performance } from 'node:perf_hooks';
import { openEmbeddedStore } from '../../core/index.js';
import type { TsdbConfig } from '../../tsdb/config.js';
import { readSeries } from '../../tsdb/read/series-reader.js';
import { startServer } from '../../tsdb/server/server.js';
import type { RunningServer } from '../../tsdb/server/server.js';
import { DevopsFormatter, devopsChunks, seriesCount } from '../devops-data.js';
import type { DevopsOptions } from '../devops-data.js';

interface Args {
  readonly dir: string;
  readonly config?: Partial<TsdbConfig>;
  /** Store options (memstore sizes, block cache, ...) over the defaults. */
  readonly store?: Record<string, unknown>;
}

type Msg = { cmd: string; id: number } & Record<string, unknown>;

async function inproc(server: RunningServer, o: DevopsOptions, inflight: number): Promise<Record<string, unknown>> {
  const f = new DevopsFormatter(o);
  const chunks = devopsChunks(o);
  let points = 0;
  let rejected = 0;
  const firstErrors: string[] = [];
  const t0 = performance.now();
  const loop = async (): Promise<void> => {
    for (let it = chunks.next(); it.done !== true; it = chunks.next()) {
      const batch = f.points(it.value);
      const outcomes = await server.tsdb.ingest.write(batch);
      points += batch.length;
      for (const o2 of outcomes) {
        if (o2 === undefined) continue;
        rejected++;
        if (firstErrors.length < 5) firstErrors.push(o2.message);
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, loop));
  return { points, rejected, firstErrors, seconds: (performance.now() - t0) / 1000 };
}

async function settle(server: RunningServer): Promise<Record<string, unknown>> {
  const tsdb = server.tsdb;
  const t0 = performance.now();
  await tsdb.compactor.runOnce({ force: true, sweep: true });
  const tHours = performance.now();
  // Every table (data, uid and the series index): a memstore left unflushed pins the WAL.
  for (const name of await tsdb.store.listTables()) {
    const t = await tsdb.store.openTable(name);
    await t.flush();
    await t.compact({ major: true });
  }
  // The last flush rolls the WAL once every memstore is empty (core/lsm/engine.ts).
  await tsdb.data.flush();
  const store = tsdb.store as { idle?: () => Promise<void> };
  if (typeof store.idle === 'function') await store.idle();
  return {
    seconds: (performance.now() - t0) / 1000,
    hourCompactionSeconds: (tHours - t0) / 1000,
    compactor: { ...tsdb.compactor.stats() },
    store: await tsdb.store.stats(),
  };
}

async function verify(server: RunningServer, o: DevopsOptions): Promise<Record<string, unknown>> {
  const s = seriesCount(o);
  const expected = new Float64Array(s * o.steps);
  for (const c of devopsChunks(o)) expected.set(c.values, c.start);
  const f = new DevopsFormatter(o);
  const startMs = o.startSec * 1000;
  const endMs = startMs + o.steps * o.intervalSec * 1000;
  let points = 0;
  let mismatches = 0;
  let missing = 0;
  const samples: string[] = [];
  for (let si = 0; si < s; si++) {
    const info = f.series[si]!;
    const got = await readSeries(server.tsdb, info.metric, info.tagObject, startMs, endMs);
    points += got.length;
    if (got.length !== o.steps) missing += o.steps - got.length;
    for (let k = 0; k < got.length && k < o.steps; k++) {
      const p = got[k]!;
      const want = expected[k * s + si]!;
      if (p.ts !== startMs + k * o.intervalSec * 1000 || Number(p.value) !== want) {
        mismatches++;
        if (samples.length < 5) samples.push(`${info.seriesText} #${k}: got ${p.ts} ${String(p.value)}, want ${startMs + k * o.intervalSec * 1000} ${want}`);
      }
    }
  }
  return { points, expected: s * o.steps, missing, mismatches, samples };
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '') as Args;
  const store = await openEmbeddedStore({ ...(args.store ?? {}), dir: args.dir });
  const server = await startServer({ store, port: 0, bind: '127.0.0.1', ...(args.config === undefined ? {} : { config: args.config }) });
  process.on('message', (m: Msg) => {
    const reply = (body: Record<string, unknown>): void => void process.send?.({ ...body, id: m.id });
    const run = async (): Promise<Record<string, unknown>> => {
      switch (m.cmd) {
        case 'stats':
          return { ingest: server.tsdb.ingest.stats(), compactor: server.tsdb.compactor.stats() };
        case 'inproc':
          return inproc(server, m['dataset'] as DevopsOptions, Number(m['inflight'] ?? 4));
        case 'settle':
          return settle(server);
        case 'verify':
          return verify(server, m['dataset'] as DevopsOptions);
        case 'stop':
          await server.stop();
          setImmediate(() => process.exit(0));
          return {};
        default:
          throw new Error(`unknown command ${m.cmd}`);
      }
    };
    run().then(reply, (err: unknown) => reply({ error: (err as Error).stack ?? String(err) }));
  });
  process.on('disconnect', () => void server.stop().finally(() => process.exit(0)));
  process.send?.({ type: 'ready', port: server.port });
}

main().catch((err: unknown) => {
  console.error('horae-server:', err);
  process.exit(1);
});
