/**
 * A store made before row transforms (tsdb/SCHEMA.md "Suffixed hour cells"): its data
 * family names no transform, and the read-back compactor left raw cells, one-byte `0c`
 * cells (its first format), randomly suffixed `0c` cells and a delete marker per consumed
 * cell, spread over many files. The fixture is made by that old path: the embedded store
 * seen without row transforms, so Tsdb.open runs the read-back compactor (HourCompactor).
 * Opened with row transforms, the layer names the transform on the data family; every
 * point reads back exactly, through flushes, minor compactions of arbitrary runs of those
 * files and a major one, which leaves one compressed cell per row; nothing is read back.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import type { Store } from '../../../core/api/store.js';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import { compactionOf } from '../../../tsdb/compact/hour-compactor.js';
import { StoreCompaction } from '../../../tsdb/compact/store-compaction.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { HOUR_CELL_QUALIFIER } from '../../../tsdb/schema/qualifier.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { DATA_FAMILY, DATA_TABLE, DATA_TRANSFORM, dataTableSpec } from '../../../tsdb/tables.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const HOSTS = ['a', 'b', 'c', 'legacy'];
const METRICS = ['cpu', 'mem'];

/** The reference: series → ms → value (the last write wins). */
type Model = Map<string, Map<number, number>>;

function record(model: Model, metric: string, host: string, sec: number, value: number): ReturnType<typeof pt> {
  const key = `${metric} ${host}`;
  let m = model.get(key);
  if (m === undefined) model.set(key, (m = new Map()));
  m.set(sec * 1000, value);
  return pt(metric, sec, value, { host });
}

