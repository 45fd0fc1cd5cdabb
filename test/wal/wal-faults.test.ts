import { describe, expect, it } from 'vitest';
import { isStoreError, StoreError } from '../../core/api/errors.js';
import { equalBytes, utf8 } from '../../core/api/bytes.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { WAL_META_RECORD_SIZE, WalRecordType } from '../../core/wal/wal-format.js';
import type { WalCorruption } from '../../core/wal/wal-reader.js';
import { readWal } from '../../core/wal/wal-reader.js';
import { encodeWalMeta, WalWriter } from '../../core/wal/wal-writer.js';
import { PATH, BLOCK, H, payload, memFs, writeAll, mismatches, physical, headerOffsets, headerStart, putFile, ControlledFs, gate, tick } from './wal-helpers.js';

describe('WAL reader: torn tails and corruption', () => {
  it('recovers the earlier records for a cut at every byte of the last record', async () => {
    const fs = await memFs();
    // The last record starts near the end of block 0 and spans into block 1 (FIRST + LAST).
    const earlier = [payload(0, 10), payload(1, BLOCK - WAL_META_RECORD_SIZE - 3 * H - 10 - 200), payload(2, 0)];
    const last = payload(3, 400);
    await writeAll(fs, [...earlier, last]);
    const full = await fs.readFile(PATH);
    const lastStart = full.length - (2 * H + 400);
    expect(lastStart).toBeLessThan(BLOCK);
    for (let cut = lastStart; cut < full.length; cut++) {
      const cfs = await memFs();
      await putFile(cfs, PATH, full.subarray(0, cut));
      const corruption: WalCorruption[] = [];
      const r = await readWal(cfs, PATH, { onCorruption: (c) => corruption.push(c) });
      const msg = `cut at ${cut}`;
      expect(mismatches(r.records, earlier), msg).toEqual([]);
      expect(corruption, msg).toEqual([]);
      expect(r.tornTail, msg).toBe(cut > lastStart);
      expect(r.tornTailBytes, msg).toBe(cut - lastStart);
      expect(r.droppedBytes, msg).toBe(cut - lastStart);
    }
  });

  it('treats zeros through the end of the file as a torn tail', async () => {
    const fs = await memFs();
    const want = [payload(0, 100), payload(1, 100)];
    await writeAll(fs, want);
    const size = await fs.size(PATH);
    fs.truncate(PATH, size + 5000); // e.g. preallocated space
    const corruption: WalCorruption[] = [];
    const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
    expect(mismatches(r.records, want)).toEqual([]);
    expect(r.tornTail).toBe(true);
    expect(r.tornTailBytes).toBe(5000);
    expect(corruption).toEqual([]);
  });

  it('reports a flipped byte, drops the rest of its block and reads later blocks', async () => {
    const fs = await memFs();
    const w = await WalWriter.open(fs, PATH, 1, { bufferedWindowMs: 5 });
    const want: Uint8Array[] = [];
    const ends: number[] = [];
    for (let i = 0; i < 150; i++) {
      want.push(payload(i, 900));
      void w.append(want[i]!, false);
      ends.push(w.sizeBytes);
    }
    await w.close();
    // Corrupt a record lying wholly inside block 1.
    const victim = ends.findIndex((e, i) => i > 0 && ends[i - 1]! > BLOCK + 100 && e < 2 * BLOCK);
    const victimStart = ends[victim - 1]!;
    fs.corrupt(PATH, victimStart + H + 50, 0x01);
    const corruption: WalCorruption[] = [];
    const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
    expect(corruption.length).toBeGreaterThanOrEqual(1);
    expect(corruption[0]).toMatchObject({ path: PATH, offset: victimStart, bytes: 2 * BLOCK - victimStart });
    expect(corruption[0]!.reason).toMatch(/checksum mismatch/);
    // Survivors: records ending before the victim, and records starting in block 2 or later.
    const expected = want.filter((_, i) => ends[i]! <= victimStart || (i > 0 && headerStart(ends[i - 1]!) >= 2 * BLOCK));
    expect(expected.length).toBeGreaterThan(100); // most records live in later blocks
    expect(mismatches(r.records, expected)).toEqual([]);
    expect(r.tornTail).toBe(false);
    const reported = corruption.reduce((s, c) => s + c.bytes, 0);
    expect(r.droppedBytes).toBe(reported);
  });

  it('reports an impossible length and zeroed headers in the middle', async () => {
    const mk = async (): Promise<{ fs: MemFileSystem; want: Uint8Array[] }> => {
      const fs = await memFs();
      const want = Array.from({ length: 120 }, (_, i) => payload(i, 700));
      await writeAll(fs, want);
      return { fs, want };
    };
    // Length field of the first record starting in block 1 made huge.
    {
      const { fs, want } = await mk();
      const start = headerOffsets(await fs.readFile(PATH)).find((o) => o >= BLOCK)!;
      const corruption: WalCorruption[] = [];
      fs.corrupt(PATH, start + 4, 0xff);
      const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
      expect(corruption.some((c) => /bad record length/.test(c.reason))).toBe(true);
      expect(r.records.length).toBeLessThan(want.length);
      expect(r.records.length).toBeGreaterThan(want.length - 60);
    }
    // A zeroed 4 KiB page inside block 1.
    {
      const { fs, want } = await mk();
      const file = await fs.readFile(PATH);
      file.fill(0, BLOCK + 4096, BLOCK + 8192);
      await putFile(fs, PATH, file);
      const corruption: WalCorruption[] = [];
      const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
      expect(corruption.length).toBeGreaterThanOrEqual(1);
      expect(r.tornTail).toBe(false);
      expect(equalBytes(r.records.at(-1)!, want.at(-1)!)).toBe(true);
    }
  });

  it('reports a corrupted record in the last block instead of calling it a torn tail', async () => {
    const fs = await memFs();
    const want = [payload(0, 100), payload(1, 100), payload(2, 100)];
    await writeAll(fs, want);
    fs.corrupt(PATH, WAL_META_RECORD_SIZE + (H + 100) + H + 5, 0x80);
    const corruption: WalCorruption[] = [];
    const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
    expect(r.records.length).toBe(1);
    expect(corruption).toHaveLength(1);
    expect(r.tornTail).toBe(false);
  });

  it('rejects files without a valid META record as STORE_CORRUPTION naming the path', async () => {
    const cases: [string, (meta: Uint8Array) => Uint8Array][] = [
      ['empty file', () => new Uint8Array(0)],
      ['short file', (m) => m.subarray(0, 10)],
      ['FULL instead of META', () => physical(WalRecordType.Full, encodeWalMeta(1))],
      ['checksum mismatch', (m) => {
        const c = m.slice();
        c[H + 19] ^= 1;
        return c;
      }],
      ['bad magic', () => {
        const p = encodeWalMeta(1);
        p[0] = 0x58;
        return physical(WalRecordType.Meta, p);
      }],
      ['short payload', () => physical(WalRecordType.Meta, encodeWalMeta(1).subarray(0, 16))],
      ['version 0', () => physical(WalRecordType.Meta, encodeWalMeta(1, 0))],
    ];
    for (const [name, make] of cases) {
      const fs = await memFs();
      const meta = physical(WalRecordType.Meta, encodeWalMeta(1));
      const bytes = make(meta);
      const rest = physical(WalRecordType.Full, utf8('data'));
      const file = new Uint8Array(bytes.length + (bytes.length > 0 ? rest.length : 0));
      file.set(bytes);
      if (bytes.length > 0) file.set(rest, bytes.length);
      await putFile(fs, PATH, file);
      const err = await readWal(fs, PATH).then(() => undefined, (e: unknown) => e);
      expect(isStoreError(err, 'STORE_CORRUPTION'), name).toBe(true);
      expect((err as Error).message, name).toContain(PATH);
    }
  });

  it('rejects a newer format version with STORE_NOT_SUPPORTED naming both versions', async () => {
    const fs = await memFs();
    await putFile(fs, PATH, physical(WalRecordType.Meta, encodeWalMeta(1, 2)));
    const err = await readWal(fs, PATH).then(() => undefined, (e: unknown) => e);
    expect(isStoreError(err, 'STORE_NOT_SUPPORTED')).toBe(true);
    expect((err as Error).message).toMatch(/version 2\b.*\(1\)/);
    expect((err as Error).message).toContain(PATH);
  });

  it('reports out-of-sequence fragments and unknown types but keeps valid records', async () => {
    const fs = await memFs();
    const parts = [
      physical(WalRecordType.Meta, encodeWalMeta(1)),
      physical(WalRecordType.Full, utf8('a')),
      physical(WalRecordType.Middle, utf8('orphan')),
      physical(WalRecordType.First, utf8('unfinished')),
      physical(WalRecordType.Full, utf8('b')),
      physical(9, utf8('future')),
      physical(WalRecordType.First, utf8('c1')),
      physical(WalRecordType.Middle, utf8('c2')),
      physical(WalRecordType.Last, utf8('c3')),
    ];
    const file = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) {
      file.set(p, at);
      at += p.length;
    }
    await putFile(fs, PATH, file);
    const corruption: WalCorruption[] = [];
    const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
    expect(r.records.map((x) => new TextDecoder().decode(x))).toEqual(['a', 'b', 'c1c2c3']);
    expect(corruption.map((c) => c.reason)).toEqual([
      expect.stringMatching(/MIDDLE record without a FIRST/),
      expect.stringMatching(/fragmented record dropped/),
      expect.stringMatching(/unknown record type 9/),
    ]);
    expect(r.droppedBytes).toBe(parts[2]!.length + parts[3]!.length + parts[5]!.length);
  });

  it('maps read failures to STORE_IO', async () => {
    const mem = await memFs();
    await writeAll(mem, [payload(0, 10)]);
    const efs = new ErrorFileSystem(mem);
    efs.inject({ ops: 'openRead', code: 'EIO', times: 1 });
    await expect(readWal(efs, PATH)).rejects.toMatchObject({ code: 'STORE_IO' });
    efs.inject({ ops: 'read', code: 'EIO' });
    await expect(readWal(efs, PATH)).rejects.toMatchObject({ code: 'STORE_IO' });
  });
});

