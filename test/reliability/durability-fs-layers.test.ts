/**
 * The test-only file-system layers the durability tests start servers with
 * (core/fs/lazy-fs.ts, core/fs/quota-fs.ts, core/fs/test-fs.ts): each passes the
 * FileSystem contract, and each does what the durability tests rely on — the lazy layer
 * leaves unsynced bytes out of the real file, the quota layer refuses bytes past its
 * budget with ENOSPC and takes a new budget from its control file.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LazyFileSystem } from '../../core/fs/lazy-fs.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { QuotaFileSystem, parseQuotaRule } from '../../core/fs/quota-fs.js';
import { testFileSystem, testFsLayers } from '../../core/fs/test-fs.js';
import { fsContract } from '../helpers/fs-contract.js';

const node = new NodeFileSystem();
const bytes = (n: number, fill = 7): Uint8Array => new Uint8Array(n).fill(fill);

async function tmpRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'horae-fs-layer-'));
}

fsContract('lazy(node)', {
  async create() {
    const root = await tmpRoot();
    return { fs: new LazyFileSystem(node), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

fsContract('quota(node), unlimited', {
  async create() {
    const root = await tmpRoot();
    return { fs: new QuotaFileSystem(node, { root, controlPath: join(root, 'no-such-control') }), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

describe('LazyFileSystem', () => {
  let root: string;
  beforeEach(async () => {
    root = await tmpRoot();
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('keeps appended bytes out of the real file until sync, but shows them to this process', async () => {
    const lfs = new LazyFileSystem(node);
    const f = await lfs.openAppend(`${root}/a`);
    await f.append(bytes(10, 1));
    expect((await readFile(`${root}/a`)).length).toBe(0);
    expect(await lfs.size(`${root}/a`)).toBe(10);
    expect(Array.from(await lfs.readFile(`${root}/a`))).toEqual(Array.from(bytes(10, 1)));
    await f.sync();
    await f.append(bytes(5, 2));
    expect((await readFile(`${root}/a`)).length).toBe(10);
    const r = await lfs.openRead(`${root}/a`);
    expect(Array.from(r.readSync(8, 4))).toEqual([1, 1, 2, 2]);
    await r.close();
    expect(lfs.stats.unsyncedBytes).toBe(5);
    // A close does not sync: the 5 bytes never reach the disk; a crash (this object gone) loses them.
    await f.close();
    expect((await readFile(`${root}/a`)).length).toBe(10);
    expect(await lfs.size(`${root}/a`)).toBe(15);
  });

  it('carries unsynced bytes across a rename and forgets them on remove', async () => {
    const lfs = new LazyFileSystem(node);
    const f = await lfs.openAppend(`${root}/t.tmp`);
    await f.append(bytes(3));
    await lfs.rename(`${root}/t.tmp`, `${root}/t`);
    expect(await lfs.size(`${root}/t`)).toBe(3);
    await f.sync();
    expect((await readFile(`${root}/t`)).length).toBe(3);
    const g = await lfs.openAppend(`${root}/u`);
    await g.append(bytes(4));
    await lfs.remove(`${root}/u`);
    expect(lfs.stats.unsyncedBytes).toBe(0);
    expect(await lfs.exists(`${root}/u`)).toBe(false);
  });
});

describe('QuotaFileSystem', () => {
  let root: string;
  let control: string;
  beforeEach(async () => {
    root = await tmpRoot();
    control = join(root, 'quota');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('parses its control file', () => {
    expect(parseQuotaRule('')).toEqual({ limit: Infinity, only: [] });
    expect(parseQuotaRule('unlimited\n')).toEqual({ limit: Infinity, only: [] });
    expect(parseQuotaRule('full .log MANIFEST')).toEqual({ limit: 'full', only: ['.log', 'MANIFEST'] });
    expect(parseQuotaRule(' 4096 ')).toEqual({ limit: 4096, only: [] });
    expect(parseQuotaRule('fsync-eio .log')).toEqual({ limit: Infinity, only: ['.log'], failSync: true });
    expect(() => parseQuotaRule('lots')).toThrow(/expected unlimited, full, fsync-eio or a byte count, got 'lots'/);
  });

  it('writes what fits, then fails with ENOSPC; space given back lets writes go on', async () => {
    const data = join(root, 'data');
    await node.mkdir(data);
    await writeFile(join(data, 'old'), bytes(100));
    await writeFile(control, '150');
    const q = new QuotaFileSystem(node, { root: data, controlPath: control, refreshMs: 0 });
    const f = await q.openAppend(join(data, 'f'));
    await f.append(bytes(30));
    const err = await f.append(bytes(40)).then(() => undefined, (e: NodeJS.ErrnoException) => e);
    expect(err?.code).toBe('ENOSPC');
    expect(err?.message).toMatch(/no space left on device \(test quota; 20 of 40 bytes written\)/);
    expect((await readFile(join(data, 'f'))).length).toBe(50);
    expect(q.stats).toEqual({ usedBytes: 150, enospc: 1, eio: 0 });
    await q.remove(join(data, 'old'));
    await f.append(bytes(40));
    await writeFile(control, 'unlimited');
    await f.append(bytes(1000));
    expect((await readFile(join(data, 'f'))).length).toBe(1090);
    await f.close();
  });

  it("'full SUBSTR' fills the disk for matching paths only", async () => {
    await writeFile(control, 'full .log');
    const q = new QuotaFileSystem(node, { root, controlPath: control, refreshMs: 0 });
    const sst = await q.openAppend(join(root, '000001.sst'));
    await sst.append(bytes(64));
    const log = await q.openAppend(join(root, '000002.log'));
    await expect(log.append(bytes(1))).rejects.toMatchObject({ code: 'ENOSPC' });
    await Promise.all([sst.close(), log.close()]);
  });
});

describe('QuotaFileSystem fsync-eio', () => {
  it('fails syncs of matching paths with EIO until the control file changes', async () => {
    const root = await tmpRoot();
    try {
      const control = join(root, 'quota');
      await writeFile(control, 'fsync-eio .log');
      const q = new QuotaFileSystem(node, { root, controlPath: control, refreshMs: 0 });
      const log = await q.openAppend(join(root, '000002.log'));
      await log.append(bytes(8));
      await expect(log.sync()).rejects.toMatchObject({ code: 'EIO', syscall: 'fdatasync' });
      const sst = await q.openAppend(join(root, '000003.sst'));
      await sst.sync();
      await writeFile(control, 'unlimited');
      await log.sync();
      expect(q.stats.eio).toBe(1);
      await Promise.all([log.close(), sst.close()]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('HORAE_TEST_FS', () => {
  it('selects nothing by default and refuses unknown layers', () => {
    expect(testFsLayers({})).toEqual([]);
    expect(testFileSystem({}, '/d', node)).toBeUndefined();
    expect(testFsLayers({ HORAE_TEST_FS: 'lazy,quota' })).toEqual(['lazy', 'quota']);
    expect(() => testFsLayers({ HORAE_TEST_FS: 'fast' })).toThrow(/unknown layer 'fast'/);
    expect(() => testFileSystem({ HORAE_TEST_FS: 'quota' }, '/d', node)).toThrow(/needs HORAE_TEST_FS_QUOTA_FILE/);
    expect(testFileSystem({ HORAE_TEST_FS: 'lazy' }, '/d', node)).toBeInstanceOf(LazyFileSystem);
  });
});
