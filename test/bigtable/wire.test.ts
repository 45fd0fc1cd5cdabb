/**
 * The hand-read protobuf of ReadRowsResponse and MutateRowsResponse (backends/bigtable/src/
 * wire.ts) against the client library's own encoder: every field the rows need, int64s
 * past 2^53, unknown fields skipped, and bytes that end inside a field refused.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { protos as ProtoTypes } from '../../backends/bigtable/node_modules/@google-cloud/bigtable/build/src/index.js';
import { decodeMutateRowsResponse, decodeReadRowsResponse, encodeReadRowsRequest } from '../../backends/bigtable/src/wire.js';
import { msFromMicros } from '../../backends/bigtable/src/timestamps.js';

const protos = createRequire(new URL('../../backends/bigtable/package.json', import.meta.url))('@google-cloud/bigtable/build/protos/protos.js') as typeof ProtoTypes;
const v2 = protos.google.bigtable.v2;

const bytes = (...b: number[]): Buffer => Buffer.from(b);

describe('ReadRowsResponse', () => {
  it('decodes every chunk field as the library encodes it, bytes as views', () => {
    const msg = v2.ReadRowsResponse.encode({
      chunks: [
        { rowKey: bytes(0, 1, 0xff), familyName: { value: 't' }, qualifier: { value: bytes(0, 0x80) }, timestampMicros: '1700000000123000', value: bytes(1, 2, 3), commitRow: true },
        { rowKey: bytes(2), familyName: { value: 'name' }, qualifier: { value: Buffer.alloc(0) }, timestampMicros: 0, value: bytes(9), valueSize: 5 },
        { value: bytes(8), labels: ['x'], resetRow: true },
        { timestampMicros: '253402300799999000', value: Buffer.alloc(0), valueSize: -1 },
      ],
      lastScannedRowKey: bytes(7, 7),
    }).finish();
    const buf = Buffer.from(msg);
    const r = decodeReadRowsResponse(buf);
    const c = r.chunks!;
    expect(c).toHaveLength(4);
    expect(Buffer.from(c[0]!.rowKey as Uint8Array)).toEqual(bytes(0, 1, 0xff));
    expect(c[0]!.familyName).toEqual({ value: 't' });
    expect(Buffer.from(c[0]!.qualifier!.value as Uint8Array)).toEqual(bytes(0, 0x80));
    expect(c[0]!.timestampMicros).toBe(1_700_000_000_123_000);
    expect(Buffer.from(c[0]!.value as Uint8Array)).toEqual(bytes(1, 2, 3));
    expect(c[0]!.commitRow).toBe(true);
    expect((c[0]!.value as Uint8Array).buffer).toBe(buf.buffer); // a view, not a copy
    expect(c[1]!.familyName).toEqual({ value: 'name' });
    expect(Buffer.from(c[1]!.qualifier!.value as Uint8Array)).toEqual(Buffer.alloc(0));
    expect(c[1]!.valueSize).toBe(5);
    expect(c[1]!.timestampMicros ?? 0).toBe(0);
    expect(c[2]!.resetRow).toBe(true);
    expect(c[2]!.familyName).toBeUndefined();
    expect(c[2]!.rowKey).toBeUndefined();
    // Past 2^53 µs: exact, as a decimal string, and so the last ms of year 9999.
    expect(c[3]!.timestampMicros).toBe('253402300799999000');
    expect(msFromMicros(c[3]!.timestampMicros)).toBe(253_402_300_799_999);
    expect(c[3]!.valueSize).toBe(-1);
  });

  it('agrees with the library decoder on random messages', () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const chunks = Array.from({ length: rnd(5) }, () => ({
        rowKey: Buffer.from(Array.from({ length: rnd(4) }, () => rnd(256))),
        ...(rnd(2) === 0 ? { familyName: { value: ['t', 'name', 'id'][rnd(3)]! } } : {}),
        ...(rnd(2) === 0 ? { qualifier: { value: Buffer.from(Array.from({ length: rnd(3) }, () => rnd(256))) } } : {}),
        timestampMicros: String(BigInt(rnd(1 << 30)) * BigInt(rnd(1 << 23)) * 1000n), // below 2^63
        value: Buffer.from(Array.from({ length: rnd(300) }, () => rnd(256))),
        valueSize: rnd(3) === 0 ? rnd(1 << 20) : 0,
        ...(rnd(3) === 0 ? { commitRow: true } : {}),
      }));
      const msg = v2.ReadRowsResponse.encode({ chunks }).finish();
      const want = v2.ReadRowsResponse.toObject(v2.ReadRowsResponse.decode(msg), { longs: String });
      const got = decodeReadRowsResponse(Buffer.from(msg));
      expect(got.chunks).toHaveLength(chunks.length);
      got.chunks!.forEach((g, i) => {
        const w = want.chunks![i]!;
        expect(Buffer.from((g.rowKey ?? Buffer.alloc(0)) as Uint8Array)).toEqual(Buffer.from(w.rowKey ?? []));
        expect(g.familyName?.value).toBe(w.familyName?.value);
        expect(g.qualifier === undefined ? undefined : Buffer.from(g.qualifier.value as Uint8Array)).toEqual(w.qualifier === undefined ? undefined : Buffer.from(w.qualifier.value ?? []));
        expect(String(g.timestampMicros ?? 0)).toBe(String(w.timestampMicros ?? 0));
        expect(Buffer.from((g.value ?? Buffer.alloc(0)) as Uint8Array)).toEqual(Buffer.from(w.value ?? []));
        expect(g.valueSize ?? 0).toBe(w.valueSize ?? 0);
        expect(g.commitRow ?? false).toBe(w.commitRow ?? false);
      });
    }
  });

  it('reads int64 exactly: a number up to 2^53 - 1, a decimal string beyond', () => {
    const ts = (micros: string): unknown => decodeReadRowsResponse(Buffer.from(v2.ReadRowsResponse.encode({ chunks: [{ timestampMicros: micros }] }).finish())).chunks![0]!.timestampMicros;
    expect(ts('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(ts('9007199254740993')).toBe('9007199254740993');
    expect(ts('18014398509481985')).toBe('18014398509481985');
    expect(ts('4294967296')).toBe(4294967296);
    expect(ts('268435455')).toBe(268435455);
    expect(ts('9223372036854775807')).toBe('9223372036854775807');
  });

  it('refuses bytes that end inside a field', () => {
    const msg = Buffer.from(v2.ReadRowsResponse.encode({ chunks: [{ rowKey: bytes(1, 2, 3), value: bytes(4, 5), commitRow: true }] }).finish());
    for (let n = 1; n < msg.length; n++) expect(() => decodeReadRowsResponse(msg.subarray(0, n))).toThrow(/truncated/);
  });
});

describe('MutateRowsResponse', () => {
  it('decodes each entry index and status', () => {
    const msg = v2.MutateRowsResponse.encode({
      entries: [{ index: 0, status: { code: 0 } }, { index: 3, status: { code: 14, message: 'unavailable', details: [{ typeUrl: 'x', value: bytes(1) }] } }, { index: '5000000000' }],
      rateLimitInfo: { factor: 0.5 },
    }).finish();
    expect(decodeMutateRowsResponse(Buffer.from(msg))).toEqual({
      entries: [{ index: 0, status: { code: 0, message: '' } }, { index: 3, status: { code: 14, message: 'unavailable' } }, { index: 5_000_000_000 }],
    });
  });
});

describe('requests', () => {
  it('encode from the plain objects the store builds, as the library reads them', () => {
    const req = { tableName: 'projects/p/instances/i/tables/t', rows: { rowKeys: [bytes(1)], rowRanges: [{ startKeyClosed: bytes(1), endKeyOpen: bytes(2) }] }, rowsLimit: '500', filter: { chain: { filters: [{ familyNameRegexFilter: '^t$' }, { cellsPerColumnLimitFilter: 1 }] } } };
    const back = v2.ReadRowsRequest.toObject(v2.ReadRowsRequest.decode(encodeReadRowsRequest(req)), { longs: String });
    expect(back.tableName).toBe(req.tableName);
    expect(back.rowsLimit).toBe('500');
    expect(Buffer.from(back.rows!.rowRanges![0]!.endKeyOpen!)).toEqual(bytes(2));
    expect(back.filter!.chain!.filters![1]!.cellsPerColumnLimitFilter).toBe(1);
  });
});
