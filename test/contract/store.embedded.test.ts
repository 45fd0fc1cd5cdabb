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

const TINY: Partial<EmbeddedOptions> = {
  memstoreFlushBytes: 4 * 1024, memstoreTotalBytes: 64 * 1024, compactionMinFiles: 2, compactionMaxFiles: 4,
  regionSplitBytes: 48 * 1024, blockSizeBytes: 256, restartInterval: 4, walFileBytes: 32 * 1024,
};

function memFactory(name: string, extra: Partial<EmbeddedOptions>, heavy: boolean): void {
  const optsOf = new Map<Store, EmbeddedOptions>();
  storeContract(name, {
    capabilities: embeddedCapabilities({ ...extra, fs: new MemFileSystem() }),
    heavy,
    async open({ clock }) {
      const opts: EmbeddedOptions = { ...extra, dir: '/db', fs: new MemFileSystem(), clock, maintenanceIntervalMs: 0 };
      const s = await openEmbeddedStore(opts);
      optsOf.set(s, opts);
      return s;
    },
    async reopen(store) {
      const opts = optsOf.get(store)!;
      await store.close();
      const s = await openEmbeddedStore(opts);
      optsOf.set(s, opts);
      return s;
    },
  });
}

memFactory('embedded (in memory, default options)', {}, false);
memFactory('embedded (in memory, tiny options)', TINY, true);

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const optsOf = new Map<Store, EmbeddedOptions>();
storeContract('embedded (node fs, worker thread, tiny options)', {
  capabilities: embeddedCapabilities({ ...TINY }),
  heavy: true,
  async open({ clock }) {
    const dir = await mkdtemp(join(tmpdir(), 'horae-contract-'));
    dirs.push(dir);
    const opts: EmbeddedOptions = { ...TINY, dir, clock, maintenanceIntervalMs: 0, backgroundThreads: 1 };
    const s = await openEmbeddedStore(opts);
    optsOf.set(s, opts);
    return s;
  },
  async reopen(store) {
    const opts = optsOf.get(store)!;
    await store.close();
    const s = await openEmbeddedStore(opts);
    optsOf.set(s, opts);
    return s;
  },
});
