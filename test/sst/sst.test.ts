import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import { StoreError, isStoreError } from '../../core/api/errors.js';
import { LruCache } from '../../core/cache/lru-cache.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { KeyKind, encodeInternalKey, rowEndKey, rowStartKey } from '../../core/lsm/internal-key.js';
import type { Block } from '../../core/sst/block.js';
import { FOOTER_BYTES, encodeFooter } from '../../core/sst/sst-format.js';
import type { Compression } from '../../core/sst/sst-format.js';
import { SstWriter } from '../../core/sst/sst-writer.js';
import { SstReader } from '../../core/sst/sst-reader.js';
import { crc32c, maskCrc } from '../../core/util/crc32c.js';
import { Random } from '../../core/util/random.js';
import type { Entry } from './helpers.js';
import {
  compare, drainBackward, drainForward, expectSameEntries, floorIndex, genEntries, lowerBound, memFs, openSst, rowKey, testSeed,
  withSeedAsync, writeSst,
} from './helpers.js';

function expectAt(it: { valid: boolean; key(): Uint8Array; value(): Uint8Array; error(): Error | undefined }, entries: readonly Entry[], i: number, what: string): void {
  expect(it.error(), what).toBeUndefined();
  if (i < 0 || i >= entries.length) {
    expect(it.valid, `${what}: expected invalid`).toBe(false);
    return;
  }
  expect(it.valid, `${what}: expected entry ${i}`).toBe(true);
  expect(toHex(it.key()), `${what}: key`).toBe(toHex(entries[i]!.key));
  expect(toHex(it.value()), `${what}: value`).toBe(toHex(entries[i]!.value));
}

