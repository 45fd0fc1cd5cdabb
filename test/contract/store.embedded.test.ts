/**
 * The Store contract for the embedded LSM engine: default options, tiny options that force
 * flushes, compactions and region splits all the time (in memory), and the real file system
 * with flushes and compactions on a worker thread.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { embeddedCapabilities, openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedOptions } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import type { Store } from '../../core/api/store.js';
import { storeContract } from './store-contract.js';
import { withIdentityTransform } from '../helpers/transform-store.js';

const TINY: Partial<EmbeddedOptions> = {
  memstoreFlushBytes: 4 * 1024, memstoreTotalBytes: 64 * 1024, compactionMinFiles: 2, compactionMaxFiles: 4,
  regionSplitBytes: 48 * 1024, blockSizeBytes: 256, restartInterval: 4, walFileBytes: 32 * 1024,
};

/** Registers the contract for stores opened with `optsFor(clock)`; reopen reuses the same options. */
function embeddedContract(
  name: string, caps: Partial<EmbeddedOptions>, heavy: boolean, optsFor: (clock: () => number) => Promise<EmbeddedOptions>, transform = false,
): void {
  const optsOf = new Map<Store, EmbeddedOptions>();
  const open = async (opts: EmbeddedOptions): Promise<Store> => {
    const plain = await openEmbeddedStore(opts);
    const s = transform ? withIdentityTransform(plain) : plain;
    optsOf.set(s, opts);
    return s;
  };
  storeContract(name, {
    capabilities: embeddedCapabilities(caps),
    heavy,
    open: async ({ clock }) => open(await optsFor(clock)),
    async reopen(store) {
      const opts = optsOf.get(store)!;
      await store.close();
      return open(opts);
    },
  });
}

const inMemory = (extra: Partial<EmbeddedOptions>) => async (clock: () => number): Promise<EmbeddedOptions> =>
  ({ ...extra, dir: '/db', fs: new MemFileSystem(), clock, maintenanceIntervalMs: 0 });

embeddedContract('embedded (in memory, default options)', { fs: new MemFileSystem() }, false, inMemory({}));
embeddedContract('embedded (in memory, tiny options)', { ...TINY, fs: new MemFileSystem() }, true, inMemory(TINY));
// Every family with a row transform (the identity): every flush and compaction rewrites rows.
embeddedContract('embedded (in memory, tiny options, row transform)', { ...TINY, fs: new MemFileSystem() }, true, inMemory(TINY), true);

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
embeddedContract('embedded (node fs, worker thread, tiny options)', TINY, true, async (clock) => {
  const dir = await mkdtemp(join(tmpdir(), 'horae-contract-'));
  dirs.push(dir);
  return { ...TINY, dir, clock, maintenanceIntervalMs: 0, backgroundThreads: 1 };
});
embeddedContract('embedded (node fs, worker thread, tiny options, row transform)', TINY, false, async (clock) => {
  const dir = await mkdtemp(join(tmpdir(), 'horae-contract-'));
  dirs.push(dir);
  return { ...TINY, dir, clock, maintenanceIntervalMs: 0, backgroundThreads: 1 };
}, true);
