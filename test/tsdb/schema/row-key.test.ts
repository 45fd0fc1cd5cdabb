import { describe, expect, it } from 'vitest';
import { compareBytes, concatBytes, fromHex, toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import { testSeed } from '../../helpers/model.js';
import { IllegalDataError, InvalidInputError } from '../../../tsdb/schema/errors.js';
import {
  MAX_BASE_TIME_S, baseTimeOf, baseTimeOfKey, decodeRowKey, encodeRowKey, encodeSeriesKey, metricScanRange,
  patchBaseTime, rowKeyFromTsuid, rowKeyLength, rowKeyWithBaseTime, tsuidFromHex, tsuidOfKey, tsuidToHex, writeBaseTime,
} from '../../../tsdb/schema/row-key.js';
import { saltBucket } from '../../../tsdb/schema/salt.js';
import { DEFAULT_WIDTHS, validateWidths } from '../../../tsdb/schema/widths.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';

const NO_SALT: SchemaWidths = { ...DEFAULT_WIDTHS, saltWidth: 0 };
const M1 = fromHex('000001');
const H2013 = 1356998400; // 0x50E22700

describe('row key layout', () => {
  it('matches OpenTSDB TestRowKey without salt', () => {
    const key = encodeRowKey(NO_SALT, M1, H2013, [fromHex('000001000002')]);
    expect(toHex(key)).toBe('00000150e22700000001000002');
  });

  it('sorts tag pairs by tagk UID bytes and salts the key', () => {
    const key = encodeRowKey(DEFAULT_WIDTHS, M1, H2013, [fromHex('000002000003'), fromHex('000001000001')]);
    expect(toHex(key)).toBe('03' + '000001' + '50e22700' + '000001000001' + '000002000003');
    expect(rowKeyLength(DEFAULT_WIDTHS, 2)).toBe(key.length);
    expect(rowKeyLength(NO_SALT, 0)).toBe(7);
    // unsigned order: 0x80 sorts after 0x7f
    const k2 = encodeRowKey(NO_SALT, M1, 0, [fromHex('800000000001'), fromHex('7f0000000002')]);
    expect(toHex(k2.subarray(7))).toBe('7f0000000002800000000001');
  });

  it('rejects bad arguments with RangeError', () => {
    expect(() => encodeRowKey(DEFAULT_WIDTHS, fromHex('0001'), H2013, [])).toThrow(/metric UID has 2 bytes, expected 3/);
    expect(() => encodeRowKey(DEFAULT_WIDTHS, M1, H2013, [fromHex('0000010001')])).toThrow(/tag pair 0 has 5 bytes/);
    expect(() => encodeRowKey(DEFAULT_WIDTHS, M1, H2013, [fromHex('000001000001'), fromHex('000001000002')])).toThrow(/duplicate tag key UID 000001/);
    for (const bad of [H2013 + 1, -3600, MAX_BASE_TIME_S + 3600, 1.5, Number.NaN]) {
      expect(() => encodeRowKey(DEFAULT_WIDTHS, M1, bad, [])).toThrow(RangeError);
    }
    expect(() => encodeRowKey(DEFAULT_WIDTHS, M1, MAX_BASE_TIME_S, [])).not.toThrow();
  });

  it('patches only the base time of a series key, leaving the template alone', () => {
    const pairs = [fromHex('000002000003'), fromHex('000001000001')];
    const series = encodeSeriesKey(DEFAULT_WIDTHS, M1, pairs);
    const before = toHex(series);
    const key = patchBaseTime(series, DEFAULT_WIDTHS.saltWidth + DEFAULT_WIDTHS.metric, H2013);
    expect(key).toEqual(encodeRowKey(DEFAULT_WIDTHS, M1, H2013, pairs));
    expect(rowKeyWithBaseTime(DEFAULT_WIDTHS, series, H2013)).toEqual(key);
    expect(toHex(series)).toBe(before);
    writeBaseTime(DEFAULT_WIDTHS, series, MAX_BASE_TIME_S);
    expect(baseTimeOfKey(DEFAULT_WIDTHS, series)).toBe(MAX_BASE_TIME_S);
    expect(() => patchBaseTime(series, 4, 7)).toThrow(RangeError);
  });

  it('decodes a key into views of its fields', () => {
    const key = fromHex('03' + '000001' + '50e22700' + '000001000001' + '000002000003');
    const d = decodeRowKey(DEFAULT_WIDTHS, key);
    expect({ salt: d.salt, metric: toHex(d.metric), base: d.baseTimeSec, tags: d.tags.map(([k, v]) => `${toHex(k)}=${toHex(v)}`) })
      .toEqual({ salt: 3, metric: '000001', base: H2013, tags: ['000001=000001', '000002=000003'] });
    expect(d.metric.buffer).toBe(key.buffer);
  });

  it('reports a key of the wrong length as illegal data', () => {
    for (const hex of ['03000001', '0300000150e22700000001', '0300000150e22700000001000001ff']) {
      expect(() => decodeRowKey(DEFAULT_WIDTHS, fromHex(hex))).toThrow(IllegalDataError);
    }
    expect(() => decodeRowKey(DEFAULT_WIDTHS, fromHex('0300000150e22700000001')))
      .toThrow(/has 11 bytes: expected 8 \+ n x 6/);
  });

  it('computes base times from seconds or ms', () => {
    expect(baseTimeOf(H2013)).toBe(H2013);
    expect(baseTimeOf(H2013 + 3599)).toBe(H2013);
    expect(baseTimeOf(H2013 + 3600)).toBe(H2013 + 3600);
    expect(baseTimeOf(1356998400008)).toBe(H2013);
    expect(baseTimeOf(1357001999999)).toBe(H2013);
    expect(baseTimeOf(4294967295)).toBe(4294965600); // still seconds
    expect(baseTimeOf(4294967296)).toBe(4294800); // ms: 4294967.296 s
    expect(baseTimeOf(0)).toBe(0);
    for (const bad of [-1, 1e13, 1.5, Number.NaN]) expect(() => baseTimeOf(bad)).toThrow(RangeError);
  });
});

describe('TSUID', () => {
  const key = fromHex('03' + '000001' + '50e22700' + '000001000001' + '000002000003');
  const tsuid = fromHex('000001000001000001000002000003');

  it('is the key without salt and base time', () => {
    expect(tsuidOfKey(DEFAULT_WIDTHS, key)).toEqual(tsuid);
    expect(tsuidToHex(tsuid)).toBe('000001000001000001000002000003');
    expect(tsuidToHex(fromHex('0b1420ab'))).toBe('0B1420AB');
    expect(() => tsuidOfKey(DEFAULT_WIDTHS, fromHex('0300000150'))).toThrow(IllegalDataError);
  });

  it('rebuilds the salted row key for any time in the hour', () => {
    expect(rowKeyFromTsuid(DEFAULT_WIDTHS, tsuid, H2013 + 1234)).toEqual(key);
    expect(rowKeyFromTsuid(DEFAULT_WIDTHS, tsuid, (H2013 + 1234) * 1000 + 5)).toEqual(key);
    expect(toHex(rowKeyFromTsuid(NO_SALT, fromHex('000001000001000002'), H2013))).toBe('00000150e22700000001000002');
    expect(() => rowKeyFromTsuid(DEFAULT_WIDTHS, fromHex('0000'), H2013)).toThrow(RangeError);
    expect(() => rowKeyFromTsuid(DEFAULT_WIDTHS, fromHex('00000100000100'), H2013)).toThrow(/does not fit/);
  });

  it('parses hex in either case and rejects malformed text', () => {
    expect(tsuidFromHex(DEFAULT_WIDTHS, '000001000001000001000002000003')).toEqual(tsuid);
    expect(tsuidFromHex(DEFAULT_WIDTHS, '0b1420')).toEqual(fromHex('0B1420'));
    expect(tsuidFromHex(DEFAULT_WIDTHS, '0B1420000001000001')).toEqual(fromHex('0b1420000001000001'));
    for (const bad of ['', '0', '00000G', '0000 01', '0000', '00000100000100', '-00001']) {
      expect(() => tsuidFromHex(DEFAULT_WIDTHS, bad), bad).toThrow(InvalidInputError);
    }
  });
});

describe('metric scan range', () => {
  it('covers [base(start), base(end) + 3600) in one bucket', () => {
    const r = metricScanRange(DEFAULT_WIDTHS, 8, M1, H2013 + 17, H2013 + 3599);
    expect(toHex(r.start)).toBe('0800000150e22700');
    expect(toHex(r.end)).toBe('0800000150e23510');
    // TsdbQuery's scan end: any end second or ms in hour H scans up to H + 3600
    for (const end of [H2013 + 3600, H2013 + 7199, (H2013 + 3600) * 1000, (H2013 + 7199) * 1000 + 999]) {
      expect(toHex(metricScanRange(DEFAULT_WIDTHS, 8, M1, H2013, end).end)).toBe('0800000150e24320');
    }
  });

  it('falls back to the prefix end at the last hour', () => {
    const r = metricScanRange(DEFAULT_WIDTHS, 0x13, fromHex('0000ff'), H2013, 4294967295);
    expect(toHex(r.start)).toBe('130000ff50e22700');
    expect(toHex(r.end)).toBe('130001');
    const all = metricScanRange({ ...DEFAULT_WIDTHS, saltWidth: 0 }, 0, fromHex('ffffff'), 0, 4294967295);
    expect(toHex(all.end)).toBe(''); // end of table
    expect(compareBytes(r.start, r.end)).toBeLessThan(0);
  });

  it('rejects an end before the start and a wrong metric width', () => {
    expect(() => metricScanRange(DEFAULT_WIDTHS, 0, M1, H2013 + 3600, H2013)).toThrow(RangeError);
    expect(() => metricScanRange(DEFAULT_WIDTHS, 0, fromHex('01'), H2013, H2013)).toThrow(RangeError);
  });
});

describe('row key properties (seeded)', () => {
  it('encode/decode round-trips and keys of a series sort by time', () => {
    const rnd = new Random(testSeed(0x7033));
    for (let iter = 0; iter < 200; iter++) {
      const w = validateWidths({
        metric: rnd.range(1, 8), tagk: rnd.range(1, 8), tagv: rnd.range(1, 8),
        saltWidth: rnd.range(0, 3), saltBuckets: rnd.range(1, 200),
      });
      const msg = `seed ${rnd.seed} iter ${iter} widths ${JSON.stringify(w)}`;
      const metric = rnd.bytes(w.metric);
      const tagks = new Map<string, Uint8Array>();
      const n = rnd.range(0, 8);
      while (tagks.size < n) {
        const k = rnd.bytes(w.tagk);
        tagks.set(toHex(k), concatBytes(k, rnd.bytes(w.tagv)));
      }
      const pairs = [...tagks.values()];
      const base1 = rnd.int(1190000) * 3600;
      const base2 = base1 + 3600 * rnd.range(1, 100);
      const k1 = encodeRowKey(w, metric, base1, pairs);
      const k2 = rowKeyWithBaseTime(w, encodeSeriesKey(w, metric, rnd.shuffle(pairs.slice())), base2);
      expect(compareBytes(k1, k2), msg).toBeLessThan(0);
      const d = decodeRowKey(w, k1);
      const sorted = pairs.slice().sort(compareBytes);
      expect(toHex(d.metric), msg).toBe(toHex(metric));
      expect(d.baseTimeSec, msg).toBe(base1);
      expect(d.tags.map(([k, v]) => toHex(k) + toHex(v)), msg).toEqual(sorted.map(toHex));
      const expectSalt = w.saltWidth === 0 ? 0 : saltBucket(metric, concatBytes(...sorted), w.saltBuckets);
      expect(d.salt, msg).toBe(expectSalt);
      const tsuid = tsuidOfKey(w, k2);
      expect(tsuidFromHex(w, tsuidToHex(tsuid)), msg).toEqual(tsuid);
      expect(rowKeyFromTsuid(w, tsuid, base1 + rnd.int(3600)), msg).toEqual(k1);
    }
  });
});
