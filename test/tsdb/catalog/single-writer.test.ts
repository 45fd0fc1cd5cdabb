/**
 * What the layer keeps of what it wrote follows the store's declared capability
 * (capabilities.singleWriter), not its backend's name: a memory store declaring other
 * writers gets no newest-hour hints and no last values (its series caches are kept
 * coherent through the change log instead: change-feed.test.ts).
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
      expect(tsdb.newestHours !== undefined).toBe(single);
      expect(tsdb.lastValues !== undefined).toBe(single);
      await tsdb.close();
    }
  });
});
