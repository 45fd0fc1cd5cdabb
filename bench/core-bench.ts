/**
 * core-bench: a leveldb db_bench-style workload benchmark of the embedded store, through
 * the public Store/Table API (core/api/store.ts). Usage:
 *
 *   npx tsx bench/core-bench.ts [--workloads a,b,...] [--num N] [--runs R] [--dir D]
 *                               [--reads N] [--writers W] [--seed S] [--qualifier-bytes 0|1]
 *                               [--profile DIR] [--out DIR]
 *
 * Dataset: `num` entries, 16-byte row keys ("%016d" of the entry index, as db_bench),
 * one cell each in family 'f' with an EMPTY qualifier (--qualifier-bytes 1: the byte 'q')
 * and an 8-byte value (random bytes from a 64 KiB pool); the server assigns timestamps.
 * 1 op = 1 cell = 24 bytes of key + value for MB/s (MB = 2^20 bytes, as db_bench).
 * Plain JS (production-like, no tsx keepNames overhead): bench/build.sh, then
 * `node /tmp/horae-bench-build/bench/core-bench.js`; results go to core-js-<date>-<commit>.json.
 *
 * Workloads (run in the order given; each is repeated `runs` times, the median is kept):
 *   fillseq              keys in order, 1000 rows per mutate(), durability 'sync' (WAL with
 *                        group commit), one call in flight; a fresh store per run
 *   fillseq-conc         the same with `writers` calls in flight (default 4)
 *   fillrandom           `num` uniformly random keys (with repeats), 1000 rows per call
 *   fillrandom-smallmem  fillrandom on a store with a 4 MiB memstore (32 MiB total, writers
 *                        stall past 64 MiB) so flushes and compactions run all the time;
 *                        reports stalls (max call latency, max stalledWriters sampled)
 *   overwrite            `num` random keys written over the read store (filled in order)
 *   readrandom           get() of 1 random key per call, `reads` calls
 *   multireadrandom      get() of 100 random keys per call, `reads` keys in all
 *   readseq              a full forward table.scan(), counting cells
 *   readreverse          a full reverse scan
 *   seekrandom           scan({ start: random key, limit: 10 }), `reads` / 10 scans
 * The read workloads use one store filled in order (untimed), flushed, major-compacted and
 * warmed by one full scan, so they read from the block cache.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Row, RowMutation, Store, Table } from '../core/api/store.js';
import { openEmbeddedStore } from '../core/embedded/embedded-store.js';
import type { EmbeddedOptions, EmbeddedStoreExtras } from '../core/embedded/embedded-store.js';
import { Random } from '../core/util/random.js';
import type { Measured, WorkloadResult } from './harness.js';
import {
  environment, printHeader, printRun, profiled, sink, summarizeRun, summarizeWorkload, table, timeBatches, timeCalls, writeResults,
} from './harness.js';

const KEY_BYTES = 16;
const VALUE_BYTES = 8;
const ENTRY_BYTES = KEY_BYTES + VALUE_BYTES;
const BATCH_ROWS = 1000;
const MULTIGET_KEYS = 100;
const SEEK_LIMIT = 10;
const SMALLMEM: Partial<EmbeddedOptions> = { memstoreFlushBytes: 4 << 20, memstoreTotalBytes: 32 << 20 };

const { values: args } = parseArgs({
  options: {
    workloads: { type: 'string', default: 'fillseq,fillseq-conc,fillrandom,fillrandom-smallmem,overwrite,readrandom,multireadrandom,readseq,readreverse,seekrandom' },
    num: { type: 'string', default: '1000000' },
    reads: { type: 'string' },
    runs: { type: 'string', default: '3' },
    writers: { type: 'string', default: '4' },
    dir: { type: 'string', default: os.tmpdir() },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    profile: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
    'qualifier-bytes': { type: 'string', default: '0' },
  },
});
const NUM = Number(args.num);
const READS = Number(args.reads ?? args.num);
const RUNS = Number(args.runs);
const WRITERS = Number(args.writers);
const BASE_DIR = path.resolve(args.dir);
const rnd = new Random(Number(args.seed));
/** Running the tsc output (bench/build.sh) rather than the sources under tsx. */
const COMPILED = import.meta.url.endsWith('.js');
const QUALIFIER = args['qualifier-bytes'] === '1' ? Uint8Array.of(0x71) : new Uint8Array(0);

