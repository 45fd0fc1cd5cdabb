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
  for (const [op, code, storeCode] of [['append', 'ENOSPC', 'STORE_NO_SPACE'], ['sync', 'EIO', 'STORE_IO']] as const) {
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
