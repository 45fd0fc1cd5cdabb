/**
 * The index cleanup where servers share the store (meta/index-cleanup.ts, cleanup-member.ts):
 * two Tsdbs on one memory store that declares other writers. One cleans while the other
 * writes a series being removed, its write held in the store until the pass's first step
 * reached it: the point is acknowledged and its series stays findable (names, index row,
 * postings); the series left alone is removed with its names; nothing dangles. Also a
 * pass stopped in the middle (a store call failing at each of its removals), then a
 * restart (a new Tsdb on the same files, embedded store): nothing dangles after its first
 * pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore, openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { DATA_TABLE } from '../../../tsdb/tables.js';
import { META_TABLE } from '../../../tsdb/meta/series-index.js';
import { UID_FAMILY_NAME, UID_TABLE } from '../../../tsdb/uid/uid-kind.js';
import { pt } from '../helpers/tsdb-fixture.js';
import { CONFIG, HOUR, T0, expectConsistent, expectFindable, hooked, open, shared, tsuidOf, withFeeds } from './cleanup-shared.js';
import { Tsdb } from '../../../tsdb/tsdb.js';

describe('index cleanup with two servers on one store', () => {
  it('keeps a series another server writes during the pass, and removes the one left alone', async () => {
    const base = await openMemoryStore();
    const clock = { now: T0 };
    let holding = false;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const a = await open(shared(base), clock);
    // Held until step 1 reached b, then slow: the pass must wait for it, not outrun it.
    const slow = async (table: string): Promise<void> => {
      if (table !== DATA_TABLE || !holding) return;
      await held;
      await new Promise((r) => setTimeout(r, 300));
    };
    const b = await open(shared(hooked(base, { mutate: slow })), clock);
    try {
      await b.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.b', T0, 2, { host: 'h1' })]);
      clock.now = T0 + 6 * HOUR;
      await a.retentionSweeper!.runOnce();
      await a.cleanupMember!.beat();
      await b.cleanupMember!.beat();
      // b writes m.a{host=h0} from its entry; the write reaches the store only once the pass's step 1 reached b.
      holding = true;
      const write = b.ingest.write([pt('m.a', clock.now, 7, { host: 'h0' })]);
      const onStep = b.cleanupMember!.onStep.bind(b.cleanupMember);
      b.cleanupMember!.onStep = (c) => {
        onStep(c);
        if (c.step === 1) release();
      };
      await withFeeds([b], () => a.indexCleanup!.runOnce());
      expect(await write).toEqual([undefined]);
      expect(a.indexCleanup!.stats()).toMatchObject({ errors: 0, seriesRemoved: 1 });
      await expectFindable(base, a, 'm.a', { host: 'h0' });
      expect((await readSeries(a, 'm.a', { host: 'h0' }, T0, clock.now + 1)).map((p) => p.value)).toEqual([7]);
      expect(await tsuidOf(a, 'm.b', { host: 'h1' })).toBeUndefined();
      // b's next write of the removed series records it anew (new names).
      await withFeeds([b], () => b.ingest.write([pt('m.b', clock.now, 3, { host: 'h1' })]));
      await expectFindable(base, a, 'm.b', { host: 'h1' });
      await expectConsistent(base, a);
    } finally {
      release();
      await a.close();
      await b.close();
    }
  });

  it('revives a series another server starts writing after the pass marked it', async () => {
    const base = await openMemoryStore();
    const clock = { now: T0 };
    const a = await open(shared(base), clock);
    const b = await open(shared(base), clock);
    try {
      await b.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.a', T0, 2, { host: 'h1' })]);
      clock.now = T0 + 6 * HOUR;
      await a.retentionSweeper!.runOnce();
      await b.cleanupMember!.beat();
      // As b fences step 1, it writes both series again, one in an hour kept, one in an expired hour.
      const writes: Array<Promise<unknown>> = [];
      const onStep = b.cleanupMember!.onStep.bind(b.cleanupMember);
      b.cleanupMember!.onStep = (c) => {
        onStep(c);
        if (c.step === 1) writes.push(b.ingest.write([pt('m.a', clock.now, 5, { host: 'h0' }), pt('m.a', T0 + 1000, 6, { host: 'h1' })]));
      };
      await withFeeds([b], () => a.indexCleanup!.runOnce());
      await Promise.all(writes);
      expect(writes).toHaveLength(1);
      await expectFindable(base, a, 'm.a', { host: 'h0' });
      await expectFindable(base, a, 'm.a', { host: 'h1' });
      await expectConsistent(base, a);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('index cleanup stopped in the middle, then restarted', () => {
  for (const at of ['series', 'names'] as const) {
    it(`leaves nothing half-removed after a restart (stopped while removing ${at})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'horae-cleanup-'));
      // Near the real clock: the embedded store's row transform drops expired rows by it when it flushes.
      const t0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
      const clock = { now: t0 };
      try {
        let fail = false;
        const first = await openEmbeddedStore({ dir, maintenanceIntervalMs: 0 });
        const store: Store = hooked(first, {
          checkAndPut: (table, _key, mutations) => {
            if (!fail) return;
            const m = mutations[0]!;
            // The pass dies at its first index row removal, or between a name's forward and reverse rows.
            if ((at === 'series' && table === META_TABLE && m.type === 'deleteRow') || (at === 'names' && table === UID_TABLE && m.type === 'deleteCell' && m.family === UID_FAMILY_NAME)) {
              throw new Error('stopped');
            }
          },
        });
        const t1 = await Tsdb.open(store, { now: () => clock.now, background: false, config: CONFIG });
        await t1.ingest.write([pt('m.a', t0, 1, { host: 'h0' }), pt('m.b', t0, 2, { host: 'h1' }), pt('m.b', t0 + 4 * HOUR, 3, { host: 'h2' })]);
        clock.now = t0 + 5 * HOUR;
        await t1.retentionSweeper?.runOnce(); // none on the embedded store: its row transform drops expired rows
        fail = true;
        await t1.indexCleanup!.runOnce();
        expect(t1.indexCleanup!.stats().errors).toBe(1);
        await t1.close();
        await first.close();

        const second = await openEmbeddedStore({ dir, maintenanceIntervalMs: 0 });
        const t2 = await Tsdb.open(second, { now: () => clock.now, background: false, config: CONFIG });
        try {
          await t2.indexCleanup!.runOnce();
          expect(t2.indexCleanup!.stats()).toMatchObject({ errors: 0, repaired: 1 });
          await expectConsistent(second, t2);
          expect(await tsuidOf(t2, 'm.a', { host: 'h0' })).toBeUndefined();
          expect(await tsuidOf(t2, 'm.b', { host: 'h1' })).toBeUndefined();
          await expectFindable(second, t2, 'm.b', { host: 'h2' });
          expect((await t2.uidTable('tagv').allNames()).map(([, n]) => n)).toEqual(['h2']);
        } finally {
          await t2.close();
          await second.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
