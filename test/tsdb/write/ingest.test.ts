import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { isTsdbError } from '../../../tsdb/errors.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { DATA_FAMILY } from '../../../tsdb/tables.js';
import { KnownSeriesPoints } from '../../../tsdb/write/put-entry.js';
import { newSeriesEntry } from '../../../tsdb/write/write-group.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400; // 2013-01-01T00:00:00Z, an hour boundary

describe('Ingestor', () => {
  it('stores points under salted row keys with OpenTSDB qualifiers and values', async () => {
    const { tsdb } = await openFixture();
    const out = await tsdb.ingest.write([pt('sys.cpu.user', T0 + 3, 7, { host: 'web01' })]);
    expect(out).toEqual([undefined]);
    const rows = [];
    for await (const batch of tsdb.data.scan({})) rows.push(...batch);
    expect(rows).toHaveLength(1);
    // metric 000001, tagk 000001, tagv 000001: salt 0x08 (tsdb/SCHEMA.md's salt table)
    expect(toHex(rows[0]!.key)).toBe('08' + '000001' + '50e22700' + '000001' + '000001');
    expect(rows[0]!.cells.map((c) => [c.family, toHex(c.qualifier), toHex(c.value)])).toEqual([[DATA_FAMILY, '0030', '07']]);
  });

  it('reads back ints, floats, doubles, ms timestamps and big integers', async () => {
    const { tsdb } = await openFixture();
    const pts = [
      pt('m', T0, 1),
      pt('m', T0 + 1, 42.5),
      pt('m', T0 + 2, 5.1),
      pt('m', (T0 + 3) * 1000 + 7, -300),
      { ...pt('m', T0 + 4, 9223372036854775807), isInt: true, big: 9223372036854775807n },
    ];
    expect(await tsdb.ingest.write(pts)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    const got = await readSeries(tsdb, 'm', { host: 'a' }, T0 * 1000, (T0 + 10) * 1000);
    expect(got).toEqual([
      { ts: T0 * 1000, value: 1, isInt: true },
      { ts: (T0 + 1) * 1000, value: 42.5, isInt: false },
      { ts: (T0 + 2) * 1000, value: 5.1, isInt: false },
      { ts: (T0 + 3) * 1000 + 7, value: -300, isInt: true },
      { ts: (T0 + 4) * 1000, value: 9223372036854775807n, isInt: true },
    ]);
  });

  it('keeps the last write of a timestamp, across calls and within one call, whatever the value type', async () => {
    const { tsdb, clock } = await openFixture();
    await tsdb.ingest.write([pt('m', T0 + 10, 1)]);
    await tsdb.ingest.write([pt('m', T0 + 10, 2.5)]); // float after int: another qualifier
    await tsdb.ingest.write([pt('m', (T0 + 10) * 1000, 3)]); // same instant as a ms qualifier
    await tsdb.ingest.write([pt('m', T0 + 20, 1), pt('m', T0 + 30, 1), pt('m', T0 + 20, 4.25)]);
    clock.now -= 60_000; // a clock step back must not let older writes win
    await tsdb.ingest.write([pt('m', T0 + 30, 9)]);
    const got = await readSeries(tsdb, 'm', { host: 'a' }, T0 * 1000, (T0 + 3599) * 1000);
    expect(got.map((p) => [p.ts / 1000 - T0, p.value])).toEqual([[10, 3], [20, 4.25], [30, 9]]);
  });

  it('stores the good points of a call and reports the bad ones', async () => {
    const { tsdb } = await openFixture();
    const out = await tsdb.ingest.write([
      pt('ok', T0, 1),
      pt('bad name', T0, 1),
      pt('ok', 0, 1),
      pt('ok', T0 + 1, NaN),
      pt('ok', T0 + 2, 2, {}),
      pt('ok', T0 + 3, 3),
    ]);
    expect(out.map((o) => o?.code)).toEqual([undefined, 'TSDB_ILLEGAL_ARGUMENT', 'TSDB_ILLEGAL_ARGUMENT', 'TSDB_ILLEGAL_ARGUMENT', 'TSDB_ILLEGAL_ARGUMENT', undefined]);
    expect((await readSeries(tsdb, 'ok', { host: 'a' }, 0, (T0 + 10) * 1000)).map((p) => p.value)).toEqual([1, 3]);
  });

  it('refuses unknown metrics when auto-create is off', async () => {
    const { tsdb } = await openFixture({ autoCreateMetrics: false });
    const [o] = await tsdb.ingest.write([pt('new.metric', T0, 1)]);
    expect(o?.code).toBe('TSDB_NO_SUCH_NAME');
    expect(o?.message).toBe("No such name for 'metrics': 'new.metric'");
    await tsdb.metrics.getOrCreateId('new.metric');
    expect(await tsdb.ingest.write([pt('new.metric', T0, 1)])).toEqual([undefined]);
  });

  it('rejects with TSDB_OVERLOADED past the in-flight bound and recovers', async () => {
    const { tsdb } = await openFixture({ maxInflightPoints: 1000 });
    const big = Array.from({ length: 1000 }, (_, i) => pt('m', T0 + i, i));
    const first = tsdb.ingest.write(big);
    expect(tsdb.ingest.overloaded()).toBe(true);
    const err = await tsdb.ingest.write([pt('m', T0, 1)]).catch((e: unknown) => e);
    expect(isTsdbError(err, 'TSDB_OVERLOADED')).toBe(true);
    const waited = tsdb.ingest.whenWritable();
    await first;
    await waited;
    expect(tsdb.ingest.overloaded()).toBe(false);
    expect(await tsdb.ingest.write([pt('m', T0, 1)])).toEqual([undefined]);
  });

  it('refuses to open a store written with other UID widths', async () => {
    const { tsdb } = await openFixture();
    const { Tsdb } = await import('../../../tsdb/tsdb.js');
    const err = await Tsdb.open(tsdb.store, { config: { uidWidthMetric: 4 }, background: false }).catch((e: unknown) => e);
    expect(isTsdbError(err, 'TSDB_ILLEGAL_ARGUMENT')).toBe(true);
    expect((err as Error).message).toMatch(/written with schema/);
  });

  it('creates a series once when calls first see it at the same moment; a rejected one fails every call', async () => {
    const { tsdb } = await openFixture();
    const recorded: string[] = [];
    const record = tsdb.index.record.bind(tsdb.index);
    tsdb.index.record = async (tsuids, nowMs) => {
      recorded.push(...tsuids.map(toHex));
      return record(tsuids, nowMs);
    };
    const calls = Array.from({ length: 6 }, (_, c) => tsdb.ingest.write([
      pt('m', T0 + c, c, { host: 'a' }),
      pt('m', T0 + c, c, { host: `own${c}` }),
      pt('m', T0 + c, c, { host: 'b', dc: 'x' }),
      pt('m', T0 + c, c, { 'bad tag': 'v' }),
    ]));
    const outs = await Promise.all(calls);
    for (const out of outs) {
      expect(out.slice(0, 3)).toEqual([undefined, undefined, undefined]);
      expect(isTsdbError(out[3])).toBe(true);
    }
    // a, b and the six own series: one entry and one index record each.
    expect(tsdb.ingest.stats().seriesCreated).toBe(8);
    expect(recorded).toHaveLength(8);
    expect(new Set(recorded).size).toBe(8);
    const a = await readSeries(tsdb, 'm', { host: 'a' }, T0 * 1000, (T0 + 10) * 1000);
    expect(a.map((p) => p.value)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('writes a series made again after dropCaches beside the dropped entry a call still holds: one call with both keeps the last point', async () => {
    const { tsdb } = await openFixture();
    const first = pt('m', T0 + 10, 1);
    await tsdb.ingest.write([first]);
    // What a call took from a byte cache before the drop (the caches hand out live entries only).
    const held = tsdb.ingest.entryOf(first)!;
    expect(held).toBeDefined();
    tsdb.dropCaches();
    expect(tsdb.ingest.entryOf(first)).toBeUndefined();
    // One call, so one write group: points of the held entry and points of the same series
    // by name (made again from its UIDs), as a telnet batch mixes them; in line order,
    // held@20 name@20 name@30 held@30, so each side's point is last once.
    for (let round = 0; round < 2; round++) {
      const known = KnownSeriesPoints.take(2);
      known.add(held, T0 + 20 + round, 2, true, 0);
      known.add(held, T0 + 30 + round, 3, true, 2);
      expect(await tsdb.ingest.write([pt('m', T0 + 20 + round, 5), pt('m', T0 + 30 + round, 6)], {}, known)).toEqual([undefined, undefined]);
      known.release();
      // A new entry for the series; the group merged the held one into it (write-group.ts mergeSeries).
      if (round === 0) expect([tsdb.ingest.entryOf(first) === held, held.alive]).toEqual([false, false]);
      tsdb.dropCaches();
    }
    const got = await readSeries(tsdb, 'm', { host: 'a' }, T0 * 1000, (T0 + 3599) * 1000);
    expect(got.map((p) => [p.ts / 1000 - T0, p.value])).toEqual([[10, 1], [20, 5], [21, 5], [30, 3], [31, 3]]);
  });
});

describe('KnownSeriesPoints.take / release', () => {
  it('reuses a released one, emptied, only when it is big enough, and keeps no huge one', () => {
    const a = KnownSeriesPoints.take(10);
    expect(a.capacity).toBeGreaterThanOrEqual(10);
    const e = newSeriesEntry(new Uint8Array(10));
    a.add(e, 1_700_000_000, 1.5, false, 0);
    a.add(e, 1_700_000_010, 2, true, 0);
    a.release();
    // The same object back, empty and holding no series.
    const b = KnownSeriesPoints.take(5);
    expect(b).toBe(a);
    expect(b.count).toBe(0);
    expect(b.entries[0]).toBeUndefined();
    expect(b.entries[1]).toBeUndefined();
    // Too small for a bigger call: a new one, sized to a power of two.
    b.release();
    const c = KnownSeriesPoints.take(b.capacity + 1);
    expect(c).not.toBe(b);
    expect(c.capacity).toBeGreaterThan(b.capacity);
    expect(Number.isInteger(Math.log2(c.capacity))).toBe(true);
    const d = KnownSeriesPoints.take(5);
    expect(d).toBe(b);
    // Two taken at once are two objects (a batch in flight keeps its own).
    expect(KnownSeriesPoints.take(5)).not.toBe(d);
    const huge = KnownSeriesPoints.take(1 << 17);
    huge.release();
    expect(KnownSeriesPoints.take(1 << 17)).not.toBe(huge);
  });
});
