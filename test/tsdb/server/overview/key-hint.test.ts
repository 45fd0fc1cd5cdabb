import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../../core/api/bytes.js';
import { decodeKeyHint } from '../../../../tsdb/server/overview/key-hint.js';
import { DEFAULT_WIDTHS } from '../../../../tsdb/schema/widths.js';

const hint = (hex: string, w = DEFAULT_WIDTHS) => {
  const h = decodeKeyHint(w, fromHex(hex));
  return h === undefined ? undefined : { ...h, ...(h.metricUid === undefined ? {} : { metricUid: toHex(h.metricUid) }) };
};

describe('decodeKeyHint', () => {
  it('decodes only the fields whose bytes the key holds', () => {
    expect(hint('')).toBeUndefined();
    expect(hint('05')).toEqual({ salt: 5 });
    expect(hint('0500')).toEqual({ salt: 5 });
    expect(hint('05000001')).toEqual({ salt: 5, metricUid: '000001' });
    expect(hint('05000001695592')).toEqual({ salt: 5, metricUid: '000001' });
    expect(hint('0500000169559280')).toEqual({ salt: 5, metricUid: '000001', baseTimeSec: 0x69559280 });
    expect(hint('0500000169559280000001000002')).toEqual({ salt: 5, metricUid: '000001', baseTimeSec: 0x69559280 });
  });

  it('follows the configured widths: two salt bytes, no salt, 4-byte metric UIDs', () => {
    expect(hint('0102', { ...DEFAULT_WIDTHS, saltWidth: 2, saltBuckets: 300 })).toEqual({ salt: 258 });
    expect(hint('01', { ...DEFAULT_WIDTHS, saltWidth: 2, saltBuckets: 300 })).toBeUndefined();
    expect(hint('0000', { ...DEFAULT_WIDTHS, saltWidth: 0 })).toBeUndefined();
    expect(hint('00000700000e10', { ...DEFAULT_WIDTHS, saltWidth: 0 })).toEqual({ metricUid: '000007', baseTimeSec: 3600 });
    expect(hint('0a0000000200000e10', { ...DEFAULT_WIDTHS, metric: 4 })).toEqual({ salt: 10, metricUid: '00000002', baseTimeSec: 3600 });
  });
});