// ---------------------------------------------------------------------------------------
// Data

/** All keys, "%016d" of the index, as views into one buffer (made before timing). */
const keyBuf = new Uint8Array(NUM * KEY_BYTES);
for (let i = 0; i < NUM; i++) {
  let v = i;
  for (let j = KEY_BYTES - 1; j >= 0; j--, v = Math.floor(v / 10)) keyBuf[i * KEY_BYTES + j] = 48 + (v % 10);
}
const keyAt = (i: number): Uint8Array => keyBuf.subarray(i * KEY_BYTES, (i + 1) * KEY_BYTES);
const valuePool = rnd.bytes(65536);
const valueAt = (i: number): Uint8Array => valuePool.subarray((i * VALUE_BYTES) & 65535, ((i * VALUE_BYTES) & 65535) + VALUE_BYTES);

/** One mutate() batch: rows for entry indexes index(0..n-1). */
function batchOf(n: number, index: (j: number) => number): RowMutation[] {
  const rows: RowMutation[] = new Array(n);
  for (let j = 0; j < n; j++) {
    const i = index(j);
    rows[j] = { key: keyAt(i), mutations: [{ type: 'put', family: 'f', qualifier: QUALIFIER, value: valueAt(i) }] };
  }
  return rows;
}

function consume(rows: readonly (Row | undefined)[]): number {
  let cells = 0;
  for (const r of rows) {
    if (r === undefined) continue;
    for (const c of r.cells) sink.value += r.key.length + c.value.length;
    cells += r.cells.length;
  }
  return cells;
}

// ---------------------------------------------------------------------------------------
// Stores

interface Db {
  readonly store: Store & EmbeddedStoreExtras;
  readonly table: Table;
  readonly dir: string;
}

const openDbs = new Set<Db>();

async function openDb(opts: Partial<EmbeddedOptions> = {}): Promise<Db> {
  const dir = mkdtempSync(path.join(BASE_DIR, 'horae-core-bench-'));
  const store = await openEmbeddedStore({ ...opts, dir });
  const t = await store.createTable({ name: 'bench', families: [{ name: 'f' }] });
  const db = { store, table: t, dir };
  openDbs.add(db);
  return db;
}

async function closeDb(db: Db): Promise<void> {
  openDbs.delete(db);
  await db.store.close();
  rmSync(db.dir, { recursive: true, force: true });
}

/** The store the read workloads and overwrite use: filled in order, then compacted. */
let readDb: Db | undefined;
let readDbDirty = true;

async function getReadDb(forReads: boolean): Promise<Db> {
  if (readDb === undefined) {
    readDb = await openDb();
    const t = readDb.table;
    await timeCalls(Math.ceil(NUM / BATCH_ROWS), 4, ENTRY_BYTES, async (b) => {
      const n = Math.min(BATCH_ROWS, NUM - b * BATCH_ROWS);
      await t.mutate(batchOf(n, (j) => b * BATCH_ROWS + j), { durability: 'buffered' });
      return n;
    });
  }
  if (forReads && readDbDirty) {
    await readDb.table.compact({ major: true });
    await readDb.store.idle();
    for await (const rows of readDb.table.scan()) consume(rows); // warm the block cache
    readDbDirty = false;
  }
  return readDb;
}

/** With --profile DIR: where the current run's profile goes (only timed parts are profiled). */
let profileFile: string | undefined;
const timed = <T>(fn: () => Promise<T>): Promise<T> => profiled(profileFile, fn);

