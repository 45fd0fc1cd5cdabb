import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../core/api/errors.js';
import { equalBytes, utf8 } from '../../core/api/bytes.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { Random } from '../../core/util/random.js';
import { WAL_META_RECORD_SIZE, WalRecordType } from '../../core/wal/wal-format.js';
import type { WalCorruption } from '../../core/wal/wal-reader.js';
import { readWal, WalReader } from '../../core/wal/wal-reader.js';
import { encodeWalMeta, WalWriter } from '../../core/wal/wal-writer.js';
import { PATH, BLOCK, H, payload, memFs, writeAll, mismatches, physical, headerOffsets, ControlledFs, gate, tick } from './wal-helpers.js';

describe('WAL round trips', () => {
  it('reads back an empty log (META only)', async () => {
    const fs = await memFs();
    const w = await writeAll(fs, [], 42);
    expect(w.sizeBytes).toBe(WAL_META_RECORD_SIZE);
    expect(await fs.size(PATH)).toBe(WAL_META_RECORD_SIZE);
    const r = await readWal(fs, PATH);
    expect(r).toEqual({ logNumber: 42, records: [], droppedBytes: 0, tornTail: false, tornTailBytes: 0 });
  });

  it('round-trips empty and small payloads', async () => {
    const fs = await memFs();
    const want = [new Uint8Array(0), utf8('a'), payload(2, 100), new Uint8Array(0), payload(4, 1000)];
    await writeAll(fs, want);
    const r = await readWal(fs, PATH);
    expect(mismatches(r.records, want)).toEqual([]);
    expect(r.droppedBytes).toBe(0);
    expect(r.tornTail).toBe(false);
  });

  it('frames exactly like leveldb: header, crc over type+data, zero trailer', async () => {
    const fs = await memFs();
    // Leave 3 bytes at the end of block 0, then write a small record.
    const first = payload(1, BLOCK - WAL_META_RECORD_SIZE - H - 3);
    const second = utf8('xyz');
    await writeAll(fs, [first, second], 9);
    const file = await fs.readFile(PATH);
    const want = new Uint8Array(BLOCK + H + 3);
    want.set(physical(WalRecordType.Meta, encodeWalMeta(9)), 0);
    want.set(physical(WalRecordType.Full, first), WAL_META_RECORD_SIZE);
    want.set(physical(WalRecordType.Full, second), BLOCK); // bytes BLOCK-3..BLOCK-1 stay zero
    expect(file.length).toBe(want.length);
    expect(equalBytes(file, want)).toBe(true);
  });

  it('round-trips sizes around block boundaries', async () => {
    const fill = BLOCK - WAL_META_RECORD_SIZE - H; // payload that exactly fills block 0
    for (const delta of [-8, -7, -6, -1, 0, 1, 6, 7, 8, BLOCK - H, BLOCK - H + 1]) {
      const fs = await memFs();
      const want = [payload(1, fill + delta), payload(2, 10), new Uint8Array(0), payload(3, BLOCK - H), payload(4, 5)];
      const w = await writeAll(fs, want);
      const r = await readWal(fs, PATH);
      expect(mismatches(r.records, want), `delta ${delta}`).toEqual([]);
      expect(r.droppedBytes, `delta ${delta}`).toBe(0);
      expect(await fs.size(PATH), `delta ${delta}`).toBe(w.sizeBytes);
    }
  });

  it('fragments records larger than a block into FIRST/MIDDLE/LAST', async () => {
    const fs = await memFs();
    const big = payload(1, 5 * BLOCK + 123);
    const want = [payload(0, 10), big, payload(2, 3 * BLOCK), payload(3, 1)];
    await writeAll(fs, want);
    const file = await fs.readFile(PATH);
    // Physical types in order: META FULL FIRST MIDDLE... LAST FIRST MIDDLE... LAST FULL.
    const types = headerOffsets(file).map((pos) => file[pos + 6]!);
    expect(types[0]).toBe(WalRecordType.Meta);
    expect(types[1]).toBe(WalRecordType.Full);
    expect(types[2]).toBe(WalRecordType.First);
    expect(types.filter((t) => t === WalRecordType.Middle).length).toBeGreaterThanOrEqual(6);
    expect(types.filter((t) => t === WalRecordType.Last).length).toBe(2);
    expect(types.at(-1)).toBe(WalRecordType.Full);
    const r = await readWal(fs, PATH);
    expect(mismatches(r.records, want)).toEqual([]);
  });

  it('round-trips thousands of records of random sizes, streaming too', async () => {
    const rnd = new Random(Number(process.env.TEST_SEED ?? 20240611));
    const fs = await memFs();
    const w = await WalWriter.open(fs, PATH, 3, { bufferedWindowMs: 5 });
    const want: Uint8Array[] = [];
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < 5000; i++) {
      const len = rnd.chance(0.01) ? rnd.range(BLOCK, 3 * BLOCK) : rnd.range(0, 2000);
      const p = payload(i, len);
      want.push(p);
      inflight.push(w.append(p, rnd.chance(0.1)));
      if (rnd.chance(0.05)) await Promise.all(inflight.splice(0));
    }
    await Promise.all(inflight);
    await w.close();
    expect(await fs.size(PATH)).toBe(w.sizeBytes);
    const r = await readWal(fs, PATH);
    expect(mismatches(r.records, want), `seed ${rnd.seed}`).toEqual([]);
    const reader = await WalReader.open(fs, PATH);
    let n = 0;
    for (let rec = reader.next(); rec !== undefined; rec = reader.next()) {
      if (!equalBytes(rec, want[n]!)) throw new Error(`record ${n} differs (seed ${rnd.seed})`);
      n++;
    }
    await reader.close();
    expect(n).toBe(want.length);
  });

  it('round-trips on the real file system', async () => {
    const root = await mkdtemp(join(tmpdir(), 'horae-wal-'));
    try {
      const fs = new NodeFileSystem();
      const path = `${root}/000005.log`;
      const w = await WalWriter.open(fs, path, 5, { bufferedWindowMs: 5 });
      const want = Array.from({ length: 2000 }, (_, i) => payload(i, i % 100 === 0 ? 70_000 : i % 500));
      const acks = want.map((p, i) => w.append(p, i % 3 === 0));
      await Promise.all(acks);
      await w.close();
      expect(await fs.size(path)).toBe(w.sizeBytes);
      const r = await readWal(fs, path);
      expect(r.logNumber).toBe(5);
      expect(mismatches(r.records, want)).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('copies the payload at call time, so the caller may reuse it at once', async () => {
    const fs = await memFs();
    const w = await WalWriter.open(fs, PATH, 1, { bufferedWindowMs: 5 });
    const buf = utf8('first');
    const p1 = w.append(buf, true);
    buf.set(utf8('XXXXX'));
    const p2 = w.append(buf, true);
    await Promise.all([p1, p2]);
    await w.close();
    expect((await readWal(fs, PATH)).records.map((r) => new TextDecoder().decode(r))).toEqual(['first', 'XXXXX']);
  });

  it('reports its log number and size, and rejects use after close', async () => {
    const fs = await memFs();
    const w = await WalWriter.open(fs, PATH, 2 ** 40 + 5, { bufferedWindowMs: 5 });
    expect(w.logNumber).toBe(2 ** 40 + 5);
    void w.append(payload(1, 10), false);
    expect(w.sizeBytes).toBe(WAL_META_RECORD_SIZE + H + 10); // counted synchronously
    const c1 = w.close();
    expect(w.close()).toBe(c1);
    await c1;
    await expect(w.append(payload(2, 1), true)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    await expect(w.sync()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    expect(fs.syncedSize(PATH)).toBe(w.sizeBytes); // close() synced
    expect((await readWal(fs, PATH)).logNumber).toBe(2 ** 40 + 5);
  });

  it('rejects bad open arguments as programmer errors', async () => {
    const fs = await memFs();
    await expect(WalWriter.open(fs, PATH, -1, { bufferedWindowMs: 5 })).rejects.toBeInstanceOf(RangeError);
    await expect(WalWriter.open(fs, PATH, 1, { bufferedWindowMs: Number.NaN })).rejects.toBeInstanceOf(RangeError);
  });
});

describe('WAL group commit', () => {
  it('covers N concurrent sync appends with far fewer than N writes and fsyncs', async () => {
    const mem = await memFs();
    const efs = new ErrorFileSystem(mem);
    const w = await WalWriter.open(efs, PATH, 1, { bufferedWindowMs: 1000 });
    efs.resetCounters();
    const want = Array.from({ length: 500 }, (_, i) => payload(i, 50 + (i % 300)));
    await Promise.all(want.map((p) => w.append(p, true)));
    expect(efs.calls('sync')).toBeLessThanOrEqual(2);
    expect(efs.calls('append')).toBeLessThanOrEqual(2);
    expect(mem.syncedSize(PATH)).toBe(w.sizeBytes);
    await w.close();
    expect(mismatches((await readWal(mem, PATH)).records, want)).toEqual([]);
  });

  it('batches writers that each await their own sync appends', async () => {
    const mem = await memFs();
    const efs = new ErrorFileSystem(mem);
    const w = await WalWriter.open(efs, PATH, 1, { bufferedWindowMs: 1000 });
    efs.resetCounters();
    const order: number[] = [];
    const writer = async (id: number): Promise<void> => {
      for (let k = 0; k < 20; k++) {
        const n = id * 1000 + k;
        order.push(n); // log order = call order
        await w.append(payload(n, 64), true);
      }
    };
    await Promise.all(Array.from({ length: 50 }, (_, id) => writer(id)));
    const syncs = efs.calls('sync');
    expect(syncs).toBeGreaterThanOrEqual(20); // each writer needs 20 rounds in sequence
    expect(syncs).toBeLessThanOrEqual(45); // ...but 1000 appends share them
    await w.close();
    const r = await readWal(mem, PATH);
    expect(mismatches(r.records, order.map((n) => payload(n, 64)))).toEqual([]);
  });

  it('resolves a sync append only after an fsync covers it, a buffered one after the write', async () => {
    const fs = new ControlledFs();
    await fs.mkdir('/w');
    const w = await WalWriter.open(fs, PATH, 1, { bufferedWindowMs: 10_000 });
    const g = gate();
    fs.syncGate = g.promise;
    let bufferedDone = false;
    let syncDone = false;
    const pb = w.append(payload(1, 10), false).then(() => (bufferedDone = true));
    const ps = w.append(payload(2, 10), true).then(() => (syncDone = true));
    for (let i = 0; i < 5; i++) await tick();
    expect(bufferedDone).toBe(true);
    expect(syncDone).toBe(false);
    expect(fs.syncedSize(PATH)).toBe(WAL_META_RECORD_SIZE);
    // Appends made while the round is in flight wait for the next round.
    const appendsBefore = fs.appends;
    const p3 = w.append(payload(3, 10), true);
    const p4 = w.append(payload(4, 10), true);
    for (let i = 0; i < 5; i++) await tick();
    expect(fs.appends).toBe(appendsBefore);
    fs.syncGate = undefined;
    g.open();
    await Promise.all([pb, ps]);
    expect(syncDone).toBe(true);
    await Promise.all([p3, p4]);
    expect(fs.appends).toBe(appendsBefore + 1); // p3 and p4: one write...
    expect(fs.syncs).toBe(3); // ...and one fsync (META, round 1, round 2)
    expect(fs.syncedSize(PATH)).toBe(w.sizeBytes);
    await w.close();
  });

  it('fsyncs buffered appends within bufferedWindowMs', async () => {
    const fs = await memFs();
    const w = await WalWriter.open(fs, PATH, 1, { bufferedWindowMs: 20 });
    await w.append(payload(1, 100), false);
    await w.append(payload(2, 100), false);
    expect(fs.syncedSize(PATH)).toBe(WAL_META_RECORD_SIZE); // written, not yet durable
    const copy = fs.clone();
    copy.crash();
    expect((await readWal(copy, PATH)).records.length).toBe(0);
    await new Promise((r) => setTimeout(r, 80));
    expect(fs.syncedSize(PATH)).toBe(w.sizeBytes);
    fs.crash();
    const r = await readWal(fs, PATH);
    expect(mismatches(r.records, [payload(1, 100), payload(2, 100)])).toEqual([]);
  });

  it('sync() makes everything durable and resolves at once when nothing is pending', async () => {
    const fs = new ControlledFs();
    await fs.mkdir('/w');
    const w = await WalWriter.open(fs, PATH, 1, { bufferedWindowMs: 10_000 });
    const before = fs.syncs;
    await w.sync();
    expect(fs.syncs).toBe(before);
    void w.append(payload(1, 10), false);
    void w.append(payload(2, 10), false);
    await w.sync();
    expect(fs.syncs).toBe(before + 1);
    expect(fs.syncedSize(PATH)).toBe(w.sizeBytes);
    await w.close();
  });
});

describe('WAL crash safety', () => {
  const base = Number(process.env.TEST_SEED ?? 1);
  const seeds = process.env.TEST_SEED !== undefined ? 1 : 300;
  for (const mode of ['drop-unsynced', 'random-prefix'] as const) {
    it(`keeps every sync-acknowledged record through crash() (${mode}, ${seeds} seeds)`, async () => {
      let tornSeen = 0;
      let lostUnacked = 0;
      for (let seed = base; seed < base + seeds; seed++) {
        const rnd = new Random(seed);
        const fs = await memFs();
        const w = await WalWriter.open(fs, PATH, seed, { bufferedWindowMs: rnd.range(0, 3) });
        const want: Uint8Array[] = [];
        const acked: boolean[] = [];
        const isSync: boolean[] = [];
        const n = rnd.range(1, 60);
        const crashStep = rnd.range(0, n + 10);
        let step = 0;
        const maybeWait = async (): Promise<void> => {
          const k = rnd.int(4);
          if (k === 1) await null;
          else if (k === 2) await tick();
          else if (k === 3) await new Promise((r) => setTimeout(r, rnd.int(3)));
        };
        for (let i = 0; i < n && step < crashStep; i++, step++) {
          const len = rnd.chance(0.1) ? rnd.range(BLOCK - 100, 2 * BLOCK + 100) : rnd.range(0, 3000);
          const p = payload(i, len);
          const sync = rnd.chance(0.5);
          want.push(p);
          isSync.push(sync);
          acked.push(false);
          w.append(p, sync).then(
            () => (acked[i] = true),
            () => undefined,
          );
          await maybeWait();
        }
        for (; step < crashStep; step++) await maybeWait();
        fs.crash({ mode, random: () => rnd.next() });
        const corruption: WalCorruption[] = [];
        const r = await readWal(fs, PATH, { onCorruption: (c) => corruption.push(c) });
        const msg = `seed ${seed} (${mode}); replay with TEST_SEED=${seed}`;
        expect(r.logNumber, msg).toBe(seed);
        expect(corruption, msg).toEqual([]);
        // Survivors are a prefix of what was appended: nothing invented, nothing reordered.
        expect(r.records.length, msg).toBeLessThanOrEqual(want.length);
        expect(mismatches(r.records, want.slice(0, r.records.length)), msg).toEqual([]);
        // Every acknowledged sync append (and so everything before it) survived.
        let lastAckedSync = -1;
        for (let i = 0; i < acked.length; i++) if (acked[i] && isSync[i]) lastAckedSync = i;
        expect(r.records.length, msg).toBeGreaterThan(lastAckedSync);
        if (r.tornTail) tornSeen++;
        if (r.records.length < want.length) lostUnacked++;
        // The writer is dead after the crash: nothing is acknowledged any more.
        await expect(w.append(payload(0, 1), true), msg).rejects.toBeInstanceOf(StoreError);
        await w.close().catch(() => undefined);
      }
      // The scenarios must exercise the interesting cases, not only clean shutdowns.
      if (seeds > 1) {
        expect(lostUnacked).toBeGreaterThan(seeds / 10);
        if (mode === 'random-prefix') expect(tornSeen).toBeGreaterThan(seeds / 20);
      }
    });
  }
});
