/**
 * Per-file setup of the Bigtable tests: one emulator for the file (beforeAll/afterAll),
 * BIGTABLE_EMULATOR_HOST pointing at it, and stores opened under fresh table prefixes so
 * every store is isolated from the others on the same emulator.
 */
import { afterAll, beforeAll } from 'vitest';
import { openBigtableStore } from '../../backends/bigtable/src/index.js';
import type { BigtableStoreOptions } from '../../backends/bigtable/src/index.js';
import type { Store } from '../../core/api/store.js';
import { startEmulator } from './emulator.js';
import type { Emulator } from './emulator.js';

// The client library would otherwise probe for a GCE metadata server.
process.env.METADATA_SERVER_DETECTION = 'none';

let current: Emulator | undefined;
let prefixes = 0;

/** Registers the file's emulator; returns a getter for it (valid inside tests). */
export function useEmulator(kind?: 'auto' | 'gcloud' | 'debian'): () => Emulator {
  beforeAll(async () => {
    current = await startEmulator(kind);
    process.env.BIGTABLE_EMULATOR_HOST = current.host;
  }, 300_000); // the first build of the fallback emulator takes ~1 min on a quiet machine
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('BUG: emulator used outside a test');
    return current;
  };
}

/** A fresh table prefix (p1_, p2_, ...). */
export function freshPrefix(): string {
  return `p${++prefixes}_`;
}

/** Opens a store on the file's emulator under `prefix`. */
export function openTestStore(prefix: string, extra: Partial<BigtableStoreOptions> = {}): Promise<Store> {
  return openBigtableStore({ projectId: 'horae-test', instanceId: 'test', tablePrefix: prefix, ...extra });
}
