/**
 * A region written without pause still splits: its flush loop stops for the split, and the
 * memstores still queued go to the children, shared (core/lsm/scheduler.ts maybeSplit, region-jobs.ts
 * splitAt): nothing is copied, each shared memstore is flushed once and its file installed
 * in both children, and its size is charged once.
 * Found by test/reliability/durability-crash.test.ts on a CI run: under steady load the
 * regions never split in five server lives (a split waited for an idle region), and split
 * only once the load stopped.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import type { Region } from '../../core/lsm/region.js';

const ROWS = 100;

const BATCHES = 40;

/**
 * Batch b writes rows i*BATCHES+b (new rows, so the region grows, spread over the whole
 * key range, so both children get some of every memstore), valued `v<b>-<tag>-…`.
 */
function rows(batch: number, tag: string): Parameters<Table['mutate']>[0] {
  return Array.from({ length: ROWS }, (_, i) => ({
    key: utf8(`r${String(i * BATCHES + batch).padStart(5, '0')}`),
    mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(`v${batch}-${tag}-${(batch * 7919 + i * 104729).toString(36)}`) }],
  }));
}

async function contents(t: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of t.scan({})) for (const row of batch) out.push(`${Buffer.from(row.key).toString()}=${Buffer.from(row.cells[0]!.value).toString()}`);
  return out;
}

function expected(batches: number, tagOf: (b: number) => string): string[] {
  const out: string[] = [];
  for (let b = 0; b < batches; b++) {
    for (const r of rows(b, tagOf(b))) out.push(`${Buffer.from(r.key).toString()}=${Buffer.from((r.mutations[0] as { value: Uint8Array }).value).toString()}`);
  }
  return out.sort();
}

describe('splits while a flush loop runs', () => {
  it('a region with memstores queued the whole time splits before its loop ends, and loses nothing', async () => {
    const fs = new MemFileSystem();
    const opts = {
      dir: '/db', fs, maintenanceIntervalMs: 0,
      memstoreFlushBytes: 4096, compactionMinFiles: 2, regionSplitBytes: 32_768, blockSizeBytes: 1024,
    };
    const store = await openEmbeddedStore(opts);
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const table = store.engine.tables.get('t')!;
    const c = store.engine.counters;
    const jobs = (r: Region) => store.engine.scheduler.jobsOf(r);
    // 40 writes issued at once: each fills a memstore past the flush size, so they wait in
    // the region's queue and its flush loop would run until the last is written.
    const writes = Array.from({ length: BATCHES }, (_, k) => t.mutate(rows(k, 'a'), { durability: 'sync' }));
    expect(table.regions[0]!.immutables.length).toBeGreaterThanOrEqual(39);
    let queuedAtSplit = -1;
    let sharedAtSplit = false;
    let chargedOnce = false;
    while (c.flushesDone < 10 || table.regions.some((r) => jobs(r).flushing || jobs(r).splitting || r.immutables.length > 0)) {
      if (c.splitsDone > 0 && queuedAtSplit < 0) {
        queuedAtSplit = 0;
        for (const r of table.regions) queuedAtSplit += r.immutables.length + (jobs(r).flushing ? 1 : 0);
        const [a, b] = table.regions as [Region, Region];
        sharedAtSplit = a.immutables.some((m) => b.immutables.includes(m));
        const distinct = new Set(table.regions.flatMap((r) => [r.active, ...r.immutables]));
        let bytes = 0;
        for (const m of distinct) bytes += m.sizeBytes;
        chargedOnce = Math.abs(bytes - table.regions.reduce((n, r) => n + r.memstoreBytes(), 0)) < 1e-6;
      }
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(writes);
    // The first split came while memstores were still queued (in the children, now).
    expect(c.splitsDone).toBeGreaterThan(0);
    expect(queuedAtSplit).toBeGreaterThan(0);
    expect(sharedAtSplit).toBe(true);
    expect(chargedOnce).toBe(true);
    // A shared memstore was flushed by one child and its file installed in the other.
    expect(c.sharedFlushInstalls).toBeGreaterThan(0);
    expect(table.regions.length).toBe(c.splitsDone + 1);
    expect(await contents(t)).toEqual(expected(BATCHES, () => 'a'));
    // Rewritten (twice over half the rows) and flushed at once: the flush waits for the
    // regions split meanwhile (their memstores queued in the children). Read after the
    // flush and after a reopen.
    const splits = c.splitsDone;
    const tagOf = (b: number): string => (b % 2 === 0 ? 'c' : 'b');
    const rewrites = Array.from({ length: BATCHES }, (_, k) => t.mutate(rows(k, 'b'), { durability: 'sync' }));
    for (let k = 0; k < BATCHES; k += 2) rewrites.push(t.mutate(rows(k, 'c'), { durability: 'sync' }));
    await t.flush();
    expect(c.splitsDone).toBeGreaterThan(splits);
    for (const r of table.regions) expect(r.immutables.length + r.active.sizeBytes).toBe(0);
    await Promise.all(rewrites);
    const now = expected(BATCHES, tagOf);
    expect(await contents(t)).toEqual(now);
    await store.close();
    const again = await openEmbeddedStore(opts);
    expect(await contents(await again.openTable('t'))).toEqual(now);
    await again.close();
  });
});
