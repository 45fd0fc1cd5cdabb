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
import { META_TABLE } from '../../../tsdb/meta/series-index.js';
import { UID_FAMILY_NAME, UID_TABLE } from '../../../tsdb/uid/uid-kind.js';
import { pt } from '../helpers/tsdb-fixture.js';
import { CONFIG, HOUR, expectConsistent, expectFindable, hooked, shared, tsuidOf, writeAfterMark, writeDuringPass } from './cleanup-shared.js';
import { Tsdb } from '../../../tsdb/tsdb.js';

describe('index cleanup with two servers on one store', () => {
  it('keeps a series another server writes during the pass, and removes the one left alone', async () => {
    const base = await openMemoryStore();
    await writeDuringPass(shared(base), shared(base));
  });

  it('revives a series another server starts writing after the pass marked it', async () => {
    const base = await openMemoryStore();
    await writeAfterMark(shared(base), shared(base));
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
