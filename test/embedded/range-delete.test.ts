/**
 * The embedded store's range deletes (core/lsm/range-deletes.ts): one tombstone in the
 * manifest, no marker per row or cell; files inside the range dropped at once; the rest
 * rewritten away by compactions, after which the tombstone leaves the manifest; a scan
 * that started before the delete still sees what its snapshot saw; rows left only in the
 * WAL stay deleted after a crash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/index.js';
import type { EmbeddedOptions, Row, Table } from '../../core/index.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { readManifest } from '../../core/lsm/manifest.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { registerRowTransform, unregisterRowTransform } from '../../core/api/row-transform.js';
import { mergeTransform } from '../helpers/merge-transform.js';

const OPTS: Partial<EmbeddedOptions> = { compactionMinFiles: 1000, maintenanceIntervalMs: 0, blockSizeBytes: 1024 };
const key = (p: string, i: number): Uint8Array => utf8(`${p}${String(i).padStart(5, '0')}`);
let dir = '';
afterEach(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

async function fill(t: Table, prefix: string, n: number): Promise<void> {
  await t.mutate(Array.from({ length: n }, (_, i) => ({ key: key(prefix, i), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: new Uint8Array(64).fill(i & 255) }] })));
}

async function keysOf(t: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const rows of t.scan()) for (const r of rows) out.push(fromUtf8(r.key));
  return out;
}

const tombstones = async (): Promise<number> => ((await readManifest(new NodeFileSystem(), dir))!.tables.find((x) => x.name === 't')!.rangeDeletes ?? []).length;

describe('embedded range deletes', () => {
  it('drops files inside the range at once, the rest at compaction; then the tombstone goes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'horae-rdel-'));
    const store = await openEmbeddedStore({ dir, ...OPTS });
    try {
      const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
      // Files: "a" alone, "b" alone (inside the range), "c" alone, then one file mixing "b" and "c".
      for (const p of ['a', 'b', 'c']) {
        await fill(t, p, 500);
        await t.flush();
      }
      await t.mutate([{ key: key('b', 9999), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('mixed') }] },
        { key: key('c', 9999), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('mixed') }] }]);
      await t.flush();
      const before = await store.stats();
      expect(before.files).toBe(4);
      await t.deleteRange({ start: utf8('b'), end: utf8('c') });
      const after = await store.stats();
      expect(after.files).toBe(3);
      expect(after.fileBytes).toBeLessThan(before.fileBytes * 0.75);
      expect(await tombstones()).toBe(1);
      const left = await keysOf(t);
      expect(left.filter((k) => k.startsWith('b'))).toEqual([]);
      expect(left).toHaveLength(1001);

      await t.compact({ major: true });
      expect((await t.regions())[0]!.stats.files).toBe(1);
      expect(await tombstones()).toBe(0);
      expect(await keysOf(t)).toEqual(left);
    } finally {
      await store.close();
    }
  });

  it('a scan that started before the delete sees its snapshot, across regions and a compaction', async () => {
    dir = mkdtempSync(join(tmpdir(), 'horae-rdel-'));
    const store = await openEmbeddedStore({ dir, ...OPTS });
    try {
      const t = await store.createTable({ name: 't', families: [{ name: 'f' }], splitPoints: [utf8('b'), utf8('c')] });
      for (const p of ['a', 'b', 'c']) await fill(t, p, 300);
      await t.flush();
      const seen: string[] = [];
      const it = t.scan({ batchRows: 100 })[Symbol.asyncIterator]();
      const first = await it.next();
      for (const r of first.value as Row[]) seen.push(fromUtf8(r.key));
      await t.deleteRange({ start: utf8('a00200'), end: utf8('c00100') });
      await t.compact({ major: true });
      for (let r = await it.next(); r.done !== true; r = await it.next()) for (const row of r.value) seen.push(fromUtf8(row.key));
      expect(seen).toHaveLength(900);
      const now = await keysOf(t);
      expect(now).toHaveLength(900 - 100 - 300 - 100);
      expect(now[199]).toBe('a00199');
      expect(now[200]).toBe('c00100');
    } finally {
      await store.close();
    }
  });

  it('rows left only in the log stay deleted after a crash', async () => {
    dir = mkdtempSync(join(tmpdir(), 'horae-rdel-'));
    const store = await openEmbeddedStore({ dir, ...OPTS, flushOnClose: false });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    await fill(t, 'a', 100);
    await fill(t, 'b', 100);
    await t.deleteRange({ start: utf8('b'), end: new Uint8Array(0) });
    await fill(t, 'b', 10);
    await store.close();
    const again = await openEmbeddedStore({ dir, ...OPTS });
    try {
      const keys = await keysOf(await again.openTable('t'));
      expect(keys).toHaveLength(110);
      expect(keys.at(-1)).toBe('b00009');
      expect((await again.stats()).walReplay?.records).toBeGreaterThan(0);
    } finally {
      await again.close();
    }
  });

  it('a row transform never merges deleted cells into a newer one (flush and compaction)', async () => {
    registerRowTransform('test.merge.rdel', { module: new URL('../helpers/merge-transform.ts', import.meta.url).href, exportName: 'mergeTransform', factory: mergeTransform });
    try {
      const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0 });
      const t = await store.createTable({ name: 't', families: [{ name: 'x', transform: 'test.merge.rdel' }] });
      const put = (q: string, v: string, ts: number) => t.mutate([{ key: utf8('r1'), mutations: [{ type: 'put', family: 'x', qualifier: utf8(q), value: utf8(v), timestamp: ts }] }]);
      await put('a', 'old', 10);
      await t.deleteRange({ start: utf8('r'), end: utf8('s') });
      await put('b', 'new', 20);
      await t.flush();
      await t.compact({ major: true });
      const [row] = await t.get([utf8('r1')]);
      expect(row?.cells.map((c) => `${fromUtf8(c.qualifier)}=${fromUtf8(c.value)}`)).toEqual(['m=b=new;']);
      await store.close();
    } finally {
      unregisterRowTransform('test.merge.rdel');
    }
  });
});
