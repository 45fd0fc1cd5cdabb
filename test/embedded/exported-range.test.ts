/**
 * Table.exportRange + readExportedRange (core/lsm/exported-range.ts): a range exported
 * and read back (after a structured clone, as a worker gets it) gives exactly the rows a
 * scan of the same spec gives: memstore entries and several overlapping files merged,
 * versions, delete markers, TTL, every filter kind, families, maxVersions, borrowed
 * values. Ranges over several regions (and reverse or limited scans) are not exported,
 * and an export keeps what it saw when the table changes afterwards.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import type { ExportedRange, Mutation, Row, RowFilter, RowMutation, ScanSpec, Store, Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedStoreExtras } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { readExportedRange } from '../../core/index.js';
import { Random } from '../../core/util/random.js';

type EmbeddedStore = Store & EmbeddedStoreExtras;

const SPLITS = [utf8('k3'), utf8('k6')];

async function withTable(fn: (t: Table, clock: { now: number }) => Promise<void>): Promise<void> {
  const clock = { now: 1_000_000 };
  const store: EmbeddedStore = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0, clock: () => clock.now });
  try {
    const t = await store.createTable({ name: 't', families: [{ name: 'f', maxVersions: 3 }, { name: 'g', ttlMs: 5_000 }], splitPoints: SPLITS });
    await fn(t, clock);
  } finally {
    await store.close();
  }
}

async function scanAll(t: Table, spec: ScanSpec): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of t.scan(spec)) out.push(...batch);
  return out;
}

function readAll(x: ExportedRange): Row[] {
  const out: Row[] = [];
  readExportedRange(structuredClone(x), (row) => out.push(row));
  return out;
}

/** Rows as plain, comparable data (hex keys, qualifiers and values). */
function plain(rows: readonly Row[]): unknown[] {
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  return rows.map((r) => [hex(r.key), r.cells.map((c) => [c.family, hex(c.qualifier), c.timestamp, hex(c.value)])]);
}

const key = (r: Random): string => `k${r.int(9)}${r.int(4)}`;
const qual = (r: Random): Uint8Array => utf8(`q${r.int(4)}`);

function randomMutations(r: Random, clock: number): RowMutation[] {
  const rows: RowMutation[] = [];
  for (let i = 0; i < 30; i++) {
    const mutations: Mutation[] = [];
    for (let j = 0; j <= r.int(3); j++) {
      const family = r.chance(0.5) ? 'f' : 'g';
      const roll = r.int(20);
      const ts = clock - r.int(8_000);
      if (roll < 14) mutations.push({ type: 'put', family, qualifier: qual(r), value: utf8(`v${r.int(1000)}`), timestamp: ts });
      else if (roll < 16) mutations.push({ type: 'deleteCell', family, qualifier: qual(r), upTo: ts });
      else if (roll < 17) mutations.push({ type: 'deleteVersion', family, qualifier: qual(r), timestamp: ts });
      else if (roll < 18) mutations.push({ type: 'deleteFamily', family, upTo: ts });
      else if (roll < 19) mutations.push({ type: 'deleteRow', upTo: ts });
      else mutations.push({ type: 'deleteRow' });
    }
    rows.push({ key: utf8(key(r)), mutations });
  }
  return rows;
}

function randomFilter(r: Random): RowFilter | undefined {
  switch (r.int(7)) {
    case 0: return { kind: 'keyRegex', pattern: `k[0-9][${r.int(4)}-3]` };
    case 1: return { kind: 'prefix', prefix: utf8(`k${r.int(9)}`) };
    case 2: return { kind: 'fuzzyKey', rules: [{ template: utf8(`k0${r.int(4)}`), mask: Uint8Array.from([1, 0, 1]) }] };
    case 3: return { kind: 'qualifierRange', family: 'f', start: utf8('q1'), end: utf8('q3') };
    case 4: return { kind: 'timeRange', range: { start: 1_000_000 - 6_000, end: 1_000_000 - 1_000 } };
    case 5: return { kind: 'and', filters: [{ kind: 'keyRegex', pattern: 'k[0-5].' }, { kind: 'qualifierRange', family: 'g', start: utf8('q2') }] };
    default: return undefined;
  }
}

/** A range inside one region (rows kAB, regions split at k3 and k6). */
function randomRange(r: Random): { start?: Uint8Array; end?: Uint8Array } {
  const region = r.int(3);
  const lo = [0, 3, 6][region]!;
  const a = lo + r.int(3);
  const b = Math.min(lo + 3, a + 1 + r.int(3));
  return {
    ...(region === 0 && r.chance(0.3) ? {} : { start: utf8(`k${a}${r.chance(0.5) ? r.int(4) : ''}`) }),
    ...(region === 2 && r.chance(0.3) ? {} : { end: utf8(b === lo + 3 && region < 2 ? `k${b}` : `k${b}${r.int(4)}`) }),
  };
}

