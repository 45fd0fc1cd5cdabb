/**
 * How Store tables land in Bigtable: family GC rules (max versions united with max age =
 * the TTL) that the emulator really collects by, split points, the meta table, ids of long
 * names; and the tsdb data table pre-split on its salt buckets through the generic
 * TableSpec.splitPoints.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { Connection } from '../../backends/bigtable/src/client.js';
import { RowMerger } from '../../backends/bigtable/src/rows.js';
import type { Row } from '../../core/api/store.js';
import { Tsdb } from '../../tsdb/tsdb.js';
import { saltSplitKeys } from '../../tsdb/schema/salt.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

/** Every cell of a table as stored (no read-time filtering). */
async function rawRows(conn: Connection, tableId: string): Promise<Row[]> {
  const rows: Row[] = [];
  const merger = new RowMerger((r) => rows.push(r));
  await conn.readRows({ tableName: conn.tablePath(tableId) }, (r) => merger.push(r));
  return rows;
}

describe('bigtable schema', () => {
  it('families get GC rules (versions, and max age = TTL) that the emulator collects by', async () => {
    const prefix = freshPrefix();
    const store = await openTestStore(prefix);
    const conn = new Connection({ projectId: 'horae-test', instanceId: 'test' });
    try {
      const t = await store.createTable({ name: 'gc', ttlMs: 2_000, families: [{ name: 'a', maxVersions: 2 }, { name: 'b', ttlMs: 500 }, { name: 'c' }] });
      const admin = await conn.getTable(`${prefix}gc`);
      const rules = Object.fromEntries(Object.entries(admin.columnFamilies ?? {}).map(([k, v]) => [k, JSON.parse(JSON.stringify(v.gcRule))]));
      expect(rules.a.union.rules.map((r: { maxNumVersions?: number; maxAge?: { seconds: string; nanos: number } }) => r.maxNumVersions ?? r.maxAge)).toEqual([2, { seconds: '2', nanos: 0 }]);
      expect(rules.b.union.rules[1].maxAge).toEqual({ seconds: '0', nanos: 500_000_000 });
      expect(rules.c.union.rules[0].maxNumVersions).toBe(1);
      const now = Date.now();
      await t.mutate([{ key: utf8('k'), mutations: [
        { type: 'put', family: 'a', qualifier: utf8('old'), value: utf8('x'), timestamp: now - 60_000 },
        { type: 'put', family: 'a', qualifier: utf8('new'), value: utf8('y'), timestamp: now + 60_000 },
      ] }]);
      // Invisible at once (reads enforce the TTL), collected by GC later: the emulator
      // starts collecting once a GC rule is modified, so set family a's rule again.
      await conn.updateGcRule(`${prefix}gc`, 'a', admin.columnFamilies!.a!.gcRule!);
      const [row] = await t.get([utf8('k')]);
      expect(row!.cells.map((c) => Buffer.from(c.qualifier).toString())).toEqual(['new']);
      const deadline = Date.now() + 10_000;
      let stored = await rawRows(conn, `${prefix}gc`);
      while (stored[0]!.cells.length > 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        stored = await rawRows(conn, `${prefix}gc`);
      }
      expect(stored[0]!.cells.map((c) => Buffer.from(c.qualifier).toString())).toEqual(['new']);
    } finally {
      await conn.close();
      await store.close();
    }
  });

  it('long and underscore names map to hashed ids; the meta table keeps the names and specs', async () => {
    const prefix = freshPrefix();
    const store = await openTestStore(prefix);
    const conn = new Connection({ projectId: 'horae-test', instanceId: 'test' });
    try {
      const long = 'x'.repeat(128);
      await store.createTable({ name: long, families: [{ name: 'f' }] });
      await store.createTable({ name: '_under', families: [{ name: 'f' }] });
      await store.createTable({ name: 'plain', families: [{ name: 'f' }], splitPoints: [utf8('m')] });
      const ids = (await conn.listTableIds()).filter((id) => id.startsWith(prefix)).sort();
      expect(ids).toHaveLength(4);
      expect(ids).toContain(`${prefix}_meta`);
      expect(ids).toContain(`${prefix}plain`);
      expect(ids.filter((id) => /^p\d+__h[0-9a-f]{32}$/.test(id))).toHaveLength(2);
      expect(await store.listTables()).toEqual(['_under', 'plain', long]);
      const again = await openTestStore(prefix);
      expect((await again.openTable('plain')).spec.splitPoints).toEqual([utf8('m')]);
      await again.close();
    } finally {
      await conn.close();
      await store.close();
    }
  });

  it('the tsdb data table is created with split points on its salt buckets', async () => {
    const store = await openTestStore(freshPrefix());
    try {
      const tsdb = await Tsdb.open(store, { config: { saltBuckets: 8 }, background: false });
      const regions = await tsdb.data.regions();
      const starts = regions.slice(1).map((r) => [...r.start]);
      for (const s of saltSplitKeys(tsdb.widths)) expect(starts).toContainEqual([...s]);
      expect(saltSplitKeys(tsdb.widths)).toHaveLength(7);
      await tsdb.close();
    } finally {
      await store.close();
    }
  });
});
