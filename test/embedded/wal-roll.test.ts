/**
 * A quiet store does not keep a dead WAL: after an explicit flush of everything, the log
 * that held the flushed writes is replaced by a fresh one and deleted, and the data is
 * all there after a crash and a reopen (it is in the files the manifest records).
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { WAL_META_RECORD_SIZE } from '../../core/wal/wal-format.js';

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

  it('a store left alone deletes the small log its idle flush emptied, once, and loses nothing', async () => {
    const fs = new MemFileSystem();
    let now = 1_000_000;
    const store = await openEmbeddedStore({ dir: '/db', fs, clock: () => now, memstoreIdleFlushMs: 30_000, maintenanceIntervalMs: 20 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    for (let i = 0; i < 50; i++) {
      await t.mutate([{ key: utf8(`row${i}`), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`) }] }]);
    }
    const logs = async (): Promise<string[]> => (await fs.list('/db')).filter((n) => n.endsWith('.log')).sort();
    const [loaded] = await logs();
    expect(await walBytes(fs)).toBeGreaterThan(WAL_META_RECORD_SIZE); // well under the 1 MiB of a big log
    now += 31_000; // idle: the maintenance pass flushes, then the next one rolls the log
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    for (let i = 0; i < 100 && (await logs()).includes(loaded!); i++) await sleep(20);
    expect((await store.stats()).memstoreBytes).toBe(0);
    const [fresh, ...more] = await logs();
    expect(more).toEqual([]);
    expect(fresh).not.toBe(loaded);
    expect(await walBytes(fs)).toBeLessThanOrEqual(WAL_META_RECORD_SIZE);
    // An empty log is not rolled again: an idle store does not churn files.
    now += 60_000;
    await sleep(150);
    expect(await logs()).toEqual([fresh]);
    fs.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs });
    let rows = 0;
    for await (const batch of (await reopened.openTable('t')).scan({})) rows += batch.length;
    expect(rows).toBe(50);
    await reopened.close();
  });
});
