/**
 * The index cleanup on Bigtable (meta/index-cleanup.ts): the two-server scenarios of
 * test/tsdb/meta/index-cleanup-shared.test.ts on the emulator, each server with its own
 * client on one table prefix: one cleans while the other writes a series being removed.
 */
import { describe, it } from 'vitest';
import { writeAfterMark, writeDuringPass } from '../tsdb/meta/cleanup-shared.js';
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
});
