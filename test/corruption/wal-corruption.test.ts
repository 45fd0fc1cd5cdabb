/** Corruption of WAL files (data never flushed): see store-corruption.test.ts. */
import { beforeAll, describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { Random } from '../../core/util/random.js';
import { WAL_BLOCK_SIZE } from '../../core/wal/wal-format.js';
import { readWal } from '../../core/wal/wal-reader.js';
import { SEED, DIR, newModel, errorProblem, readEverything, describeTrial, pickOffsets, pickMask, openDamaged, failureReport, buildWalStore } from './corruption-helpers.js';
import type { Trial } from './corruption-helpers.js';

describe(`store corruption: WAL (seed ${SEED})`, () => {
  const m = newModel();
  const base = new MemFileSystem();
  let wals: string[] = [];

  beforeAll(async () => {
    await buildWalStore(base, m);
    wals = (await base.list(DIR)).filter((n) => n.endsWith('.log'));
    expect((await base.list(DIR)).filter((n) => n.endsWith('.sst'))).toEqual([]);
    expect(wals.length).toBeGreaterThanOrEqual(2);
    for (const w of wals) expect((await readWal(base, `${DIR}/${w}`)).tornTail).toBe(false);
    const clean = await openDamaged(base.clone(), {});
    try {
      const res = await readEverything(clean, m, 'none', 'exact');
      expect(res.problems).toEqual([]);
      expect(res.exact).toBe(true);
      expect(clean.engine.counters.recoveryDroppedBytes).toBe(0);
    } finally {
      await clean.close();
    }
  });

  it('a flipped WAL byte drops records (counted), never alters them; paranoidChecks refuses to open', async () => {
    const r = new Random(SEED ^ 0x7a1);
    const failures: string[] = [];
    let trials = 0;
    let dropped = 0;
    let refused = 0;
    for (const name of wals) {
      const path = `${DIR}/${name}`;
      const size = await base.size(path);
      const boundaries = [];
      for (let b = WAL_BLOCK_SIZE; b < size; b += WAL_BLOCK_SIZE) for (let k = -8; k < 8; k++) boundaries.push(b + k);
      const offsets = pickOffsets(r, size, 200, boundaries);
      for (const offset of offsets) {
        trials++;
        const trial: Trial = { file: name, offset, mask: pickMask(r) };
        const damaged = base.clone();
        damaged.corrupt(path, offset, trial.mask);

        // Default options: skip the damage, count it, return only written data.
        let store;
        try {
          store = await openDamaged(damaged.clone(), {});
        } catch (err) {
          // Only a damaged META record (the file's first 27 bytes) may stop the open.
          const p = errorProblem(err, name, 'open');
          if (p !== undefined) failures.push(describeTrial(trial, `: ${p}`));
          store = undefined;
        }
        if (store !== undefined) {
          try {
            const res = await readEverything(store, m, name, 'written');
            const lost = store.engine.counters.recoveryDroppedBytes;
            if (lost > 0) dropped++;
            if (res.problems.length > 0) failures.push(describeTrial(trial, `: ${res.problems.join('; ')}`));
            else if (!res.exact && lost === 0) {
              failures.push(describeTrial(trial, ': data was lost or rolled back, but recoveryDroppedBytes is 0 (silent loss)'));
            }
          } finally {
            await store.close();
          }
        }

        // paranoidChecks: refuse to open, naming file and offset, unless nothing was lost.
        let paranoid;
        try {
          paranoid = await openDamaged(damaged.clone(), { paranoidChecks: true });
        } catch (err) {
          const p = errorProblem(err, name, 'paranoid open');
          if (p !== undefined) failures.push(describeTrial(trial, `: ${p}`));
          else refused++;
          continue;
        }
        try {
          const res = await readEverything(paranoid, m, name, 'exact');
          if (res.problems.length > 0) failures.push(describeTrial(trial, ` (paranoid): ${res.problems.join('; ')}`));
        } finally {
          await paranoid.close();
        }
      }
    }
    expect(failures, failureReport(failures, trials)).toEqual([]);
    // Most flips hit a record: they must have been noticed.
    expect(dropped).toBeGreaterThan(trials * 0.5);
    expect(refused).toBeGreaterThan(trials * 0.5);
  });
});
