import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/index.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { utf8 } from '../../core/api/bytes.js';

/**
 * A store left alone after a load reaches its compact state by itself: a memstore that took
 * no write for `memstoreIdleFlushMs` is flushed by the maintenance pass, so every cell is in
 * a file and the WAL is empty, without a size or age threshold being reached.
 */
describe('idle flush', () => {
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  async function load(idleMs: number): Promise<{ stats: () => ReturnType<Awaited<ReturnType<typeof openEmbeddedStore>>['stats']>; advance: (ms: number) => void; close: () => Promise<void> }> {
    let now = 1_000_000;
    const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), clock: () => now, memstoreIdleFlushMs: idleMs, maintenanceIntervalMs: 20 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    for (let i = 0; i < 200; i++) {
      await t.mutate([{ key: utf8(`row${i}`), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`) }] }]);
    }
    return { stats: () => store.stats(), advance: (ms) => void (now += ms), close: () => store.close() };
  }

  it('flushes a memstore that took no write for the idle time, and not before', async () => {
    const s = await load(30_000);
    s.advance(29_000);
    await sleep(120); // several maintenance passes: not idle long enough yet
    expect((await s.stats()).flushesDone).toBe(0);
    expect((await s.stats()).memstoreBytes).toBeGreaterThan(0);
    s.advance(2_000);
    for (let i = 0; i < 50 && (await s.stats()).flushesDone === 0; i++) await sleep(20);
    const st = await s.stats();
    expect(st.flushesDone).toBeGreaterThan(0);
    expect(st.memstoreBytes).toBe(0);
    expect(st.files).toBeGreaterThan(0);
    await s.close();
  });

  it('is off at 0', async () => {
    const s = await load(0);
    s.advance(10 * 60_000);
    await sleep(150);
    expect((await s.stats()).flushesDone).toBe(0);
    await s.close();
  });
});
