/**
 * A write issues its log write and fsync before it fills the memstores, so the disk works
 * while the main thread inserts (core/lsm/engine.ts write(), WalManager.append).
 *
 * The file system below records, at each call, what the engine holds in memstores: the
 * fsync covering a batch must be issued while the batch is not yet in a memstore, and
 * the write must still be visible and durable when it resolves.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import type { WritableFile } from '../../core/fs/fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { WalWriter } from '../../core/wal/wal-writer.js';

interface Call {
  readonly op: 'append' | 'sync';
  readonly path: string;
  readonly bytes: number;
}

/** Records every append and sync of .log files, with `probe()` taken at the call. */
class RecordingFs extends ErrorFileSystem {
  readonly log: Array<Call & { readonly probe: number }> = [];
  probe: () => number = () => 0;

  override async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    const f = await super.openAppend(path, opts);
    if (!path.endsWith('.log')) return f;
    const log = this.log;
    const fs = this;
    return {
      path: f.path,
      get size() {
        return f.size;
      },
      append(data: Uint8Array) {
        log.push({ op: 'append', path, bytes: data.length, probe: fs.probe() });
        return f.append(data);
      },
      sync() {
        log.push({ op: 'sync', path, bytes: 0, probe: fs.probe() });
        return f.sync();
      },
      close: () => f.close(),
    };
  }
}

function rows(prefix: string, n: number): Parameters<Table['mutate']>[0] {
  return Array.from({ length: n }, (_, i) => ({
    key: utf8(`${prefix}${String(i).padStart(5, '0')}`),
    mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value: utf8(`v${i}`) }],
  }));
}

describe('WalWriter.startRound', () => {
  it('writes and issues the fsync before it returns; without it the round waits for the microtask', async () => {
    const mem = new MemFileSystem();
    await mem.mkdir('/w');
    const fs = new RecordingFs(mem);
    const w = await WalWriter.open(fs, '/w/000001.log', 1, { bufferedWindowMs: 10 });
    fs.log.length = 0;

    const first = w.append(new Uint8Array(100).fill(1), true);
    expect(fs.log).toEqual([]);
    w.startRound();
    expect(fs.log.map((c) => c.op)).toEqual(['append', 'sync']);
    expect(mem.syncedSize('/w/000001.log')).toBe(w.sizeBytes);

    // A round is in flight: the next append waits for it, startRound or not.
    const second = w.append(new Uint8Array(100).fill(2), true);
    w.startRound();
    expect(fs.log.length).toBe(2);
    await Promise.all([first, second]);
    expect(fs.log.map((c) => c.op)).toEqual(['append', 'sync', 'append', 'sync']);
    expect(mem.syncedSize('/w/000001.log')).toBe(w.sizeBytes);

    // Without startRound, appends of one synchronous run share a round at its end.
    fs.log.length = 0;
    const a = w.append(new Uint8Array(10).fill(3), true);
    const b = w.append(new Uint8Array(10).fill(4), true);
    expect(fs.log).toEqual([]);
    await Promise.all([a, b]);
    expect(fs.log.map((c) => c.op)).toEqual(['append', 'sync']);
    await w.close();
  });
});

describe('engine write: the log fsync is issued before the memstores fill', () => {
  it('each batch is in no memstore when its fsync is issued, and visible and durable once acknowledged', async () => {
    const mem = new MemFileSystem();
    const fs = new RecordingFs(mem);
    const store = await openEmbeddedStore({ dir: '/db', fs, maintenanceIntervalMs: 0 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    fs.probe = () => store.engine.memstoreBytes();
    fs.log.length = 0;
    let before = store.engine.memstoreBytes();
    for (let k = 0; k < 5; k++) {
      const done = t.mutate(rows(`r${k}-`, 200), { durability: 'sync' });
      const grown = store.engine.memstoreBytes();
      await done;
      const syncs = fs.log.filter((c) => c.op === 'sync');
      expect(syncs.length, `batch ${k}`).toBe(k + 1);
      expect(syncs[k]!.probe, `batch ${k}: memstore bytes when its fsync was issued`).toBe(before);
      expect(grown, `batch ${k}: memstore bytes once mutate() returned its promise`).toBeGreaterThan(before);
      const [got] = await t.get([utf8(`r${k}-00199`)]);
      expect(got, `batch ${k} visible once acknowledged`).toBeDefined();
      before = store.engine.memstoreBytes();
    }
    // Power cut: only synced bytes survive; every acknowledged batch must.
    mem.crash({ mode: 'drop-unsynced' });
    const again = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    const t2 = await again.openTable('t');
    let n = 0;
    for await (const batch of t2.scan({})) n += batch.length;
    expect(n).toBe(5 * 200);
    await again.close();
  });
});

describe('NodeFileSystem: an operation on an idle file starts at once', () => {
  it('append writes before it returns; a sync issued meanwhile and later appends keep call order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'horae-nodefs-eager-'));
    try {
      const nfs = new NodeFileSystem();
      const path = join(dir, 'f.log');
      const f = await nfs.openAppend(path, { truncate: true });
      const p1 = f.append(utf8('one,'));
      // Written before any await: the bytes are in the file now.
      expect(readFileSync(path, 'utf8')).toBe('one,');
      const s1 = f.sync();
      const p2 = f.append(utf8('two,'));
      const s2 = f.sync();
      const p3 = f.append(utf8('three'));
      await Promise.all([p1, s1, p2, s2, p3]);
      expect(await readFile(path, 'utf8')).toBe('one,two,three');
      expect(f.size).toBe(13);
      await f.close();
      await expect(f.append(utf8('x'))).rejects.toMatchObject({ code: 'EBADF' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
