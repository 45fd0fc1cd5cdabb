/**
 * The catalog's series entries (tsdb/catalog/series-entries.ts): one live entry per series,
 * a round-robin working set up to the bound kept, the least lately used dropped past it, a dropped entry never handed out by a cache
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
  it('keeps one live entry per series, a working set up to the bound, and drops the least lately used past it', () => {
    // Entries of a 1-byte template and TSUID; the entries' bound (half the share) holds 8.
    const E = SERIES_ENTRY_BYTES + 2;
    const t = new SeriesEntries<SeriesEntry>(16 * E);
    const e = [0, 1, 2, 3, 4, 5, 6].map((n) => t.intern(entry(n)));
    const [a, b] = e as [SeriesEntry, SeriesEntry];
    expect(t.intern(entry(0))).toBe(a); // a second entry of the series: the live one
    t.setText('m a', a);
    t.setText('m b', b);
    t.bytes('telnet').set(...key('m b'), b);
    // Round-robin over seven series, as a fleet writes them: nothing is dropped.
    for (let round = 0; round < 6; round++) {
      expect(t.byText('m a')).toBe(a);
      expect(t.byText('m b')).toBe(b);
      for (const x of e.slice(2)) expect(t.get(x.tsuidKey)).toBe(x);
    }
    expect(e.every((x) => x.alive)).toBe(true);
    const h = t.intern(entry(7)); // the bound reached: the eight become the old generation, none dropped
    expect(e.every((x) => x.alive) && h.alive).toBe(true);
    expect(t.byText('m b')).toBe(b); // b used: past the bound, the oldest unused one (a) goes
    expect(a.alive).toBe(false);
    expect(t.byText('m a')).toBeUndefined();
    for (const x of e.slice(1)) expect(t.get(x.tsuidKey)).toBe(x);
    expect(t.size).toBe(7);
    const a2 = t.intern(entry(0)); // a again: a new entry; h, unused longest, goes
    expect(a2).not.toBe(a);
    expect([a2.alive, h.alive]).toEqual([true, false]);
    expect(t.size).toBe(8 - 1);
    t.clear();
    expect([a2.alive, b.alive, t.size]).toEqual([false, false, 0]);
    expect(t.byText('m b')).toBeUndefined();
    expect(t.bytes('telnet').get(...key('m b'))).toBeUndefined();
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
