/**
 * Retention on Bigtable (tsdb/compact/retention-sweep.ts): the sweep scenario of
 * test/tsdb/compact/retention-sweep-scenario.ts on the emulator, two servers on one table
 * prefix, each bucket claimed by one of them (the claims in the change-log table).
 */
import { describe, it } from 'vitest';
import { runRetentionScenario } from '../tsdb/compact/retention-sweep-scenario.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

describe('retention sweep on Bigtable', () => {
  it('drops exactly the expired rows, two servers, each bucket swept once an hour', async () => {
    const prefix = freshPrefix();
    const a = await openTestStore(prefix);
    const b = await openTestStore(prefix);
    try {
      await runRetentionScenario([a, b]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});
