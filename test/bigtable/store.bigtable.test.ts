/**
 * The Store contract against the Bigtable emulator. The contract's clock is fake (late
 * 2023) while the emulator garbage-collects by its own clock, so these stores keep TTL to
 * reads (ttlGarbageCollection off); gc-rules.test.ts checks the GC rules themselves.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import { bigtableCapabilities } from '../../backends/bigtable/src/index.js';
import type { Store } from '../../core/api/store.js';
import { atomicContract } from '../contract/contract-atomic.js';
import { ContractContext } from '../contract/contract-harness.js';
import { storeContract } from '../contract/store-contract.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();
const prefixOf = new Map<Store, { prefix: string; clock: () => number }>();

async function open(prefix: string, clock: () => number): Promise<Store> {
  const s = await openTestStore(prefix, { clock, ttlGarbageCollection: false });
  prefixOf.set(s, { prefix, clock });
  return s;
}

storeContract('bigtable (emulator)', {
  capabilities: bigtableCapabilities({ endpoint: 'emulator' }),
  heavy: true,
  open: ({ clock }) => open(freshPrefix(), clock),
  async reopen(store) {
    const { prefix, clock } = prefixOf.get(store)!;
    await store.close();
    return open(prefix, clock);
  },
});

// On real time the increments of families without TTL are ReadModifyWriteRow calls (on an
// injected clock they are compare-and-set): the atomic section again, on that path.
describe('Store contract: bigtable (emulator, real clock), atomic operations', () => {
  const ctx = new ContractContext({
    capabilities: bigtableCapabilities({ endpoint: 'emulator' }),
    open: () => openTestStore(freshPrefix()),
  });
  beforeEach(() => ctx.setUp());
  afterEach(() => ctx.tearDown());
  atomicContract(ctx);
});
