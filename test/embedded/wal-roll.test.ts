/**
 * A quiet store does not keep a dead WAL: after an explicit flush of everything, the log
 * that held the flushed writes is replaced by a fresh one and deleted, and the data is
 * all there after a crash and a reopen (it is in the files the manifest records).
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';

async function walBytes(fs: MemFileSystem): Promise<number> {
  let n = 0;
  for (const name of await fs.list('/db')) if (name.endsWith('.log')) n += await fs.size(`/db/${name}`);
  return n;
}

describe('WAL roll on a quiet flush', () => {
  it('deletes the flushed log and keeps every row', async () => {
    const fs = new MemFileSystem();
    const store = await openEmbeddedStore({ dir: '/db', fs });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    // A second, rarely written table: its small memstore must not pin the big log.
    const small = await store.createTable({ name: 'small', families: [{ name: 'f' }] });
    await small.mutate([{ key: utf8('one'), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('1') }] }]);
    const value = new Uint8Array(1000).fill(7);
    for (let b = 0; b < 20; b++) {
      await t.mutate(Array.from({ length: 100 }, (_, i) => ({ key: utf8(`row${String(b * 100 + i).padStart(5, '0')}`), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value }] })));
    }
    expect(await walBytes(fs)).toBeGreaterThan(2_000_000);
    await t.flush();
    expect(await walBytes(fs)).toBeLessThan(64 * 1024);
    await t.mutate([{ key: utf8('after'), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('x') }] }]);
    fs.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs });
    const t2 = await reopened.openTable('t');
    let rows = 0;
    for await (const batch of t2.scan({})) rows += batch.length;
    expect(rows).toBe(2001);
    const [one] = await (await reopened.openTable('small')).get([utf8('one')]);
    expect(fromUtf8(one!.cells[0]!.value)).toBe('1');
    const [after] = await t2.get([utf8('after')]);
    expect(fromUtf8(after!.cells[0]!.value)).toBe('x');
    await reopened.close();
    // A graceful close flushes everything: no log is left on disk, and nothing is lost.
    expect(await walBytes(fs)).toBe(0);
    const again = await openEmbeddedStore({ dir: '/db', fs });
    let n = 0;
    for await (const batch of (await again.openTable('t')).scan({})) n += batch.length;
    expect(n).toBe(2001);
    await again.close();
  });

  it('frees older logs pinned by a small memstore even when the current log is small', async () => {
    const fs = new MemFileSystem();
    // Small log files: the writes span several, and the current one is small at the end.
    const store = await openEmbeddedStore({ dir: '/db', fs, walFileBytes: 300 * 1024 });
    const small = await store.createTable({ name: 'small', families: [{ name: 'f' }] });
    await small.mutate([{ key: utf8('one'), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('1') }] }]);
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const value = new Uint8Array(1000).fill(7);
    for (let b = 0; b < 20; b++) {
      await t.mutate(Array.from({ length: 100 }, (_, i) => ({ key: utf8(`row${String(b * 100 + i).padStart(5, '0')}`), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value }] })));
    }
    const logs = async (): Promise<number> => (await fs.list('/db')).filter((n) => n.endsWith('.log')).length;
    expect(await logs()).toBeGreaterThan(3);
    await t.flush();
    expect(await logs()).toBe(1);
    expect(await walBytes(fs)).toBeLessThan(1024 * 1024);
    fs.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs });
    const [one] = await (await reopened.openTable('small')).get([utf8('one')]);
    expect(fromUtf8(one!.cells[0]!.value)).toBe('1');
    let rows = 0;
    for await (const batch of (await reopened.openTable('t')).scan({})) rows += batch.length;
    expect(rows).toBe(2000);
    await reopened.close();
  });
});
