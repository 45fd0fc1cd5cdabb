/**
 * The compaction ledger on Bigtable (tsdb/compact/compaction-ledger.ts): the scenario of
 * test/tsdb/compact/compaction-ledger-scenario.ts on the emulator, four servers (each its
 * own client) on one table prefix: two die, their rows are compacted by a live one after
 * their lease, one stops cleanly and is taken over at once, a restart sweeps nothing.
 */
import { describe, it } from 'vitest';
import { runLedgerScenario } from '../tsdb/compact/compaction-ledger-scenario.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

describe('compaction ledger on Bigtable', () => {
  it('leaves no row uncompacted when servers die or stop, with no sweep of the table at a restart', async () => {
    const prefix = freshPrefix();
    const stores = [await openTestStore(prefix), await openTestStore(prefix), await openTestStore(prefix), await openTestStore(prefix)];
    try {
      await runLedgerScenario(stores);
    } finally {
      for (const s of stores) await s.close();
    }
  }, 120_000);
});
