import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import { META_CREATED, META_FAMILY } from '../../tsdb/meta/series-index.js';
import { hexExample, readFormatDoc } from '../helpers/format-doc.js';
import { executeQuery } from '../../tsdb/query/execute.js';
import { parseQueryJson } from '../../tsdb/query/query-spec.js';
import { Tsdb } from '../../tsdb/tsdb.js';
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
    // Its postings (tsdb/SCHEMA.md "Series postings"): one posting and one value row, and the built row.
    const postings = await tsdb.store.openTable('tsdb-postings');
    const keys: string[] = [];
    for await (const batch of postings.scan({})) keys.push(...batch.map((r) => toHex(r.key)));
    // Where servers share the store, the index cleanup's row `63` holds each server's beat (tsdb/SCHEMA.md "Index cleanup").
    if (!tsdb.store.capabilities.singleWriter) expect(keys.splice(keys.indexOf('63'), 1)).toEqual(['63']);
    const tsuid = toHex(rows[0]!.key);
    expect(keys).toEqual(['62', `70${tsuid.slice(0, 6)}${tsuid.slice(6, 18)}${tsuid.slice(6)}`, `76${tsuid}`]);
  });
});

describe('series postings of a store from before them', () => {
  it('are built at the next open: its series are found by tag, old and new alike', async () => {
    const T = T0 * 1000;
    const { tsdb } = await openFixture({ saltBuckets: 4 }, T);
    await tsdb.ingest.write(['a', 'b', 'c'].map((host, i) => ({ metric: 'm', timestamp: T0 + i, value: i, isInt: true, tags: [['host', host], ['dc', host === 'c' ? 'y' : 'x']] as [string, string][] })));
    // What an older version left: the index rows, no postings at all (nor the built row).
    const postings = await tsdb.store.openTable('tsdb-postings');
    await postings.deleteRange({ start: new Uint8Array(0), end: Uint8Array.of(0xff) });
    const hosts = async (t: Tsdb, tags: Record<string, string>): Promise<string[]> => {
      const q = parseQueryJson({ start: T, end: T + 3_600_000, queries: [{ metric: 'm', aggregator: 'none', tags }] }, T);
      return (await executeQuery(t, q, { maxSeries: 100, maxPoints: 1000 })).series.map((s) => s.tags.host!).sort();
    };
    const reopened = await Tsdb.open(tsdb.store, { now: () => T, background: false, config: { saltBuckets: 4 } });
    expect(await reopened.index.postings.built()).toBe(true);
    expect(await hosts(reopened, { dc: 'x' })).toEqual(['a', 'b']);
    expect(await hosts(reopened, { host: 'c|a' })).toEqual(['a', 'c']);
    expect(await hosts(reopened, { host: '*' })).toEqual(['a', 'b', 'c']);
    await reopened.ingest.write([{ metric: 'm', timestamp: T0 + 9, value: 9, isInt: true, tags: [['host', 'd'], ['dc', 'x']] }]);
    expect(await hosts(reopened, { dc: 'x' })).toEqual(['a', 'b', 'd']);
  });
});
