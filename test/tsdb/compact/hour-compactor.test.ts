import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { toHex } from '../../../core/api/bytes.js';
import { HourCompactor, compactionOf, needsCompaction } from '../../../tsdb/compact/hour-compactor.js';
import { baseTimeOfKey } from '../../../tsdb/schema/row-key.js';
import { isHourCellQualifier } from '../../../tsdb/schema/qualifier.js';
import { DATA_FAMILY } from '../../../tsdb/tables.js';
import type { Store, Table } from '../../../core/api/store.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const HOUR_MS = 3_600_000;

async function cellsPerRow(tsdb: Tsdb): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  // A compressed cell's qualifier as `0c…` (its suffix is random).
  for await (const rows of tsdb.data.scan({})) for (const r of rows) out.set(toHex(r.key), r.cells.map((c) => (isHourCellQualifier(c.qualifier) ? '0c…' : toHex(c.qualifier))));
  return out;
}

/** `store` whose tables' writes (checkAndPut, mutate) wait a few ms first. */
function slowCheckAndPut(store: Store): Store {
  const slow = (t: Table): Table => new Proxy(t, {
    get(target, p, recv) {
      if (p === 'checkAndPut' || p === 'mutate') {
        return async (...args: unknown[]) => {
          await new Promise((r) => setTimeout(r, 5));
          return (target[p] as (...a: unknown[]) => Promise<unknown>)(...args);
        };
      }
      const v = Reflect.get(target, p, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return new Proxy(store, {
    get(target, p, recv) {
      if (p === 'createTable') return async (...args: Parameters<Store['createTable']>) => slow(await target.createTable(...args));
      if (p === 'openTable') return async (name: string) => slow(await target.openTable(name));
      const v = Reflect.get(target, p, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('HourCompactor', () => {
  it('rewrites a closed hour into one compressed cell and reads the same points', async () => {
    const { tsdb, clock } = await openFixture({}, (T0 + 100) * 1000);
    const pts = Array.from({ length: 360 }, (_, i) => pt('cpu', T0 + i * 10, Math.round(Math.sin(i) * 10000) / 100));
    await tsdb.ingest.write(pts);
    const before = await readSeries(tsdb, 'cpu', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 86400) * 1000);
    await tsdb.compactor.runOnce();
    // hour not closed yet: the write left one OpenTSDB compacted column of 360 2-byte qualifiers
    expect([...(await cellsPerRow(tsdb)).values()][0]!.map((q) => q.length / 2)).toEqual([720]);
    clock.now = T0 * 1000 + HOUR_MS + tsdb.config.compactGraceMs + tsdb.config.compactIdleMs;
    await tsdb.compactor.runOnce();
    expect([...(await cellsPerRow(tsdb)).values()]).toEqual([['0c…']]);
    expect(await readSeries(tsdb, 'cpu', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 86400) * 1000)).toEqual(before);
    expect(tsdb.compactor.stats()).toMatchObject({ rowsCompacted: 1, pointsCompacted: 360, pendingRows: 0 });
  });

  it('waits for an idle row, and merges late points into the compressed cell (last write wins)', async () => {
    const { tsdb, clock } = await openFixture({ compactGraceMs: 0, compactIdleMs: 5000 }, T0 * 1000 + 2 * HOUR_MS);
    await tsdb.ingest.write([pt('m', T0 + 1, 1), pt('m', T0 + 2, 2)]);
    await tsdb.compactor.runOnce();
    expect(tsdb.compactor.stats().rowsCompacted).toBe(0);
    clock.now += 5000;
    await tsdb.compactor.runOnce();
    expect([...(await cellsPerRow(tsdb)).values()]).toEqual([['0c…']]);
    clock.now += 1000;
    await tsdb.ingest.write([pt('m', T0 + 2, 20.5), pt('m', T0 + 3, 3)]);
    expect((await readSeries(tsdb, 'm', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 86400) * 1000)).map((p) => p.value)).toEqual([1, 20.5, 3]);
    clock.now += 5000;
    await tsdb.compactor.runOnce();
    expect([...(await cellsPerRow(tsdb)).values()]).toEqual([['0c…']]);
    expect((await readSeries(tsdb, 'm', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 86400) * 1000)).map((p) => [p.ts / 1000 - T0, p.value, p.isInt])).toEqual([[1, 1, true], [2, 20.5, false], [3, 3, true]]);
  });

  it('sweeps rows it was never told about (written before a restart)', async () => {
    const { tsdb, clock } = await openFixture({}, (T0 + 10) * 1000);
    await tsdb.ingest.write([pt('m', T0 + 1, 1), pt('m', T0 + 3601, 2)]);
    (tsdb.compactor as HourCompactor)['dirty'].clear(); // as after a restart
    clock.now = T0 * 1000 + 3 * HOUR_MS;
    await tsdb.compactor.runOnce({ sweep: true });
    const rows = [...(await cellsPerRow(tsdb)).values()];
    expect(rows).toEqual([['0c…'], ['0c…']]);
    expect((await readSeries(tsdb, 'm', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 86400) * 1000)).map((p) => p.value)).toEqual([1, 2]);
  });

  it('the sweep after a start reads only cells written before it; an explicit sweep reads all', async () => {
    const { tsdb, clock } = await openFixture({}, (T0 + 10) * 1000);
    await tsdb.ingest.write([pt('m', T0 + 1, 1), pt('m', T0 + 2, 2)]);
    // A second process on the same store, started later: the first one's row is its to sweep
    // (one writer), or to take over from the compaction ledger, the first one's beat being
    // hours old (where servers share the store: no sweep).
    clock.now = T0 * 1000 + 3 * HOUR_MS;
    const later = await Tsdb.open(tsdb.store, { now: () => clock.now, background: false });
    await later.ingest.write([pt('m', T0 + 3601, 3), pt('m', T0 + 3602, 4)]);
    (later.compactor as HourCompactor)['dirty'].clear(); // its own row untracked, as after a dirty-set overflow
    clock.now += 3 * HOUR_MS;
    await (later.compactor as HourCompactor).beat();
    await later.compactor.runOnce();
    const cells = () => cellsPerRow(later).then((m) => [...m.values()].map((qs) => qs.map((q) => (q === '0c…' ? 9 : q.length / 2))));
    // The automatic sweep compacted the row written before the start, not the later one.
    expect(await cells()).toEqual([[9], [4]]);
    await later.compactor.runOnce({ sweep: true });
    expect(await cells()).toEqual([[9], [9]]);
    expect((await readSeries(later, 'm', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 86400) * 1000)).map((p) => p.value)).toEqual([1, 2, 3, 4]);
  });

  it('owes no sweep on a store that was empty when opened; a store with rows is swept once (one writer)', async () => {
    const { tsdb, clock } = await openFixture({}, (T0 + 10) * 1000);
    const scans = (t: Tsdb) => {
      const spy = { n: 0 };
      const scan = t.data.scan.bind(t.data);
      t.data.scan = (spec) => {
        spy.n++;
        return scan(spec);
      };
      return spy;
    };
    const fresh = scans(tsdb);
    await tsdb.ingest.write([pt('m', T0 + 1, 1), pt('m', T0 + 2, 2)]);
    clock.now = T0 * 1000 + 3 * HOUR_MS;
    await tsdb.compactor.runOnce();
    expect(fresh.n).toBe(0);
    // Its own rows are tracked and compacted without a sweep.
    expect([...(await cellsPerRow(tsdb)).values()]).toEqual([['0c…']]);
    const later = await Tsdb.open(tsdb.store, { now: () => clock.now, background: false });
    const reopened = scans(later);
    await later.compactor.runOnce();
    await later.compactor.runOnce();
    // Where servers share the store, the compaction ledger says the table was swept (it was empty).
    expect(reopened.n).toBe(later.store.capabilities.singleWriter ? 1 : 0);
  });

  it('needsCompaction: only data cells other than a lone hour cell count', () => {
    const c = (q: number[]) => ({ family: 't', qualifier: Uint8Array.from(q), timestamp: 1, value: new Uint8Array(1) });
    expect(needsCompaction([c([0x0c])])).toBe(false);
    expect(needsCompaction([c([0x0c]), c([0x01, 0, 0])])).toBe(false); // + annotation
    expect(needsCompaction([c([0x00, 0x30])])).toBe(true);
    expect(needsCompaction([c([0x0c]), c([0x00, 0x30])])).toBe(true);
    expect(needsCompaction([])).toBe(false);
  });

  it('matches an in-memory model over random writes, rewrites and compactions', async () => {
    const seed = Number(process.env.TEST_SEED ?? 7);
    const rnd = new Random(seed);
    const { tsdb, clock } = await openFixture({ compactGraceMs: 0, compactIdleMs: 0 }, T0 * 1000);
    const model = new Map<string, Map<number, { value: number; isInt: boolean }>>();
    const hosts = ['a', 'b', 'c'];
    for (let step = 0; step < 60; step++) {
      clock.now += 1 + rnd.int(HOUR_MS / 2);
      const batch: IncomingPoint[] = [];
      const n = 1 + rnd.int(50);
      for (let i = 0; i < n; i++) {
        const host = hosts[rnd.int(hosts.length)]!;
        // ms or s timestamps anywhere in the last 6 hours, some colliding on purpose
        const ms = clock.now - rnd.int(6 * HOUR_MS);
        const tsMs = rnd.int(3) === 0 ? ms : Math.floor(ms / 1000) * 1000;
        const ts = tsMs % 1000 === 0 && rnd.int(2) === 0 ? tsMs / 1000 : tsMs;
        const isInt = rnd.int(2) === 0;
        const value = isInt ? rnd.int(2000) - 1000 : rnd.int(100000) / 100;
        batch.push(pt('m', ts, value, { host }, isInt));
        const m = model.get(host) ?? new Map();
        model.set(host, m);
        m.set(tsMs, { value, isInt });
      }
      const out = await tsdb.ingest.write(batch);
      expect(out.every((o) => o === undefined)).toBe(true);
      if (rnd.int(4) === 0) await tsdb.compactor.runOnce({ sweep: rnd.int(2) === 0 });
    }
    await tsdb.compactor.runOnce({ force: true, sweep: true });
    for (const host of hosts) {
      const want = [...(model.get(host) ?? new Map()).entries()].sort((x, y) => x[0] - y[0]).map(([ts, v]) => ({ ts, value: v.value, isInt: v.isInt }));
      const got = await readSeries(tsdb, 'm', { host }, (T0 - 86400) * 1000, (T0 + 86400) * 1000);
      expect(got, `seed ${seed} host ${host}`).toEqual(want);
    }
    expect(tsdb.compactor.stats().rowsCompacted).toBeGreaterThan(0);
  });

  it('two compactors racing each other and a writer lose nothing and write back nothing deleted', async () => {
    const seed = Number(process.env.TEST_SEED ?? 11);
    const rnd = new Random(seed);
    const { tsdb, clock } = await openFixture({ compactGraceMs: 0, compactIdleMs: 0 }, T0 * 1000);
    // Two more servers on the store, whose compactors' writes wait a moment, so both read the
    // same rows before either writes; `tsdb` is the writer.
    const config = { compactGraceMs: 0, compactIdleMs: 0 };
    const one = await Tsdb.open(slowCheckAndPut(tsdb.store), { config, now: () => clock.now, background: false });
    const other = await Tsdb.open(slowCheckAndPut(tsdb.store), { config, now: () => clock.now, background: false });
    const model = new Map<number, number>();
    let deleted = 0;
    for (let step = 0; step < 25; step++) {
      clock.now += 1 + rnd.int(HOUR_MS / 3);
      // Single points (one cell each, its qualifier the point's), often rewriting a point:
      // 20 timestamps in each of the last 4 hours.
      const hourNow = Math.floor(clock.now / HOUR_MS) * HOUR_MS;
      const writes: Array<Promise<unknown>> = [];
      const seen = new Set<number>(); // a timestamp once per step: the writes land in any order
      for (let i = 0; i < 1 + rnd.int(30); i++) {
        const ts = (hourNow - rnd.int(4) * HOUR_MS) / 1000 + rnd.int(20) * 10;
        if (seen.has(ts)) continue;
        seen.add(ts);
        const value = rnd.int(1000);
        model.set(ts * 1000, value);
        writes.push(new Promise((r) => setTimeout(r, rnd.int(8))).then(() => tsdb.ingest.write([pt('m', ts, value)])));
      }
      // Both compactors over the whole table, and the writer, all at once.
      await Promise.all([
        one.compactor.runOnce({ force: true, sweep: true }),
        other.compactor.runOnce({ force: true, sweep: true }),
        ...writes,
      ]);
      if (rnd.int(5) === 0) {
        // A delete of one closed hour racing both compactors: nothing of it may come back.
        const hour = Math.floor((clock.now - HOUR_MS - rnd.int(3 * HOUR_MS)) / HOUR_MS) * HOUR_MS;
        const rows = (await cellsPerRow(tsdb)).size;
        await Promise.all([
          one.compactor.runOnce({ force: true, sweep: true }),
          other.compactor.runOnce({ force: true, sweep: true }),
          (async () => {
            for await (const batchRows of tsdb.data.scan({})) {
              for (const r of batchRows) {
                if (baseTimeOfKey(tsdb.widths, r.key) * 1000 !== hour) continue;
                await tsdb.data.mutate([{ key: r.key, mutations: [{ type: 'deleteRow' }] }]);
                for (const t of [...model.keys()]) if (t >= hour && t < hour + HOUR_MS) model.delete(t);
                deleted++;
              }
            }
          })(),
        ]);
        expect((await cellsPerRow(tsdb)).size).toBeLessThanOrEqual(rows);
      }
    }
    await one.compactor.runOnce({ force: true, sweep: true });
    await other.compactor.runOnce({ force: true, sweep: true });
    const want = [...model.entries()].sort((x, y) => x[0] - y[0]).map(([ts, value]) => ({ ts, value, isInt: true }));
    expect(await readSeries(tsdb, 'm', { host: 'a' }, (T0 - 86400) * 1000, (T0 + 5 * 86400) * 1000), `seed ${seed}`).toEqual(want);
    const a = one.compactor.stats();
    const b = other.compactor.stats();
    expect(a.rowsCompacted + b.rowsCompacted).toBeGreaterThan(0);
    expect((a.racesLost ?? 0) + (b.racesLost ?? 0), 'the compactors raced').toBeGreaterThan(0);
    expect(deleted).toBeGreaterThan(0);
    await one.close();
    await other.close();
  });

  it('does not write back a row deleted between its read and its write', async () => {
    const { tsdb } = await openFixture({}, T0 * 1000);
    await tsdb.ingest.write([pt('cpu', T0, 1), pt('cpu', T0 + 10, 2)]);
    const [key] = [...(await cellsPerRow(tsdb)).keys()];
    const [row] = await tsdb.data.get([Buffer.from(key!, 'hex')]);
    const c = compactionOf(row!.cells);
    await tsdb.data.mutate([{ key: row!.key, mutations: [{ type: 'deleteRow' }] }]);
    const ref = { family: DATA_FAMILY, qualifier: c.check.qualifier };
    expect(await tsdb.data.checkAndPut(row!.key, ref, c.check.value, c.mutations)).toBe(false);
    expect((await cellsPerRow(tsdb)).size).toBe(0);
  });

  it('keeps a point rewritten between its read and its write (deletes reach only the versions read)', async () => {
    const { tsdb, clock } = await openFixture({}, T0 * 1000);
    await tsdb.ingest.write([pt('cpu', T0, 1)]); // cell 0000 (offset 0)
    clock.now += 1;
    await tsdb.ingest.write([pt('cpu', T0 + 10, 2)]); // cell 00a0, the newest: the check
    const [key] = [...(await cellsPerRow(tsdb)).keys()];
    const [row] = await tsdb.data.get([Buffer.from(key!, 'hex')]);
    const c = compactionOf(row!.cells);
    clock.now += 1;
    await tsdb.ingest.write([pt('cpu', T0, 5)]); // rewrites cell 0000 after the read
    const ref = { family: DATA_FAMILY, qualifier: c.check.qualifier };
    expect(await tsdb.data.checkAndPut(row!.key, ref, c.check.value, c.mutations)).toBe(true);
    const got = await readSeries(tsdb, 'cpu', { host: 'a' }, T0 * 1000, (T0 + 3600) * 1000);
    expect(got.map((p) => [p.ts / 1000 - T0, p.value])).toEqual([[0, 5], [10, 2]]);
  });
});

describe('HourCompactor past a full dirty set', () => {
  it('compacts the rows it had no room for by their (metric, hour) ranges, never scanning the whole table', async () => {
    // The smallest catalog budget: a dirty set of a few rows for 3 metrics × 60 hosts × 2 hours.
    const { tsdb, clock } = await openFixture({ saltBuckets: 4, catalogMemoryBytes: 16 * 1024 }, (T0 + 100) * 1000);
    const scans: Array<{ start?: Uint8Array; end?: Uint8Array } | undefined> = [];
    const scan = tsdb.data.scan.bind(tsdb.data);
    tsdb.data.scan = (spec) => {
      scans.push(spec);
      return scan(spec);
    };
    for (const hour of [0, 1]) {
      clock.now = (T0 + hour * 3600 + 100) * 1000;
      const pts: IncomingPoint[] = [];
      for (const m of ['a', 'b', 'c']) for (let h = 0; h < 60; h++) for (let t = 0; t < 3; t++) pts.push(pt(m, T0 + hour * 3600 + t * 60, h + t, { host: `h${h}` }));
      await tsdb.ingest.write(pts);
    }
    const s = tsdb.compactor.stats();
    expect(s.dirtyOverflows).toBeGreaterThan(300);
    expect(s.dirtyBytes).toBeLessThanOrEqual(tsdb.catalog.memory.share('dirtyRows'));
    // Where servers share the store the pairs are in the compaction ledger, else remembered here.
    const shared = s.ledgerPairs !== undefined;
    expect(shared ? s.ledgerPairs : s.overflowPairs).toBe(6);
    clock.now = T0 * 1000 + 2 * HOUR_MS + tsdb.config.compactGraceMs + tsdb.config.compactIdleMs;
    await tsdb.compactor.runOnce();
    expect(scans.length).toBeGreaterThan(0);
    for (const spec of scans) expect(spec?.start !== undefined && spec.end !== undefined, 'a key-range scan').toBe(true);
    expect(tsdb.compactor.stats()).toMatchObject({ ...(shared ? { ledgerPairs: 0 } : { overflowPairs: 0 }), rangesCompacted: 6, pendingRows: 0 });
    const rows = [...(await cellsPerRow(tsdb)).values()];
    expect(rows).toHaveLength(360);
    expect(rows.every((cells) => cells.length === 1 && cells[0] === '0c…')).toBe(true);
    await tsdb.close();
  });
});
