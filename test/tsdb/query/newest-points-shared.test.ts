/**
 * /api/query/last's caches (last values, newest-hour hints) on a store other servers write
 * too (capabilities.singleWriter false): two Tsdbs on one memory store, with reverse scans
 * and without (as on the Bigtable emulator). A server answers from its caches, and once
 * its change feed has read the other's points-written entries it answers what the other
 * wrote: newer points, a rewritten timestamp, a newer hour, and a batch logged by metric.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import { ChangeLog, CHANGES_TABLE } from '../../../tsdb/meta/change-log.js';
import { lastPoints } from '../../../tsdb/query/last-point.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const H = Date.UTC(2026, 0, 1) / 1000;

function sharing(store: Store, singleWriter: boolean, reverseScan: boolean): Store {
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter, reverseScan } } }) as Store;
}

describe.each([true, false])('newest points across servers (reverse scans: %s)', (reverseScan) => {
  it('are answered from the caches, and every other server\'s write is seen once its feed read the log', async () => {
    const mem = await openMemoryStore();
    let nowMs = (H + 1800) * 1000;
    const now = (): number => nowMs;
    const a = await Tsdb.open(sharing(mem, false, reverseScan), { background: false, now });
    const b = await Tsdb.open(sharing(mem, false, reverseScan), { background: false, now });
    // A writer that logs nothing (a stand-in for one whose batch is logged by metric below).
    const silent = await Tsdb.open(sharing(mem, true, reverseScan), { background: false, now });
    const put = async (t: Tsdb, ts: number, value: number): Promise<void> => {
      expect(await t.ingest.write([pt('m', ts, value, { host: 'x' })])).toEqual([undefined]);
    };
    const lastOnB = async (): Promise<string> => {
      const tsuids = await b.index.ofMetric(await b.metrics.requireId('m'));
      const [p] = await lastPoints(b, tsuids, 0, nowMs);
      return p === undefined ? 'none' : `${p.ts / 1000 - H} ${p.value}`;
    };
    try {
      expect(b.lastValues).toBeDefined();
      await put(a, H + 60, 1);
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('60 1');
      const hits = b.lastValues!.stats().hits;
      expect(await lastOnB()).toBe('60 1');
      expect(b.lastValues!.stats().hits).toBe(hits + 1); // answered from the cache

      // A newer point through a: b's cache holds the old one until its feed reads the log.
      await put(a, H + 120, 2);
      expect(await lastOnB()).toBe('60 1');
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('120 2');
      // The same timestamp rewritten; a backfill changes nothing.
      await put(a, H + 120, 2.5);
      await put(a, H - 3600 + 5, 7);
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('120 2.5');

      // A point of the next hour: not the newest until that hour comes.
      await put(a, H + 3600 + 10, 3);
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('120 2.5');
      nowMs = (H + 3600 + 1800) * 1000;
      expect(await lastOnB()).toBe('3610 3');
      expect(await lastOnB()).toBe('3610 3');

      // A batch too big to list, logged by its metric: b forgets the metric's points.
      await put(silent, H + 3600 + 20, 9);
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('3610 3'); // nothing logged yet
      const metric = await a.metrics.requireId('m');
      const log = new ChangeLog(await mem.openTable(CHANGES_TABLE), Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8), 3);
      await log.append({ kind: 'writtenMetrics', metrics: [[metric, H + 3600]] });
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('3620 9');

      // And a newer hour in such a batch moves b's newest-hour hint on.
      nowMs = (H + 7200 + 1800) * 1000;
      expect(await lastOnB()).toBe('3620 9');
      await put(silent, H + 7200 + 30, 10);
      await log.append({ kind: 'writtenMetrics', metrics: [[metric, H + 7200]] });
      await b.catalog.pollChanges();
      expect(await lastOnB()).toBe('7230 10');
    } finally {
      await a.close();
      await b.close();
      await silent.close();
    }
  });
});
