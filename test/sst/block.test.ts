import { describe, expect, it } from 'vitest';
import { compareBytes, toHex } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import { Block, BlockIterator } from '../../core/sst/block.js';
import { BlockBuilder } from '../../core/sst/block-builder.js';
import type { Random } from '../../core/util/random.js';
import type { Entry } from './helpers.js';
import { drainBackward, drainForward, floorIndex, lowerBound, testSeed, withSeed } from './helpers.js';

/** Distinct random byte keys sharing prefixes (so prefix compression has work), sorted. */
function genByteEntries(rng: Random, n: number, opts: { longKeys?: boolean; bigValues?: boolean } = {}): Entry[] {
  const seen = new Set<string>();
  const out: Entry[] = [];
  const prefixes = [new Uint8Array(0), new Uint8Array([1, 2, 3]), new Uint8Array(opts.longKeys ? 200 : 10).fill(7)];
  while (out.length < n) {
    const p = prefixes[rng.int(prefixes.length)]!;
    const tail = rng.bytes(rng.int(opts.longKeys ? 150 : 6));
    const key = new Uint8Array(p.length + tail.length);
    key.set(p);
    key.set(tail, p.length);
    const h = toHex(key);
    if (seen.has(h)) continue;
    seen.add(h);
    const vlen = opts.bigValues ? rng.int(1000) : rng.int(20);
    out.push({ key, value: rng.bytes(vlen) });
  }
  return out.sort((a, b) => compareBytes(a.key, b.key));
}

function build(entries: readonly Entry[], restartInterval: number): Block {
  const b = new BlockBuilder(restartInterval);
  for (const e of entries) b.add(e.key, e.value);
  // A copy: the builder's buffer is reused, the Block must own immutable bytes.
  return Block.parse(b.finish().slice(), 'test block @0');
}

function expectAt(it: BlockIterator, entries: readonly Entry[], i: number, what: string): void {
  if (i < 0 || i >= entries.length) {
    expect(it.valid, `${what}: expected invalid`).toBe(false);
    expect(it.error()).toBeUndefined();
    return;
  }
  expect(it.valid, `${what}: expected entry ${i}`).toBe(true);
  expect(toHex(it.key()), `${what}: key of entry ${i}`).toBe(toHex(entries[i]!.key));
  expect(toHex(it.value()), `${what}: value of entry ${i}`).toBe(toHex(entries[i]!.value));
}

/** Targets around every key: the key, just before it, just after it, plus random ones. */
function targetsFor(rng: Random, entries: readonly Entry[]): Uint8Array[] {
  const out: Uint8Array[] = [new Uint8Array(0), new Uint8Array([0xff, 0xff, 0xff])];
  for (const e of entries) {
    out.push(e.key);
    const after = new Uint8Array(e.key.length + 1);
    after.set(e.key);
    out.push(after);
    if (e.key.length > 0) out.push(e.key.subarray(0, e.key.length - 1));
  }
  for (let i = 0; i < 20; i++) out.push(rng.bytes(rng.int(8)));
  return out;
}