describe('WAL sticky errors', () => {
  it('maps ENOSPC to STORE_NO_SPACE and rejects everything afterwards', async () => {
    const mem = await memFs();
    const efs = new ErrorFileSystem(mem);
    const w = await WalWriter.open(efs, PATH, 1, { bufferedWindowMs: 5 });
    await w.append(payload(0, 10), true);
    efs.inject({ ops: 'append', code: 'ENOSPC', times: 1 });
    const p1 = w.append(payload(1, 10), true);
    const p2 = w.append(payload(2, 10), false);
    await expect(p1).rejects.toMatchObject({ code: 'STORE_NO_SPACE' });
    await expect(p2).rejects.toMatchObject({ code: 'STORE_NO_SPACE' });
    expect(w.error?.code).toBe('STORE_NO_SPACE');
    expect(w.error?.message).toContain(PATH);
    // The rule is used up, but the writer stays failed.
    await expect(w.append(payload(3, 10), false)).rejects.toBe(w.error);
    await expect(w.sync()).rejects.toBe(w.error);
    await expect(w.close()).rejects.toBe(w.error);
    expect(efs.calls('append')).toBe(3); // META, record 0, the failed one: nothing after
    expect(mismatches((await readWal(mem, PATH)).records, [payload(0, 10)])).toEqual([]);
  });

  it('never acknowledges a write after an fsync failure', async () => {
    const fs = new ControlledFs();
    await fs.mkdir('/w');
    const w = await WalWriter.open(fs, PATH, 1, { bufferedWindowMs: 5 });
    const g = gate();
    fs.syncGate = g.promise;
    const outcomes = new Map<string, string>();
    const track = (name: string, p: Promise<void>): Promise<void> =>
      p.then(
        () => void outcomes.set(name, 'ok'),
        (e: StoreError) => void outcomes.set(name, e.code),
      );
    const t1 = track('round1-sync', w.append(payload(1, 10), true));
    await tick();
    // Queued behind the in-flight fsync: the next round.
    const t2 = track('round2-buffered', w.append(payload(2, 10), false));
    const t3 = track('round2-sync', w.append(payload(3, 10), true));
    const t4 = track('sync()', w.sync());
    fs.failSyncWith = 'EIO';
    g.open();
    await Promise.all([t1, t2, t3, t4]);
    expect(Object.fromEntries(outcomes)).toEqual({
      'round1-sync': 'STORE_IO',
      'round2-buffered': 'STORE_IO',
      'round2-sync': 'STORE_IO',
      'sync()': 'STORE_IO',
    });
    // A retried fsync might "succeed"; the writer must not try.
    fs.failSyncWith = undefined;
    fs.syncGate = undefined;
    await expect(w.append(payload(4, 10), true)).rejects.toMatchObject({ code: 'STORE_IO' });
    await expect(w.sync()).rejects.toMatchObject({ code: 'STORE_IO' });
    expect(fs.syncs).toBe(2); // META and the failed one
    expect(w.error).toBeInstanceOf(StoreError);
    await expect(w.close()).rejects.toBe(w.error);
  });

  it('fails the writer when the buffered-window fsync fails', async () => {
    const mem = await memFs();
    const efs = new ErrorFileSystem(mem);
    const w = await WalWriter.open(efs, PATH, 1, { bufferedWindowMs: 5 });
    efs.inject({ ops: 'sync', code: 'EIO' });
    await w.append(payload(1, 10), false); // reaches the OS: acknowledged as buffered
    await new Promise((r) => setTimeout(r, 50));
    expect(efs.injected('sync')).toBe(1);
    expect(w.error?.code).toBe('STORE_IO');
    await expect(w.append(payload(2, 10), false)).rejects.toBe(w.error);
    await w.close().catch(() => undefined);
  });

  it('fails open() with a StoreError when the file or directory cannot be synced', async () => {
    for (const [op, code, want] of [
      ['openAppend', 'EACCES', 'STORE_IO'],
      ['append', 'ENOSPC', 'STORE_NO_SPACE'],
      ['sync', 'EIO', 'STORE_IO'],
      ['syncDir', 'EIO', 'STORE_IO'],
    ] as const) {
      const efs = new ErrorFileSystem(await memFs());
      efs.inject({ ops: op, code });
      const err = await WalWriter.open(efs, PATH, 1, { bufferedWindowMs: 5 }).then(() => undefined, (e: unknown) => e);
      expect(isStoreError(err, want), op).toBe(true);
      expect((err as Error).message, op).toContain(PATH);
    }
  });
});
