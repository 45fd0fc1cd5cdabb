/**
 * docs/DURABILITY.md, promises 1–3 under power loss: the same crash loop as
 * durability-crash.test.ts, with the server on the lazy file system (HORAE_TEST_FS=lazy,
 * core/fs/lazy-fs.ts): every byte not yet fsynced lives only in the server's memory, so
 * each SIGKILL loses exactly the unsynced bytes, as a power cut would. A 204 or telnet
 * acknowledgement given before its fsync, a manifest naming a file whose bytes were never
 * synced, or a WAL deleted before its data was durable elsewhere shows up here as a
 * missing point or a server that cannot restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { killAllChildren } from './helpers/dur-child.js';
import { CRASH_CONFIG, describeResult, runCrashLoop } from './helpers/dur-crash.js';

afterEach(killAllChildren);

describe('crash under load, unsynced bytes dropped (lazy file system)', () => {
  it('keeps every acknowledged point through 5 power-loss kills', async () => {
    const r = await runCrashLoop({
      seed: 7_011_235, kills: 5, acksPerLife: 8000, maxExtraMs: 1500, httpWriters: 4, telnetWriters: 2, maxBatch: 500,
      env: { HORAE_TEST_FS: 'lazy' },
    });
    console.info(describeResult('durability-lazy', r));
    expect(r.report.missingRuns, r.recheck).toEqual([]);
    expect(r.report.missing).toEqual([]);
    expect(r.report.wrongValue).toEqual([]);
    expect(r.report.phantom).toEqual([]);
    expect(r.report.verified).toBe(r.report.acked);
    expect(r.counters.httpAcked).toBeGreaterThan(5000);
    expect(r.counters.telnetAcked).toBeGreaterThan(5000);
    expect(r.flushes).toBeGreaterThan(5);
    expect(r.compactions).toBeGreaterThan(0);
    expect(r.splits).toBeGreaterThan(0);
    expect(r.finalExitCode).toBe(0);
  }, 120_000);

  // The layer catches a missing fsync: in the relaxed mode (horae.write.durability =
  // buffered) a 204 comes before the fsync, and a power loss may take the last
  // ~bufferedWindowMs of acknowledged points — exactly what docs/DURABILITY.md says, and
  // what the test above would report if the default mode acknowledged before its fsync.
  // A loss needs a kill while acknowledged points wait for their fsync. One full-suite run
  // saw 0 lost in 2 kills (likely both landed while the writers were stalled on a busy
  // machine: no acknowledgement within the last window, so nothing unsynced was
  // acknowledged). So up to 3 runs, until one shows the loss; every run must be free of
  // wrong values and phantoms.
  it('shows the documented loss window of the relaxed buffered mode', async () => {
    let lost = 0;
    for (let attempt = 0; attempt < 3 && lost === 0; attempt++) {
      const r = await runCrashLoop({
        seed: 424_242 + attempt, kills: 2, acksPerLife: 3000, maxExtraMs: 800, httpWriters: 2, telnetWriters: 0, maxBatch: 300,
        syncFraction: 0, env: { HORAE_TEST_FS: 'lazy' }, config: [...CRASH_CONFIG, 'horae.write.durability = buffered'],
      });
      lost = r.report.acked - r.report.verified;
      console.info(`${describeResult(`durability-lazy (buffered mode, run ${attempt + 1})`, r)}; acknowledged but lost: ${lost}`);
      expect(r.report.wrongValue).toEqual([]);
      expect(r.report.phantom).toEqual([]);
    }
    expect(lost).toBeGreaterThan(0);
  }, 120_000);
});
