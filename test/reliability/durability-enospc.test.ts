/**
 * docs/DURABILITY.md, "Disk full" and "I/O errors": a child server on the quota file
 * system (HORAE_TEST_FS=quota, core/fs/quota-fs.ts) under HTTP and telnet load runs out of
 * space for its WAL, for its SSTs (flushes and compactions) and for its manifest, one
 * after the other, and gets the space back each time. Writes fail with a clear 503 (and a
 * telnet error line) while the disk is full, the server stays up and takes writes again
 * once space returns. Then an fsync error (EIO) stops acknowledgements for good, until a
 * restart; after a final SIGKILL every acknowledged point is there.
 *
 * Compaction out of space is also pinned in-process, where the next SST written is
 * certainly a compaction's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isStoreError } from '../../core/api/errors.js';
import type { Table } from '../../core/api/store.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { openEmbeddedStore } from '../../core/index.js';
import { killAllChildren, sleep, startChild, storeStats, tempDir } from './helpers/dur-child.js';
import { CRASH_CONFIG } from './helpers/dur-crash.js';
import { Ledger } from './helpers/dur-ledger.js';
import { httpWriter, newCounters, telnetWriter } from './helpers/dur-load.js';
import type { Target } from './helpers/dur-load.js';
import { prng } from './helpers/dur-child.js';

afterEach(killAllChildren);

/** Waits for `check`; on timeout the error carries `state()` (the server's and writers' state). */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, state?: () => Promise<string>): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      const seen = state === undefined ? '' : `; state: ${await state().catch((err: unknown) => String(err))}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await sleep(50);
  }
}

/** A child server on the quota layer, writers, a ledger; `finish` verifies after SIGKILL + restart. */
async function loadedServer(seed: number) {
  const tmp = tempDir('horae-enospc-');
  const dataDir = join(tmp.dir, 'data');
  mkdirSync(dataDir);
  const control = join(tmp.dir, 'quota');
  writeFileSync(control, 'unlimited');
  const env = { HORAE_TEST_FS: 'quota', HORAE_TEST_FS_QUOTA_FILE: control };
  const child = await startChild({ dataDir, config: CRASH_CONFIG, env });
  const ledger = new Ledger();
  const counters = newCounters();
  const target: Target = { port: child.port };
  let stopped = false;
  const load = { ledger, target, counters, isStopped: () => stopped, maxBatch: 300 };
  const writers = [
    httpWriter(0, { ...load, random: prng(seed) }),
    httpWriter(1, { ...load, random: prng(seed + 1) }),
    telnetWriter(2, { ...load, random: prng(seed + 2) }),
  ];
  return {
    child, counters, ledger,
    acks: () => counters.httpAcked + counters.telnetAcked,
    /** What a timed-out wait reports: the store's and the server's stats, the writers' counters. */
    async state(): Promise<string> {
      const get = (path: string): Promise<string> => fetch(`${child.base}${path}`, { signal: AbortSignal.timeout(5000) })
        .then((r) => r.text(), (err: unknown) => `${path}: ${String(err)}`);
      const { telnetErrorLines, ...rest } = counters;
      return `store ${await get('/api/stats/store')}; writers ${JSON.stringify({ ...rest, telnetErrorLines: telnetErrorLines.length })}`;
    },
    setRule: (rule: string) => writeFileSync(control, rule),
    async finish() {
      stopped = true;
      await Promise.all(writers);
      await child.kill9();
      const again = await startChild({ dataDir, config: CRASH_CONFIG });
      try {
        return await ledger.verify(again.base);
      } finally {
        await again.stop();
        tmp.remove();
      }
    },
  };
}

describe('disk full and I/O errors (child server)', () => {
  it('ENOSPC in WAL append, flush and manifest write: 503s, recovery when space returns; then an fsync error stops acks; nothing acknowledged lost', async () => {
    const s = await loadedServer(99);
    const { counters } = s;
    await waitFor(() => s.acks() > 2000, 20_000, 'load to start');
    const phase = async (rule: string, hit: () => boolean | Promise<boolean>, what: string): Promise<void> => {
      s.setRule(rule);
      await waitFor(hit, 20_000, what, s.state);
      const before = s.acks();
      s.setRule('unlimited');
      await waitFor(() => s.acks() > before + 1000, 20_000, `writes to resume after ${what}`, s.state);
    };

    // 1. The WAL cannot grow: every write fails with 503 + Retry-After, telnet gets error lines.
    await phase('full .log', () => counters.http503Full > 0 && counters.telnetErrorLines.some((l) => /no space left on device/.test(l)), 'WAL ENOSPC');
    expect(counters.http503RetryAfter).toBe(counters.http503);
    expect(counters.telnetErrorLines.find((l) => /no space/.test(l))).toMatch(/^put: HBase error: storage failed the write: .*no space left on device/);

    // 2. No SST can be written: flushes (and any compaction) fail and are retried; writes go
    //    on into memory until the memstore bound, then wait.
    const before = await storeStats(s.child.base);
    await phase('full .sst', async () => {
      const st = await storeStats(s.child.base);
      return (st.backgroundErrors ?? 0) >= (before.backgroundErrors ?? 0) + 2 && /no space/.test(st.lastBackgroundError ?? '');
    }, 'flush ENOSPC');
    const afterFlush = await storeStats(s.child.base);
    expect(afterFlush.writeFailure).toBeUndefined();

    // 3. The manifest cannot be written: writes pause (503) until it can.
    const full503 = counters.http503Full;
    await phase('full MANIFEST', () => counters.http503Full > full503, 'manifest ENOSPC');

    // The store flushed again after all that.
    await waitFor(async () => (await storeStats(s.child.base)).flushesDone > afterFlush.flushesDone, 20_000, 'a flush after the disk-full phases', s.state);

    // 4. An fsync error: acknowledgements stop for good, even once the disk "heals"
    //    (fsyncgate: a retried fsync may lie) — until a restart.
    const acksBefore = s.acks();
    await waitFor(() => s.acks() > acksBefore + 500, 20_000, 'writes before the fsync error');
    s.setRule('fsync-eio .log');
    await waitFor(() => Object.keys(counters.httpOther).includes('500'), 20_000, 'a 500 after the fsync error');
    const frozen = s.acks();
    s.setRule('unlimited');
    await sleep(1500);
    expect(s.acks()).toBe(frozen);
    expect((await storeStats(s.child.base)).writeFailure).toMatch(/i\/o error/);

    // Nothing acknowledged is missing after a kill and a restart.
    const report = await s.finish();
    console.info(`durability-enospc: ${report.acked} acknowledged, ${report.verified} verified; 503 (disk full) ${counters.http503Full}, ` +
      `500 after the fsync error ${counters.httpOther['500'] ?? 0}, telnet error lines ${counters.telnetErrors}`);
    expect(report.missingRuns).toEqual([]);
    expect(report.missing).toEqual([]);
    expect(report.wrongValue).toEqual([]);
    expect(report.phantom).toEqual([]);
    expect(report.verified).toBe(report.acked);
  }, 120_000);
});

describe('compaction out of space (in-process)', () => {
  const put = (t: Table, i: number): Promise<void> =>
    t.mutate([{ key: new TextEncoder().encode(`k${String(i).padStart(5, '0')}`), mutations: [{ type: 'put', family: 'f', qualifier: new Uint8Array([1]), value: new Uint8Array(200).fill(i & 255) }] }]);

  it('keeps its inputs and the data, and succeeds once space is back', async () => {
    const mem = new MemFileSystem();
    const efs = new ErrorFileSystem(mem);
    const store = await openEmbeddedStore({ dir: '/db', fs: efs, maintenanceIntervalMs: 0, compactionMinFiles: 100 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    for (let f = 0; f < 3; f++) {
      for (let i = 0; i < 100; i++) await put(t, f * 100 + i);
      await t.flush();
    }
    expect((await store.stats()).files).toBe(3);
    const full = efs.inject({ ops: 'append', path: '.sst', code: 'ENOSPC' });
    await t.compact().catch((e: unknown) => expect(isStoreError(e, 'STORE_NO_SPACE'), String(e)).toBe(true));
    const liveFiles = async (): Promise<number> => (await t.regions()).reduce((n, r) => n + r.stats.files, 0);
    const st = await store.stats();
    expect(full.fired).toBeGreaterThan(0);
    expect(await liveFiles()).toBe(3);
    expect(st.lastBackgroundError).toMatch(/no space/);
    expect(st.writeFailure).toBeUndefined();
    expect((await mem.list('/db')).filter((n) => n.includes('.sst'))).toHaveLength(3); // no partial output left
    await put(t, 999); // writes are not stopped by a compaction out of space
    const rows = await t.get([0, 150, 299, 999].map((i) => new TextEncoder().encode(`k${String(i).padStart(5, '0')}`)));
    expect(rows.every((r) => r !== undefined)).toBe(true);
    full.remove();
    await t.compact();
    expect(await liveFiles()).toBe(1);
    await store.close();
    mem.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    const t2 = await reopened.openTable('t');
    const all = await t2.get(Array.from({ length: 300 }, (_, i) => new TextEncoder().encode(`k${String(i).padStart(5, '0')}`)));
    expect(all.filter((r) => r === undefined)).toHaveLength(0);
    // No partial output of the failed compaction is left behind.
    expect((await mem.list('/db')).filter((n) => n.endsWith('.sst'))).toHaveLength(1);
    await reopened.close();
  });
});
