/**
 * Bigtable's deleteRange of a range that is not one prefix (backends/bigtable/src/
 * table-delete.ts: the keys read a page at a time, values stripped, each row deleted):
 * every row of a range spanning several pages goes, with big values, and the rows either
 * side stay.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

describe('Bigtable deleteRange', () => {
  it('deletes every row of a range of several pages, and no other', async () => {
    const store = await openTestStore(freshPrefix());
    try {
      const t = await store.createTable({ name: 't', families: [{ name: 'f', maxVersions: 1 }] });
      const key = (i: number): Uint8Array => utf8(`k${String(i).padStart(5, '0')}`);
      const big = new Uint8Array(2048).fill(7);
      for (let i = 0; i < 2600; i += 500) {
        await t.mutate(Array.from({ length: Math.min(500, 2600 - i) }, (_, j) => ({ key: key(i + j), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: big }] })));
      }
      await t.deleteRange({ start: key(50), end: key(2550) }); // 2,500 rows: three pages of 1,000
      const left: string[] = [];
      for await (const rows of t.scan({})) for (const r of rows) left.push(Buffer.from(r.key).toString());
      expect(left.length).toBe(100);
      expect(left[49]).toBe('k00049');
      expect(left[50]).toBe('k02550');
    } finally {
      await store.close();
    }
  }, 60_000);
});
