/**
 * Memory pressure (all memstores past memstoreTotalBytes) while a large memstore's flush is
 * still under way must not switch out the tiny memstores other writes touch: that flush
 * relieves the pressure already. Found by bench:cardinality at 1 M series: once the index
 * table's memstores passed the bound, every UID claim (one cell) forced a flush of its
 * region, 3,700 one-cell files in a minute, and every read walked them all
 * (core/lsm/scheduler.ts flushLargest).
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { FileSystem, WritableFile } from '../../core/fs/fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';

/** A MemFileSystem whose new SST files wait for `open()` before taking their first byte. */
function gatedSsts(): { fs: FileSystem; open: () => void } {
  const inner = new MemFileSystem();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const fs = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'openAppend') return Reflect.get(target, prop, receiver);
      return async (path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> => {
        const file = await target.openAppend(path, opts);
        if (!path.endsWith('.sst.tmp')) return file;
        return new Proxy(file, {
          get: (f, p, r) => (p === 'append' ? async (d: Uint8Array) => { await gate; return f.append(d); } : Reflect.get(f, p, r)),
        });
      };
    },
  });
  return { fs, open: release };
}

describe('flushes under memory pressure', () => {
  it('a write under pressure does not flush a memstore of a few cells while a large flush is queued', async () => {
    const { fs, open } = gatedSsts();
    const store = await openEmbeddedStore({
      dir: '/db', fs, maintenanceIntervalMs: 0, autoSplit: false,
      memstoreFlushBytes: 1 << 20, memstoreTotalBytes: 64 * 1024, memstoreStallBytes: 1 << 20,
    });
    const big = await store.createTable({ name: 'big', families: [{ name: 'f' }] });
    const small = await store.createTable({ name: 'small', families: [{ name: 'f' }] });
    const value = utf8('x'.repeat(100));
    // 100 KiB into one memstore: past the bound, so it is switched out for a flush that the
    // gate holds.
    await big.mutate(Array.from({ length: 1000 }, (_, i) => ({
      key: utf8(`b${String(i).padStart(5, '0')}`), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value }],
    })));
    const bigRegion = store.engine.tables.get('big')!.regions[0]!;
    const smallRegion = store.engine.tables.get('small')!.regions[0]!;
    expect(bigRegion.immutables.length, 'the big memstore is queued for flush').toBe(1);
    // 200 one-cell writes while that flush waits: the total stays past the bound.
    for (let i = 0; i < 200; i++) {
      await small.mutate([{ key: utf8(`s${String(i).padStart(4, '0')}`), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`) }] }]);
    }
    expect(store.engine.memstoreBytes()).toBeGreaterThan(64 * 1024);
    expect(smallRegion.immutables.length, 'one-cell memstores switched out for flush').toBe(0);
    open();
    await store.idle();
    expect(smallRegion.files.length).toBe(0);
    const got = await small.get([utf8('s0000'), utf8('s0199')]);
    expect(got.map((r) => Buffer.from(r!.cells[0]!.value).toString())).toEqual(['v0', 'v199']);
    expect((await big.get([utf8('b00999')]))[0]?.cells.length).toBe(1);
    await store.close();
  });
});