describe('SST write + read', () => {
  for (const compression of ['none', 'lz4', 'deflate'] as const) {
    it(`round trips many blocks with ${compression} compression, forward, backward and seeks`, async () => {
      await withSeedAsync(testSeed(compression.length * 1000 + 1), async (rng) => {
        const fs = await memFs();
        const entries = genEntries(rng, 6000);
        const { info, bytes } = await writeSst(fs, '/d/000001.sst', entries, { compression, blockSizeBytes: 1024 });
        expect(info.entries).toBe(6000);
        expect(info.dataBlocks).toBeGreaterThan(100);
        expect(info.sizeBytes).toBe(bytes.length);
        expect(toHex(info.smallestKey)).toBe(toHex(entries[0]!.key));
        expect(toHex(info.largestKey)).toBe(toHex(entries[5999]!.key));

        for (const cache of [undefined, new LruCache<Block>(1 << 20), new LruCache<Block>(3000)]) {
          const r = await openSst(fs, '/d/000001.sst', cache === undefined ? {} : { cache, cacheId: 7 });
          expect(r.entries).toBe(6000);
          expect(r.dataBlocks).toBe(info.dataBlocks);
          expect(r.properties.compression).toBe(compression);
          const it = r.iterator();
          it.seekToFirst();
          expectSameEntries(drainForward(it), entries);
          it.seekToLast();
          expectSameEntries(drainBackward(it), [...entries].reverse());
          for (let k = 0; k < 500; k++) {
            const t = rng.chance(0.5) ? entries[rng.int(entries.length)]!.key
              : rng.chance(0.5) ? rowStartKey(rowKey(rng.int(20000))) : rowEndKey(rowKey(rng.int(20000)));
            const lb = lowerBound(entries, t);
            it.seek(t);
            expectAt(it, entries, lb, `seek #${k}`);
            if (it.valid) { it.prev(); expectAt(it, entries, lb - 1, `seek #${k} prev`); }
            const fl = floorIndex(entries, t);
            it.seekForPrev(t);
            expectAt(it, entries, fl, `seekForPrev #${k}`);
            if (it.valid) { it.next(); expectAt(it, entries, fl + 1, `seekForPrev #${k} next`); }
          }
          it.close();
          await r.close();
        }
      });
    });
  }

  it('compresses compressible data and falls back to none for incompressible blocks', async () => {
    const fs = await memFs();
    const rng = new Random(testSeed(5));
    const compressible = genEntries(rng, 3000, { maxValue: 0 }).map((e, i) => ({ key: e.key, value: new Uint8Array(100).fill(i & 3) }));
    const sizes: Record<string, number> = {};
    for (const c of ['none', 'lz4', 'deflate'] as const) {
      sizes[c] = (await writeSst(fs, `/d/c-${c}.sst`, compressible, { compression: c })).info.sizeBytes;
    }
    expect(sizes['lz4']!).toBeLessThan(sizes['none']! * 0.5);
    expect(sizes['deflate']!).toBeLessThan(sizes['none']! * 0.5);
    // Random values do not compress: every block is stored as type none, so the file is
    // byte-identical apart from the properties block's "compression" field.
    const random = genEntries(rng, 500, { maxValue: 0 }).map((e) => ({ key: e.key, value: rng.bytes(500) }));
    const none = await writeSst(fs, '/d/r-none.sst', random, { compression: 'none' });
    const lz4 = await writeSst(fs, '/d/r-lz4.sst', random, { compression: 'lz4' });
    expect(toHex(lz4.bytes.subarray(0, 16 * 1024))).toBe(toHex(none.bytes.subarray(0, 16 * 1024)));
    expect(lz4.bytes[(await openSst(fs, '/d/r-lz4.sst')).blockHandle(0).size]).toBe(0); // trailer type none
  });

  it('stores large values (64 KiB) and empty values', async () => {
    const fs = await memFs();
    const rng = new Random(testSeed(17));
    const entries = genEntries(rng, 40).map((e, i) => ({ key: e.key, value: i % 3 === 0 ? rng.bytes(64 * 1024) : i % 3 === 1 ? new Uint8Array(0) : rng.bytes(10) }));
    for (const compression of ['none', 'lz4'] as const) {
      await writeSst(fs, '/d/big.sst', entries, { compression });
      const it = (await openSst(fs, '/d/big.sst')).iterator();
      it.seekToFirst();
      expectSameEntries(drainForward(it), entries);
    }
  });

  it('writes and reads an empty SST', async () => {
    const fs = await memFs();
    const { info } = await writeSst(fs, '/d/empty.sst', []);
    expect(info).toMatchObject({ entries: 0, dataBlocks: 0 });
    const r = await openSst(fs, '/d/empty.sst');
    expect(r.entries).toBe(0);
    expect(r.smallestKey.length).toBe(0);
    expect(r.mayContain(rowKey(1))).toBe(false);
    const it = r.iterator();
    for (const op of [() => it.seekToFirst(), () => it.seekToLast(), () => it.seek(rowKey(1)), () => it.seekForPrev(rowKey(1))]) {
      op();
      expect(it.valid).toBe(false);
      expect(it.error()).toBeUndefined();
    }
  });

  it('round trips properties and caller props', async () => {
    const fs = await memFs();
    const rng = new Random(testSeed(3));
    const entries = genEntries(rng, 500);
    const props = { minTs: 1_600_000_000_000, maxTs: Number.MAX_SAFE_INTEGER, minSeq: 0, tombstones: 17, ratio: 0.25, neg: -3, name: 'région' };
    const { info } = await writeSst(fs, '/d/p.sst', entries, { compression: 'deflate', bloomBitsPerKey: 12 }, props);
    expect(info.props).toEqual(props);
    const r = await openSst(fs, '/d/p.sst');
    expect(r.props).toEqual(props);
    const rawKeyBytes = entries.reduce((n, e) => n + e.key.length, 0);
    const rawValueBytes = entries.reduce((n, e) => n + e.value.length, 0);
    expect(r.properties).toMatchObject({ entries: 500, dataBlocks: info.dataBlocks, rawKeyBytes, rawValueBytes, compression: 'deflate', bloomBitsPerKey: 12 });
    expect(toHex(r.smallestKey)).toBe(toHex(entries[0]!.key));
    expect(toHex(r.largestKey)).toBe(toHex(entries[499]!.key));
    expect(r.sizeBytes).toBe(info.sizeBytes);
  });

  it('values are views into immutable block buffers that stay valid', async () => {
    const fs = await memFs();
    const rng = new Random(testSeed(11));
    const entries = genEntries(rng, 3000);
    await writeSst(fs, '/d/v.sst', entries, { blockSizeBytes: 512 });
    const cache = new LruCache<Block>(2048); // tiny: blocks are evicted while values are held
    const it = (await openSst(fs, '/d/v.sst', { cache })).iterator();
    const kept: Uint8Array[] = [];
    for (it.seekToFirst(); it.valid; it.next()) kept.push(it.value());
    expect(kept.map(toHex)).toEqual(entries.map((e) => toHex(e.value)));
    expect(cache.stats().evictions).toBeGreaterThan(0);
  });

  it('serves repeated reads from the block cache and drops a file on request', async () => {
    const fs = await memFs();
    const entries = genEntries(new Random(testSeed(12)), 2000);
    const { info } = await writeSst(fs, '/d/c.sst', entries, { blockSizeBytes: 1024 });
    const cache = new LruCache<Block>(64 << 20);
    const r = await openSst(fs, '/d/c.sst', { cache, cacheId: 42 });
    const it = r.iterator();
    for (it.seekToFirst(); it.valid; it.next());
    expect(cache.stats()).toMatchObject({ misses: info.dataBlocks, hits: 0, entries: info.dataBlocks });
    for (it.seekToFirst(); it.valid; it.next());
    expect(cache.stats().hits).toBe(info.dataBlocks);
    expect(cache.has(42, 0)).toBe(true);
    r.dropCachedBlocks();
    expect(cache.stats()).toMatchObject({ entries: 0, sizeBytes: 0 });
  });

  it('a block sought again gets its entry index, and the block cache is charged for it', async () => {
    const fs = await memFs();
    const entries = genEntries(new Random(testSeed(14)), 2000);
    await writeSst(fs, '/d/i.sst', entries, { blockSizeBytes: 1024 });
    const cache = new LruCache<Block>(64 << 20);
    const r = await openSst(fs, '/d/i.sst', { cache, cacheId: 7 });
    const it = r.iterator();
    const target = entries[5]!.key;
    it.seek(target);
    const charged = cache.stats().sizeBytes;
    expect(cache.stats().entries).toBe(1);
    it.seek(target); // the second seek into the block builds its index
    expect(toHex(it.key())).toBe(toHex(target));
    const block = r.readBlock(0);
    expect(block.index).toBeDefined();
    expect(cache.stats().sizeBytes).toBe(charged + block.indexBytes);
    // Every key found through the index, as through decoding.
    for (const e of entries) {
      it.seek(e.key);
      expect(it.valid && toHex(it.key()) === toHex(e.key) && toHex(it.value()) === toHex(e.value)).toBe(true);
    }
  });

  it('flushPending writes completed blocks while add() continues, and estimatedSizeBytes tracks the size', async () => {
    const fs = await memFs();
    const entries = genEntries(new Random(testSeed(13)), 20000);
    const f = await fs.openAppend('/d/f.sst', { truncate: true });
    const w = new SstWriter(f, { compare, blockSizeBytes: 4096 });
    let flushes: Promise<void>[] = [];
    for (let i = 0; i < entries.length; i++) {
      w.add(entries[i]!.key, entries[i]!.value);
      if (i % 2500 === 2499) flushes.push(w.flushPending()); // not awaited: adds continue
    }
    await Promise.all(flushes);
    flushes = [];
    expect(f.size).toBeGreaterThan(0);
    expect(w.pendingBytes).toBeLessThan(2 * 4096 + 64 * 1024);
    const estimate = w.estimatedSizeBytes;
    const info = await w.finish();
    expect(Math.abs(estimate - info.sizeBytes) / info.sizeBytes).toBeLessThan(0.05);
    const it = (await openSst(fs, '/d/f.sst')).iterator();
    it.seekToFirst();
    expectSameEntries(drainForward(it), entries);
  });

  it('rejects out-of-order and duplicate keys under HORAE_INVARIANTS', async () => {
    expect(process.env['HORAE_INVARIANTS']).toBe('1');
    const fs = await memFs();
    const f = await fs.openAppend('/d/o.sst', { truncate: true });
    const w = new SstWriter(f, { compare, blockSizeBytes: 64 });
    const a = encodeInternalKey(rowKey(1), 't', new Uint8Array([1]), 5, 1, KeyKind.Put);
    const b = encodeInternalKey(rowKey(2), 't', new Uint8Array([1]), 5, 1, KeyKind.Put);
    w.add(a, new Uint8Array(100)); // fills a block: the next check compares with the index key
    w.add(b, new Uint8Array(1));
    expect(() => w.add(a, new Uint8Array(1))).toThrow(/^BUG: SstWriter.add: key .* does not sort after/);
    expect(() => w.add(b, new Uint8Array(1))).toThrow(/^BUG/);
    await w.abandon();
  });

  it('rejects bad options and props', async () => {
    const fs = await memFs();
    const f = await fs.openAppend('/d/x.sst', { truncate: true });
    expect(() => new SstWriter(f, { compare, compression: 'zstd' as Compression })).toThrow(RangeError);
    expect(() => new SstWriter(f, { compare, blockSizeBytes: 0 })).toThrow(RangeError);
    const w = new SstWriter(f, { compare });
    await expect(w.finish({ bad: {} as unknown as number })).rejects.toThrow(TypeError);
    await f.append(new Uint8Array(1));
    expect(() => new SstWriter(f, { compare })).toThrow(/needs an empty file/);
  });
});

