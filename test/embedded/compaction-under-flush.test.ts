/**
 * A region whose flush loop does not drain (writes keep queueing memstores) still gets its
 * files compacted: a compaction starts beside the running loop instead of waiting for it
 * to end (core/lsm/region-jobs.ts flushLoop). Found by test/reliability/durability-crash.test.ts
 * on a fast CI run: with 16 KiB memstores under steady load, 869 flushes ran in five
 * server lives and not one compaction.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';

function rows(batch: number, n: number): Parameters<Table['mutate']>[0] {
  return Array.from({ length: n }, (_, i) => ({
    key: utf8(`r${String(i).padStart(4, '0')}`),
    mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(`b${batch}-${'x'.repeat(40)}`) }],
  }));
}

describe('compactions while a flush loop runs', () => {
  it('a region with memstores queued the whole time is compacted before its loop ends', async () => {
    const store = await openEmbeddedStore({
      dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0,
      memstoreFlushBytes: 4096, compactionMinFiles: 2, autoSplit: false,
    });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const region = store.engine.tables.get('t')!.regions[0]!;
    const c = store.engine.counters;
    const jobs = store.engine.scheduler.jobsOf(region);
    // 30 writes issued at once: each fills a memstore past the flush size, so 30 wait in
    // the region's queue and its flush loop runs until the last is written.
    const writes = Array.from({ length: 30 }, (_, k) => t.mutate(rows(k, 100), { durability: 'sync' }));
    expect(region.immutables.length).toBeGreaterThanOrEqual(29);
    let compactedDuringLoop = false;
    let sawLoop = false;
    while (c.flushesDone < 30 || jobs.flushing) {
      if (jobs.flushing) sawLoop = true;
      if (jobs.flushing && region.immutables.length > 0 && (jobs.compacting || c.compactionsDone > 0)) compactedDuringLoop = true;
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(writes);
    expect(sawLoop).toBe(true);
    expect(compactedDuringLoop).toBe(true);
    await store.idle();
    // Every write is readable with its last value.
    const got = await t.get([utf8('r0000'), utf8('r0099')]);
    expect(got.map((r) => r?.cells[0]?.value === undefined ? undefined : Buffer.from(r.cells[0].value).toString().slice(0, 3))).toEqual(['b29', 'b29']);
    await store.close();
  });
});
