/**
 * Durability at every step: while writers (synced and buffered), flushes, compactions and
 * splits run on the in-memory file system, every rename, remove and directory sync the
 * engine makes is followed by a check of the disk as it stands at that moment: a copy of
 * it loses power (every unsynced byte and directory change dropped), a store is opened on
 * the copy, and every write acknowledged as synced so far must be there, and every delete
 * acknowledged so far still in effect. crash-recovery.test.ts cuts the power at one
 * random moment a round; this one looks at every moment where a file appears, moves or
 * goes, which is where a wrong order of steps (a log deleted before the files holding its
 * entries are recorded, a manifest naming a file not yet durable) loses data.
 * Each process round ends with a real power cut, so recoveries are checked too.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { ErrorFileSystem, FS_OP_KINDS } from '../../core/fs/error-fs.js';
import type { WritableFile } from '../../core/fs/fs.js';
import { Random } from '../../core/util/random.js';
import { seeds } from '../helpers/store-model.js';
import { OPTS, TABLE, readAll, startWorkload } from './busy-store.js';
import type { Ledger } from './busy-store.js';

/**
 * Runs the engine for `rounds` process lives, checking the disk after every step; returns
 * the number of checks. `slow`: a slow disk, whose writes, syncs, renames and removes take
 * effect at the call (as on the in-memory disk) but complete 0-3 ms later half the time
 * (seeded), so background work and writers interleave in other orders.
 */
async function run(seed: number, rounds: number, slow = false): Promise<number> {
  const r = new Random(seed);
  const lag = new Random(seed + 1);
  const later = (): Promise<void> | undefined =>
    !slow || lag.chance(0.5) ? undefined : new Promise((res) => setTimeout(res, lag.int(4)));
  const mem = new MemFileSystem();
  const ledger: Ledger = { acked: new Map(), deleted: new Set() };
  const failures: string[] = [];
  let checks = 0;
  const check = async (step: string): Promise<void> => {
    if (failures.length > 0) return;
    // The disk and the ledger as they are now, before anything else runs.
    const copy = mem.clone();
    const acked = new Map(ledger.acked);
    const deleted = new Set(ledger.deleted);
    copy.crash({ mode: 'drop-unsynced' });
    checks++;
    const store = await openEmbeddedStore({ ...OPTS, fs: copy });
    try {
      const got = await readAll(store);
      const lost = [...acked].filter(([cell, value]) => got.get(cell) !== value).map(([cell]) => cell);
      const back = [...deleted].filter((cell) => got.has(cell));
      if (lost.length > 0 || back.length > 0) {
        failures.push(`seed ${seed} (TEST_SEED=${seed}), after ${step}: ${lost.length} acknowledged writes lost (${lost.slice(0, 3).join(', ')}), ${back.length} deletes undone`);
      }
    } finally {
      await store.close();
    }
  };
  /** The process's view of the disk: every rename, remove and directory sync is checked once done. */
  class CheckedFs extends ErrorFileSystem {
    alive = true;
    override async rename(from: string, to: string): Promise<void> {
      await super.rename(from, to);
      if (this.alive) await check(`rename ${from} -> ${to}`);
      await later();
    }
    override async remove(path: string): Promise<void> {
      await super.remove(path);
      if (this.alive) await check(`remove ${path}`);
      await later();
    }
    override async syncDir(dir: string): Promise<void> {
      await super.syncDir(dir);
      if (this.alive) await check(`syncDir ${dir}`);
      await later();
    }
    override async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
      const f = await super.openAppend(path, opts);
      await later();
      if (!slow) return f;
      return {
        get path() { return f.path; },
        get size() { return f.size; },
        append: async (data) => { await f.append(data); await later(); },
        sync: async () => { await f.sync(); await later(); },
        close: () => f.close(),
      };
    }
  }
  for (let round = 0; round < rounds; round++) {
    const proc = new CheckedFs(mem);
    const store = await openEmbeddedStore({ ...OPTS, fs: proc });
    const t = await store.createTable(TABLE, { ifNotExists: true });
    const work = startWorkload(t, r, round, ledger);
    await new Promise((res) => setTimeout(res, 80 + r.int(200)));
    // The real power cut of this process: checks stop (the disk changes no more).
    proc.alive = false;
    mem.crash({ mode: 'random-prefix', random: () => r.next() });
    proc.inject({ ops: [...FS_OP_KINDS], code: 'EIO' });
    work.stop();
    await work.done;
  }
  expect(failures, failures.join('\n')).toEqual([]);
  expect(ledger.acked.size, `seed ${seed}: the run acknowledged writes`).toBeGreaterThan(20);
  return checks;
}

describe('durability at every step (simulated power loss after each file-system change)', () => {
  for (const seed of seeds(4242, 3)) {
    it(`seed ${seed}`, async () => {
      const checks = await run(seed, 4);
      // Flushes, compactions, splits and log rolls each rename, remove and sync.
      expect(checks).toBeGreaterThan(20);
    });
  }
  for (const seed of seeds(5151, 2)) {
    it(`on a slow disk, seed ${seed}`, async () => {
      expect(await run(seed, 4, true)).toBeGreaterThan(20);
    });
  }
});
