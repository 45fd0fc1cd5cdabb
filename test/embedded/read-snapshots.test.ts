/**
 * Reads hold their snapshot while they run (SeqTracker.holdSnapshot): a major compaction
 * then keeps every version such a read still sees, and the snapshot is released however
 * the read ends (done, broken out of, failed, abandoned). The contract suite checks what a
 * scan sees across regions compacted behind its back (contract-scan.ts).
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Store, Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedStoreExtras } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';

type EmbeddedStore = Store & EmbeddedStoreExtras;

/** A forced garbage collection (the flag set at run time, the function from a new context). */
function forceGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const put = (k: string, v: string) => ({ key: utf8(k), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(v) }] });
const text = (b: Uint8Array) => Buffer.from(b).toString();

async function withStore(fn: (store: EmbeddedStore, t: Table) => Promise<void>): Promise<void> {
  const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), maintenanceIntervalMs: 0 });
  try {
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }], splitPoints: [utf8('m')] });
    await fn(store, t);
  } finally {
    await store.close();
  }
}

describe('read snapshots', () => {
  it('a scan holds its snapshot until it ends, breaks or fails, and a compaction meanwhile keeps the version it sees', async () => {
    await withStore(async (store, t) => {
      const seqs = store.engine.seqs;
      await t.mutate([put('a', 'a1'), put('z', 'z1')]);
      await t.flush();
      const values: string[] = [];
      for await (const batch of t.scan({ batchRows: 1 })) {
        expect(seqs.heldSnapshots).toBe(1);
        values.push(...batch.map((r) => text(r.cells[0]!.value)));
        if (values.length === 1) {
          await t.mutate([put('z', 'z2')]);
          await t.flush();
          expect(seqs.oldestSnapshot()).toBeLessThan(seqs.visibleSeq);
          await t.compact({ major: true });
        }
      }
      expect(values).toEqual(['a1', 'z1']);
      expect(seqs.heldSnapshots).toBe(0);
      expect(seqs.oldestSnapshot()).toBe(seqs.visibleSeq);
      // Once no read holds the old snapshot, a major compaction drops the old version.
      await t.compact({ major: true });
      const [z] = await t.get([utf8('z')], { maxVersions: 5 });
      expect(z!.cells.map((c) => text(c.value))).toEqual(['z2']);

      for await (const batch of t.scan({ batchRows: 1 })) {
        expect(batch.length).toBe(1);
        break;
      }
      expect(seqs.heldSnapshots).toBe(0);

      const ac = new AbortController();
      await expect((async () => {
        for await (const batch of t.scan({ batchRows: 1, signal: ac.signal })) {
          expect(batch.length).toBe(1);
          ac.abort();
        }
      })()).rejects.toMatchObject({ code: 'STORE_ABORTED' });
      expect(seqs.heldSnapshots).toBe(0);

      await t.get([utf8('a'), utf8('z')]);
      expect(seqs.heldSnapshots).toBe(0);
    });
  });

  it('a scan abandoned mid-way (no return()) releases its snapshot once collected', async () => {
    await withStore(async (store, t) => {
      await t.mutate([put('a', 'a1'), put('z', 'z1')]);
      await (async () => {
        const it = t.scan({ batchRows: 1 })[Symbol.asyncIterator]();
        await it.next();
        expect(store.engine.seqs.heldSnapshots).toBe(1);
      })();
      for (let i = 0; i < 20 && store.engine.seqs.heldSnapshots > 0; i++) {
        forceGc();
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(store.engine.seqs.heldSnapshots).toBe(0);
    });
  });
});
