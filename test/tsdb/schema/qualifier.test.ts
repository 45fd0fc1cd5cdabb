import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { testSeed } from '../../helpers/model.js';
import {
  HOUR_CELL_QUALIFIER, HOUR_CELL_QUALIFIER_BYTE, MAX_MS_TIMESTAMP, QualifierKind, flagsOfQualifier, isMsQualifier,
  isMsTimestamp, offsetMsOfQualifier, pointQualifierLength, qualifierFor, qualifierKind, timestampMsOfQualifier,
  writeQualifier,
} from '../../../tsdb/schema/qualifier.js';

describe('point qualifiers (OpenTSDB TestInternal)', () => {
  it.each([
    [1356998403, 7, '0037'],
    [1357001999, 7, 'e0f7'],
    [1356998403, 8 | 3, '003b'],
    [1356998400008, 7, 'f0000207'],
    [1357001999999, 7, 'fdbb9fc7'],
    [1356998400, 0, '0000'],
    [1356998400000, 0xf, 'f000000f'],
  ] as const)('buildQualifier(%i, %i) = %s', (ts, flags, hex) => {
    expect(toHex(qualifierFor(ts, flags))).toBe(hex);
  });

  it('decodes offsets in ms and flags', () => {
    expect(offsetMsOfQualifier(fromHex('0037'))).toBe(3000);
    expect(flagsOfQualifier(fromHex('0037'))).toBe(7);
    expect(offsetMsOfQualifier(fromHex('f0000047'))).toBe(1);
    expect(flagsOfQualifier(fromHex('f0000047'))).toBe(7);
    expect(timestampMsOfQualifier(fromHex('f0000207'), 0, 1356998400)).toBe(1356998400008);
    expect(offsetMsOfQualifier(fromHex('fdbb9fc7'))).toBe(3599999);
    expect(offsetMsOfQualifier(fromHex('e0f7'))).toBe(3599000);
    // at an offset inside a longer qualifier
    const q = fromHex('0037f0000207');
    expect([offsetMsOfQualifier(q, 2), flagsOfQualifier(q, 2), isMsQualifier(q, 2), isMsQualifier(q, 0)]).toEqual([8, 7, true, false]);
    expect([pointQualifierLength(q, 0), pointQualifierLength(q, 2)]).toEqual([2, 4]);
  });

  it('detects ms timestamps above 2^32 - 1', () => {
    expect(isMsTimestamp(4294967295)).toBe(false);
    expect(isMsTimestamp(4294967296)).toBe(true);
    expect(qualifierFor(4294967295, 0).length).toBe(2);
    expect(qualifierFor(4294967296, 0).length).toBe(4);
    expect(qualifierFor(MAX_MS_TIMESTAMP, 0).length).toBe(4);
  });

  it('rejects bad timestamps and flags', () => {
    for (const ts of [-1, MAX_MS_TIMESTAMP + 1, 1.5, Number.NaN]) expect(() => qualifierFor(ts, 0)).toThrow(RangeError);
    for (const f of [-1, 16, 0.5]) expect(() => qualifierFor(1356998400, f)).toThrow(RangeError);
  });

  it('round-trips random timestamps and flags (seeded)', () => {
    const rnd = new Random(testSeed(0x9a1));
    const buf = new Uint8Array(12);
    for (let i = 0; i < 2000; i++) {
      const ms = rnd.chance(0.5);
      const ts = ms ? 4294967296 + Math.floor(rnd.next() * (MAX_MS_TIMESTAMP - 4294967296)) : rnd.nextU32();
      const flags = rnd.int(16);
      const off = rnd.int(8);
      const n = writeQualifier(buf, off, ts, flags);
      const msg = `seed ${rnd.seed} ts ${ts} flags ${flags}`;
      expect(n, msg).toBe(ms ? 4 : 2);
      expect(isMsQualifier(buf, off), msg).toBe(ms);
      expect(flagsOfQualifier(buf, off), msg).toBe(flags);
      expect(offsetMsOfQualifier(buf, off), msg).toBe(ms ? ts % 3600000 : (ts % 3600) * 1000);
      expect(qualifierKind(buf.slice(off, off + n)), msg).toBe(ms ? QualifierKind.MsPoint : QualifierKind.SecondPoint);
    }
  });
});

describe('qualifier kinds', () => {
  it.each([
    ['0037', QualifierKind.SecondPoint],
    ['e0f7', QualifierKind.SecondPoint],
    ['f0000207', QualifierKind.MsPoint],
    ['00370047', QualifierKind.Compacted],
    ['0007f0000107f0000207', QualifierKind.Compacted],
    ['f00002070037', QualifierKind.Compacted],
    ['010000', QualifierKind.Annotation],
    ['0100000001', QualifierKind.Annotation],
    ['060e10', QualifierKind.Histogram],
    ['06000003e8', QualifierKind.Histogram],
    ['050000', QualifierKind.Append],
    ['0c', QualifierKind.HourCell],
    ['', QualifierKind.Unknown],
    ['0d', QualifierKind.Unknown],
    ['f000', QualifierKind.Unknown],
    ['050001', QualifierKind.Unknown],
    ['0500000000', QualifierKind.Unknown],
    ['070000', QualifierKind.Unknown],
    ['01020304050607', QualifierKind.Unknown],
  ] as const)('%s is %s', (hex, kind) => {
    expect(qualifierKind(fromHex(hex))).toBe(kind);
  });

  it('exports the one-byte hour cell qualifier 0x0C', () => {
    expect(HOUR_CELL_QUALIFIER_BYTE).toBe(0x0c);
    expect(toHex(HOUR_CELL_QUALIFIER)).toBe('0c');
    expect(HOUR_CELL_QUALIFIER.length % 2).toBe(1); // odd: OpenTSDB's parser skips it
  });
});
