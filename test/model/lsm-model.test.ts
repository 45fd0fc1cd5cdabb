/**
 * The embedded engine against the memory oracle under seeded random operation logs, over
 * several option sets (metamorphic: every configuration must give the same answers).
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedOptions } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { runModel, seeds } from '../helpers/store-model.js';
import { withIdentityTransform } from '../helpers/transform-store.js';
import type { SystemUnderTest } from '../helpers/store-model.js';

const CONFIGS: Record<string, Partial<EmbeddedOptions>> = {
  // Flushes, compactions and splits all the time; tiny blocks with restarts every 2 keys.
  tiny: {
    memstoreFlushBytes: 1024, compactionMinFiles: 2, compactionMaxFiles: 3, regionSplitBytes: 1536,
    blockSizeBytes: 128, restartInterval: 2, compression: 'none', bloomBitsPerKey: 10,
  },
  tinyLz4NoBloom: {
    memstoreFlushBytes: 2048, compactionMinFiles: 3, regionSplitBytes: 2560,
    blockSizeBytes: 256, restartInterval: 3, compression: 'lz4', bloomBitsPerKey: 0,
  },
  deflateNoSplit: { memstoreFlushBytes: 4096, autoSplit: false, blockSizeBytes: 512, compression: 'deflate' },
  // As tiny, with every family rewritten by a row transform (the identity) at each flush and compaction.
  tinyTransform: {
    memstoreFlushBytes: 1024, compactionMinFiles: 2, compactionMaxFiles: 3, regionSplitBytes: 1536,
    blockSizeBytes: 128, restartInterval: 2, compression: 'none', bloomBitsPerKey: 10,
  },
  defaults: {},
};

/** Configs that must have exercised flushes, compactions and splits by the end of a run. */
const BUSY = new Set(['tiny', 'tinyLz4NoBloom', 'tinyTransform']);

function embedded(name: string, config: Partial<EmbeddedOptions>, flushOnClose: boolean) {
  return async (clock: () => number): Promise<SystemUnderTest> => {
    const fs = new MemFileSystem();
    const opts: EmbeddedOptions = { ...config, dir: '/db', fs, clock, maintenanceIntervalMs: 0, flushOnClose };
    const openStore = async () => (name === 'tinyTransform' ? withIdentityTransform(await openEmbeddedStore(opts)) : openEmbeddedStore(opts));
    const sut: SystemUnderTest = {
      store: await openStore(),
      async flush() {
        await (await sut.store.openTable('model')).flush();
      },
      async compact(major) {
        await (await sut.store.openTable('model')).compact({ major });
      },
      async reopen() {
        await sut.store.close();
        sut.store = await openStore();
        reopened++;
      },
      async verify() {
        if (!BUSY.has(name)) return;
        const s = await sut.store.stats();
        const regions = (await (await sut.store.openTable('model')).regions()).length;
        // Counters restart at each reopen; the region count does not.
        expect(regions, 'regions split').toBeGreaterThan(3);
        if (reopened === 0) expect(s.flushesDone + s.compactionsDone, 'background work ran').toBeGreaterThan(0);
      },
    };
    let reopened = 0;
    return sut;
  };
}

describe('embedded engine vs memory oracle (randomized)', () => {
  for (const [name, config] of Object.entries(CONFIGS)) {
    for (const seed of seeds(name.length * 1000 + 17, 6)) {
      it(`config ${name}, seed ${seed}`, async () => {
        await runModel({ seed, steps: 500, open: embedded(name, config, seed % 2 === 0) });
      });
    }
  }
});
