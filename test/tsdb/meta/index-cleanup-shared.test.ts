/**
 * The index cleanup where servers share the store (meta/index-cleanup.ts, cleanup-member.ts):
 * two Tsdbs on one memory store that declares other writers (scenarios in cleanup-shared.ts).
 * One cleans while the other writes a series being removed (held until the pass's first
 * step reached it; or started as it does), records a new series with names being deleted,
 * or writes at random through whole passes: every point acknowledged in the hours kept
 * stays findable (names, index row, postings) and readable; nothing dangles. Also a
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
import { Random } from '../../../core/util/random.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { CONFIG, HOUR, T0, expectConsistent, expectFindable, hooked, open, shared, newSeriesDuringNameDelete, tsuidOf, withFeeds, writeAfterMark, writeDuringPass } from './cleanup-shared.js';
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

  it('runs one pass at a time over both servers (the lease)', async () => {
    const base = await openMemoryStore();
    const clock = { now: T0 };
    const a = await open(shared(base), clock);
    const b = await open(shared(base), clock);
    try {
      await a.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.a', T0 + 5 * HOUR, 2, { host: 'h1' })]);
      clock.now = T0 + 6 * HOUR;
      await a.retentionSweeper!.runOnce();
      await a.cleanupMember!.beat();
      await b.cleanupMember!.beat();
      // b tries a pass while a's holds the lease (as b fences a's step 1).
      let bPass: Promise<void> | undefined;
      const onStep = b.cleanupMember!.onStep.bind(b.cleanupMember);
      b.cleanupMember!.onStep = (c) => {
        onStep(c);
        if (c.step === 1) bPass ??= b.indexCleanup!.runOnce();
      };
      await withFeeds([a, b], async () => {
        await a.indexCleanup!.runOnce();
        await bPass;
      });
      const [sa, sb] = [a.indexCleanup!.stats(), b.indexCleanup!.stats()];
      expect(bPass).toBeDefined();
      expect(sb.skipped).toBe(1);
      expect(sa.seriesRemoved + sb.seriesRemoved).toBe(1);
      expect(sa.errors + sb.errors).toBe(0);
      // The lease is free again: the next pass runs (and finds nothing).
      await withFeeds([a, b], () => b.indexCleanup!.runOnce());
      expect(b.indexCleanup!.stats().skipped).toBe(sb.skipped);
      await expectFindable(base, a, 'm.a', { host: 'h1' });
      await expectConsistent(base, a);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('records again a series with data kept that the index lacks (a writer paused past every fence)', async () => {
    const base = await openMemoryStore();
    const clock = { now: T0 };
    const a = await open(shared(base), clock);
    try {
      await a.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.a', T0, 2, { host: 'h1' })]);
      // m.a{host=h0}'s index row goes as a pass would remove it, its data stays.
      const tsuid = (await tsuidOf(a, 'm.a', { host: 'h0' }))!;
      await a.index.postings.remove(tsuid.subarray(0, a.widths.metric), [tsuid]);
      await (await base.createTable({ name: META_TABLE, families: [{ name: 'name' }] }, { ifNotExists: true })).mutate([{ key: tsuid, mutations: [{ type: 'deleteRow' }] }]);
      a.index.forget([tsuid]);
      clock.now = T0 + 2 * HOUR;
      await a.cleanupMember!.beat();
      await a.indexCleanup!.runOnce();
      expect(a.indexCleanup!.stats()).toMatchObject({ reindexed: 1, seriesRemoved: 0, errors: 0 });
      await expectFindable(base, a, 'm.a', { host: 'h0' });
      await expectConsistent(base, a);
    } finally {
      await a.close();
    }
  });

  it('keeps the names of a new series another server records as the pass deletes them', async () => {
    await newSeriesDuringNameDelete(await openMemoryStore(), shared);
  });

  for (const seed of [1, 2, 3]) {
    it(`loses no point another server acknowledges while passes run, and leaves nothing dangling (seed ${seed})`, async () => {
      const rnd = new Random(seed);
      const base = await openMemoryStore();
      const clock = { now: T0 };
      const a = await open(shared(base), clock);
      const b = await open(shared(base), clock);
      /** Series text → ms → value of every point b acknowledged. */
      const model = new Map<string, { metric: string; tags: Record<string, string>; pts: Map<number, number> }>();
      const batch = (): Array<ReturnType<typeof pt>> => {
        const out = [];
        for (let i = rnd.int(6); i >= 0; i--) {
          const metric = ['m.a', 'm.b', 'm.c'][rnd.int(3)]!;
          const tags: Record<string, string> = { host: `h${rnd.int(6)}` };
          if (rnd.chance(0.5)) tags.dc = `d${rnd.int(3)}`;
          // Mostly now; sometimes late, into an hour that may have expired.
          const ms = Math.floor((rnd.chance(0.85) ? clock.now - rnd.int(600_000) : clock.now - rnd.int(5 * HOUR)) / 1000) * 1000;
          out.push(pt(metric, ms, rnd.int(1000), tags));
        }
        return out;
      };
      const write = async (): Promise<void> => {
        const pts = batch();
        const outcomes = await b.ingest.write(pts);
        pts.forEach((p, i) => {
          if (outcomes[i] !== undefined) return; // refused (a name being deleted): not acknowledged
          const tags = Object.fromEntries(p.tags);
          const text = `${p.metric}${JSON.stringify(Object.entries(tags).sort())}`;
          const m = model.get(text) ?? { metric: p.metric, tags, pts: new Map<number, number>() };
          m.pts.set(p.timestamp, p.value);
          model.set(text, m);
        });
      };
      let removed = 0;
      try {
        for (let round = 0; round < 12; round++) {
          clock.now += rnd.range(HOUR / 2, 2 * HOUR);
          await write();
          await a.retentionSweeper!.runOnce();
          await a.cleanupMember!.beat();
          await b.cleanupMember!.beat();
          await withFeeds([b], async () => {
            let done = false;
            const pass = a.indexCleanup!.runOnce().finally(() => (done = true));
            while (!done) {
              await write();
              await new Promise((r) => setTimeout(r, rnd.int(4)));
            }
            await pass;
          });
          expect(a.indexCleanup!.stats().errors).toBe(0);
          removed = a.indexCleanup!.stats().seriesRemoved;
          const firstKept = Math.floor((clock.now - 3 * HOUR - HOUR) / HOUR) * HOUR + HOUR;
          for (const m of model.values()) {
            const kept = [...m.pts].filter(([ms]) => ms >= firstKept).sort((x, y) => x[0] - y[0]);
            if (kept.length === 0) continue;
            await expectFindable(base, a, m.metric, m.tags);
            expect((await readSeries(a, m.metric, m.tags, firstKept, clock.now + HOUR)).map((p) => [p.ts, p.value]), `${m.metric} ${JSON.stringify(m.tags)}`).toEqual(kept);
          }
          await expectConsistent(base, a);
        }
        expect(removed).toBeGreaterThan(0);
      } finally {
        await a.close();
        await b.close();
      }
    }, 120_000);
  }
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
