/**
 * Retention on a store without row transforms (tsdb/compact/retention-sweep.ts) on the
 * memory store: one server, and two servers on one store declaring other writers (claims
 * in the change-log table). The scenario: retention-sweep-scenario.ts; on the Bigtable
 * emulator: test/bigtable/retention.bigtable.test.ts.
 */
import { describe, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import { runRetentionScenario } from './retention-sweep-scenario.js';

function shared(store: Store): Store {
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter: false } } }) as Store;
}

describe('retention sweep on the memory store', () => {
  it('drops exactly the expired rows, one server', async () => {
    await runRetentionScenario([await openMemoryStore()]);
  });

  it('drops exactly the expired rows, two servers sharing the store, each bucket swept once an hour', async () => {
    const store = await openMemoryStore();
    await runRetentionScenario([shared(store), shared(store)]);
  });
});
