/**
 * The Bigtable store counts its data-API calls by method (StoreStats.rpcs), which
 * /api/stats/store reports and bench:bigtable --servers sums over the servers.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

describe('Bigtable store stats', () => {
  it('count the data-API calls by method', async () => {
    const store = await openTestStore(freshPrefix());
    try {
      const t = await store.createTable({ name: 't', families: [{ name: 'f', maxVersions: 1 }] });
      const before = (await store.stats()).rpcs!;
      const ref = { family: 'f', qualifier: utf8('q') };
      await t.mutate([{ key: utf8('a'), mutations: [{ type: 'put', ...ref, value: utf8('1') }] }]);
      await t.get([utf8('a')]);
      await t.get([utf8('b')]);
      await t.checkAndPut(utf8('c'), ref, undefined, [{ type: 'put', ...ref, value: utf8('2') }]);
      await t.increment(utf8('n'), ref, 1n);
      const after = (await store.stats()).rpcs!;
      const diff = Object.fromEntries(Object.keys(after).map((k) => [k, after[k]! - (before[k] ?? 0)]));
      // The two gets are two ReadRows (the others may read too, e.g. the increment's family check).
      expect(diff.readRows).toBeGreaterThanOrEqual(2);
      expect({ ...diff, readRows: 0 }).toEqual({ readRows: 0, mutateRows: 1, checkAndMutateRow: 1, readModifyWriteRow: 1, sampleRowKeys: 0 });
    } finally {
      await store.close();
    }
  });
});