describe('exported ranges', () => {
  it('read back exactly what a scan of the same spec returns (randomized)', async () => {
    let exported = 0;
    let rowsCompared = 0;
    for (let seed = 1; seed <= 12; seed++) {
      await withTable(async (t, clock) => {
        const r = new Random(20261127 + seed);
        for (let round = 0; round < 4; round++) {
          await t.mutate(randomMutations(r, clock.now));
          // Files with delete markers, overlapping files, compacted ones, and in the last
          // rounds memstore entries over all of them.
          if (round < 2 || seed % 2 === 0) await t.flush();
          if (round === 1 && seed % 3 === 0) await t.compact({ major: seed % 2 === 0 });
        }
        clock.now += r.int(3_000); // some g cells expire
        for (let q = 0; q < 25; q++) {
          const filter = randomFilter(r);
          const spec: ScanSpec = {
            ...randomRange(r),
            ...(filter === undefined ? {} : { filter }),
            ...(r.chance(0.3) ? { families: [r.chance(0.5) ? 'f' : 'g'] } : {}),
            ...(r.chance(0.3) ? { maxVersions: 1 + r.int(3) } : {}),
            ...(r.chance(0.5) ? { borrowValues: true } : {}),
            batchRows: 1 + r.int(5),
          };
          const x = await t.exportRange!(spec);
          if (x === undefined) continue;
          exported++;
          const want = await scanAll(t, spec);
          expect(plain(readAll(x)), `seed ${seed} query ${q}`).toEqual(plain(want));
          rowsCompared += want.length;
        }
      });
    }
    expect(exported).toBeGreaterThan(200);
    expect(rowsCompared).toBeGreaterThan(500);
  });

  it('hold only the sources of their range, and are not made over several regions', async () => {
    await withTable(async (t) => {
      const put = (k: string, v: string): RowMutation => ({ key: utf8(k), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(v) }] });
      const keys = (x: ExportedRange | undefined): string[] => readAll(x!).map((row) => Buffer.from(row.key).toString());
      const inK0 = { start: utf8('k0'), end: utf8('k3') };
      expect(await t.exportRange!(inK0)).toMatchObject({ runs: [] }); // nothing at all
      await t.mutate([put('k11', 'a'), put('k41', 'b')]);
      expect((await t.exportRange!(inK0))!.runs.length).toBe(1); // the memstore
      expect(keys(await t.exportRange!(inK0))).toEqual(['k11']);
      await t.flush();
      await t.mutate([put('k12', 'c'), put('k01', 'x')]);
      await t.flush();
      await t.mutate([put('k11', 'a2'), put('k29', 'd')]);
      // Two files and the memstore, merged; the newer version of k11 wins.
      expect((await t.exportRange!(inK0))!.runs.length).toBe(3);
      expect(readAll((await t.exportRange!(inK0))!).map((row) => Buffer.from(row.cells[0]!.value).toString())).toEqual(['x', 'a2', 'c', 'd']);
      // Sources outside the range are left out: the file of k01 and k11, and the memstore's k29.
      expect((await t.exportRange!({ start: utf8('k12'), end: utf8('k2') }))!.runs.length).toBe(1);
      expect(await t.exportRange!({ start: utf8('k0'), end: utf8('k5') })).toBeUndefined(); // two regions
      expect(await t.exportRange!({ ...inK0, reverse: true })).toBeUndefined();
      expect(await t.exportRange!({ ...inK0, limit: 5 })).toBeUndefined();
      await expect(t.exportRange!({ start: utf8('k2'), end: utf8('k1') })).rejects.toThrow(RangeError);
    });
  });

  it('keep what they saw when the table changes afterwards', async () => {
    await withTable(async (t) => {
      const rows = Array.from({ length: 200 }, (_, i) => ({ key: utf8(`k1${String(i).padStart(4, '0')}`), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`.repeat(20)) }] }));
      await t.mutate(rows);
      await t.flush();
      const spec: ScanSpec = { start: utf8('k1'), end: utf8('k2'), borrowValues: true };
      const want = plain(await scanAll(t, spec));
      const x = (await t.exportRange!(spec))!;
      expect(x.runs.length).toBe(1);
      expect(x.runs[0]!.blocks.length).toBeGreaterThan(1);
      await t.mutate(rows.slice(0, 50).map((row) => ({ key: row.key, mutations: [{ type: 'deleteRow' as const }] })));
      await t.flush();
      await t.compact({ major: true });
      expect((await scanAll(t, spec)).length).toBe(150);
      expect(plain(readAll(x))).toEqual(want);
    });
  });

  it('hold a memstore being flushed', async () => {
    await withTable(async (t) => {
      const rows = Array.from({ length: 300 }, (_, i) => ({ key: utf8(`k1${String(i).padStart(4, '0')}`), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`) }] }));
      const spec: ScanSpec = { start: utf8('k1'), end: utf8('k2') };
      let seen = 0;
      for (let round = 0; round < 5; round++) {
        await t.mutate(rows.map((r) => ({ ...r, mutations: [{ ...r.mutations[0]!, value: utf8(`r${round}`) }] })));
        // The export starts while the flush has the memstore as an immutable one.
        const flushing = t.flush();
        const x = (await t.exportRange!(spec))!;
        await flushing;
        const got = readAll(x);
        expect(got.length).toBe(300);
        expect(new Set(got.map((row) => Buffer.from(row.cells[0]!.value).toString()))).toEqual(new Set([`r${round}`]));
        seen += got.length;
      }
      expect(seen).toBe(1500);
    });
  });

  it('reject what is not an export', () => {
    expect(() => readExportedRange({ format: 'nope' } as unknown as ExportedRange, () => undefined)).toThrow(/not an exported range/);
  });
});
