import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';

const put = (k: string) => ({ key: utf8(k), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(`v-${k}`) }] });

describe('embedded region stats', () => {
  it('count cells written per region, where they went, and show flushes and compactions while they run', async () => {
    const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0 });
    try {
      const t = await store.createTable({ name: 't', families: [{ name: 'f' }], splitPoints: [utf8('m')] });
      await t.mutate([put('a1'), put('a2'), put('a3')]);
      await t.mutate([put('z1')]);
      const [left, right] = await t.regions();
      expect([left!.stats.cellsWritten, left!.stats.writeRequests]).toEqual([3, 3]); // one write request per row
      expect([right!.stats.cellsWritten, right!.stats.writeRequests]).toEqual([1, 1]);
      expect([left!.stats.flushing, left!.stats.compacting]).toEqual([false, false]);

      const flushed = t.flush();
      expect((await t.regions()).map((r) => r.stats.flushing)).toEqual([true, true]);
      await flushed;
      expect((await t.regions()).map((r) => r.stats.flushing)).toEqual([false, false]);

      await t.mutate([put('a4')]);
      await t.flush();
      const compacted = t.compact({ major: true });
      await new Promise((r) => setImmediate(r));
      expect((await t.regions())[0]!.stats.compacting).toBe(true);
      await compacted;
      const after = await t.regions();
      expect(after.map((r) => [r.stats.compacting, r.stats.files])).toEqual([[false, 1], [false, 1]]);
      expect(after[0]!.stats.cellsWritten).toBe(4);
    } finally {
      await store.close();
    }
  });
});
