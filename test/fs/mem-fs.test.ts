import { describe, expect, it, vi } from 'vitest';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { Random } from '../../core/util/random.js';
import { fsContract } from '../helpers/fs-contract.js';

fsContract('mem', {
  async create() {
    const fs = new MemFileSystem();
    await fs.mkdir('/root');
    return { fs, root: '/root', cleanup: async () => undefined };
  },
});

const enc = new TextEncoder();
const dec = new TextDecoder();

async function write(fs: MemFileSystem, path: string, text: string, sync: boolean): Promise<void> {
  const w = await fs.openAppend(path);
  await w.append(enc.encode(text));
  if (sync) await w.sync();
  await w.close();
}

async function text(fs: MemFileSystem, path: string): Promise<string> {
  return dec.decode(await fs.readFile(path));
}

describe('MemFileSystem crash()', () => {
  it('drops bytes past the synced length', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    const w = await fs.openAppend('/d/f');
    await fs.syncDir('/d');
    await w.append(enc.encode('durable'));
    await w.sync();
    await w.append(enc.encode('-lost'));
    expect(await text(fs, '/d/f')).toBe('durable-lost');
    expect(fs.syncedSize('/d/f')).toBe(7);
    fs.crash();
    expect(await text(fs, '/d/f')).toBe('durable');
  });

  it('makes handles from before the crash unusable', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/r', 'abc', true);
    await fs.syncDir('/d');
    const w = await fs.openAppend('/d/f');
    const r = await fs.openRead('/d/r');
    fs.crash();
    await expect(w.append(enc.encode('x'))).rejects.toMatchObject({ code: 'EBADF' });
    await expect(w.sync()).rejects.toMatchObject({ code: 'EBADF' });
    expect(() => r.readSync(0, 1)).toThrow(expect.objectContaining({ code: 'EBADF' }));
    const r2 = await fs.openRead('/d/r');
    expect(dec.decode(r2.readSync(0, 3))).toBe('abc');
  });

  it('removes files whose creation was not made durable by syncDir', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/kept', 'k', true);
    await fs.syncDir('/d');
    await write(fs, '/d/new', 'synced data, unsynced entry', true);
    fs.crash();
    expect(await fs.list('/d')).toEqual(['kept']);
    expect(await fs.exists('/d/new')).toBe(false);
  });

  it('undoes a rename not followed by syncDir, restoring the old target', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/CURRENT', 'old', true);
    await write(fs, '/d/tmp', 'new', true);
    await fs.syncDir('/d');
    await fs.rename('/d/tmp', '/d/CURRENT');
    expect(await text(fs, '/d/CURRENT')).toBe('new');
    fs.crash();
    expect(await text(fs, '/d/CURRENT')).toBe('old');
    expect(await text(fs, '/d/tmp')).toBe('new');
  });

  it('keeps a rename followed by syncDir', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/CURRENT', 'old', true);
    await write(fs, '/d/tmp', 'new', true);
    await fs.syncDir('/d');
    await fs.rename('/d/tmp', '/d/CURRENT');
    await fs.syncDir('/d');
    fs.crash();
    expect(await fs.list('/d')).toEqual(['CURRENT']);
    expect(await text(fs, '/d/CURRENT')).toBe('new');
  });

  it('undoes a remove not followed by syncDir', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/a', 'aaa', true);
    await write(fs, '/d/b', 'bbb', true);
    await fs.syncDir('/d');
    await fs.remove('/d/a');
    await fs.remove('/d/b');
    await fs.syncDir('/d');
    await write(fs, '/d/c', 'c', true); // unrelated, never dir-synced
    fs.crash();
    expect(await fs.list('/d')).toEqual([]);

    await write(fs, '/d/x', 'xxx', true);
    await fs.syncDir('/d');
    await fs.remove('/d/x');
    fs.crash();
    expect(await text(fs, '/d/x')).toBe('xxx');
  });

  it('keeps a random prefix of the unsynced tail in random-prefix mode', async () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 200; seed++) {
      const rnd = new Random(seed);
      const fs = new MemFileSystem();
      await fs.mkdir('/d');
      const w = await fs.openAppend('/d/f');
      await fs.syncDir('/d');
      const data = rnd.bytes(100);
      await w.append(data.subarray(0, 40));
      await w.sync();
      await w.append(data.subarray(40));
      fs.crash({ mode: 'random-prefix', random: () => rnd.next() });
      const got = await fs.readFile('/d/f');
      expect(got.length, `seed ${seed}`).toBeGreaterThanOrEqual(40);
      expect(got.length, `seed ${seed}`).toBeLessThanOrEqual(100);
      expect(got, `seed ${seed}`).toEqual(data.subarray(0, got.length));
      seen.add(got.length);
    }
    // Many different cut points, including both extremes being reachable in principle.
    expect(seen.size).toBeGreaterThan(30);
  });

  it('random-prefix with random() = 0 equals drop-unsynced, and close to 1 keeps everything', async () => {
    for (const [r, want] of [[0, 'ab'], [0.999999, 'abcdef']] as const) {
      const fs = new MemFileSystem();
      await fs.mkdir('/d');
      const w = await fs.openAppend('/d/f');
      await fs.syncDir('/d');
      await w.append(enc.encode('ab'));
      await w.sync();
      await w.append(enc.encode('cdef'));
      fs.crash({ mode: 'random-prefix', random: () => r });
      expect(await text(fs, '/d/f')).toBe(want);
    }
  });

  it('releases locks on crash', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await fs.lock('/d/LOCK');
    await expect(fs.lock('/d/LOCK')).rejects.toMatchObject({ code: 'ELOCKED' });
    fs.crash();
    const l = await fs.lock('/d/LOCK');
    await l.release();
  });

  it('treats truncate to zero of an existing file as losing the old bytes on crash', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/f', 'old content', true);
    await fs.syncDir('/d');
    const w = await fs.openAppend('/d/f', { truncate: true });
    await w.append(enc.encode('new'));
    fs.crash();
    expect(await fs.size('/d/f')).toBe(0);
  });
});

