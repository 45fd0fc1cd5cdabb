/**
 * The Bigtable backend against the memory oracle under the seeded random operation logs of
 * test/helpers/store-model.ts (no crash or engine steps: Bigtable has none to offer; a
 * reopen is a new client on the same tables). TEST_SEED=n replays one seed.
 */
import { describe, it } from 'vitest';
import { runModel, seeds } from '../helpers/store-model.js';
import type { SystemUnderTest } from '../helpers/store-model.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

describe('bigtable backend vs memory oracle (randomized, emulator)', () => {
  for (const seed of seeds(8_017, 5)) {
    it(`seed ${seed}`, async () => {
      await runModel({
        seed,
        steps: 400,
        async open(clock) {
          const prefix = freshPrefix();
          const opts = { clock, ttlGarbageCollection: false };
          const sut: SystemUnderTest = {
            store: await openTestStore(prefix, opts),
            async reopen() {
              await sut.store.close();
              sut.store = await openTestStore(prefix, opts);
            },
          };
          return sut;
        },
      });
    });
  }
});