describe('BlockBuilder + Block', () => {
  it('an empty block is 8 bytes and iterates nothing', () => {
    const b = new BlockBuilder(16);
    const bytes = b.finish();
    expect(toHex(bytes)).toBe('0000000000000001'); // restart [0], count 1
    const it = Block.parse(bytes.slice(), 'empty').iterator(compareBytes);
    for (const op of [() => it.seekToFirst(), () => it.seekToLast(), () => it.seek(new Uint8Array([1])), () => it.seekForPrev(new Uint8Array([1]))]) {
      op();
      expect(it.valid).toBe(false);
      expect(it.error()).toBeUndefined();
    }
  });

  it('encodes entries with shared-prefix compression and restarts (exact bytes)', () => {
    const b = new BlockBuilder(2);
    const enc = new TextEncoder();
    b.add(enc.encode('apple'), enc.encode('1'));
    b.add(enc.encode('apricot'), enc.encode('22'));
    b.add(enc.encode('banana'), new Uint8Array(0));
    expect(b.entries).toBe(3);
    const bytes = toHex(b.finish());
    expect(bytes).toBe(
      '000501' + toHex(enc.encode('apple')) + '31' + // +0: shared 0, unshared 5, value 1
        '020502' + toHex(enc.encode('ricot')) + '3232' + // +9: shared 2 ("ap")
        '000600' + toHex(enc.encode('banana')) + // +19: restart, shared 0
        '00000000' + '00000013' + '00000002', // restarts [0, 19], count 2
    );
  });

  it('reset() makes the builder reusable', () => {
    const b = new BlockBuilder(4);
    b.add(new Uint8Array([9, 9]), new Uint8Array([1]));
    b.finish();
    b.reset();
    b.add(new Uint8Array([1]), new Uint8Array([2]));
    const blk = Block.parse(b.finish().slice(), 'x');
    expect(drainForward(withFirst(blk.iterator(compareBytes)))).toEqual([{ key: new Uint8Array([1]), value: new Uint8Array([2]) }]);
  });

  for (const restartInterval of [1, 2, 3, 16, 1000]) {
    for (const n of [1, 2, 3, 15, 16, 17, 33, 200]) {
      for (const mode of ['decoding', 'entry index', 'index after the second seek'] as const) it(`round trips and positions correctly: ${n} entries, restart interval ${restartInterval}, ${mode}`, () => {
        withSeed(testSeed(n * 7919 + restartInterval), (rng) => {
          const entries = genByteEntries(rng, n);
          const block = build(entries, restartInterval);
          if (mode === 'decoding') block.indexFailed = true; // never indexed
          if (mode === 'entry index') {
            block.buildIndex();
            expect(block.index?.offsets.length).toBe(n);
            expect(block.indexBytes).toBeGreaterThan(entries.reduce((sum, e) => sum + e.key.length, 0));
          }
          expect(block.numRestarts).toBe(Math.ceil(n / restartInterval));
          const it = block.iterator(compareBytes);
          it.seekToFirst();
          expect(drainForward(it)).toEqual(entries.map((e) => ({ key: e.key, value: e.value })));
          it.seekToLast();
          expect(drainBackward(it)).toEqual([...entries].reverse().map((e) => ({ key: e.key, value: e.value })));

          for (const t of targetsFor(rng, entries)) {
            const lb = lowerBound(entries, t, compareBytes);
            it.seek(t);
            expectAt(it, entries, lb, `seek(${toHex(t)})`);
            if (it.valid) {
              // Step both ways from a seek position: exercises the restart bookkeeping.
              it.prev();
              expectAt(it, entries, lb - 1, `seek(${toHex(t)}).prev`);
              it.seek(t);
              it.next();
              expectAt(it, entries, lb + 1, `seek(${toHex(t)}).next`);
            }
            const fl = floorIndex(entries, t, compareBytes);
            it.seekForPrev(t);
            expectAt(it, entries, fl, `seekForPrev(${toHex(t)})`);
            if (it.valid) {
              it.next();
              expectAt(it, entries, fl + 1, `seekForPrev(${toHex(t)}).next`);
              it.seekForPrev(t);
              it.prev();
              expectAt(it, entries, fl - 1, `seekForPrev(${toHex(t)}).prev`);
            }
          }
          // prev from every position, reached by forward iteration.
          for (let i = 0; i < n; i++) {
            it.seekToFirst();
            for (let j = 0; j < i; j++) it.next();
            it.prev();
            expectAt(it, entries, i - 1, `prev from ${i}`);
          }
        });
      });
    }
  }

  it('handles long keys (> 127 shared bytes), long deltas and multi-byte value lengths', () => {
    withSeed(testSeed(4242), (rng) => {
      const entries = genByteEntries(rng, 300, { longKeys: true, bigValues: true });
      const block = build(entries, 16);
      const it = block.iterator(compareBytes);
      it.seekToFirst();
      expect(drainForward(it).length).toBe(300);
      for (let i = 0; i < entries.length; i += 7) {
        it.seek(entries[i]!.key);
        expectAt(it, entries, i, `seek ${i}`);
      }
    });
  });

  it('value() is a view into the block bytes (no copy)', () => {
    const block = build([{ key: new Uint8Array([1]), value: new Uint8Array([5, 6, 7]) }], 16);
    const it = block.iterator(compareBytes);
    it.seekToFirst();
    expect(it.value().buffer).toBe(block.data.buffer);
    expect(it.value().byteOffset).toBe(block.data.byteOffset + 4);
  });

  it('agrees with a sorted-array model under random operation sequences', () => {
    withSeed(testSeed(99), (rng) => {
      for (let round = 0; round < 20; round++) {
        const entries = genByteEntries(rng, 1 + rng.int(300));
        const block = build(entries, 1 + rng.int(20));
        const it = block.iterator(compareBytes);
        let pos = -1; // model position; -1 or n = invalid
        for (let op = 0; op < 300; op++) {
          const r = rng.int(6);
          if (r === 0) { it.seekToFirst(); pos = 0; }
          else if (r === 1) { it.seekToLast(); pos = entries.length - 1; }
          else if (r === 2) { const t = rng.chance(0.5) ? entries[rng.int(entries.length)]!.key : rng.bytes(rng.int(8)); it.seek(t); pos = lowerBound(entries, t, compareBytes); }
          else if (r === 3) { const t = rng.chance(0.5) ? entries[rng.int(entries.length)]!.key : rng.bytes(rng.int(8)); it.seekForPrev(t); pos = floorIndex(entries, t, compareBytes); }
          else if (r === 4 && pos >= 0 && pos < entries.length) { it.next(); pos++; }
          else if (r === 5 && pos >= 0 && pos < entries.length) { it.prev(); pos--; }
          expectAt(it, entries, pos, `round ${round} op ${op}`);
        }
      }
    });
  });
});

