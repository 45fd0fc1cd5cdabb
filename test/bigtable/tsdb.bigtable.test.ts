/**
 * The time-series layer's write, scan, query and UID tests, run unchanged on the Bigtable
 * emulator: their files are imported here after the fixture (test/tsdb/helpers/
 * tsdb-fixture.ts) is pointed at Bigtable stores, so every `openFixture()` in them opens a
 * fresh Bigtable store (own table prefix) on the fixture's clock.
 */
import { afterAll } from 'vitest';
import type { Store } from '../../core/api/store.js';
import { useFixtureStore } from '../tsdb/helpers/tsdb-fixture.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();
const opened: Store[] = [];
useFixtureStore(async (clock) => {
  const s = await openTestStore(freshPrefix(), { clock, ttlGarbageCollection: false });
  opened.push(s);
  return s;
});
afterAll(async () => {
  useFixtureStore(undefined);
  for (const s of opened) await s.close();
});

await import('../tsdb/write/ingest.test.js');
await import('../tsdb/uid/uid-table.test.js');
await import('../tsdb/scan/scanner.test.js');
await import('../tsdb/query/last-points.test.js');
await import('../tsdb/meta-index.test.js');
await import('../tsdb/compact/hour-compactor.test.js');
await import('../tsdb/conformance/opentsdb-cases.test.js');
await import('../tsdb/http/put.test.js');
await import('../tsdb/http/query-columnar.test.js');
