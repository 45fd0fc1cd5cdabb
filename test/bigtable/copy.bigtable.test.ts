/**
 * Migration between stores (tsdb/cli/copy.ts): a Tsdb written on the embedded store is
 * copied to Bigtable and back into a fresh embedded store; every copy answers the
 * conformance-style queries exactly as the source, and holds the same cells (every
 * version, same timestamps, same table specs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import { openEmbeddedStore } from '../../core/index.js';
import type { Store } from '../../core/api/store.js';
import { copyStore } from '../../tsdb/cli/copy.js';
import { runCopyCommand } from '../../tsdb/cli/copy-cmd.js';
import { runCli } from '../../tsdb/cli/run-cli.js';
import { buildServer } from '../../tsdb/server/build-server.js';
import { Tsdb } from '../../tsdb/tsdb.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

const emulator = useEmulator();

const T0 = 1704067200;

/** Every cell of every table, every version, as strings. */
async function dump(store: Store): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const name of await store.listTables()) {
    const t = await store.openTable(name);
    const lines: string[] = [JSON.stringify(t.spec, (_k, v) => (v instanceof Uint8Array ? toHex(v) : v))];
    for await (const b of t.scan({ maxVersions: 10 })) {
      for (const r of b) for (const c of r.cells) lines.push(`${toHex(r.key)} ${c.family}:${toHex(c.qualifier)}@${c.timestamp}=${toHex(c.value)}`);
    }
    out[name] = lines;
  }
  return out;
}

async function answers(store: Store): Promise<string[]> {
  const tsdb = await Tsdb.open(store, { background: false, now: () => (T0 + 86_400) * 1000 });
  const app = await buildServer({ tsdb });
  try {
    const out: string[] = [];
    for (const q of [
      { start: T0, end: T0 + 7200, queries: [{ metric: 'sys.cpu', aggregator: 'sum', downsample: '10m-avg' }] },
      { start: T0, end: T0 + 7200, queries: [{ metric: 'sys.cpu', aggregator: 'none', tags: { host: 'web*' } }] },
    ]) {
      const r = await app.inject({ method: 'POST', url: '/api/query', payload: q });
      expect(r.statusCode, r.body).toBe(200);
      out.push(r.body);
    }
    return out;
  } finally {
    await app.close();
    await tsdb.close();
  }
}

describe('copy between stores', () => {
  it('embedded → Bigtable → embedded keeps every cell, spec and answer', async () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'horae-copy-a-')), mkdtempSync(join(tmpdir(), 'horae-copy-b-'))];
    const stores: Store[] = [];
    try {
      const source = await openEmbeddedStore({ dir: dirs[0]! });
      stores.push(source);
      const tsdb = await Tsdb.open(source, { background: false, now: () => (T0 + 86_400) * 1000 });
      const points = [];
      for (let h = 0; h < 6; h++) for (let t = 0; t < 7200; t += 30) points.push({ metric: 'sys.cpu', timestamp: T0 + t, value: h * 100 + t / 30, isInt: true, tags: [['host', `web${h}`], ['dc', `dc${h % 2}`]] as [string, string][] });
      expect((await tsdb.ingest.write(points)).every((o) => o === undefined)).toBe(true);
      await tsdb.compactor.runOnce({ force: true, sweep: true });
      await tsdb.close();
      const want = await answers(source);
      const wantCells = await dump(source);

      const bigtable = await openTestStore(freshPrefix());
      stores.push(bigtable);
      const there = await copyStore(source, bigtable);
      expect(there.tables).toBe(Object.keys(wantCells).length);
      expect(await dump(bigtable)).toEqual(wantCells);
      expect(await answers(bigtable)).toEqual(want);

      const back = await openEmbeddedStore({ dir: dirs[1]! });
      stores.push(back);
      const again = await copyStore(bigtable, back);
      expect(again).toEqual(there);
      expect(await dump(back)).toEqual(wantCells);
      expect(await answers(back)).toEqual(want);
    } finally {
      for (const s of stores) await s.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('horae copy (command)', () => {
  it('horae copy: a data directory to a bigtable:// URL, counts reported; bad arguments refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'horae-copy-cmd-'));
    const prefix = freshPrefix();
    try {
      const source = await openEmbeddedStore({ dir });
      const t = await source.createTable({ name: 'things', families: [{ name: 'f', maxVersions: 2 }], splitPoints: [Uint8Array.of(0x80)] });
      await t.mutate([{ key: Uint8Array.of(1), mutations: [
        { type: 'put', family: 'f', qualifier: Uint8Array.of(0xbb), value: Uint8Array.of(1), timestamp: 5 },
        { type: 'put', family: 'f', qualifier: Uint8Array.of(0xbb), value: Uint8Array.of(2), timestamp: 6 },
      ] }]);
      await source.close();
      let out = '';
      const io = { stdout: { write: (s: string) => { out += s; return true; } }, stderr: { write: () => true } };
      const env = { BIGTABLE_EMULATOR_HOST: emulator().host };
      expect(await runCli(['copy', '--data-dir', dir, '--to', `bigtable://horae-test/test?prefix=${prefix}`], env, io)).toBe(0);
      expect(out).toContain('copied things: 1 rows, 2 cells');
      expect(out).toContain('copied 1 tables, 1 rows, 2 cells');
      const dest = await openTestStore(prefix);
      try {
        const copied = await dest.openTable('things');
        expect(copied.spec.splitPoints).toEqual([Uint8Array.of(0x80)]);
        const [row] = await copied.get([Uint8Array.of(1)], { maxVersions: 2 });
        expect(row!.cells.map((c) => [c.timestamp, c.value[0]])).toEqual([[6, 2], [5, 1]]);
      } finally {
        await dest.close();
      }
      await expect(runCopyCommand(['--data-dir', dir], env, io)).rejects.toThrow(/--to/);
      await expect(runCopyCommand(['--data-dir', dir, '--to', dir], env, io)).rejects.toThrow(/source/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