/** The embedded store as a store without row transforms saw it. */
function withoutRowTransforms(store: Store): Store {
  const capabilities = { ...store.capabilities, rowTransforms: false };
  return new Proxy(store, {
    get(target, p, recv) {
      if (p === 'capabilities') return capabilities;
      const v = Reflect.get(target, p, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function expectModel(tsdb: Tsdb, model: Model): Promise<void> {
  for (const [key, points] of model) {
    const [metric, host] = key.split(' ') as [string, string];
    const read = await readSeries(tsdb, metric, { host }, T0 * 1000, (T0 + 4 * 3600) * 1000);
    const want = [...points].sort((x, y) => x[0] - y[0]);
    expect(read.map((p) => [p.ts, p.value]), key).toEqual(want);
  }
  // The query path too (scans, the decode pool's input), one series at a time.
  const app = await buildServer({ tsdb });
  try {
    const res = await app.inject({
      method: 'POST', url: '/api/query',
      payload: { start: T0 * 1000, end: (T0 + 4 * 3600) * 1000, msResolution: true, queries: METRICS.map((metric) => ({ metric, aggregator: 'none' })) },
    });
    expect(res.statusCode).toBe(200);
    const got = new Map<string, Array<[number, number]>>();
    for (const s of res.json() as Array<{ metric: string; tags: { host: string }; dps: Record<string, number> }>) {
      got.set(`${s.metric} ${s.tags.host}`, Object.entries(s.dps).map(([t, v]) => [Number(t), v]));
    }
    for (const [key, points] of model) expect(got.get(key), key).toEqual([...points].sort((x, y) => x[0] - y[0]));
  } finally {
    await app.close();
  }
}

/** Data-cell qualifiers (hex) of every row, and the delete markers' share of the files. */
async function rowQualifiers(tsdb: Tsdb): Promise<string[][]> {
  const out: string[][] = [];
  for await (const rows of tsdb.data.scan({ families: [DATA_FAMILY] })) for (const r of rows) out.push(r.cells.map((c) => toHex(c.qualifier)));
  return out;
}

/** Builds the old layout through the old path; returns the file system and the reference. */
async function buildOldStore(clock: { now: number }): Promise<{ fs: MemFileSystem; model: Model }> {
  const fs = new MemFileSystem();
  const model: Model = new Map();
  const raw = await openEmbeddedStore({ dir: '/db', fs, clock: () => clock.now, maintenanceIntervalMs: 0, compactionMinFiles: 1000, tombstoneCompactionRatio: 1 });
  const store = withoutRowTransforms(raw);
  const tsdb = await Tsdb.open(store, { now: () => clock.now, background: false });
  // The data table as Horae created it before row transforms: no transform named.
  const spec = dataTableSpec(tsdb.widths);
  await raw.dropTable(DATA_TABLE);
  await raw.createTable({ ...spec, families: spec.families.map(({ transform: _t, ...f }) => f) });
  await tsdb.close();
  const old = await Tsdb.open(store, { now: () => clock.now, background: false });
  expect(old.storeCompresses).toBe(false);
  expect(old.data.spec.families[0]!.transform).toBeUndefined();
  const write = async (points: ReturnType<typeof pt>[]): Promise<void> => {
    clock.now += 1000;
    await old.ingest.write(points);
  };
  // Three hours of points every 10 s (integers and floats), each hour flushed on its own.
  for (let h = 0; h < 3; h++) {
    const pts = [];
    for (const metric of METRICS) for (const host of HOSTS) for (let s = 0; s < 3600; s += 10) pts.push(record(model, metric, host, T0 + h * 3600 + s, metric === 'cpu' ? s + h : (s + h) / 4));
    await write(pts);
    await old.data.flush();
  }
  // The read-back compactor: every closed hour becomes a suffixed cell, consumed cells deleted.
  await old.compactor.runOnce({ force: true, sweep: true });
  await old.data.flush();
  // Late points and rewrites into compacted hours, compacted again, then more left raw.
  for (let round = 0; round < 3; round++) {
    const pts = [];
    for (const metric of METRICS) for (const host of HOSTS) for (let h = 0; h < 3; h++) for (let s = round; s < 3600; s += 450) pts.push(record(model, metric, host, T0 + h * 3600 + s, 1000 * (round + 1) + s));
    await write(pts);
    await old.data.flush();
    if (round < 2) {
      await old.compactor.runOnce({ force: true, sweep: true });
      await old.data.flush();
    }
    if (round === 1) {
      // The first format: hour 0 of the legacy host rewritten as ONE `0c` cell (qualifier `0c`
      // alone), its raw cells deleted, as the compactor of v1.0 did.
      for (const metric of METRICS) {
        const keys: Uint8Array[] = [];
        for await (const rows of old.data.scan({ families: [DATA_FAMILY] })) for (const r of rows) keys.push(r.key);
        for (const key of keys) {
          const [row] = await old.data.get([key], { families: [DATA_FAMILY] });
          if (row === undefined || !(await isSeries(old, key, metric, 'legacy', T0))) continue;
          const c = compactionOf(row.cells);
          const put = c.mutations[0]!;
          if (put.type !== 'put') throw new Error('BUG: compactionOf puts first');
          await old.data.mutate([{ key, mutations: [{ ...put, qualifier: HOUR_CELL_QUALIFIER }, ...c.mutations.slice(1)] }]);
        }
      }
      await old.data.flush();
    }
  }
  await expectModel(old, model);
  const q = await rowQualifiers(old);
  expect(q.some((r) => r.includes('0c'))).toBe(true); // first-format cells
  expect(q.some((r) => r.some((x) => x.length % 4 === 0))).toBe(true); // raw cells (points, compacted columns)
  expect(q.some((r) => r.filter((x) => x.length === 18).length === 1)).toBe(true); // suffixed cells
  expect((await raw.stats()).files).toBeGreaterThanOrEqual(10);
  await old.close();
  await raw.close();
  return { fs, model };
}

async function isSeries(tsdb: Tsdb, key: Uint8Array, metric: string, host: string, baseSec: number): Promise<boolean> {
  const w = tsdb.widths;
  const mid = await tsdb.metrics.getId(metric);
  const vid = await tsdb.tagvs.getId(host);
  const at = w.saltWidth + w.metric;
  const base = ((key[at]! << 24) | (key[at + 1]! << 16) | (key[at + 2]! << 8) | key[at + 3]!) >>> 0;
  return toHex(key.subarray(w.saltWidth, at)) === toHex(mid!) && base === baseSec && toHex(key.subarray(key.length - w.tagv)) === toHex(vid!);
}

describe('a store made before row transforms', () => {
  it('is migrated on open: the data family gets the transform, every point reads exactly, and compactions fold the old cells', async () => {
    const clock = { now: (T0 + 3 * 3600 + 60) * 1000 };
    const { fs, model } = await buildOldStore(clock);

    // Opened by this version: small minor compactions, so runs of the old files merge
    // without the files holding their delete markers.
    const store = await openEmbeddedStore({ dir: '/db', fs, clock: () => clock.now, maintenanceIntervalMs: 0, compactionMinFiles: 2, compactionMaxFiles: 3, tombstoneCompactionRatio: 1 });
    const tsdb = await Tsdb.open(store, { now: () => clock.now, background: false });
    expect(tsdb.storeCompresses).toBe(true);
    expect(tsdb.compactor).toBeInstanceOf(StoreCompaction);
    expect(tsdb.data.spec.families.map((f) => [f.name, f.transform])).toEqual([[DATA_FAMILY, DATA_TRANSFORM]]);
    await expectModel(tsdb, model);

    const rowsRead = async (): Promise<number> => (await tsdb.data.regions()).reduce((n, r) => n + r.stats.rowsRead, 0);
    const compactionsBefore = (await store.stats()).compactionsDone;
    for (let round = 0; round < 4; round++) {
      const pts = [];
      for (const metric of METRICS) for (const host of HOSTS) pts.push(record(model, metric, host, T0 + round * 3600 + 7 + round, -round - 1));
      clock.now += 1000;
      await tsdb.ingest.write(pts);
      const before = await rowsRead();
      await tsdb.compactor.runOnce(); // a flush, then the minor compactions due
      await (store as unknown as { idle(): Promise<void> }).idle();
      expect(await rowsRead()).toBe(before); // nothing read back
      await expectModel(tsdb, model);
    }
    expect((await store.stats()).compactionsDone).toBeGreaterThan(compactionsBefore + 2);

    await tsdb.compactor.runOnce({ force: true });
    await expectModel(tsdb, model);
    const q = await rowQualifiers(tsdb);
    expect(q.length).toBe(METRICS.length * HOSTS.length * 4);
    expect(q.every((r) => r.length === 1 && r[0]!.length === 18 && r[0]!.startsWith('0c'))).toBe(true);
    await tsdb.close();
    await store.close();

    // Restarted: still named, still exact.
    const again = await openEmbeddedStore({ dir: '/db', fs, clock: () => clock.now, maintenanceIntervalMs: 0 });
    const t2 = await Tsdb.open(again, { now: () => clock.now, background: false });
    expect(t2.data.spec.families[0]!.transform).toBe(DATA_TRANSFORM);
    await expectModel(t2, model);
    await t2.close();
    await again.close();
  });

  it('left alone after the open, finishes the migration by itself: every old file rewritten, at a bounded rate, shown in /api/stats', async () => {
    const clock = { now: (T0 + 3 * 3600 + 60) * 1000 };
    const { fs, model } = await buildOldStore(clock);
    // No compaction would pick these files: minor ones need 100 files, major ones are
    // never due by time, the files are not tombstone-heavy enough, and no region goes idle.
    const store = await openEmbeddedStore({
      dir: '/db', fs, clock: () => clock.now, maintenanceIntervalMs: 20, memstoreIdleFlushMs: 0,
      compactionMinFiles: 100, majorCompactionIntervalMs: 0, tombstoneCompactionRatio: 1,
      transformMigrationBytesPerSec: 64 << 20,
    });
    const engine = (store as unknown as { engine: { tables: Map<string, { regions: Array<{ files: Array<{ number: number }> }> }> } }).engine;
    const dataFiles = (): number[] => engine.tables.get(DATA_TABLE)!.regions.flatMap((r) => r.files.map((f) => f.number));
    const oldNumbers = new Set(dataFiles());
    expect(oldNumbers.size).toBeGreaterThanOrEqual(10);
    expect((await store.stats()).transformBacklog).toEqual({ files: 0, bytes: 0 }); // no transform named yet
    const tsdb = await Tsdb.open(store, { now: () => clock.now, background: false });
    const app = await buildServer({ tsdb });
    try {
      const backlog = async (): Promise<number> => {
        const res = await app.inject({ method: 'GET', url: '/api/stats' });
        const p = (res.json() as Array<{ metric: string; value: number }>).find((x) => x.metric === 'horae.store.transform_backlog_files');
        return p!.value;
      };
      expect(await backlog()).toBeGreaterThan(0);
      const deadline = Date.now() + 20_000;
      while ((await backlog()) > 0) {
        if (Date.now() > deadline) throw new Error(`migration stalled: ${JSON.stringify((await store.stats()).transformBacklog)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await (store as unknown as { idle(): Promise<void> }).idle();
      const live = dataFiles();
      expect(live.length).toBeGreaterThan(0);
      expect(live.filter((n) => oldNumbers.has(n))).toEqual([]);
      expect((await store.stats()).transformBacklog!.bytes).toBe(0);
      await expectModel(tsdb, model);
      // Each region's old files were all its files: one major compaction each, one cell a row.
      const q = await rowQualifiers(tsdb);
      expect(q.length).toBe(METRICS.length * HOSTS.length * 3);
      expect(q.every((r) => r.length === 1 && r[0]!.length === 18 && r[0]!.startsWith('0c'))).toBe(true);
    } finally {
      await app.close();
      await tsdb.close();
      await store.close();
    }
    // The mark is cleared and recorded: a restart starts no migration.
    const again = await openEmbeddedStore({ dir: '/db', fs, clock: () => clock.now, maintenanceIntervalMs: 0 });
    expect((again as unknown as { engine: { tables: Map<string, { transformFrom?: number }> } }).engine.tables.get(DATA_TABLE)!.transformFrom).toBeUndefined();
    expect((await again.stats()).transformBacklog).toEqual({ files: 0, bytes: 0 });
    const t2 = await Tsdb.open(again, { now: () => clock.now, background: false });
    await expectModel(t2, model);
    await t2.close();
    await again.close();
  });
});
