/**
 * I/O failures in the engine: a failed WAL write or fsync stops writes (every later write
 * rejects, nothing more is acknowledged) while reads go on; a flush that runs out of space
 * is retried and succeeds once space returns; a reopen recovers every acknowledged write.
 */
import { describe, expect, it, vi } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import type { Table } from '../../core/api/store.js';
import type { FileSystem, WritableFile } from '../../core/fs/fs.js';
import { sstName } from '../../core/lsm/filenames.js';
import { readManifest } from '../../core/lsm/manifest.js';

const put = (t: Table, k: string, v: string) =>
  t.mutate([{ key: utf8(k), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(v) }] }]);

async function values(t: Table, keys: string[]): Promise<(string | null)[]> {
  const rows = await t.get(keys.map(utf8));
  return rows.map((r) => (r === undefined ? null : fromUtf8(r.cells[0]!.value)));
}

/** A gate on one file's appends or syncs: calls wait until it opens (or fail with EIO). */
interface Gate {
  readonly op: 'append' | 'sync';
  readonly path: string;
  /** Resolves once a call has reached the gate. */
  readonly reached: Promise<void>;
  open(): void;
  fail(): void;
}

/** `inner` with its writable files' appends and syncs held at the gates armed by `hold`. */
function gatedFs(inner: FileSystem): { fs: FileSystem; hold(op: Gate['op'], path: string): Gate } {
  const gates: Gate[] = [];
  const pass = async (op: Gate['op'], path: string): Promise<void> => {
    const g = gates.find((x) => x.op === op && x.path === path);
    if (g !== undefined) await (g as Gate & { wait(): Promise<void> }).wait();
  };
  const wrap = (f: WritableFile, path: string): WritableFile => ({
    get path() { return f.path; },
    get size() { return f.size; },
    append: async (d) => { await pass('append', path); return f.append(d); },
    sync: async () => { await pass('sync', path); return f.sync(); },
    close: () => f.close(),
  });
  const fs = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'openAppend') return async (path: string, opts?: { readonly truncate?: boolean }) => wrap(await target.openAppend(path, opts), path);
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const hold = (op: Gate['op'], path: string): Gate => {
    let release!: (fail: boolean) => void;
    const opened = new Promise<boolean>((res) => (release = res));
    let reachedNow!: () => void;
    const reached = new Promise<void>((res) => (reachedNow = res));
    const g = {
      op, path, reached,
      open: () => release(false),
      fail: () => release(true),
      wait: async () => {
        reachedNow();
        if (await opened) throw Object.assign(new Error(`EIO: i/o error (gate), ${op} '${path}'`), { code: 'EIO' });
      },
    };
    gates.push(g);
    return g;
  };
  return { fs, hold };
}

const logsIn = async (mem: MemFileSystem): Promise<string[]> => (await mem.list('/db')).filter((n) => n.endsWith('.log')).sort().map((n) => `/db/${n}`);

