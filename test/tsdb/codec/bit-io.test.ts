/**
 * BitWriter / BitReader (tsdb/codec/bit-writer.ts, bit-reader.ts): every field width and
 * Rice code written is read back, MSB-first as tsdb/SCHEMA.md "Conventions"
 * says, and reading past the end fails at endBits() instead of running off the buffer.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { BitReader } from '../../../tsdb/codec/bit-reader.js';
import { BitWriter } from '../../../tsdb/codec/bit-writer.js';
import { HourCodecError } from '../../../tsdb/codec/errors.js';
import { testSeed } from '../../helpers/model.js';

describe('bit I/O', () => {
  it('writes bits MSB-first and pads to a byte with zeros', () => {
    const w = new BitWriter(1);
    w.writeBits(1, 1);
    w.writeBits(0b01, 2);
    w.writeBits(0xabc, 12);
    w.align();
    w.writeU8(0x7f);
    w.writeRice(5, 1, 32); // q 2: 001, low bit 1
    w.writeRice(0, 0, 32); // 1
    w.align();
    expect(toHex(w.finish())).toBe('b5787f38'); // 1 01 101010111100 0 | 7f | 001 1 1 000
  });

  it('random fields round-trip: bits, wide fields, varints, Rice and 64-bit Rice with escapes', () => {
    const seed = testSeed(515);
    const rng = new Random(seed);
    type Op = { kind: number; a: number; b: number; k: number };
    const ops: Op[] = [];
    const w = new BitWriter(16);
    for (let i = 0; i < 20_000; i++) {
      const kind = rng.int(5);
      const k = rng.int(kind === 4 ? 64 : 54);
      let a = 0;
      let b = 0;
      if (kind === 0) {
        b = rng.range(0, 32);
        a = b === 0 ? 0 : rng.nextU32() >>> (32 - b);
        w.writeBits(a, b);
      } else if (kind === 1) {
        b = rng.range(0, 53);
        a = Math.floor(rng.next() * 2 ** b);
        w.writeWide(a, b);
      } else if (kind === 2) {
        w.align();
        a = Math.floor(rng.next() * 2 ** rng.int(53));
        w.writeUvarint(a);
      } else if (kind === 3) {
        a = Math.floor(rng.next() * 2 ** rng.int(54)) % 2 ** 53; // escapes when a / 2^k >= 24
        w.writeRice(a, Math.min(k, 53), 64);
      } else {
        a = rng.chance(0.2) ? rng.nextU32() : rng.nextU32() >>> rng.int(32);
        b = rng.nextU32() >>> 0;
        w.writeRice64(a, b, k);
      }
      ops.push({ kind, a, b, k });
    }
    w.align();
    const r = new BitReader(w.finish());
    r.beginBits();
    for (const [i, op] of ops.entries()) {
      const what = `seed ${seed} op ${i} ${JSON.stringify(op)}`;
      if (op.kind === 0) expect(r.readBits32(op.b), what).toBe(op.a);
      else if (op.kind === 1) expect(r.readWide(op.b), what).toBe(op.a);
      else if (op.kind === 2) {
        r.endBits();
        expect(r.readUvarint(), what).toBe(op.a);
        r.beginBits();
      } else if (op.kind === 3) expect(r.readRice(Math.min(op.k, 53), 64), what).toBe(op.a);
      else {
        expect(r.readRice64(op.k), what).toBe(op.b);
        expect(r.hi, what).toBe(op.a);
      }
    }
    r.endBits();
    expect(r.pos).toBe(r.end);
  });

  it('readRiceRun and readRice64Run agree with one-at-a-time reads', () => {
    const rng = new Random(testSeed(77));
    for (const k of [0, 1, 7, 24, 25, 33, 47, 56, 57, 63]) {
      const w = new BitWriter();
      const lo = Uint32Array.from({ length: 300 }, () => rng.nextU32());
      const hi = Uint32Array.from({ length: 300 }, () => (rng.chance(0.05) ? rng.nextU32() : rng.nextU32() >>> Math.max(0, 64 - k - 3)));
      const small = Float64Array.from({ length: 300 }, () => (rng.chance(0.05) ? 2 ** 40 : rng.int(2 ** Math.min(k + 3, 30))));
      for (let i = 0; i < 300; i++) w.writeRice64(hi[i]!, lo[i]!, k);
      if (k <= 53) for (let i = 0; i < 300; i++) w.writeRice(small[i]!, k, 64);
      w.align();
      const r = new BitReader(w.finish());
      r.beginBits();
      const gotHi = new Uint32Array(300);
      const gotLo = new Uint32Array(300);
      r.readRice64Run(k, gotHi, gotLo, 300);
      expect(Array.from(gotHi), `k ${k}`).toEqual(Array.from(hi));
      expect(Array.from(gotLo), `k ${k}`).toEqual(Array.from(lo));
      if (k <= 53) {
        const got = new Float64Array(300);
        r.readRiceRun(k, 64, got, 300);
        expect(Array.from(got), `k ${k}`).toEqual(Array.from(small));
      }
      r.endBits();
      expect(r.pos).toBe(r.end);
    }
  });

  it('reading past the end fails with HourCodecError, not garbage', () => {
    const r = new BitReader(new Uint8Array([0xff]));
    r.beginBits();
    expect(r.readBits(8)).toBe(0xff);
    expect(r.readBits(8)).toBe(0); // zeros past the end...
    expect(() => r.endBits()).toThrow(HourCodecError); // ...caught here
    expect(() => new BitReader(new Uint8Array([0x80, 0x80])).readUvarint()).toThrow(/truncated/);
    expect(() => new BitReader(new Uint8Array(9).fill(0x80)).readUvarint()).toThrow(/longer than 8 bytes/);
    const runs = new BitReader(new Uint8Array(4));
    expect(() => runs.readRiceRun(3, 32, new Float64Array(100), 100)).toThrow(/truncated bit section/);
  });
});