describe('MemFileSystem helpers', () => {
  it('clone() is a deep copy that preserves durability state', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/a', 'synced', true);
    await fs.syncDir('/d');
    const w = await fs.openAppend('/d/a');
    await w.append(enc.encode('+unsynced'));
    await write(fs, '/d/b', 'b', true); // entry not durable
    const copy = fs.clone();
    await w.append(enc.encode('+after-clone'));
    expect(await text(copy, '/d/a')).toBe('synced+unsynced');
    copy.crash();
    expect(await text(copy, '/d/a')).toBe('synced');
    expect(await copy.exists('/d/b')).toBe(false);
    // The original is untouched by the copy's crash.
    expect(await text(fs, '/d/a')).toBe('synced+unsynced+after-clone');
    expect(await fs.exists('/d/b')).toBe(true);
  });

  it('corrupt() flips bits and truncate() cuts or zero-extends', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    await write(fs, '/d/f', 'abcd', false);
    fs.corrupt('/d/f', 1, 0x20);
    expect(await text(fs, '/d/f')).toBe('aBcd');
    expect(() => fs.corrupt('/d/f', 4, 1)).toThrow(RangeError);
    fs.truncate('/d/f', 2);
    expect(await text(fs, '/d/f')).toBe('aB');
    fs.truncate('/d/f', 4);
    expect([...(await fs.readFile('/d/f'))]).toEqual([0x61, 0x42, 0, 0]);
    expect(() => fs.corrupt('/d/missing', 0, 1)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('totalBytes() sums visible files', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d/e');
    await write(fs, '/d/a', '12345', false);
    await write(fs, '/d/e/b', '123', false);
    expect(fs.totalBytes()).toBe(8);
    await fs.remove('/d/a');
    expect(fs.totalBytes()).toBe(3);
  });

  it('completes I/O on later event-loop turns, so await loops cannot starve timers', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    const w = await fs.openAppend('/d/f');
    const piece = new Uint8Array(10);
    for (const withSync of [true, false]) {
      let stop = false;
      setTimeout(() => (stop = true), 5);
      let n = 0;
      while (!stop && n < 10_000_000) {
        await w.append(piece);
        if (withSync) await w.sync();
        n++;
      }
      expect(stop, `withSync=${withSync}`).toBe(true);
    }
  });

  it('does not stall under fake timers', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    vi.useFakeTimers();
    try {
      const w = await fs.openAppend('/d/f');
      await w.append(new Uint8Array(1));
      await w.sync();
      await fs.syncDir('/d');
      expect(fs.syncedSize('/d/f')).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('appends many small pieces quickly (growable buffers)', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    const w = await fs.openAppend('/d/f');
    const piece = new Uint8Array(100).fill(7);
    const t0 = performance.now();
    for (let i = 0; i < 100_000; i++) await w.append(piece);
    const ms = performance.now() - t0;
    expect(await fs.size('/d/f')).toBe(10_000_000);
    // Quadratic concatenation would take tens of seconds here.
    expect(ms).toBeLessThan(5_000);
  });
});
