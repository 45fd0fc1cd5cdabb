/**
 * What the layer keeps of what it wrote follows the store's declared capability
 * (capabilities.singleWriter), not its backend's name: a memory store declaring other
 * writers keeps its caches coherent through the change log, announcing what it writes
 * (change-feed.test.ts, newest-points-shared.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import { Tsdb } from '../../../tsdb/tsdb.js';

async function storeWith(singleWriter: boolean): Promise<Store> {
  const store = await openMemoryStore();
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter } } }) as Store;
}

describe('singleWriter', () => {
  it('is read from the store capabilities', async () => {
    for (const single of [true, false]) {
      const tsdb = await Tsdb.open(await storeWith(single), { background: false });
      expect(tsdb.store.capabilities.backend).toBe('memory');
      expect(tsdb.catalog.singleWriter).toBe(single);
      expect(tsdb.catalog.announcesWrites).toBe(!single);
      expect(tsdb.newestHours).toBeDefined();
      expect(tsdb.lastValues).toBeDefined();
      await tsdb.close();
    }
  });
});
