import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { fsContract } from '../helpers/fs-contract.js';

async function tmpRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'horae-node-fs-'));
}

fsContract('node', {
  async create() {
    const root = await tmpRoot();
    return { fs: new NodeFileSystem(), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('NodeFileSystem lock files', () => {
  let root: string;
  const fs = new NodeFileSystem();
  beforeEach(async () => {
    root = await tmpRoot();
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('writes our pid into the lock file and removes it on release', async () => {
    const p = `${root}/LOCK`;
    const l = await fs.lock(p);
    expect((await readFile(p, 'utf8')).trim()).toBe(String(process.pid));
    await l.release();
    expect(await fs.exists(p)).toBe(false);
    expect(await fs.list(root)).toEqual([]); // no temp files left behind
  });

  it('refuses a lock held by another live process, naming its pid', async () => {
    const p = `${root}/LOCK`;
    const other = process.ppid; // alive: it is running us
    await writeFile(p, `${other}\n`);
    await expect(fs.lock(p)).rejects.toMatchObject({
      code: 'ELOCKED',
      message: expect.stringContaining(String(other)),
    });
    expect((await readFile(p, 'utf8')).trim()).toBe(String(other));
  });

  it('takes over a stale lock of a dead process', async () => {
    const p = `${root}/LOCK`;
    const dead = deadPid();
    expect(dead).toBeGreaterThan(0);
    await writeFile(p, `${dead}\n`);
    const l = await fs.lock(p);
    expect((await readFile(p, 'utf8')).trim()).toBe(String(process.pid));
    await l.release();
  });

  it('takes over a lock file naming our own pid that no one in this process holds', async () => {
    const p = `${root}/LOCK`;
    await writeFile(p, `${process.pid}\n`);
    const l = await fs.lock(p);
    await expect(fs.lock(p)).rejects.toMatchObject({ code: 'ELOCKED' });
    await l.release();
  });

  it('treats an empty or garbled lock file as stale', async () => {
    const p = `${root}/LOCK`;
    await writeFile(p, 'not a pid');
    const l = await fs.lock(p);
    expect((await readFile(p, 'utf8')).trim()).toBe(String(process.pid));
    await l.release();
  });

  it('does not remove a lock file another process took over after release', async () => {
    const p = `${root}/LOCK`;
    const l = await fs.lock(p);
    await writeFile(p, `${process.ppid}\n`);
    await l.release();
    expect((await readFile(p, 'utf8')).trim()).toBe(String(process.ppid));
  });
});

describe('NodeFileSystem errors', () => {
  it('keeps the Node error code, syscall and path', async () => {
    const root = await tmpRoot();
    try {
      const fs = new NodeFileSystem();
      const err = (await fs.readFile(`${root}/missing`).catch((e: unknown) => e)) as NodeJS.ErrnoException;
      expect(err.code).toBe('ENOENT');
      expect(err.syscall).toBe('open');
      expect(err.path).toBe(`${root}/missing`);
      const w = await fs.openAppend(`${root}/f`);
      await w.append(new Uint8Array([1, 2, 3]));
      await w.close();
      const r = await fs.openRead(`${root}/f`);
      let short: NodeJS.ErrnoException | undefined;
      try {
        r.readSync(2, 5);
      } catch (e) {
        short = e as NodeJS.ErrnoException;
      }
      expect(short?.code).toBe('ESHORT');
      expect(short?.path).toBe(`${root}/f`);
      await r.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