/** Runs a fill on `db`, sampling stalled writers and memstore bytes every 5 ms, and adds the background work it caused. */
async function fill(db: Db, writers: number, keyIndex: (i: number) => number): Promise<Measured> {
  const before = await db.store.stats();
  let maxStalled = 0;
  let maxMemstore = 0;
  const sampler = setInterval(() => {
    void db.store.stats().then((s) => {
      maxStalled = Math.max(maxStalled, s.stalledWriters);
      maxMemstore = Math.max(maxMemstore, s.memstoreBytes);
    });
  }, 5);
  const m = await timed(() => timeCalls(Math.ceil(NUM / BATCH_ROWS), writers, ENTRY_BYTES, async (b) => {
    const n = Math.min(BATCH_ROWS, NUM - b * BATCH_ROWS);
    await db.table.mutate(batchOf(n, (j) => keyIndex(b * BATCH_ROWS + j)));
    return n;
  }));
  clearInterval(sampler);
  const during = await db.store.stats();
  const t0 = performance.now();
  await db.store.idle();
  const after = await db.store.stats();
  m.extra = {
    maxStalledWriters: maxStalled,
    maxMemstoreMiB: maxMemstore / 1048576,
    flushes: during.flushesDone - before.flushesDone,
    compactions: during.compactionsDone - before.compactionsDone,
    idleAfterS: (performance.now() - t0) / 1000,
    filesAfter: after.files,
    fileMiB: after.fileBytes / 1048576,
  };
  return m;
}

/** Adds block cache hits and misses during a read workload. */
async function withCacheStats(db: Db, work: () => Promise<Measured>): Promise<Measured> {
  const before = (await db.store.stats()).blockCache;
  const m = await work();
  const after = (await db.store.stats()).blockCache;
  m.extra = { ...m.extra, cacheHits: after.hits - before.hits, cacheMisses: after.misses - before.misses };
  return m;
}

// ---------------------------------------------------------------------------------------
// Workloads

interface Workload {
  /** What ops/s counts. */
  readonly unit: string;
  readonly note: string;
  run(): Promise<Measured>;
}

async function freshFill(writers: number, keyIndex: (i: number) => number, opts: Partial<EmbeddedOptions> = {}): Promise<Measured> {
  const db = await openDb(opts);
  try {
    return await fill(db, writers, keyIndex);
  } finally {
    await closeDb(db);
  }
}

const fillseq = (): Promise<Measured> => freshFill(1, (i) => i);
const fillseqConc = (): Promise<Measured> => freshFill(WRITERS, (i) => i);
const fillrandom = (): Promise<Measured> => freshFill(1, () => rnd.int(NUM));
const fillrandomSmallmem = (): Promise<Measured> => freshFill(1, () => rnd.int(NUM), SMALLMEM);

async function overwrite(): Promise<Measured> {
  const db = await getReadDb(false);
  readDbDirty = true;
  return fill(db, 1, () => rnd.int(NUM));
}

async function readrandom(): Promise<Measured> {
  const db = await getReadDb(true);
  return withCacheStats(db, () => timed(() => timeCalls(READS, 1, ENTRY_BYTES, async () => consume(await db.table.get([keyAt(rnd.int(NUM))])))));
}

async function multireadrandom(): Promise<Measured> {
  const db = await getReadDb(true);
  const keys = new Array<Uint8Array>(MULTIGET_KEYS);
  return withCacheStats(db, () => timed(() => timeCalls(Math.ceil(READS / MULTIGET_KEYS), 1, ENTRY_BYTES, async () => {
    for (let j = 0; j < MULTIGET_KEYS; j++) keys[j] = keyAt(rnd.int(NUM));
    return consume(await db.table.get(keys));
  })));
}

async function scanAll(reverse: boolean): Promise<Measured> {
  const db = await getReadDb(true);
  return withCacheStats(db, () => timed(() => timeBatches(db.table.scan({ reverse }), ENTRY_BYTES, consume)));
}

async function seekrandom(): Promise<Measured> {
  const db = await getReadDb(true);
  let cells = 0;
  const m = await withCacheStats(db, () => timed(() => timeCalls(Math.ceil(READS / SEEK_LIMIT), 1, ENTRY_BYTES, async () => {
    for await (const rows of db.table.scan({ start: keyAt(rnd.int(NUM)), limit: SEEK_LIMIT })) cells += consume(rows);
    return 1;
  })));
  m.extra.cells = cells;
  return m;
}

