/**
 * docs/DURABILITY.md, promises 1–3: a 204 (plain and ?sync) and a telnet put acknowledged
 * by a later `version` reply survive `kill -9` of the server, at any moment, while it
 * flushes, compacts and splits; nothing that was never sent appears.
 *
 * The real file system and the worker-thread jobs, as in production. A SIGKILL keeps the
 * OS page cache, so this test cannot see a missing fsync; durability-lazy.test.ts can.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { killAllChildren } from './helpers/dur-child.js';
import { describeResult, runCrashLoop } from './helpers/dur-crash.js';

afterEach(killAllChildren);

describe('crash under load (SIGKILL, real file system)', () => {
  it('keeps every acknowledged point through 5 kills at random moments', async () => {
    const r = await runCrashLoop({
      seed: 20261125, kills: 5, acksPerLife: 10_000, maxExtraMs: 1500, httpWriters: 4, telnetWriters: 2, maxBatch: 500,
    });
    console.info(describeResult('durability-crash', r));
    expect(r.report.missingRuns, r.recheck).toEqual([]);
    expect(r.report.missing).toEqual([]);
    expect(r.report.wrongValue).toEqual([]);
    expect(r.report.phantom).toEqual([]);
    expect(r.report.verified).toBe(r.report.acked);
    // The run did what it claims: both protocols were acknowledged, and the store flushed,
    // compacted and split while being killed.
    expect(r.counters.httpAcked).toBeGreaterThan(5000);
    expect(r.counters.telnetAcked).toBeGreaterThan(5000);
    expect(r.flushes).toBeGreaterThan(5);
    expect(r.compactions).toBeGreaterThan(0);
    expect(r.splits).toBeGreaterThan(0);
    expect(r.finalExitCode).toBe(0);
  }, 120_000);
});
