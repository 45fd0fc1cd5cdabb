/**
 * bigtable-bench: the same time-series work on the embedded store and on the Bigtable
 * backend against the emulator, in one run, in this process (no HTTP for ingest):
 *
 *   npx tsx bench/bigtable-bench.ts [--hosts 20] [--hours 4] [--runs 7] [--emulator auto|gcloud|debian]
 *
 * 1. Ingest: the devops-cpu dataset (bench/devops-data.ts; hosts × 10 metrics × hours at
 *    10 s) through Tsdb.ingest.write in batches of 5,000 points, then a forced hour
 *    compaction (every closed hour rewritten as one compressed cell), as a server settles.
 * 2. Queries: the devops set of bench/query/queries.ts (q1, q2, q2-host, q3 last points,
 *    q4) through the HTTP app's inject (no sockets): 2 warm-up runs, then `runs` timed,
 *    median reported. Both backends' answers must agree (sameAnswer: series in any order,
 *    values within 1e-9 relative); the run fails otherwise.
 * 3. Where the time goes on Bigtable: wall time; this process's CPU (Horae + the client
 *    library + gRPC + protobuf); of that, protobuf serialization, estimated by encoding
 *    every request and decoding every response again after the phase; the emulator's CPU
 *    (/proc/PID/stat); and RPC counts and bytes.
 *
 * With `--servers 1,2,3 [--record]`: N server processes on one emulator table instead: ingest
 * points/s, RPCs per point and per new series, q1–q4 through each server (bench/bigtable-servers.ts).
 *
 * The emulator is one in-memory Go process with a global lock on this same machine: the
 * figures say what this client stack costs and how the emulator behaves, NOT what Cloud
 * Bigtable would do (network latency, replication, tablet servers, per-node throughput).
 * Results: bench/results/bigtable-<commit>.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import type { protos as ProtoTypes } from '../backends/bigtable/node_modules/@google-cloud/bigtable/build/src/index.js';
import { openEmbeddedStore } from '../core/index.js';
import type { Store } from '../core/api/store.js';
import { Tsdb } from '../tsdb/tsdb.js';
import { buildServer } from '../tsdb/server/build-server.js';
import type { IncomingPoint } from '../tsdb/write/data-point.js';
import { openBigtableStore } from '../backends/bigtable/src/index.js';
import { Connection } from '../backends/bigtable/src/client.js';
import type { IMutateRowsRequest, IMutateRowsResponse, IReadRowsRequest, IReadRowsResponse } from '../backends/bigtable/src/client.js';
import { startEmulator } from '../test/bigtable/emulator.js';
import { devopsChunks, devopsOptions, describeDataset, seriesInfo } from './devops-data.js';
import type { DevopsOptions } from './devops-data.js';
import { environment, median, printHeader } from './harness.js';
import { querySet } from './query/queries.js';
import { benchServers } from './bigtable-servers.js';

/** The client's protobuf classes, from the backend's own node_modules. */
const protos = createRequire(new URL('../backends/bigtable/package.json', import.meta.url))('@google-cloud/bigtable/build/protos/protos.js') as typeof ProtoTypes;

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '20' },
    hours: { type: 'string', default: '4' },
    runs: { type: 'string', default: '7' },
    emulator: { type: 'string', default: 'auto' },
    /** N server processes instead (bench/bigtable-servers.ts): e.g. 1,2,3. */
    servers: { type: 'string' },
    record: { type: 'boolean', default: false },
  },
});

/**
 * A connection that counts wall time (its calls by method are the base class's `calls`) and
 * keeps the messages for the serialization estimate.
 */
class CountingConnection extends Connection {
  rpcWallMs = 0;
  requests: (IMutateRowsRequest | IReadRowsRequest)[] = [];
  responses: (IMutateRowsResponse | IReadRowsResponse)[] = [];
  private inflight = 0;
  private since = 0;

  private enter(): void {
    if (this.inflight++ === 0) this.since = performance.now();
  }

  private leave(): void {
    if (--this.inflight === 0) this.rpcWallMs += performance.now() - this.since;
  }

  override async readRows(req: IReadRowsRequest, onResponse: (r: IReadRowsResponse) => void, signal?: AbortSignal): Promise<void> {
    this.requests.push(req);
    this.enter();
    try {
      await super.readRows(req, (r) => {
        this.responses.push(r);
        onResponse(r);
      }, signal);
    } finally {
      this.leave();
    }
  }

