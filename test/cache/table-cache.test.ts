import { describe, expect, it } from 'vitest';
import { LruCache } from '../../core/cache/lru-cache.js';
import { TableCache } from '../../core/cache/table-cache.js';
import type { RandomAccessFile } from '../../core/fs/fs.js';
import type { MemFileSystem } from '../../core/fs/mem-fs.js';
import type { Block } from '../../core/sst/block.js';
import { SstReader } from '../../core/sst/sst-reader.js';
import { Random } from '../../core/util/random.js';
import { bloomKey, compare, genEntries, memFs, writeSst } from '../sst/helpers.js';

const pathOf = (n: number): string => `/d/${String(n).padStart(6, '0')}.sst`;

interface Harness {
  fs: MemFileSystem;
  blockCache: LruCache<Block>;
  opens: number[];
  closes: number[];
  cache: (maxOpenFiles?: number) => TableCache;
}

async function harness(files: number): Promise<Harness> {
  const fs = await memFs();
  for (let n = 1; n <= files; n++) await writeSst(fs, pathOf(n), genEntries(new Random(n), 200), { blockSizeBytes: 1024 });
  const h: Harness = {
    fs,
    blockCache: new LruCache<Block>(1 << 20),
    opens: [],
    closes: [],
    cache: (maxOpenFiles) => new TableCache({
      maxOpenFiles,
      open: async (n) => {
        h.opens.push(n);
        const f = await fs.openRead(pathOf(n));
        const tracked: RandomAccessFile = {
          path: f.path,
          size: f.size,
          readSync: (p, l) => f.readSync(p, l),
          close: async () => {
            h.closes.push(n);
            await f.close();
          },
        };
        return SstReader.open(tracked, { compare, bloomKey, cache: h.blockCache, cacheId: n });
      },
    }),
  };
  return h;
}

function countEntries(r: SstReader): number {
  const it = r.iterator();
  let n = 0;
  for (it.seekToFirst(); it.valid; it.next()) n++;
  expect(it.error()).toBeUndefined();
  return n;
}

describe('TableCache', () => {
  it('opens a file once and hands out the same reader', async () => {
    const h = await harness(2);
    const tc = h.cache();
    const [a, b] = await Promise.all([tc.acquire(1), tc.acquire(1)]); // racing acquires share one open
    const c = await tc.acquire(1);
    expect(a).toBe(b);
    expect(a).toBe(c);
    expect(h.opens).toEqual([1]);
    expect(countEntries(a)).toBe(200);
    expect(tc.stats()).toMatchObject({ open: 1, inUse: 1, misses: 1, hits: 2 });
    expect(tc.tryAcquire(1)).toBe(a);
    expect(tc.tryAcquire(2)).toBeUndefined(); // not open: no open started
    expect(h.opens).toEqual([1]);
    for (let i = 0; i < 4; i++) tc.release(1);
    expect(tc.stats()).toMatchObject({ open: 1, inUse: 0 });
    expect(() => tc.release(1)).toThrow(/^BUG: TableCache.release\(1\) without acquire/);
  });

  it('closes least recently released readers past maxOpenFiles', async () => {
    const h = await harness(5);
    const tc = h.cache(3);
    for (const n of [1, 2, 3, 4, 5]) {
      await tc.acquire(n);
      tc.release(n);
    }
    expect(tc.stats().open).toBe(3);
    expect(h.closes).toEqual([1, 2]);
    await tc.acquire(3); // hit
    tc.release(3);
    await tc.acquire(1); // reopened; evicts 4, the least recently released
    tc.release(1);
    expect(h.opens).toEqual([1, 2, 3, 4, 5, 1]);
    expect(h.closes).toEqual([1, 2, 4]);
  });

  it('never closes a reader in use; shrinks back when released', async () => {
    const h = await harness(3);
    const tc = h.cache(1);
    const r1 = await tc.acquire(1);
    const r2 = await tc.acquire(2);
    const r3 = await tc.acquire(3);
    expect(tc.stats()).toMatchObject({ open: 3, inUse: 3 });
    expect(h.closes).toEqual([]);
    expect([r1, r2, r3].map(countEntries)).toEqual([200, 200, 200]);
    tc.release(2);
    tc.release(1);
    expect(h.closes).toEqual([2, 1]);
    expect(countEntries(r3)).toBe(200);
    tc.release(3);
    expect(tc.stats().open).toBe(1);
    expect(h.closes).toEqual([2, 1]);
  });

  it('evict() closes an idle reader now and drops its cached blocks', async () => {
    const h = await harness(2);
    const tc = h.cache();
    countEntries(await tc.acquire(1));
    countEntries(await tc.acquire(2));
    tc.release(1);
    tc.release(2);
    const before = h.blockCache.stats().entries;
    expect(h.blockCache.has(1, 0)).toBe(true);
    tc.evict(1);
    expect(h.closes).toEqual([1]);
    expect(h.blockCache.has(1, 0)).toBe(false);
    expect(h.blockCache.has(2, 0)).toBe(true);
    expect(h.blockCache.stats().entries).toBeLessThan(before);
    tc.evict(7); // not open: no-op
  });

  it('evict() of a reader in use closes it at the last release and refuses new acquires meanwhile', async () => {
    const h = await harness(1);
    const tc = h.cache();
    const r = await tc.acquire(1);
    await tc.acquire(1);
    tc.evict(1);
    expect(h.closes).toEqual([]);
    expect(countEntries(r)).toBe(200); // still usable
    await expect(tc.acquire(1)).rejects.toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
    tc.release(1);
    expect(h.closes).toEqual([]);
    tc.release(1);
    expect(h.closes).toEqual([1]);
    expect(h.blockCache.has(1, 0)).toBe(false); // blocks read after evict() are dropped too
    await tc.acquire(1); // a fresh open is allowed once the old reader is gone
    expect(h.opens).toEqual([1, 1]);
  });

  it('propagates an opener failure and retries on the next acquire', async () => {
    const h = await harness(1);
    let fail = true;
    const tc = new TableCache({
      open: async (n) => {
        if (fail) throw new Error('disk on fire');
        return SstReader.open(await h.fs.openRead(pathOf(n)), { compare, cacheId: n });
      },
    });
    await expect(tc.acquire(1)).rejects.toThrow('disk on fire');
    expect(tc.stats()).toMatchObject({ open: 0, inUse: 0 });
    fail = false;
    const r = await tc.acquire(1);
    expect(r.entries).toBe(200);
  });

  it('close() closes idle readers, refuses acquires, and closes pinned ones at release', async () => {
    const h = await harness(2);
    const tc = h.cache();
    await tc.acquire(1);
    await tc.acquire(2);
    tc.release(2);
    await tc.close();
    expect(h.closes).toEqual([2]);
    await expect(tc.acquire(2)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    tc.release(1);
    expect(h.closes).toEqual([2, 1]);
  });
});
