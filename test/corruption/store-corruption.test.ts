/**
 * Corruption (leveldb corruption_test, log_test): flip one byte of a store file, reopen,
 * read everything, and check that damage is either reported or harmless, never turned
 * into wrong data.
 *
 *  - SSTs and the MANIFEST: the open or a read fails with STORE_CORRUPTION whose message
 *    names the file and an offset (`@<n>` or `offset <n>`), or every read returns exactly
 *    the data written. Reads that succeed before or beside a failing one must be right too
 *    (a scan's rows before the error, gets of rows in undamaged blocks).
 *  - WAL files (data never flushed): with default options the store opens without the
 *    damaged records and counts them in `engine.counters.recoveryDroppedBytes`; every cell
 *    it returns holds a value that was written to that cell, and anything missing or older
 *    than written must come with dropped bytes > 0. With `paranoidChecks` the open fails
 *    with STORE_CORRUPTION naming the WAL file and the offset, or the data is exact.
 *
 * Offsets: a stride over each file, its first and last bytes, the SST footers and WAL
 * block boundaries in full, and seeded random ones. TEST_SEED=<n> replays a seed; each
 * failure prints seed, file, offset and XOR mask.
 *
 * Here: SSTs and the MANIFEST; wal-corruption.test.ts: WAL files; corruption-regressions.test.ts:
 * the bugs these sweeps found; corruption-helpers.ts: the model, reads and sweeps.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { Random } from '../../core/util/random.js';
import { FOOTER_BYTES } from '../../core/sst/sst-format.js';
import { SEED, DIR, newModel, NOTHING_TOLERATED, readEverything, pickOffsets, openDamaged, failureReport, buildSstStore, sweep } from './corruption-helpers.js';

describe(`store corruption: SSTs and MANIFEST (seed ${SEED})`, () => {
  const m = newModel();
  const base = new MemFileSystem();
  let ssts: string[] = [];

  beforeAll(async () => {
    await buildSstStore(base, m);
    ssts = (await base.list(DIR)).filter((n) => n.endsWith('.sst'));
    // The setup must produce what the trials are about.
    expect(ssts.length).toBeGreaterThanOrEqual(6);
    // A graceful close after flushing everything leaves no log: the SSTs and the MANIFEST are the store.
    expect((await base.list(DIR)).filter((n) => n.endsWith('.log'))).toHaveLength(0);
    // And the undamaged store must read back exactly.
    const clean = await openDamaged(base.clone(), {});
    try {
      const res = await readEverything(clean, m, 'none', 'exact');
      expect(res.problems).toEqual([]);
      expect(res.exact).toBe(true);
    } finally {
      await clean.close();
    }
  });

  it('every flipped SST byte is reported with file and offset, or changes nothing', async () => {
    const r = new Random(SEED ^ 0x5eed);
    const failures: string[] = [];
    let trials = 0;
    let detected = 0;
    for (const name of ssts) {
      const size = await base.size(`${DIR}/${name}`);
      const footer = Array.from({ length: FOOTER_BYTES }, (_, k) => size - FOOTER_BYTES + k);
      const offsets = pickOffsets(r, size, 120, footer);
      const res = await sweep(base, m, name, offsets, r, {}, () => NOTHING_TOLERATED);
      failures.push(...res.failures);
      trials += offsets.length;
      detected += res.detected + res.known;
    }
    expect(failures, failureReport(failures, trials)).toEqual([]);
    // Every SST byte is covered by a checksum: nearly every flip must be noticed.
    expect(detected).toBeGreaterThan(trials * 0.95);
  });

  it('every flipped MANIFEST byte is reported with file and offset, or changes nothing', async () => {
    const r = new Random(SEED ^ 0x3a41);
    const size = await base.size(`${DIR}/MANIFEST`);
    // The 20-byte header in full, then the payload.
    const offsets = pickOffsets(r, size, 200, Array.from({ length: 20 }, (_, k) => k));
    const res = await sweep(base, m, 'MANIFEST', offsets, r, {}, () => NOTHING_TOLERATED);
    expect(res.failures, failureReport(res.failures, offsets.length)).toEqual([]);
    expect(res.detected + res.known).toBeGreaterThan(offsets.length * 0.9);
  });

  it('the checks catch wrong data: with verifyChecksums off, flipped data-block bytes are reported as failures', async () => {
    // The sweep above passing means something only if its oracle sees altered data.
    const r = new Random(SEED ^ 0xbad);
    const name = ssts[0]!;
    const size = await base.size(`${DIR}/${name}`);
    const offsets = pickOffsets(r, Math.floor(size / 2), 40); // the first half: data blocks
    const res = await sweep(base, m, name, offsets, r, { verifyChecksums: false }, () => NOTHING_TOLERATED);
    expect(res.failures.some((f) => /wrong data|invented data/.test(f)), failureReport(res.failures, offsets.length)).toBe(true);
  });
});
