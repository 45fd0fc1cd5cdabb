/**
 * The index cleanup on Bigtable (meta/index-cleanup.ts): the two-server scenarios of
 * test/tsdb/meta/index-cleanup-shared.test.ts on the emulator, each server with its own
 * client on one table prefix: one cleans while the other writes a series being removed, or
 * records a new series with names being deleted (one client for both there).
 */
import { describe, it } from 'vitest';
import { newSeriesDuringNameDelete, writeAfterMark, writeDuringPass } from '../tsdb/meta/cleanup-shared.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

describe('index cleanup on Bigtable, two servers', () => {
  for (const [name, scenario] of [['keeps a series the other server writes during the pass', writeDuringPass], ['revives the series the other server writes after the mark', writeAfterMark]] as const) {
    it(name, async () => {
      const prefix = freshPrefix();
      const a = await openTestStore(prefix);
      const b = await openTestStore(prefix);
      try {
        await scenario(a, b);
      } finally {
        await a.close();
        await b.close();
      }
    }, 120_000);
  }

  it('keeps the names of a new series the other server records as the pass deletes them', async () => {
    const store = await openTestStore(freshPrefix());
    try {
      await newSeriesDuringNameDelete(store, (s) => s);
    } finally {
      await store.close();
    }
  }, 120_000);
});