function withFirst(it: BlockIterator): BlockIterator {
  it.seekToFirst();
  return it;
}

describe('Block corruption', () => {
  const good = (): Uint8Array => {
    const b = new BlockBuilder(2);
    for (let i = 0; i < 6; i++) b.add(new Uint8Array([1, 2, i]), new Uint8Array([i]));
    return b.finish().slice();
  };

  it('rejects a restart count that does not fit', () => {
    const d = good();
    d[d.length - 1] = 200;
    expect(() => Block.parse(d, 'sst /x.sst: block @4096')).toThrow(/sst \/x\.sst: block @4096: restart count 200/);
  });

  it('rejects a restart offset out of range or out of order', () => {
    const d = good();
    // restarts start at len - 4 - 4*3; corrupt the second restart to point past the entries
    const r1 = d.length - 4 - 4 * 3 + 4;
    d[r1] = 0x7f;
    let err: unknown;
    try { Block.parse(d, 'blk'); } catch (e) { err = e; }
    expect(isStoreError(err, 'STORE_CORRUPTION')).toBe(true);
    expect((err as Error).message).toMatch(/^blk: bad restart point 1/);
  });

  it('records a sticky error for a malformed entry and never yields bytes past the entries', () => {
    const d = good();
    // entry 0 is 7 bytes (3 varints, key 3, value 1); entry 1 at +7 now claims a 127-byte key delta
    d[7 + 1] = 0x7f;
    const it = Block.parse(d, 'sst /x.sst: block @0').iterator(compareBytes);
    it.seekToFirst();
    expect(it.valid).toBe(true);
    it.next();
    expect(it.valid).toBe(false);
    const err = it.error();
    expect(isStoreError(err, 'STORE_CORRUPTION')).toBe(true);
    expect(err!.message).toMatch(/sst \/x\.sst: block @0: bad entry @\+7/);
    it.seekToFirst();
    expect(it.valid).toBe(false); // sticky
  });

  it('a block with a malformed entry gets no entry index, and its seeks still report the damage', () => {
    const d = good();
    d[7 + 1] = 0x7f; // entry 1 claims a 127-byte key delta
    const block = Block.parse(d, 'sst /x.sst: block @0');
    block.buildIndex();
    expect(block.index).toBeUndefined();
    expect(block.indexFailed).toBe(true);
    // A seek that does not reach the damage still works, the index pass failing or not.
    const fresh = Block.parse(good().map((x, i) => (i === 8 ? 0x7f : x)), 'sst /x.sst: block @0');
    const ok = fresh.iterator(compareBytes);
    for (let k = 0; k < 3; k++) {
      ok.seek(new Uint8Array([1, 2, 3])); // restart 1 (entries 2, 3): past the damaged entry 1
      expect(ok.valid && toHex(ok.key()) === '010203', `seek ${k}`).toBe(true);
    }
    expect(fresh.indexFailed).toBe(true);
    const it = block.iterator(compareBytes);
    // [1, 2, 1] lies in entry 1: the seek decodes from restart 0 through the damage.
    it.seek(new Uint8Array([1, 2, 1]));
    it.seek(new Uint8Array([1, 2, 1]));
    expect(it.valid).toBe(false);
    expect(it.error()?.message).toMatch(/bad entry @\+7/);
  });

  it('a header cut by the end of the entries is malformed, not read into the restart array', () => {
    // One entry whose value length's first byte says "more follows" and is the last byte of
    // the entries; the restart array after it starts with a byte < 0x80.
    const d = Uint8Array.from([0x00, 0x01, 0x85, 0, 0, 0, 0, 0, 0, 0, 1]);
    const it = Block.parse(d, 'sst /x.sst: block @0').iterator(compareBytes);
    it.seekToFirst();
    expect(it.valid).toBe(false);
    expect(it.error()?.message).toMatch(/bad entry @\+0 \(block offset\): malformed varint/);
  });

  it('detects a non-zero shared length at a restart point during seek', () => {
    const d = good();
    d[12] = 1; // entry 2 (restart 1, at +12) now shares 1 byte
    const it = Block.parse(d, 'b').iterator(compareBytes);
    it.seek(new Uint8Array([1, 2, 5]));
    expect(it.valid).toBe(false);
    expect(it.error()?.message).toMatch(/bad entry @\+12.*restart entry shares 1/);
  });
});