  override async mutateRows(req: IMutateRowsRequest, onResponse: (r: IMutateRowsResponse) => void): Promise<void> {
    this.requests.push(req);
    this.enter();
    try {
      await super.mutateRows(req, onResponse);
    } finally {
      this.leave();
    }
  }

  reset(): void {
    for (const k of Object.keys(this.calls) as (keyof Connection['calls'])[]) this.calls[k] = 0;
    this.rpcWallMs = 0;
    this.requests = [];
    this.responses = [];
  }

  /** Protobuf bytes of the phase's messages and the CPU ms to encode and decode them again. */
  serialization(): { requestBytes: number; responseBytes: number; codecMs: number } {
    const v2 = protos.google.bigtable.v2;
    const t0 = performance.now();
    let requestBytes = 0;
    let responseBytes = 0;
    for (const r of this.requests) {
      const isMutate = 'entries' in r;
      const bytes = isMutate ? v2.MutateRowsRequest.encode(r as IMutateRowsRequest).finish() : v2.ReadRowsRequest.encode(r as IReadRowsRequest).finish();
      requestBytes += bytes.length;
      if (isMutate) v2.MutateRowsRequest.decode(bytes);
      else v2.ReadRowsRequest.decode(bytes);
    }
    for (const r of this.responses) {
      const bytes = v2.ReadRowsResponse.encode(r as IReadRowsResponse).finish();
      responseBytes += bytes.length;
      v2.ReadRowsResponse.decode(bytes);
    }
    return { requestBytes, responseBytes, codecMs: performance.now() - t0 };
  }
}

/**
 * Two /api/query or /api/query/last answers alike up to what the query engine leaves open:
 * the order of output series (bucket scans finish in any order), the last bits of sums
 * (floating-point addition in another order) and TSUIDs (UIDs are assigned per store, in
 * the order names first arrive). Values within 1e-9 relative.
 */
