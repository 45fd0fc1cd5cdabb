/**
 * Opening a store reads no data file (issue 31, "Restarts"): the manifest, the directory
 * listing and the WAL are all a clean open reads; SSTs are opened when a read first needs
 * them and each read verifies only the blocks it reads. Damage in a block no read reached
 * is not noticed at open; a read or a compaction that meets it names the file and offset
 * in StoreStats.damagedFiles (lsm/damage-log.ts).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/index.js';
import type { EmbeddedOptions } from '../../core/index.js';
import type { FileSystem, RandomAccessFile } from '../../core/fs/fs.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { SstReader } from '../../core/sst/sst-reader.js';
import { compare } from '../../core/lsm/sst-options.js';
import { utf8 } from '../../core/api/bytes.js';

/** Delegates to the real file system, counting bytes read from SST files. */
class CountingFs implements FileSystem {
  sstBytesRead = 0;
  sstOpens = 0;
  private readonly inner = new NodeFileSystem();
  mkdir(d: string): Promise<void> { return this.inner.mkdir(d); }
  list(d: string): Promise<string[]> { return this.inner.list(d); }
  exists(p: string): Promise<boolean> { return this.inner.exists(p); }
  size(p: string): Promise<number> { return this.inner.size(p); }
  async readFile(p: string): Promise<Uint8Array> {
    const b = await this.inner.readFile(p);
    if (p.endsWith('.sst')) this.sstBytesRead += b.length;
    return b;
  }
  async openRead(p: string): Promise<RandomAccessFile> {
    const f = await this.inner.openRead(p);
    if (!p.endsWith('.sst')) return f;
    this.sstOpens++;
    return {
      path: f.path,
      size: f.size,
      readSync: (pos: number, len: number) => {
        this.sstBytesRead += len;
        return f.readSync(pos, len);
      },
      close: () => f.close(),
    };
  }
  openAppend(p: string, o?: { readonly truncate?: boolean }): ReturnType<FileSystem['openAppend']> { return this.inner.openAppend(p, o); }
  rename(a: string, b: string): Promise<void> { return this.inner.rename(a, b); }
  remove(p: string): Promise<void> { return this.inner.remove(p); }
  removeDir(d: string): Promise<void> { return this.inner.removeDir(d); }
  syncDir(d: string): Promise<void> { return this.inner.syncDir(d); }
  lock(p: string): ReturnType<FileSystem['lock']> { return this.inner.lock(p); }
}

const OPTS: Partial<EmbeddedOptions> = { compactionMinFiles: 1000, maintenanceIntervalMs: 0, blockSizeBytes: 1024 };
const FAMILY = 'f';
const key = (i: number): Uint8Array => utf8(`row-${String(i).padStart(6, '0')}`);
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A store of `files` flushed files of 200 rows each, closed cleanly. */
async function build(files: number): Promise<number> {
  dir = mkdtempSync(join(tmpdir(), 'horae-open-reads-'));
  const store = await openEmbeddedStore({ dir, ...OPTS });
  const t = await store.createTable({ name: 't', families: [{ name: FAMILY }] });
  for (let f = 0; f < files; f++) {
    const rows = Array.from({ length: 200 }, (_, i) => ({
      key: key(f * 200 + i),
      mutations: [{ type: 'put' as const, family: FAMILY, qualifier: utf8('q'), value: new Uint8Array(100).fill(f), timestamp: 1 }],
    }));
    await t.mutate(rows);
    await t.flush();
  }
  await store.close();
  let bytes = 0;
  for (const n of readdirSync(dir)) if (n.endsWith('.sst')) bytes += readFileSync(join(dir, n)).length;
  return bytes;
}

function ssts(): string[] {
  return readdirSync(dir).filter((n) => n.endsWith('.sst')).sort();
}

async function lastBlockOffset(file: string): Promise<number> {
  const r = SstReader.open(await new NodeFileSystem().openRead(join(dir, file)), { compare, cacheId: 1 });
  try {
    return r.blockHandle(r.dataBlocks - 1).offset;
  } finally {
    await r.close();
  }
}

function flip(file: string, offset: number): void {
  const b = readFileSync(join(dir, file));
  b[offset] = b[offset]! ^ 0x5a;
  writeFileSync(join(dir, file), b);
}

describe('opening the store', () => {
  it('reads no SST file; a get reads a few blocks of one file', async () => {
    const total = await build(20);
    expect(ssts()).toHaveLength(20);
    const fs = new CountingFs();
    const store = await openEmbeddedStore({ dir, ...OPTS, fs });
    try {
      expect(fs.sstOpens).toBe(0);
      expect(fs.sstBytesRead).toBe(0);
      const t = await store.openTable('t');
      const [row] = await t.get([key(2345)]);
      expect(row?.cells[0]?.value[0]).toBe(11);
      expect(fs.sstBytesRead).toBeGreaterThan(0);
      expect(fs.sstBytesRead).toBeLessThan(total / 20);
      expect((await store.stats()).damagedFiles).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('notices damage only when a read reaches it, then lists the file and offset', async () => {
    await build(3);
    const victim = ssts()[1]!;
    const offset = await lastBlockOffset(victim);
    flip(victim, offset + 2);
    const store = await openEmbeddedStore({ dir, ...OPTS });
    try {
      const t = await store.openTable('t');
      expect((await t.get([key(200)]))[0]?.cells[0]?.value[0]).toBe(1);
      expect((await store.stats()).damagedFiles).toEqual([]);
      await expect(t.get([key(399)])).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
      const damaged = (await store.stats()).damagedFiles!;
      expect(damaged).toHaveLength(1);
      expect(damaged[0]).toMatchObject({ file: victim, offset });
      expect(damaged[0]!.message).toMatch(new RegExp(`^sst ${victim}: block @${offset}: checksum mismatch`));
    } finally {
      await store.close();
    }
  });

  it('a compaction that meets damage lists the file', async () => {
    await build(3);
    const victim = ssts()[2]!;
    const offset = await lastBlockOffset(victim);
    flip(victim, offset + 2);
    const store = await openEmbeddedStore({ dir, ...OPTS });
    try {
      const t = await store.openTable('t');
      await t.compact({ major: true });
      const s = await store.stats();
      expect(s.backgroundErrors).toBeGreaterThan(0);
      expect(s.damagedFiles).toEqual([expect.objectContaining({ file: victim, offset })]);
      expect(s.damagedFiles![0]!.message).not.toContain(dir);
    } finally {
      await store.close();
    }
  });
});