describe('SST on the real file system', () => {
  it('writes, syncs and reads back through NodeFileSystem', async () => {
    const dir = mkdtempSync(`${tmpdir()}/horae-sst-`);
    try {
      const fs = new NodeFileSystem();
      const entries = genEntries(new Random(testSeed(8)), 5000);
      const f = await fs.openAppend(`${dir}/000001.sst`, { truncate: true });
      const w = new SstWriter(f, { compare, compression: 'lz4', blockSizeBytes: 2048 });
      for (let i = 0; i < entries.length; i++) {
        w.add(entries[i]!.key, entries[i]!.value);
        if (i % 1000 === 999) await w.flushPending();
      }
      const info = await w.finish({ minTs: 1 });
      expect(await fs.size(`${dir}/000001.sst`)).toBe(info.sizeBytes);
      const r = SstReader.open(await fs.openRead(`${dir}/000001.sst`), { compare, cacheId: 1, cache: new LruCache<Block>(1 << 20) });
      const it = r.iterator();
      it.seekToLast();
      expectSameEntries(drainBackward(it), [...entries].reverse());
      await r.close();
      await r.close(); // idempotent
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SST bloom filter', () => {
  it('has no false negatives and about 1% false positives at 10 bits/key', async () => {
    const fs = await memFs();
    const rng = new Random(testSeed(21));
    const rows = 20000;
    const entries: Entry[] = [];
    for (let i = 0; i < rows; i++) {
      // two cells per row: each row must be added to the filter once
      for (const q of [1, 2]) entries.push({ key: encodeInternalKey(rowKey(2 * i), 't', new Uint8Array([q]), 9, 1, KeyKind.Put), value: new Uint8Array([q]) });
    }
    await writeSst(fs, '/d/b.sst', entries, { bloomBitsPerKey: 10 });
    const r = await openSst(fs, '/d/b.sst');
    expect(r.filterBytes).toBe(Math.ceil((rows * 10) / 8) + 1); // distinct rows, not entries
    for (let i = 0; i < rows; i++) expect(r.mayContain(rowKey(2 * i))).toBe(true);
    expect(r.mayContainKey(entries[7]!.key)).toBe(true);
    let fp = 0;
    const probes = 100000;
    for (let i = 0; i < probes; i++) if (r.mayContain(rowKey(2 * rng.int(1_000_000) + 1))) fp++;
    const rate = fp / probes;
    expect(rate).toBeGreaterThan(0.003);
    expect(rate).toBeLessThan(0.02);
  });

  it('is absent when bloomBitsPerKey is 0 (mayContain is always true)', async () => {
    const fs = await memFs();
    await writeSst(fs, '/d/nb.sst', genEntries(new Random(1), 100), { bloomBitsPerKey: 0 });
    const r = await openSst(fs, '/d/nb.sst');
    expect(r.filterBytes).toBe(0);
    expect(r.footer.filter).toEqual({ offset: 0, size: 0 });
    expect(r.mayContain(rowKey(123456789))).toBe(true);
  });
});

describe('SST corruption', () => {
  /** Everything the reader yields, or the first error it reports. */
  function readAll(r: SstReader): { entries: Entry[]; error?: Error } {
    const it = r.iterator();
    it.seekToFirst();
    const fwd = drainForward(it);
    if (it.error() !== undefined) return { entries: fwd, error: it.error()! };
    it.seekToLast();
    const back = drainBackward(it);
    if (it.error() !== undefined) return { entries: fwd, error: it.error()! };
    expectSameEntries(back, [...fwd].reverse());
    return { entries: fwd };
  }

  /** Byte ranges [start, end) named by `@offset` in messages: blocks with trailers, footer. */
  function regionOf(regions: Map<number, number>, msg: string): [number, number] {
    const m = /@(\d+)/.exec(msg);
    expect(m, `no @offset in: ${msg}`).not.toBeNull();
    const start = Number(m![1]);
    const end = regions.get(start);
    expect(end, `@${start} is not a block or footer start: ${msg}`).toBeDefined();
    return [start, end!];
  }

  async function flipEveryByte(compression: Compression, n: number, stride: number, seed: number): Promise<number> {
    const fs = await memFs();
    const path = '/d/000012.sst';
    const entries = genEntries(new Random(seed), n);
    const { bytes } = await writeSst(fs, path, entries, { compression, blockSizeBytes: 512 });
    const clean = await openSst(fs, path);
    const regions = new Map<number, number>();
    for (let i = 0; i < clean.dataBlocks; i++) { const h = clean.blockHandle(i); regions.set(h.offset, h.offset + h.size + 5); }
    for (const h of [clean.footer.filter, clean.footer.properties, clean.footer.index]) if (h.size > 0) regions.set(h.offset, h.offset + h.size + 5);
    regions.set(bytes.length - FOOTER_BYTES, bytes.length);
    // Every byte belongs to exactly one region: the format has no unchecked bytes.
    const covered = [...regions].reduce((s, [a, b]) => s + (b - a), 0);
    expect(covered).toBe(bytes.length);
    let detected = 0;
    const rng = new Random(seed);
    for (let off = 0; off < bytes.length; off += stride) {
      const mask = 1 << rng.int(8);
      fs.corrupt(path, off, mask);
      let err: unknown;
      let r: SstReader | undefined;
      try {
        r = await openSst(fs, path, { cache: new LruCache<Block>(1 << 20) });
      } catch (e) {
        err = e;
      }
      if (r !== undefined) {
        const res = readAll(r);
        err = res.error;
        if (err === undefined) {
          // Undetected: the data must still be exactly right (it never is in this format).
          expectSameEntries(res.entries, entries, `flip @${off} undetected and data differs`);
        } else {
          // What came before the error is a correct prefix of the data.
          expectSameEntries(res.entries, entries.slice(0, res.entries.length));
        }
      }
      expect(err, `flip @${off} (mask ${mask}) was not detected`).toBeDefined();
      expect(err).toBeInstanceOf(StoreError);
      const se = err as StoreError;
      const footerVersion = off >= bytes.length - FOOTER_BYTES + 36 && off < bytes.length - FOOTER_BYTES + 40;
      expect(se.code, se.message).toBe(footerVersion && se.code === 'STORE_NOT_SUPPORTED' ? 'STORE_NOT_SUPPORTED' : 'STORE_CORRUPTION');
      expect(se.message).toContain(`sst ${path}:`);
      const [start, end] = regionOf(regions, se.message);
      expect(off >= start && off < end, `flip @${off} reported in [${start}, ${end}): ${se.message}`).toBe(true);
      detected++;
      fs.corrupt(path, off, mask); // restore
    }
    return detected;
  }

  it('detects a flipped bit at every offset of a small file (bloom on, no compression)', async () => {
    const n = await flipEveryByte('none', 120, 1, testSeed(31));
    expect(n).toBeGreaterThan(3000);
  });

  it('detects flipped bits across an lz4 file', async () => {
    expect(await flipEveryByte('lz4', 400, 7, testSeed(32))).toBeGreaterThan(100);
  });

  it('detects flipped bits across a deflate file', async () => {
    expect(await flipEveryByte('deflate', 400, 7, testSeed(33))).toBeGreaterThan(100);
  });

  it('reports the exact checksum mismatch for a damaged data block', async () => {
    const fs = await memFs();
    const entries = genEntries(new Random(testSeed(34)), 2000);
    await writeSst(fs, '/d/000012.sst', entries, { blockSizeBytes: 1024 });
    const h = (await openSst(fs, '/d/000012.sst')).blockHandle(3);
    fs.corrupt('/d/000012.sst', h.offset + 10, 0x40);
    const r = await openSst(fs, '/d/000012.sst');
    const it = r.iterator();
    it.seekToFirst();
    const got = drainForward(it);
    expect(got.length).toBeGreaterThan(0);
    expectSameEntries(got, entries.slice(0, got.length)); // blocks 0-2, then stop
    expect(it.error()?.message).toMatch(new RegExp(`^sst /d/000012\\.sst: block @${h.offset}: checksum mismatch: stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}$`));
    expect(isStoreError(it.error(), 'STORE_CORRUPTION')).toBe(true);
    it.seekToFirst(); // sticky
    expect(it.valid).toBe(false);
    // A fresh iterator that never touches block 3 works.
    const it2 = r.iterator();
    it2.seek(entries[0]!.key);
    expect(it2.valid).toBe(true);
  });

  it('rejects truncated files at open', async () => {
    const fs = await memFs();
    const { bytes } = await writeSst(fs, '/d/000012.sst', genEntries(new Random(1), 300));
    for (const len of [0, 10, FOOTER_BYTES - 1, FOOTER_BYTES, bytes.length - 1, bytes.length - 200]) {
      const f = await fs.openAppend('/d/t.sst', { truncate: true });
      await f.append(bytes.subarray(0, len));
      await f.close();
      await expect(openSst(fs, '/d/t.sst')).rejects.toMatchObject({ code: 'STORE_CORRUPTION', message: expect.stringContaining('sst /d/t.sst:') });
    }
  });

  it('refuses a newer format version (naming both) and a bad magic', async () => {
    const fs = await memFs();
    const { bytes } = await writeSst(fs, '/d/000012.sst', genEntries(new Random(1), 50));
    const fo = bytes.length - FOOTER_BYTES;
    const patch = async (edit: (footer: Uint8Array) => void): Promise<unknown> => {
      const b = bytes.slice();
      edit(b.subarray(fo));
      const f = await fs.openAppend('/d/v.sst', { truncate: true });
      await f.append(b);
      await f.close();
      return openSst(fs, '/d/v.sst').then(() => undefined, (e: unknown) => e);
    };
    const newer = await patch((ft) => {
      const dv = new DataView(ft.buffer, ft.byteOffset, ft.byteLength);
      dv.setUint32(36, 2);
      dv.setUint32(40, maskCrc(crc32c(ft, 0, 40)));
    });
    expect(newer).toMatchObject({ code: 'STORE_NOT_SUPPORTED' });
    expect((newer as Error).message).toMatch(/footer @\d+: format version 2 is newer than the newest this build reads \(1\)/);
    const magic = await patch((ft) => { ft[51] ^= 1; });
    expect(magic).toMatchObject({ code: 'STORE_CORRUPTION', message: expect.stringMatching(/sst \/d\/v\.sst: footer @\d+: bad magic/) });
    // The writer's footer encoder and the file agree byte for byte.
    const r = await openSst(fs, '/d/000012.sst');
    expect(toHex(encodeFooter(r.footer.filter, r.footer.properties, r.footer.index))).toBe(toHex(bytes.subarray(fo)));
  });

  it('records STORE_CLOSED when a closed reader is asked for a block', async () => {
    const fs = await memFs();
    await writeSst(fs, '/d/c.sst', genEntries(new Random(1), 50));
    const r = await openSst(fs, '/d/c.sst');
    const it = r.iterator();
    await r.close();
    it.seekToFirst();
    expect(it.valid).toBe(false);
    expect(isStoreError(it.error(), 'STORE_CLOSED')).toBe(true);
  });
});
