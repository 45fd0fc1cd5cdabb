import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { testSeed } from '../../helpers/model.js';
import {
  bucketOfHash, javaHashBytes, readSalt, saltBucket, saltBytes, saltKey, saltOfKey, saltSplitKeys, writeSalt,
} from '../../../tsdb/schema/salt.js';
import { DEFAULT_WIDTHS } from '../../../tsdb/schema/widths.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';

/** OpenTSDB TestRowKey vectors: metric, tag bytes, salt; width 1, 20 buckets. */
const VECTORS: ReadonlyArray<readonly [string, string, number]> = [
  ['000001', '000001000001', 0x08],
  ['000001', '000001000001'.repeat(2), 0x10],
  ['000001', '000001000001'.repeat(3), 0x00],
  ['000001', '000001000002', 0x09],
  ['000001', '000001000001000002000003', 0x03],
  ['000001', '', 0x0c],
  ['000002', '000001000001', 0x09],
  ['000003', '000001000001', 0x06],
  ['0B1420', '000001000001', 0x06],
];

const BASE_TIMES = ['50E22700', '50E23510', '510B1390', '00000000'];

/** Independent Arrays.hashCode: exact integer arithmetic, then reduce to int32. */
function referenceHash(bytes: Uint8Array): number {
  let h = 1n;
  for (const b of bytes) h = BigInt.asIntN(32, 31n * h + BigInt(b > 127 ? b - 256 : b));
  return Number(h);
}

describe('salt (OpenTSDB RowKey#prefixKeyWithSalt)', () => {
  it.each(VECTORS)('metric %s tags %s -> salt %i', (metric, tags, salt) => {
    expect(saltBucket(fromHex(metric), fromHex(tags), 20)).toBe(salt);
    for (const base of BASE_TIMES) {
      const key = fromHex(`FF${metric}${base}${tags}`); // salt byte not filled in yet
      expect(saltOfKey(key, DEFAULT_WIDTHS)).toBe(salt);
      expect(saltKey(key, DEFAULT_WIDTHS)).toBe(salt);
      expect(key[0]).toBe(salt);
    }
  });

  it('leaves the global-annotation row (all-zero metric) at salt 0', () => {
    expect(saltBucket(fromHex('000000'), fromHex('000001000001'), 20)).toBe(0);
    const key = fromHex('07000000' + '50E22700');
    expect(saltKey(key, DEFAULT_WIDTHS)).toBe(0);
    expect(toHex(key)).toBe('0000000050e22700'); // salt forced to zero
    // ... while a plain metric with no tags does get a salt (vector "(none)" = 0x0c)
    expect(saltOfKey(fromHex('00000001' + '50E22700'), DEFAULT_WIDTHS)).toBe(0x0c);
  });

  it('does nothing when salting is off', () => {
    const w: SchemaWidths = { ...DEFAULT_WIDTHS, saltWidth: 0 };
    const key = fromHex('00000150E22700000001000001');
    expect(saltKey(key, w)).toBe(0);
    expect(toHex(key)).toBe('00000150e22700000001000001');
    expect(saltSplitKeys(w)).toEqual([]);
  });

  it('rejects a key too short to hold salt, metric and base time', () => {
    expect(() => saltOfKey(fromHex('01000001'), DEFAULT_WIDTHS)).toThrow(RangeError);
  });

  it('hashes like Java Arrays.hashCode, across split ranges too', () => {
    const rnd = new Random(testSeed(0x5a17));
    for (let i = 0; i < 300; i++) {
      const b = rnd.bytes(rnd.range(0, 40));
      const cut = rnd.range(0, b.length);
      const h = javaHashBytes(javaHashBytes(1, b, 0, cut), b, cut, b.length);
      expect(h, `seed ${rnd.seed} bytes ${toHex(b)}`).toBe(referenceHash(b));
    }
  });

  it('takes the absolute value of a negative remainder', () => {
    expect(bucketOfHash(-112887423, 20)).toBe(3);
    expect(bucketOfHash(112887423, 20)).toBe(3);
    expect(bucketOfHash(-2147483648, 20)).toBe(8);
    expect(bucketOfHash(-2147483648, 7)).toBe(2);
    expect(Object.is(bucketOfHash(-40, 20), 0)).toBe(true); // not -0
  });

  it('writes the bucket big-endian, with OpenTSDB\'s shift wrap above 4 bytes', () => {
    expect(toHex(saltBytes(19, 1))).toBe('13');
    expect(toHex(saltBytes(300, 2))).toBe('012c');
    expect(toHex(saltBytes(0x010203, 3))).toBe('010203');
    expect(toHex(saltBytes(3, 5))).toBe('0300000003'); // Java (3 >>> 32) == 3
    expect(toHex(saltBytes(0x01020304, 8))).toBe('0102030401020304');
    const key = new Uint8Array(4);
    writeSalt(key, 0x0102, 2, 1);
    expect(toHex(key)).toBe('00010200');
    for (const [bucket, width] of [[3, 5], [19, 1], [300, 2], [0x01020304, 8]] as const) {
      expect(readSalt(saltBytes(bucket, width), { ...DEFAULT_WIDTHS, saltWidth: width })).toBe(bucket);
    }
  });

  it('pre-splits the table at buckets 1..buckets-1', () => {
    expect(saltSplitKeys(DEFAULT_WIDTHS).map(toHex)).toEqual(
      Array.from({ length: 19 }, (_, i) => (i + 1).toString(16).padStart(2, '0')),
    );
    expect(saltSplitKeys({ ...DEFAULT_WIDTHS, saltWidth: 2, saltBuckets: 3 }).map(toHex)).toEqual(['0001', '0002']);
  });
});