const WORKLOADS: Record<string, Workload> = {
  fillseq: { unit: 'cells', note: `${BATCH_ROWS} rows/call, sync WAL, 1 writer`, run: fillseq },
  'fillseq-conc': { unit: 'cells', note: `${BATCH_ROWS} rows/call, sync WAL, ${WRITERS} writers`, run: fillseqConc },
  fillrandom: { unit: 'cells', note: `${BATCH_ROWS} rows/call, sync WAL, 1 writer`, run: fillrandom },
  'fillrandom-smallmem': { unit: 'cells', note: '4 MiB memstore, 32 MiB total, stall at 64 MiB', run: fillrandomSmallmem },
  overwrite: { unit: 'cells', note: `${BATCH_ROWS} rows/call into the filled store`, run: overwrite },
  readrandom: { unit: 'gets', note: '1 key per get(), warm cache', run: readrandom },
  multireadrandom: { unit: 'keys', note: `${MULTIGET_KEYS} keys per get(), warm cache`, run: multireadrandom },
  readseq: { unit: 'cells', note: 'full scan, latency per batch', run: () => scanAll(false) },
  readreverse: { unit: 'cells', note: 'full reverse scan, latency per batch', run: () => scanAll(true) },
  seekrandom: { unit: 'seeks', note: `scan from a random key, limit ${SEEK_LIMIT}`, run: seekrandom },
};

// ---------------------------------------------------------------------------------------
// Main

async function probeOptions(): Promise<Record<string, unknown>> {
  const db = await openDb();
  const o = db.store.engine.opts;
  await closeDb(db);
  return {
    blockSizeBytes: o.blockSizeBytes, restartInterval: o.restartInterval, compression: o.compression,
    bloomBitsPerKey: o.bloomBitsPerKey, blockCacheBytes: o.blockCacheBytes, memstoreFlushBytes: o.memstoreFlushBytes,
    memstoreTotalBytes: o.memstoreTotalBytes, memstoreStallBytes: o.memstoreStallBytes, backgroundThreads: o.backgroundThreads,
    compactionMinFiles: o.compactionMinFiles, verifyChecksums: o.verifyChecksums, walFileBytes: o.walFileBytes,
  };
}

async function main(): Promise<void> {
  if (args.profile !== undefined) mkdirSync(args.profile, { recursive: true });
  const names = args.workloads.split(',').filter((n) => n.length > 0);
  for (const n of names) if (WORKLOADS[n] === undefined) throw new Error(`unknown workload ${n}; known: ${Object.keys(WORKLOADS).join(', ')}`);
  const header = {
    ...environment(BASE_DIR),
    runtime: COMPILED ? 'compiled JS (tsc, bench/build.sh)' : 'tsx (esbuild transform with keepNames)',
    options: await probeOptions(),
    dataset: { entries: NUM, reads: READS, keyBytes: KEY_BYTES, valueBytes: VALUE_BYTES, qualifierBytes: QUALIFIER.length, family: 'f', batchRows: BATCH_ROWS, writers: WRITERS },
    runs: RUNS,
    seed: rnd.seed,
    workloads: names,
  };
  printHeader(header);
  const results: WorkloadResult[] = [];
  for (const name of names) {
    const w = WORKLOADS[name]!;
    const runs = [];
    for (let r = 1; r <= RUNS; r++) {
      profileFile = args.profile === undefined ? undefined : path.join(args.profile, `core-${name}-run${r}.cpuprofile`);
      const s = summarizeRun(await w.run());
      s.extra.load1m = Math.round(os.loadavg()[0]! * 100) / 100;
      printRun(name, r, s, w.unit);
      runs.push(s);
    }
    results.push(summarizeWorkload(name, w.unit, w.note, runs));
  }
  for (const db of [...openDbs]) await closeDb(db);
  Object.assign(header, { loadAvg1mEnd: Math.round(os.loadavg()[0]! * 100) / 100, finished: new Date().toISOString() });
  console.log(`\n${table(results)}\n`);
  console.log(`results: ${writeResults(path.resolve(args.out), `core${COMPILED ? '-js' : ''}${QUALIFIER.length > 0 ? '-q1' : ''}`, header, results)}  (sink ${sink.value})`);
}

await main().catch(async (err: unknown) => {
  for (const db of [...openDbs]) await closeDb(db).catch(() => undefined);
  console.error(err);
  process.exitCode = 1;
});
