/**
 * The row-transform hook (core/api/row-transform.ts, core/lsm/row-transformer.ts): a
 * family's cells rewritten on their way to disk, inline and on the job worker; kept as
 * they are when nothing is registered; deletes and held snapshots respected; whole files
 * of expired rows dropped.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedOptions } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { registerRowTransform, unregisterRowTransform } from '../../core/api/row-transform.js';
import type { Row, Store } from '../../core/api/store.js';
import { mergeTransform } from '../helpers/merge-transform.js';

const NAME = 'test.merge';
const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');
const cellsOf = (row: Row | undefined): string[] => (row?.cells ?? []).map((c) => `${c.family}:${text(c.qualifier)}=${text(c.value)}@${c.timestamp}`);

let expiredBefore: number | undefined;
function register(withFactory: boolean): void {
  registerRowTransform(NAME, {
    module: new URL('../helpers/merge-transform.ts', import.meta.url).href,
    exportName: 'mergeTransform',
    ...(withFactory ? { factory: mergeTransform } : {}),
    options: () => ({ expiredBefore }),
    expiredBefore: () => expiredBefore,
  });
}

const dirs: string[] = [];
afterEach(async () => {
  unregisterRowTransform(NAME);
  expiredBefore = undefined;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function open(kind: 'mem' | 'node', extra: Partial<EmbeddedOptions> = {}): Promise<Store> {
  if (kind === 'mem') return openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0, ...extra });
  const dir = await mkdtemp(join(tmpdir(), 'horae-transform-'));
  dirs.push(dir);
  return openEmbeddedStore({ dir, backgroundThreads: 1, maintenanceIntervalMs: 0, ...extra });
}

async function writeRow(store: Store, key: string, cells: Array<[string, string, number]>): Promise<void> {
  const t = await store.openTable('t');
  await t.mutate([{ key: enc(key), mutations: cells.map(([q, v, ts]) => ({ type: 'put' as const, family: 'x', qualifier: enc(q), value: enc(v), timestamp: ts })) }]);
}

describe('row transforms', () => {
  for (const kind of ['mem', 'node'] as const) {
    it(`rewrite a family's cells at flush and fold them at compaction (${kind === 'mem' ? 'inline' : 'worker thread'})`, async () => {
      register(kind === 'mem');
      const store = await open(kind);
      const t = await store.createTable({ name: 't', families: [{ name: 'x', transform: NAME }, { name: 'y' }] });
      await writeRow(store, 'r1', [['a', '1', 10], ['b', '2', 20]]);
      await t.mutate([{ key: enc('r1'), mutations: [{ type: 'put', family: 'y', qualifier: enc('k'), value: enc('v'), timestamp: 5 }] }]);
      await t.flush();
      expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:m=a=1;b=2;@20', 'y:k=v@5']);
      await writeRow(store, 'r1', [['c', '3', 30]]);
      await t.flush();
      // Two transformed cells of one name: the newer version is the one read.
      expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:m=c=3;@30', 'y:k=v@5']);
      await t.compact({ major: true });
      expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:m=c=3;@30', 'y:k=v@5']);
      await store.close();
    });
  }

  it('named on an existing family by setFamilyTransform: applied from then on, recorded across a restart, removable', async () => {
    register(true);
    const fs = new MemFileSystem();
    // No background migration: the old file is rewritten when this test compacts it
    // (this transform names every output `m`, so its outputs of two files hide each other).
    const opts = { dir: '/db', fs, maintenanceIntervalMs: 0, transformMigrationBytesPerSec: 0 };
    let store = await openEmbeddedStore(opts);
    const t = await store.createTable({ name: 't', families: [{ name: 'x' }, { name: 'y' }] });
    await writeRow(store, 'r1', [['a', '1', 10], ['b', '2', 20]]);
    await t.flush();
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:a=1@10', 'x:b=2@20']);
    const named = await store.setFamilyTransform('t', 'x', NAME);
    expect(named.spec.families).toEqual([{ name: 'x', transform: NAME }, { name: 'y' }]);
    expect(t.spec.families[0]!.transform).toBe(NAME);
    await writeRow(store, 'r1', [['c', '3', 30]]);
    await t.flush();
    // The new flush is transformed; the old file waits for a compaction.
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:a=1@10', 'x:b=2@20', 'x:m=c=3;@30']);
    await t.compact({ major: true });
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:m=a=1;b=2;c=3;@30']);
    await store.close();
    store = await openEmbeddedStore(opts);
    const again = await store.openTable('t');
    expect(again.spec.families).toEqual([{ name: 'x', transform: NAME }, { name: 'y' }]);
    await store.setFamilyTransform('t', 'x', undefined);
    await store.close();
    store = await openEmbeddedStore(opts);
    expect((await store.openTable('t')).spec.families).toEqual([{ name: 'x' }, { name: 'y' }]);
    await store.close();
  });

  it('keep cells as they are when the transform is not registered, or cannot be loaded', async () => {
    const store = await open('mem');
    const t = await store.createTable({ name: 't', families: [{ name: 'x', transform: NAME }] });
    await writeRow(store, 'r1', [['a', '1', 10], ['b', '2', 20]]);
    await t.flush();
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:a=1@10', 'x:b=2@20']);
    registerRowTransform(NAME, { module: 'file:///nonexistent/transform.js', exportName: 'nope' });
    await writeRow(store, 'r2', [['a', '1', 10]]);
    await t.flush();
    await t.compact({ major: true });
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:a=1@10', 'x:b=2@20']);
    expect(cellsOf((await t.get([enc('r2')]))[0])).toEqual(['x:a=1@10']);
    await store.close();
  });

  it('hand the transform only live cells, and keep markers that older files need', async () => {
    register(true);
    const store = await open('mem');
    const t = await store.createTable({ name: 't', families: [{ name: 'x', transform: NAME }] });
    await writeRow(store, 'r1', [['old', '0', 5]]);
    await t.flush(); // file 1: m = old=0;
    await writeRow(store, 'r1', [['a', '1', 10], ['b', '2', 20]]);
    await t.mutate([{ key: enc('r1'), mutations: [{ type: 'deleteCell', family: 'x', qualifier: enc('a') }] }]);
    await t.mutate([{ key: enc('r2'), mutations: [{ type: 'put', family: 'x', qualifier: enc('z'), value: enc('9'), timestamp: 7 }] }]);
    await t.mutate([{ key: enc('r2'), mutations: [{ type: 'deleteRow' }] }]);
    await t.flush(); // file 2: m = b=2; (a deleted in the memstore), r2's marker kept
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:m=b=2;@20']);
    expect((await t.get([enc('r2')]))[0]).toBeUndefined();
    await t.compact({ major: true });
    expect(cellsOf((await t.get([enc('r1')]))[0])).toEqual(['x:m=b=2;@20']);
    expect((await t.get([enc('r2')]))[0]).toBeUndefined();
    await store.close();
  });

  it('leave entries newer than a held snapshot as they are, so a scan in progress sees what it saw', async () => {
    register(true);
    const store = await open('mem');
    const t = await store.createTable({ name: 't', families: [{ name: 'x', transform: NAME }], splitPoints: [enc('m')] });
    await writeRow(store, 'a1', [['q', '1', 10]]);
    await writeRow(store, 'z1', [['q', '1', 10]]);
    const it = t.scan({ batchRows: 1 })[Symbol.asyncIterator]();
    const first = await it.next(); // holds its snapshot: a scan over two regions
    await writeRow(store, 'z1', [['r', '2', 20]]);
    await t.flush();
    await t.compact({ major: true });
    const rest: Row[] = [];
    for (let n = await it.next(); !n.done; n = await it.next()) rest.push(...n.value);
    expect(cellsOf(first.value![0])).toEqual(['x:q=1@10']);
    expect(rest.map(cellsOf)).toEqual([['x:m=q=1;@10']]);
    expect(cellsOf((await t.get([enc('z1')]))[0])).toEqual(['x:m=q=1;@10', 'x:r=2@20']);
    await t.compact({ major: true }); // the snapshot is gone: now folded
    expect(cellsOf((await t.get([enc('z1')]))[0])).toEqual(['x:m=q=1;r=2;@20']);
    await store.close();
  });

  it('drop whole files whose rows have all expired, and the rest at compaction', async () => {
    register(true);
    const store = await open('mem', { compactionMinFiles: 10, maintenanceIntervalMs: 10 });
    const t = await store.createTable({ name: 't', families: [{ name: 'x', transform: NAME }] });
    const big = 'v'.repeat(2000);
    for (const first of [1, 2, 3]) {
      for (let i = 0; i < 20; i++) await writeRow(store, `${String.fromCharCode(first)}${i}`, [['q', big, 10]]);
      await t.flush();
    }
    const before = await store.stats();
    expect(before.files).toBe(3);
    expiredBefore = 3; // rows whose first byte is 1 or 2
    // No compaction is due (compactionMinFiles 10): the maintenance pass drops the files.
    // (A deadline, not a count of 10 ms sleeps: 2 s ran out once under a loaded 2-core machine.)
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && (await store.stats()).files > 1; ) await new Promise((r) => setTimeout(r, 10));
    const after = await store.stats();
    expect(after.compactionsDone).toBe(0);
    expect(after.files).toBe(1);
    expect(after.fileBytes).toBeLessThan(before.fileBytes / 2);
    let rows = 0;
    for await (const b of t.scan()) rows += b.length;
    expect(rows).toBe(20);
    await store.close();
  });
});
