import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import { META_CREATED, META_FAMILY } from '../../tsdb/meta/series-index.js';
import { hexExample, readFormatDoc } from '../helpers/format-doc.js';
import { openFixture } from './helpers/tsdb-fixture.js';

const T0 = 1356998400;

describe('series index', () => {
  it('stores the row tsdb/SCHEMA.md shows for a first write', async () => {
    const doc = hexExample(readFormatDoc('tsdb/SCHEMA.md'), 'Series index', 'tsdb/SCHEMA.md');
    const { tsdb, clock } = await openFixture({}, T0 * 1000);
    await tsdb.ingest.write([{ metric: 'm', timestamp: T0, value: 1, isInt: true, tags: [['host', 'a']] }]);
    clock.now += 1000;
    await tsdb.ingest.write([{ metric: 'm', timestamp: T0 + 1, value: 2, isInt: true, tags: [['host', 'a']] }]);
    const rows = [];
    const meta = await tsdb.store.openTable('tsdb-meta');
    for await (const batch of meta.scan({})) rows.push(...batch);
    expect(rows).toHaveLength(1);
    const c = rows[0]!.cells[0]!;
    expect(c.family).toBe(META_FAMILY);
    expect(toHex(c.qualifier)).toBe(toHex(META_CREATED));
    expect(toHex(doc)).toBe(toHex(rows[0]!.key) + toHex(c.qualifier) + toHex(c.value));
    // Its postings (SCHEMA.md "Series postings"): one posting and one value row, and the built row.
    const postings = await tsdb.store.openTable('tsdb-postings');
    const keys: string[] = [];
    for await (const batch of postings.scan({})) keys.push(...batch.map((r) => toHex(r.key)));
    const tsuid = toHex(rows[0]!.key);
    expect(keys).toEqual(['62', `70${tsuid.slice(0, 6)}${tsuid.slice(6, 18)}${tsuid.slice(6)}`, `76${tsuid}`]);
  });
});