describe('embedded engine under I/O errors', () => {
  for (const [op, code, storeCode] of [['append', 'EIO', 'STORE_IO'], ['sync', 'EIO', 'STORE_IO']] as const) {
    it(`a WAL ${op} failing with ${code} stops writes with ${storeCode}; reads go on; reopen keeps what was acknowledged`, async () => {
      const mem = new MemFileSystem();
      const efs = new ErrorFileSystem(mem);
      const store = await openEmbeddedStore({ dir: '/db', fs: efs, maintenanceIntervalMs: 0 });
      const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
      await put(t, 'a', '1');
      efs.inject({ ops: op, path: '.log', code, times: 1 });
      const err = await put(t, 'b', '2').then(() => undefined, (e: unknown) => e);
      expect(isStoreError(err, storeCode), String(err)).toBe(true);
      // The failure is sticky: no later write is acknowledged, even with the disk healthy.
      const later = await put(t, 'c', '3').then(() => undefined, (e: unknown) => e);
      expect(isStoreError(later), String(later)).toBe(true);
      expect((await store.stats()).writeFailure).toBeDefined();
      expect(await values(t, ['a'])).toEqual(['1']);
      await store.close();
      const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
      const t2 = await reopened.openTable('t');
      expect((await values(t2, ['a', 'c']))).toEqual(['1', null]);
      await put(t2, 'd', '4');
      expect(await values(t2, ['d'])).toEqual(['4']);
      await reopened.close();
    });
  }

  it('a WAL append failing with ENOSPC refuses writes (retryable) until space is back, then the store recovers by itself', async () => {
    const mem = new MemFileSystem();
    const efs = new ErrorFileSystem(mem);
    const store = await openEmbeddedStore({ dir: '/db', fs: efs, maintenanceIntervalMs: 0 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    await put(t, 'a', '1');
    const full = efs.inject({ ops: 'append', path: '.log', code: 'ENOSPC' });
    const err = await put(t, 'b', '2').then(() => undefined, (e: unknown) => e);
    expect(isStoreError(err, 'STORE_NO_SPACE') && err.retryable, String(err)).toBe(true);
    // Still full: writes stay refused (the recovery's new log cannot be created either).
    await new Promise((r) => setTimeout(r, 200));
    const later = await put(t, 'c', '3').then(() => undefined, (e: unknown) => e);
    expect(isStoreError(later, 'STORE_NO_SPACE'), String(later)).toBe(true);
    expect((await store.stats()).writeFailure).toMatch(/no space left on device/);
    expect(await values(t, ['a'])).toEqual(['1']);
    full.remove();
    let ok = false;
    for (let i = 0; i < 200 && !ok; i++) {
      ok = await put(t, 'd', '4').then(() => true, () => false);
      if (!ok) await new Promise((r) => setTimeout(r, 20));
    }
    expect(ok).toBe(true);
    expect((await store.stats()).writeFailure).toBeUndefined();
    expect(store.engine.counters.noSpaceRecoveries).toBe(1);
    // The refused 'b' was in memory when the log failed: recovery persisted it ("maybe stored").
    expect(await values(t, ['a', 'b', 'c', 'd'])).toEqual(['1', '2', null, '4']);
    await store.close();
    mem.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    expect(await values(await reopened.openTable('t'), ['a', 'b', 'c', 'd'])).toEqual(['1', '2', null, '4']);
    await reopened.close();
  });

  it('a manifest write out of space pauses writes; they resume once space is back', async () => {
    const mem = new MemFileSystem();
    const efs = new ErrorFileSystem(mem);
    const store = await openEmbeddedStore({ dir: '/db', fs: efs, maintenanceIntervalMs: 0, memstoreFlushBytes: 2048 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const full = efs.inject({ ops: 'append', path: 'MANIFEST', code: 'ENOSPC', times: 4 });
    let refused = 0;
    const acked: string[] = [];
    for (let i = 0; i < 300; i++) {
      const key = `k${String(i).padStart(3, '0')}`;
      const ok = await put(t, key, `v${i}`).then(() => true, (e: unknown) => {
        expect(isStoreError(e, 'STORE_NO_SPACE'), String(e)).toBe(true);
        return false;
      });
      if (ok) acked.push(key);
      else {
        refused++;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    expect(full.fired).toBe(4);
    expect(refused).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(0);
    expect(store.engine.counters.noSpaceRecoveries).toBeGreaterThan(0);
    await put(t, 'last', 'x');
    await store.close();
    mem.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    // Every acknowledged write survives a power loss after the recovery.
    const rows = await (await reopened.openTable('t')).get([...acked, 'last'].map(utf8));
    expect(rows.filter((r) => r === undefined)).toHaveLength(0);
    await reopened.close();
  });

  it('a manifest out of space while a region has several memstores queued for flush: writes resume once space is back', async () => {
    const mem = new MemFileSystem();
    const efs = new ErrorFileSystem(mem);
    const store = await openEmbeddedStore({ dir: '/db', fs: efs, maintenanceIntervalMs: 0, memstoreFlushBytes: 1024 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const value = 'x'.repeat(300);
    const acked: string[] = [];
    let stop = false;
    let n = 0;
    // Eight writers fill memstores faster than one flush at a time empties them.
    const writer = async (): Promise<void> => {
      while (!stop) {
        const key = `k${String(n++).padStart(5, '0')}`;
        await put(t, key, value).then(() => acked.push(key), async (e: unknown) => {
          expect(isStoreError(e, 'STORE_NO_SPACE'), String(e)).toBe(true);
          await new Promise((r) => setTimeout(r, 5));
        });
      }
    };
    const writers = Array.from({ length: 8 }, () => writer());
    await vi.waitFor(() => expect(store.engine.counters.flushesDone).toBeGreaterThan(2));
    const full = efs.inject({ ops: 'append', path: 'MANIFEST', code: 'ENOSPC' });
    await vi.waitFor(() => expect(full.fired).toBeGreaterThan(0));
    await new Promise((r) => setTimeout(r, 100));
    full.remove();
    // Space is back: the recovery flushes every queued memstore, records them, and writes
    // are accepted again.
    const before = acked.length;
    await vi.waitFor(() => expect(acked.length).toBeGreaterThan(before + 100), { timeout: 5000 });
    stop = true;
    await Promise.all(writers);
    expect((await store.stats()).writeFailure).toBeUndefined();
    expect(store.engine.counters.noSpaceRecoveries).toBeGreaterThan(0);
    // Once compacted away, every file is deleted: also those whose flush was installed when
    // the manifest could not be written.
    await t.compact({ major: true });
    await vi.waitFor(async () => {
      const recorded = (await readManifest(mem, '/db'))!.files.map((f) => sstName(f.number)).sort();
      expect((await mem.list('/db')).filter((f) => f.endsWith('.sst')).sort()).toEqual(recorded);
    });
    await store.close();
    mem.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    const rows = await (await reopened.openTable('t')).get(acked.map(utf8));
    expect(rows.filter((r) => r === undefined)).toHaveLength(0);
    await reopened.close();
  });

  it('a flush out of space is retried, writes keep going, and it succeeds once space returns', async () => {
    const mem = new MemFileSystem();
    const efs = new ErrorFileSystem(mem);
    const store = await openEmbeddedStore({ dir: '/db', fs: efs, maintenanceIntervalMs: 0, memstoreFlushBytes: 2048 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const rule = efs.inject({ ops: 'append', path: '.sst', code: 'ENOSPC', times: 3 });
    for (let i = 0; i < 200; i++) await put(t, `k${String(i).padStart(3, '0')}`, `v${i}`);
    // flush() reports the failure (retryable) while the engine keeps retrying in the background.
    const first = await t.flush().then(() => undefined, (e: unknown) => e);
    expect(isStoreError(first, 'STORE_NO_SPACE') && first.retryable, String(first)).toBe(true);
    await put(t, 'during', 'x'); // writes are not stopped by a flush out of space
    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      ok = await t.flush().then(() => true, () => false);
      if (!ok) await new Promise((r) => setTimeout(r, 20));
    }
    expect(ok).toBe(true);
    expect(rule.fired).toBe(3);
    const s = await store.stats();
    expect(s.backgroundErrors).toBeGreaterThanOrEqual(3);
    expect(s.writeFailure).toBeUndefined();
    expect(s.files).toBeGreaterThan(0);
    expect(await values(t, ['k000', 'k199', 'during'])).toEqual(['v0', 'v199', 'x']);
    await store.close();
  });

  it('a write acknowledged on a new log after an earlier write failed on the old one settles, with the failure, instead of waiting forever for the read point', async () => {
    const mem = new MemFileSystem();
    const { fs, hold } = gatedFs(mem);
    // A log of 1 byte: every write starts a new one.
    const store = await openEmbeddedStore({ dir: '/db', fs, maintenanceIntervalMs: 0, walFileBytes: 1 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    const [oldLog] = await logsIn(mem);
    const oldSync = hold('sync', oldLog!);
    // A (synced) waits for the old log's fsync; meanwhile the store moves to a new log.
    const a = put(t, 'a', '1').then(() => undefined, (e: unknown) => e);
    await oldSync.reached;
    let logs = await logsIn(mem);
    for (let i = 0; i < 100 && logs.length < 2; i++) {
      await new Promise((r) => setImmediate(r));
      logs = await logsIn(mem);
    }
    expect(logs.length, 'the store started a new log').toBe(2);
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    const newAppend = hold('append', logs[1]!);
    // B (buffered) goes to the new log, which writes nothing before the old one is durable
    // whole (wal-writer.ts invariant 4): B's bytes wait for A's log.
    const b = t.mutate([{ key: utf8('b'), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('2') }] }], { durability: 'buffered' })
      .then(() => 'ok', (e: unknown) => e);
    let appended = false;
    void newAppend.reached.then(() => (appended = true));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(appended, 'the new log wrote before the old one was synced').toBe(false);
    oldSync.fail();
    const errA = await a;
    expect(isStoreError(errA, 'STORE_IO'), String(errA)).toBe(true);
    newAppend.open();
    // The old log failed, so the new one fails too: B must settle with the failure, not hang.
    const settled = await Promise.race([b, new Promise((r) => setTimeout(() => r('still waiting'), 2000))]);
    expect(isStoreError(settled, 'STORE_IO'), String(settled)).toBe(true);
    await store.close().catch(() => undefined);
    // A reopen recovers (what survives of A and B is not promised: both were told they failed).
    const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    const t2 = await reopened.openTable('t');
    await put(t2, 'c', '3');
    expect(await values(t2, ['c'])).toEqual(['3']);
    await reopened.close();
  });
});
