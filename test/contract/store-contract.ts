/**
 * The Store contract suite: the behavior every backend (memory, embedded LSM, later Cloud
 * Bigtable/HBase) must show, written once and run per backend configuration:
 *
 *     storeContract('embedded (tiny options)', { capabilities, open, reopen, heavy: true });
 *
 * Each test gets a fresh, empty store on a fake clock (ContractContext), so server
 * timestamps and TTL are deterministic. Capability-dependent tests use `it.runIf` on the
 * factory's capabilities; persistence tests run when the factory can `reopen`; bulk tests
 * when it is `heavy`. The sections live in contract-*.ts files beside this one.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import { atomicContract } from './contract-atomic.js';
import { borrowContract } from './contract-borrow.js';
import { dataContract } from './contract-data.js';
import { filterContract } from './contract-filters.js';
import { ContractContext } from './contract-harness.js';
import type { StoreFactory } from './contract-harness.js';
import { heavyContract } from './contract-heavy.js';
import { lifecycleContract } from './contract-lifecycle.js';
import { rangeDeleteContract } from './contract-range-delete.js';
import { rangesContract } from './contract-ranges.js';
import { scanContract } from './contract-scan.js';
import { tableContract } from './contract-tables.js';
import { validationContract } from './contract-validation.js';

export type { StoreFactory } from './contract-harness.js';

/** Registers the whole contract suite for one backend configuration. */
export function storeContract(name: string, factory: StoreFactory): void {
  describe(`Store contract: ${name}`, () => {
    const ctx = new ContractContext(factory);
    beforeEach(() => ctx.setUp());
    afterEach(() => ctx.tearDown());

    tableContract(ctx);
    dataContract(ctx);
    scanContract(ctx);
    rangesContract(ctx);
    borrowContract(ctx);
    filterContract(ctx);
    atomicContract(ctx);
    validationContract(ctx);
    lifecycleContract(ctx);
    rangeDeleteContract(ctx);
    heavyContract(ctx);
  });
}
