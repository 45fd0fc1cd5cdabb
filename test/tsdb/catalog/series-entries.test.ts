/**
 * The catalog's series entries (tsdb/catalog/series-entries.ts): one live entry per series,
 * entries unused for two generations dropped, a dropped entry never handed out by a cache
 * again; and a write group holding a dropped entry beside its series' new one writes the
 * row once (write-group.ts mergeSeries).
 */
import { describe, expect, it, vi } from 'vitest';
import type { RowMutation } from '../../../core/api/store.js';
import { SeriesEntries } from '../../../tsdb/catalog/series-entries.js';
import { SERIES_ENTRY_BYTES } from '../../../tsdb/memory/catalog-memory.js';
import { KnownSeriesPoints } from '../../../tsdb/write/put-entry.js';
import { newSeriesEntry } from '../../../tsdb/write/write-group.js';
import type { SeriesEntry } from '../../../tsdb/write/write-group.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const entry = (n: number): SeriesEntry => newSeriesEntry(Uint8Array.of(n));
const key = (s: string): [Buffer, number, number, number, number] => {
  const b = Buffer.from(s);
  return [b, 0, 1, 2, b.length];
};

describe('SeriesEntries', () => {
  it('keeps one live entry per series and drops the ones unused for a generation', () => {
    // Entries of a 1-byte template and TSUID: the young generation holds a quarter of the bound, 2 entries.
    const t = new SeriesEntries<SeriesEntry>(8 * (SERIES_ENTRY_BYTES + 2));
    const a = t.intern(entry(1));
    expect(t.intern(entry(1))).toBe(a); // a second entry of the series: the live one
    const b = t.intern(entry(2)); // young {a, b} full: it ages
    t.setText('m a', a);
    t.setText('m b', b);
    t.bytes('telnet').set(...key('m b'), b);
    expect(t.byText('m a')).toBe(a); // used: back to the young generation
    expect(b.alive).toBe(true);
    const c = t.intern(entry(3)); // young {a, c} full: it ages, and b, unused since, is dropped
    expect(b.alive).toBe(false);
    expect(a.alive && c.alive).toBe(true);
    expect(t.byText('m b')).toBeUndefined();
    expect(t.bytes('telnet').get(...key('m b'))).toBeUndefined();
    expect(t.bytes('telnet').size).toBe(0);
    const b2 = t.intern(entry(2));
    expect(b2).not.toBe(b);
    t.clear();
    expect([a.alive, b2.alive, c.alive, t.size]).toEqual([false, false, false, 0]);
    expect(t.byText('m a')).toBeUndefined();
  });
});

describe('a write group with a dropped entry', () => {
  it('writes its series once, with the points of both entries', async () => {
    const T0 = 1_356_998_400;
    const { tsdb } = await openFixture({}, (T0 + 3600) * 1000);
    const p = pt('m', T0, 1);
    await tsdb.ingest.write([p]);
    const old = tsdb.ingest.entryOf(p)!;
    tsdb.dropCaches();
    expect(old.alive).toBe(false);
    const calls: RowMutation[][] = [];
    const mutate = tsdb.data.mutate.bind(tsdb.data);
    vi.spyOn(tsdb.data, 'mutate').mockImplementation(async (rows, opts) => {
      calls.push([...rows]);
      return mutate(rows, opts);
    });
    // A call still holding the old entry (from a byte cache, say) and one that resolves
    // the series anew join one group.
    const known = KnownSeriesPoints.take(1);
    known.add(old, T0 + 10, 5, true, 0);
    await Promise.all([tsdb.ingest.write([pt('m', T0 + 20, 6)]), tsdb.ingest.write([], {}, known)]);
    known.release();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(1); // one row: not the same row twice in one mutation
    const fresh = tsdb.ingest.entryOf(p)!;
    expect(fresh).not.toBe(old);
    expect(fresh.alive).toBe(true);
    const r = await tsdb.data.get([calls[0]![0]!.key]);
    const cells = r[0]!.cells;
    expect(cells.length).toBe(2); // the first point's cell and the group's compacted one
    await tsdb.close();
  });
});
