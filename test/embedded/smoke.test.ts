import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { utf8, fromUtf8 } from '../../core/api/bytes.js';

describe('embedded store smoke', () => {
  it('writes, flushes, compacts, reopens', async () => {
    const fs = new MemFileSystem();
    let store = await openEmbeddedStore({ dir: '/db', fs, memstoreFlushBytes: 4096, compactionMinFiles: 3, maintenanceIntervalMs: 0 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    for (let i = 0; i < 2000; i++) {
      await t.mutate([{ key: utf8(`row${String(i).padStart(5, '0')}`), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`) }] }]);
    }
    await store.idle();
    const [r] = await t.get([utf8('row00042')]);
    expect(fromUtf8(r!.cells[0]!.value)).toBe('v42');
    let n = 0;
    for await (const batch of t.scan({ batchRows: 100 })) n += batch.length;
    expect(n).toBe(2000);
    let rev: string[] = [];
    for await (const batch of t.scan({ reverse: true, limit: 3 })) rev.push(...batch.map((x) => fromUtf8(x.key)));
    expect(rev).toEqual(['row01999', 'row01998', 'row01997']);
    await t.compact({ major: true });
    await store.close();
    store = await openEmbeddedStore({ dir: '/db', fs, maintenanceIntervalMs: 0 });
    const t2 = await store.openTable('t');
    const [r2] = await t2.get([utf8('row01500')]);
    expect(fromUtf8(r2!.cells[0]!.value)).toBe('v1500');
    n = 0;
    for await (const batch of t2.scan()) n += batch.length;
    expect(n).toBe(2000);
    await store.close();
  });
});
