import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStoreError, StoreError } from '../../core/api/errors.js';
import { equalBytes, utf8 } from '../../core/api/bytes.js';
import type { WritableFile } from '../../core/fs/fs.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { crc32c, maskCrc } from '../../core/util/crc32c.js';
import { Random } from '../../core/util/random.js';
import {
  WAL_BLOCK_SIZE,
  WAL_HEADER_SIZE,
  WAL_META_RECORD_SIZE,
  WalRecordType,
} from '../../core/wal/wal-format.js';
import type { WalCorruption } from '../../core/wal/wal-reader.js';
import { readWal, WalReader } from '../../core/wal/wal-reader.js';
import { encodeWalMeta, WalWriter } from '../../core/wal/wal-writer.js';

const PATH = '/w/000001.log';
const BLOCK = WAL_BLOCK_SIZE;
const H = WAL_HEADER_SIZE;

/** Deterministic payload `i` of `len` bytes; the first 4 bytes carry i. */
function payload(i: number, len: number): Uint8Array {
  const p = new Uint8Array(len);
  for (let j = 0; j < len; j++) p[j] = (i * 131 + j * 7) & 0xff;
  for (let j = 0; j < 4 && j < len; j++) p[j] = (i >>> (8 * j)) & 0xff;
  return p;
}

async function memFs(): Promise<MemFileSystem> {
  const fs = new MemFileSystem();
  await fs.mkdir('/w');
  return fs;
}

async function writeAll(fs: MemFileSystem, payloads: readonly Uint8Array[], logNumber = 1): Promise<WalWriter> {
  const w = await WalWriter.open(fs, PATH, logNumber, { bufferedWindowMs: 5 });
  for (const p of payloads) await w.append(p, false);
  await w.close();
  return w;
}

/** Indexes where `got` differs from `want` (empty when equal). */
function mismatches(got: readonly Uint8Array[], want: readonly Uint8Array[]): number[] {
  const bad: number[] = [];
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    const g = got[i];
    const w = want[i];
    if (g === undefined || w === undefined || !equalBytes(g, w)) bad.push(i);
  }
  return bad;
}

/** An independent framing of one physical record, to cross-check the writer. */
function physical(type: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(H + data.length);
  out[4] = data.length >> 8;
  out[5] = data.length & 0xff;
  out[6] = type;
  out.set(data, H);
  new DataView(out.buffer).setUint32(0, maskCrc(crc32c(out, 6)));
  return out;
}

/** Offsets of every physical record header in a well-formed file. */
function headerOffsets(file: Uint8Array): number[] {
  const out: number[] = [];
  for (let pos = 0; pos < file.length; ) {
    if (BLOCK - (pos % BLOCK) < H) {
      pos += BLOCK - (pos % BLOCK);
      continue;
    }
    out.push(pos);
    pos += H + ((file[pos + 4]! << 8) | file[pos + 5]!);
  }
  return out;
}

/** Where the header of a record framed at logical offset `s` really starts (after any block trailer). */
function headerStart(s: number): number {
  return BLOCK - (s % BLOCK) < H ? s + (BLOCK - (s % BLOCK)) : s;
}

async function putFile(fs: MemFileSystem, path: string, bytes: Uint8Array): Promise<void> {
  const f = await fs.openAppend(path, { truncate: true });
  await f.append(bytes);
  await f.sync();
  await f.close();
}

/** MemFileSystem whose syncs can be held back by a gate and made to fail. */
class ControlledFs extends MemFileSystem {
  syncGate: Promise<void> | undefined;
  failSyncWith: string | undefined;
  syncs = 0;
  appends = 0;

  override async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    const f = await super.openAppend(path, opts);
    const self = this;
    return {
      path: f.path,
      get size() {
        return f.size;
      },
      async append(d: Uint8Array) {
        self.appends++;
        return f.append(d);
      },
      async sync() {
        self.syncs++;
        if (self.syncGate !== undefined) await self.syncGate;
        if (self.failSyncWith !== undefined) {
          throw Object.assign(new Error(`${self.failSyncWith}: injected`), { code: self.failSyncWith, syscall: 'fdatasync' });
        }
        return f.sync();
      },
      close: () => f.close(),
    };
  }
}

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

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