function sameAnswer(a: string, b: string): boolean {
  type Out = { metric: string; tags: Record<string, string>; dps?: Record<string, number>; value?: string; timestamp?: number };
  const norm = (s: string): Out[] => (JSON.parse(s) as Out[]).sort((x, y) => {
    const kx = `${x.metric} ${JSON.stringify(Object.entries(x.tags).sort())}`;
    const ky = `${y.metric} ${JSON.stringify(Object.entries(y.tags).sort())}`;
    return kx < ky ? -1 : kx > ky ? 1 : 0;
  });
  const close = (x: number, y: number): boolean => x === y || Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
  const [xs, ys] = [norm(a), norm(b)];
  if (xs.length !== ys.length) return false;
  return xs.every((x, i) => {
    const y = ys[i]!;
    if (x.metric !== y.metric || JSON.stringify(Object.entries(x.tags).sort()) !== JSON.stringify(Object.entries(y.tags).sort())) return false;
    if (x.value !== undefined) return x.timestamp === y.timestamp && close(Number(x.value), Number(y.value));
    const kx = Object.keys(x.dps ?? {});
    return kx.length === Object.keys(y.dps ?? {}).length && kx.every((k) => y.dps?.[k] !== undefined && close(x.dps![k]!, y.dps[k]!));
  });
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function procCpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function* points(o: DevopsOptions): Generator<IncomingPoint[]> {
  const series = seriesInfo(o);
  for (const c of devopsChunks(o)) {
    const batch: IncomingPoint[] = new Array(c.n);
    for (let j = 0; j < c.n; j++) {
      const i = c.start + j;
      const s = series[i % series.length]!;
      const step = Math.floor(i / series.length);
      batch[j] = { metric: s.metric, timestamp: o.startSec + step * o.intervalSec, value: c.values[j]!, isInt: false, tags: s.tags, seriesText: s.seriesText };
    }
    yield batch;
  }
}

interface Phase { wallMs: number; cpuMs: number; emulatorCpuMs?: number; rpc?: unknown }

async function measure(conn: CountingConnection | undefined, emulatorPid: number | undefined, fn: () => Promise<void>): Promise<Phase> {
  conn?.reset();
  const e0 = emulatorPid === undefined ? 0 : procCpuMs(emulatorPid);
  const c0 = cpuMs();
  const t0 = performance.now();
  await fn();
  const wallMs = performance.now() - t0;
  const phase: Phase = { wallMs: Math.round(wallMs), cpuMs: Math.round(cpuMs() - c0) };
  if (emulatorPid !== undefined) phase.emulatorCpuMs = Math.round(procCpuMs(emulatorPid) - e0);
  if (conn !== undefined) {
    const s = conn.serialization();
    phase.rpc = { ...conn.calls, rpcWallMs: Math.round(conn.rpcWallMs), requestMB: +(s.requestBytes / 1e6).toFixed(2), responseMB: +(s.responseBytes / 1e6).toFixed(2), protobufCodecMs: Math.round(s.codecMs) };
  }
  return phase;
}

async function runBackend(name: string, store: Store, o: DevopsOptions, conn: CountingConnection | undefined, emulatorPid: number | undefined, runs: number) {
  const tsdb = await Tsdb.open(store, { config: { saltBuckets: 8 }, background: false, now: () => (o.startSec + o.steps * o.intervalSec + 7200) * 1000 });
  let n = 0;
  const ingest = await measure(conn, emulatorPid, async () => {
    for (const batch of points(o)) {
      const out = await tsdb.ingest.write(batch);
      n += out.length;
    }
  });
  const compact = await measure(conn, emulatorPid, () => tsdb.compactor.runOnce({ force: true, sweep: true }));
  const app = await buildServer({ tsdb });
  const queries: Record<string, unknown> = {};
  const answers: Record<string, string> = {};
  for (const q of querySet(o, { vmBuckets: 'opentsdb' })) {
    const req = { method: q.horae.method as 'POST' | 'GET', url: q.horae.path, ...(q.horae.body === undefined ? {} : { payload: q.horae.body, headers: { 'content-type': 'application/json' } }) };
    for (let i = 0; i < 2; i++) await app.inject(req);
    const times: number[] = [];
    let body = '';
    const phase = await measure(conn, emulatorPid, async () => {
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        const r = await app.inject(req);
        times.push(performance.now() - t0);
        if (r.statusCode !== 200) throw new Error(`${name} ${q.id}: ${r.statusCode} ${r.body.slice(0, 300)}`);
        body = r.body;
      }
    });
    answers[q.id] = body;
    queries[q.id] = { medianMs: +median(times).toFixed(1), minMs: +Math.min(...times).toFixed(1), ...phase, title: q.title };
  }
  await app.close();
  await tsdb.close();
  const result = { points: n, ingest: { ...ingest, pointsPerSec: Math.round(n / (ingest.wallMs / 1000)) }, compact, queries };
  console.log(`${name}:`, JSON.stringify(result, null, 1));
  return { result, answers };
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const o = devopsOptions({ hosts: Number(args.hosts), hours: Number(args.hours) });
  if (args.servers !== undefined) {
    await benchServers(o, args.servers.split(',').map(Number), args.emulator, args.record, Number(args.runs));
    return;
  }
  const runs = Number(args.runs);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'horae-bt-bench-'));
  const emulator = await startEmulator(args.emulator);
  const emulatorPid = emulator.pid;
  printHeader({ ...environment(dir), dataset: describeDataset(o), emulator: emulator.kind, runs });
  try {
    const embedded = await openEmbeddedStore({ dir });
    const e = await runBackend('embedded', embedded, o, undefined, undefined, runs);
    await embedded.close();
    const conn = new CountingConnection({ projectId: 'horae-bench', instanceId: 'bench', endpoint: emulator.host });
    const bt = await openBigtableStore({ projectId: 'horae-bench', instanceId: 'bench', endpoint: emulator.host, connection: conn, reverseScan: false });
    const b = await runBackend('bigtable', bt, o, conn, emulatorPid, runs);
    await bt.close();
    const differing = Object.keys(e.answers).filter((id) => !sameAnswer(e.answers[id]!, b.answers[id]!));
    const same = differing.length === 0;
    console.log(`answers identical: ${same}`);
    for (const id of differing) console.log(`${id} differs:\n  embedded ${e.answers[id]!.slice(0, 400)}\n  bigtable ${b.answers[id]!.slice(0, 400)}`);
    if (!same) process.exitCode = 1;
    const out = { environment: environment(dir), dataset: describeDataset(o), emulator: emulator.kind, runs, answersIdentical: same, embedded: e.result, bigtable: b.result };
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/bigtable-${String(out.environment.commit)}.json`;
    writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
    console.log(`wrote ${file}`);
  } finally {
    await emulator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
