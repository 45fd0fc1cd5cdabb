/**
 * The FileSystem contract suite: every implementation (node, mem, error-wrapped) runs the
 * same cases, so behavior the engine relies on cannot drift between the real disk and the
 * test doubles (Replicache runAll, abstract-level suite).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { equalBytes } from '../../core/api/bytes.js';
import type { FileSystem } from '../../core/fs/fs.js';

export interface FsFixture {
  readonly fs: FileSystem;
  /** An existing, empty directory to work in. */
  readonly root: string;
  cleanup(): Promise<void>;
}

export interface FsFactory {
  create(): Promise<FsFixture>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    return (err as { code?: string }).code ?? 'NO_CODE';
  }
  return undefined;
}

function codeOfSync(f: () => unknown): string | undefined {
  try {
    f();
  } catch (err) {
    return (err as { code?: string }).code ?? 'NO_CODE';
  }
  return undefined;
}

export function fsContract(name: string, factory: FsFactory): void {
  describe(`FileSystem contract: ${name}`, () => {
    let fx: FsFixture;
    let fs: FileSystem;
    let root: string;
    beforeEach(async () => {
      fx = await factory.create();
      fs = fx.fs;
      root = fx.root;
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it('creates nested directories idempotently and lists entries sorted', async () => {
      await fs.mkdir(`${root}/a/b/c`);
      await fs.mkdir(`${root}/a/b/c`);
      expect(await fs.exists(`${root}/a/b/c`)).toBe(true);
      for (const n of ['zeta', 'alpha', 'Mid', '000010.log', '000002.log']) {
        const w = await fs.openAppend(`${root}/a/${n}`);
        await w.close();
      }
      expect(await fs.list(`${root}/a`)).toEqual(['000002.log', '000010.log', 'Mid', 'alpha', 'b', 'zeta']);
      expect(await fs.list(`${root}/a/b/c`)).toEqual([]);
    });

    it('rejects list of a missing directory with ENOENT', async () => {
      expect(await codeOf(fs.list(`${root}/missing`))).toBe('ENOENT');
    });

    it('writes, reads back and reports sizes', async () => {
      const p = `${root}/f`;
      expect(await fs.exists(p)).toBe(false);
      const w = await fs.openAppend(p);
      expect(w.size).toBe(0);
      await w.append(enc.encode('hello '));
      await w.append(enc.encode('world'));
      expect(w.size).toBe(11);
      await w.sync();
      await w.close();
      await w.close(); // idempotent
      expect(await fs.exists(p)).toBe(true);
      expect(await fs.size(p)).toBe(11);
      expect(dec.decode(await fs.readFile(p))).toBe('hello world');
      const r = await fs.openRead(p);
      expect(r.size).toBe(11);
      expect(dec.decode(r.readSync(6, 5))).toBe('world');
      expect(dec.decode(r.readSync(0, 0))).toBe('');
      expect(codeOfSync(() => r.readSync(6, 6))).toBe('ESHORT');
      expect(codeOfSync(() => r.readSync(20, 1))).toBe('ESHORT');
      await r.close();
      expect(codeOfSync(() => r.readSync(0, 1))).toBe('EBADF');
    });

    it('returns fresh buffers from readSync and readFile', async () => {
      const p = `${root}/f`;
      const w = await fs.openAppend(p);
      await w.append(new Uint8Array([1, 2, 3, 4]));
      await w.close();
      const r = await fs.openRead(p);
      const a = r.readSync(0, 4);
      a[0] = 99;
      expect([...r.readSync(0, 4)]).toEqual([1, 2, 3, 4]);
      const whole = await fs.readFile(p);
      whole[1] = 99;
      expect([...(await fs.readFile(p))]).toEqual([1, 2, 3, 4]);
      await r.close();
    });

    it('lets the caller reuse an appended buffer once append resolves', async () => {
      const p = `${root}/f`;
      const w = await fs.openAppend(p);
      const buf = new Uint8Array([1, 1, 1]);
      await w.append(buf);
      buf.fill(2);
      await w.append(buf);
      await w.close();
      expect([...(await fs.readFile(p))]).toEqual([1, 1, 1, 2, 2, 2]);
    });

    it('keeps call order for appends issued without awaiting', async () => {
      const p = `${root}/f`;
      const w = await fs.openAppend(p);
      const chunks = Array.from({ length: 200 }, (_, i) => new Uint8Array(100 + (i % 7)).fill(i));
      await Promise.all([...chunks.map((c) => w.append(c)), w.sync()]);
      await w.close();
      const all = await fs.readFile(p);
      let at = 0;
      for (const c of chunks) {
        expect(equalBytes(all.subarray(at, at + c.length), c)).toBe(true);
        at += c.length;
      }
      expect(all.length).toBe(at);
    });

    it('appends to an existing file, or truncates it when asked', async () => {
      const p = `${root}/f`;
      let w = await fs.openAppend(p);
      await w.append(enc.encode('abc'));
      await w.close();
      w = await fs.openAppend(p);
      expect(w.size).toBe(3);
      await w.append(enc.encode('def'));
      expect(w.size).toBe(6);
      await w.close();
      expect(dec.decode(await fs.readFile(p))).toBe('abcdef');
      w = await fs.openAppend(p, { truncate: true });
      expect(w.size).toBe(0);
      await w.append(enc.encode('x'));
      await w.close();
      expect(dec.decode(await fs.readFile(p))).toBe('x');
    });

    it('round-trips a large file written in pieces', async () => {
      const p = `${root}/big`;
      const w = await fs.openAppend(p);
      const piece = new Uint8Array(64 * 1024);
      for (let i = 0; i < piece.length; i++) piece[i] = (i * 31) & 0xff;
      for (let i = 0; i < 20; i++) {
        piece[0] = i;
        await w.append(piece);
      }
      await w.sync();
      await w.close();
      expect(await fs.size(p)).toBe(20 * piece.length);
      const r = await fs.openRead(p);
      const got = r.readSync(7 * piece.length, piece.length);
      expect(got[0]).toBe(7);
      expect(equalBytes(got.subarray(1), piece.subarray(1))).toBe(true);
      await r.close();
    });

    it('rejects reads of missing files with ENOENT', async () => {
      const p = `${root}/nope`;
      expect(await codeOf(fs.size(p))).toBe('ENOENT');
      expect(await codeOf(fs.readFile(p))).toBe('ENOENT');
      expect(await codeOf(fs.openRead(p))).toBe('ENOENT');
      expect(await codeOf(fs.openAppend(`${root}/no-dir/f`))).toBe('ENOENT');
    });

    it('renames, replacing the target atomically', async () => {
      const a = `${root}/a`;
      const b = `${root}/b`;
      for (const [p, s] of [[a, 'new'], [b, 'old']] as const) {
        const w = await fs.openAppend(p);
        await w.append(enc.encode(s));
        await w.close();
      }
      await fs.rename(a, b);
      expect(await fs.exists(a)).toBe(false);
      expect(dec.decode(await fs.readFile(b))).toBe('new');
      expect(await fs.list(root)).toEqual(['b']);
      expect(await codeOf(fs.rename(`${root}/missing`, b))).toBe('ENOENT');
    });

    it('removes files and directories, tolerating absent ones', async () => {
      const p = `${root}/f`;
      const w = await fs.openAppend(p);
      await w.close();
      await fs.remove(p);
      expect(await fs.exists(p)).toBe(false);
      await fs.remove(p);
      await fs.mkdir(`${root}/d/e`);
      const w2 = await fs.openAppend(`${root}/d/e/x`);
      await w2.append(enc.encode('x'));
      await w2.close();
      await fs.removeDir(`${root}/d`);
      expect(await fs.exists(`${root}/d`)).toBe(false);
      expect(await fs.exists(`${root}/d/e/x`)).toBe(false);
      expect(await fs.list(root)).toEqual([]);
      await fs.removeDir(`${root}/d`);
    });

    it('syncs directories, rejecting a missing one with ENOENT', async () => {
      const w = await fs.openAppend(`${root}/f`);
      await w.close();
      await fs.syncDir(root);
      expect(await codeOf(fs.syncDir(`${root}/missing`))).toBe('ENOENT');
    });

    it('grants a lock to one holder at a time', async () => {
      const p = `${root}/LOCK`;
      const l1 = await fs.lock(p);
      expect(await fs.exists(p)).toBe(true);
      const err = await fs.lock(p).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err?.message).toMatch(/lock/i);
      await l1.release();
      await l1.release(); // idempotent
      const l2 = await fs.lock(p);
      await l2.release();
    });

    it('rejects appends and syncs after close', async () => {
      const w = await fs.openAppend(`${root}/f`);
      await w.close();
      expect(await codeOf(w.append(new Uint8Array(1)))).toBe('EBADF');
      expect(await codeOf(w.sync())).toBe('EBADF');
    });
  });
}
