/**
 * The in-place range comparator (compareInternalKeyRange / SstReaderOptions.compareRange):
 * it must return exactly what compareInternalKeys(a.subarray(s, e), b) returns, including
 * for malformed keys, and readers opened with it must position identically to readers
 * without it.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import { compareInternalKeyRange, compareInternalKeys, encodeInternalKey, rowEndKey, rowStartKey } from '../../core/lsm/internal-key.js';
import { compareRange as engineCompareRange } from '../../core/lsm/sst-options.js';
import { Block } from '../../core/sst/block.js';
import { BlockBuilder } from '../../core/sst/block-builder.js';
import type { InternalIterator } from '../../core/iter/internal-iterator.js';
import type { Random } from '../../core/util/random.js';
import { compare, genEntries, memFs, openSst, rowKey, testSeed, withSeed, withSeedAsync, writeSst } from './helpers.js';

function randomKey(rng: Random): Uint8Array {
  if (rng.chance(0.15)) return rng.bytes(rng.int(40)); // arbitrary (often malformed) bytes
  const row = rng.chance(0.5) ? rowKey(rng.int(20)) : rng.bytes(rng.int(6));
  const fam = rng.chance(0.5) ? 't' : 'ab'.slice(0, rng.int(3));
  const q = rng.bytes(rng.int(4));
  return encodeInternalKey(row, fam, q, rng.int(1000), rng.int(1000), 1 + rng.int(5));
}

function sign(x: number): string {
  return Number.isNaN(x) ? 'NaN' : String(x);
}

describe('compareInternalKeyRange', () => {
  it('equals compareInternalKeys on a subarray, at any offset, for valid and malformed keys', () => {
    withSeed(testSeed(4242), (rng) => {
      expect(engineCompareRange).toBe(compareInternalKeyRange);
      for (let n = 0; n < 20000; n++) {
        const a = randomKey(rng);
        const b = rng.chance(0.2) ? a.slice() : randomKey(rng);
        // Embed a in a larger buffer with random bytes around it.
        const pre = rng.int(8);
        const post = rng.int(8);
        const buf = rng.bytes(pre + a.length + post);
        buf.set(a, pre);
        // Sometimes truncate the range to exercise malformed prefixes.
        const end = rng.chance(0.1) ? pre + rng.int(a.length + 1) : pre + a.length;
        const want = compareInternalKeys(buf.subarray(pre, end), b);
        const got = compareInternalKeyRange(buf, pre, end, b);
        expect(sign(got), `a=${toHex(buf.subarray(pre, end))} b=${toHex(b)}`).toBe(sign(want));
      }
    });
  });
});

function positions(it: InternalIterator, targets: readonly Uint8Array[]): string[] {
  const out: string[] = [];
  for (const t of targets) {
    it.seek(t);
    out.push(it.valid ? `s ${toHex(it.key())} ${toHex(it.value())}` : `s - ${String(it.error())}`);
    if (it.valid) {
      it.next();
      out.push(it.valid ? `n ${toHex(it.key())}` : 'n -');
    }
    it.seekForPrev(t);
    out.push(it.valid ? `p ${toHex(it.key())} ${toHex(it.value())}` : `p - ${String(it.error())}`);
  }
  return out;
}

function targetsFor(rng: Random, keys: readonly Uint8Array[]): Uint8Array[] {
  const targets: Uint8Array[] = [];
  for (let i = 0; i < 400; i++) {
    const r = rng.int(4);
    if (r === 0) targets.push(keys[rng.int(keys.length)]!);
    else if (r === 1) targets.push(rowStartKey(rowKey(rng.int(keys.length * 2))));
    else if (r === 2) targets.push(rowEndKey(rowKey(rng.int(keys.length * 2))));
    else targets.push(encodeInternalKey(rowKey(rng.int(keys.length * 2)), 't', rng.bytes(rng.int(3)), rng.int(2e12), rng.int(1e6), 1));
  }
  return targets;
}

describe('seeks with a range comparator', () => {
  it('a BlockIterator positions identically with and without compareRange', () => {
    withSeed(testSeed(77), (rng) => {
      for (const restartInterval of [1, 3, 16]) {
        const entries = genEntries(rng, 700);
        const b = new BlockBuilder(restartInterval);
        for (const e of entries) b.add(e.key, e.value);
        const block = Block.parse(b.finish().slice(), 'test block');
        const targets = targetsFor(rng, entries.map((e) => e.key));
        const plain = positions(block.iterator(compare), targets);
        const ranged = positions(block.iterator(compare, compareInternalKeyRange), targets);
        expect(ranged).toEqual(plain);
      }
    });
  });

  it('an SstReader positions identically with and without compareRange', async () => {
    await withSeedAsync(testSeed(78), async (rng) => {
      const fs = await memFs();
      const entries = genEntries(rng, 5000);
      await writeSst(fs, '/d/000001.sst', entries, { blockSizeBytes: 1024 });
      const plainReader = await openSst(fs, '/d/000001.sst');
      const rangedReader = await openSst(fs, '/d/000001.sst', { compareRange: compareInternalKeyRange });
      const targets = targetsFor(rng, entries.map((e) => e.key));
      expect(positions(rangedReader.iterator(), targets)).toEqual(positions(plainReader.iterator(), targets));
      await plainReader.close();
      await rangedReader.close();
    });
  });
});
