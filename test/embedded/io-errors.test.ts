/**
 * I/O failures in the engine: a failed WAL write or fsync stops writes (every later write
 * rejects, nothing more is acknowledged) while reads go on; a flush that runs out of space
 * is retried and succeeds once space returns; a reopen recovers every acknowledged write.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import type { Table } from '../../core/api/store.js';

const put = (t: Table, k: string, v: string) =>
  t.mutate([{ key: utf8(k), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(v) }] }]);

async function values(t: Table, keys: string[]): Promise<(string | null)[]> {
  const rows = await t.get(keys.map(utf8));
  return rows.map((r) => (r === undefined ? null : fromUtf8(r.cells[0]!.value)));
}

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
});
