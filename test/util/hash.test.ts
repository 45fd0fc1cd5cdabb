import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { murmur3 } from '../../core/util/hash.js';

describe('murmur3 (x86_32)', () => {
  // Published MurmurHash3_x86_32 test vectors. The bloom filter format depends on these.
  const vectors: [string, number, number][] = [
    ['', 0, 0x00000000],
    ['', 1, 0x514e28b7],
    ['test', 0, 0xba6bd213],
    ['Hello, world!', 1234, 0xfaf6cdb3],
    ['The quick brown fox jumps over the lazy dog', 0, 0x2e4ff723],
  ];
  for (const [s, seed, want] of vectors) {
    it(`hashes ${JSON.stringify(s)} with seed ${seed}`, () => {
      expect(murmur3(utf8(s), 0, utf8(s).length, seed)).toBe(want);
    });
  }

  it('hashes a sub-range without copying, for every tail length', () => {
    const buf = utf8('xxThe quick brown fox jumps over the lazy dogyy');
    expect(murmur3(buf, 2, buf.length - 2)).toBe(0x2e4ff723);
    for (let n = 0; n < 9; n++) {
      const b = utf8('abcdefghij'.slice(0, n));
      const padded = new Uint8Array(n + 3);
      padded.set(b, 1);
      expect(murmur3(padded, 1, 1 + n, 7)).toBe(murmur3(b, 0, n, 7));
    }
  });
});
