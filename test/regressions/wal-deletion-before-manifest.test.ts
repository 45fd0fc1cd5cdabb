/**
 * Regression (found by the power-loss runs): a WAL file was deleted because every region
 * had flushed past it in memory, while the manifest recording one region's new file was
 * still being written. A crash then recovered from the older manifest, which knew neither
 * the new file nor had the WAL to replay: acknowledged writes were lost.
 *
 * Two regions flush together; the first manifest write is held until the second region's
 * flush is installed in memory, and the second manifest write never finishes. A crash
 * then must not lose the second region's rows.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { ErrorFileSystem, FS_OP_KINDS } from '../../core/fs/error-fs.js';
import type { FileSystem } from '../../core/fs/fs.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';

/**
 * Orders two concurrent flushes: the second SST rename waits until the first manifest
 * write has taken its snapshot (it is at its rename), so that manifest knows only the first
 * flush; the first manifest then finishes 30 ms after the second flush's file is in place
 * (installed in memory by then); every later manifest rename never finishes.
 */
class GatedFs extends ErrorFileSystem {
  private sstRenames = 0;
  private manifestRenames = 0;
  private releaseManifest!: () => void;
  private readonly manifestGate = new Promise<void>((r) => (this.releaseManifest = r));
  private releaseSst!: () => void;
  private readonly sstGate = new Promise<void>((r) => (this.releaseSst = r));
  armed = false;

  constructor(inner: FileSystem) {
    super(inner);
  }

  override async rename(from: string, to: string): Promise<void> {
    if (this.armed && to.endsWith('/MANIFEST')) {
      if (++this.manifestRenames === 1) {
        this.releaseSst();
        await this.manifestGate;
      } else {
        await new Promise<void>(() => undefined);
      }
    }
    if (this.armed && to.endsWith('.sst') && ++this.sstRenames === 2) {
      await this.sstGate;
      await super.rename(from, to);
      setTimeout(() => this.releaseManifest(), 30);
      return;
    }
    await super.rename(from, to);
  }
}

describe('regression: WAL files are deleted only once a finished manifest covers them', () => {
  it('keeps the WAL of a flush whose manifest write had not finished at the crash', async () => {
    const mem = new MemFileSystem();
    const proc = new GatedFs(mem);
    const opts = { dir: '/db', maintenanceIntervalMs: 0, walFileBytes: 64 };
    const store = await openEmbeddedStore({ ...opts, fs: proc });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }], splitPoints: [utf8('m')] });
    // Each write rolls the WAL (64-byte files): a1 and z1 end up in older WAL files.
    for (const [key, value] of [['a1', 'A'], ['z1', 'Z'], ['b2', 'B']] as const) {
      await t.mutate([{ key: utf8(key), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(value) }] }]);
      await new Promise((r) => setTimeout(r, 20)); // let the WAL roll
    }
    proc.armed = true;
    void t.flush().catch(() => undefined); // never finishes: the second manifest is held
    await new Promise((r) => setTimeout(r, 300));
    // One more write rolls the WAL, whose directory sync makes any file removal durable.
    await t.mutate([{ key: utf8('c3'), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('C') }] }]);
    await new Promise((r) => setTimeout(r, 50));
    mem.crash();
    proc.inject({ ops: [...FS_OP_KINDS], code: 'EIO' });

    const reopened = await openEmbeddedStore({ ...opts, fs: new ErrorFileSystem(mem) });
    try {
      const rows = await (await reopened.openTable('t')).get([utf8('a1'), utf8('z1'), utf8('b2'), utf8('c3')]);
      expect(rows.map((r) => (r === undefined ? null : fromUtf8(r.cells[0]!.value)))).toEqual(['A', 'Z', 'B', 'C']);
    } finally {
      await reopened.close();
    }
  });
});
