/**
 * Two Tsdbs on one store that declares other writers (capabilities.singleWriter false)
 * keep their series caches and see each other's changes through the change log once
 * their feed has polled (catalog applyRemote): a new series touches its metric's plans, a rename reaches its UID and series caches (a put to the old name then makes
 * a new metric), an unreadable entry drops everything.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';

const T0 = 1_700_000_000;

async function sharedStore(): Promise<Store> {
  const store = await openMemoryStore();
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter: false } } }) as Store;
}

function point(metric: string, host: string, ts = T0, value = 1): IncomingPoint {
  return { metric, timestamp: ts, value, isInt: true, tags: [['host', host]] };
}

async function put(t: Tsdb, p: IncomingPoint): Promise<void> {
  const [outcome] = await t.ingest.write([p]);
  expect(outcome).toBeUndefined();
}

async function hostsOf(t: Tsdb, metric: string): Promise<string[]> {
  const id = await t.metrics.requireId(metric);
  const out: string[] = [];
  for (const tsuid of await t.index.ofMetric(id)) out.push((await t.tagvs.getName(tsuid.subarray(6, 9)))!);
  return out.sort();
}

describe('change feed between two servers on one store', () => {
  it('keeps series caches coherent: new series, renames', async () => {
    const store = await sharedStore();
    const a = await Tsdb.open(store, { background: false });
    const b = await Tsdb.open(store, { background: false });
    try {
      expect(a.catalog.keepsSeries && b.catalog.keepsSeries).toBe(true);
      await put(a, point('m', 'h1'));
      await b.catalog.pollChanges();
      expect(await hostsOf(b, 'm')).toEqual(['h1']);
      await put(a, point('m', 'h2'));
      // The series list is read from the index, not kept: b sees h2 before it hears of it.
      expect(await hostsOf(b, 'm')).toEqual(['h1', 'h2']);
      await b.catalog.pollChanges();
      expect(await hostsOf(b, 'm')).toEqual(['h1', 'h2']);
      expect(b.catalog.feedStats()).toMatchObject({ applied: 4, unknown: 0 }); // two series, two writes

      // b wrote m before: its caches hold m's id and series; a renames m.
      await put(b, point('m', 'h3'));
      await a.renameUid('metric', 'm', 'm2');
      await b.catalog.pollChanges();
      expect(await b.metrics.getId('m')).toBeUndefined();
      await put(b, point('m', 'h3', T0 + 1, 7));
      const oldId = toHex((await b.metrics.getId('m2'))!);
      const newId = toHex((await b.metrics.getId('m'))!);
      expect(newId).not.toBe(oldId);
      await a.catalog.pollChanges();
      expect(await hostsOf(a, 'm')).toEqual(['h3']);
      expect(await hostsOf(a, 'm2')).toEqual(['h1', 'h2', 'h3']);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
