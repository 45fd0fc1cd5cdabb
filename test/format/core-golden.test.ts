/**
 * Pins the engine's own byte formats (internal key, write batch, manifest): fixed inputs
 * encode to exact bytes, and the annotated examples in core/FORMAT.md are those bytes and
 * decode to the documented fields.
 */
import { describe, expect, it } from 'vitest';
import { toHex, utf8, fromUtf8 } from '../../core/api/bytes.js';
import { KeyKind, encodeInternalKey, parseInternalKey } from '../../core/lsm/internal-key.js';
import { decodeBatch, encodeBatch } from '../../core/lsm/write-batch.js';
import { decodeManifest, encodeManifest, manifestCrc } from '../../core/lsm/manifest.js';
import { maskCrc } from '../../core/util/crc32c.js';
import type { ManifestState } from '../../core/lsm/manifest.js';
import { StoreError } from '../../core/api/errors.js';
import { hexExample, readFormatDoc } from '../helpers/format-doc.js';

const TS = 1_700_000_000_000;
const doc = readFormatDoc();

const MANIFEST: ManifestState = {
  nextFileNumber: 9, nextTableId: 2, nextRegionId: 2, lastSeq: 43,
  tables: [{ id: 1, name: 't', families: [{ name: 'f' }] }],
  regions: [{ id: 1, tableId: 1, start: new Uint8Array(0), end: new Uint8Array(0), flushedSeq: 40, files: [7] }],
  files: [{
    number: 7, sizeBytes: 300, entries: 2, smallest: new Uint8Array([0, 1, 0x61]), largest: new Uint8Array([0, 1, 0x62]),
    minTs: 1, maxTs: 2, minSeq: 39, maxSeq: 40, deletions: 0,
  }],
};

describe('internal key format', () => {
  const key = encodeInternalKey(utf8('r1'), 't', new Uint8Array([1, 2]), TS, 42, KeyKind.Put);

  it('encodes to the documented bytes', () => {
    expect(toHex(key)).toBe('0002723101740102001ffe74301a97ff1fffffffffffd501');
    expect(toHex(hexExample(doc, 'Internal key'))).toBe(toHex(key));
  });

  it('the documented example decodes to its fields', () => {
    const p = parseInternalKey(hexExample(doc, 'Internal key'));
    expect({ row: fromUtf8(p.row), family: p.family, q: toHex(p.qualifier), ts: p.timestamp, seq: p.seq, kind: p.kind })
      .toEqual({ row: 'r1', family: 't', q: '0102', ts: TS, seq: 42, kind: KeyKind.Put });
  });
});

describe('write batch format', () => {
  const batch = encodeBatch(3, [{
    key: utf8('r1'),
    mutations: [
      { type: 'put', family: 't', qualifier: new Uint8Array([1, 2]), value: utf8('v'), timestamp: TS },
      { type: 'deleteRow', upTo: 1_600_000_000_000 },
    ],
  }], 42, 0);

  it('encodes to the documented bytes', () => {
    expect(toHex(hexExample(doc, 'Write batch'))).toBe(toHex(batch.payload));
  });

  it('the documented example decodes to its entries', () => {
    const d = decodeBatch(hexExample(doc, 'Write batch'), 'doc');
    expect(d.tableId).toBe(3);
    const keys = d.keys.map(parseInternalKey);
    expect(keys.map((k) => [fromUtf8(k.row), k.family, toHex(k.qualifier), k.timestamp, k.seq, k.kind])).toEqual([
      ['r1', 't', '0102', TS, 42, KeyKind.Put],
      ['r1', '', '', 1_600_000_000_000, 43, KeyKind.DeleteRow],
    ]);
    expect(d.values.map(fromUtf8)).toEqual(['v', '']);
  });

  it('rejects a truncated or trailing-garbage batch as corruption', () => {
    const p = batch.payload;
    expect(() => decodeBatch(p.subarray(0, p.length - 1), 'w')).toThrow(StoreError);
    const longer = new Uint8Array(p.length + 1);
    longer.set(p);
    expect(() => decodeBatch(longer, 'w')).toThrow(/trailing/);
  });
});

describe('manifest format', () => {
  it('encodes to the documented bytes', () => {
    expect(toHex(hexExample(doc, 'Manifest'))).toBe(toHex(encodeManifest(MANIFEST)));
  });

  it('the documented example decodes to its state', () => {
    const m = decodeManifest(hexExample(doc, 'Manifest'), 'doc');
    expect(m.lastSeq).toBe(43);
    expect(m.tables).toEqual([{ id: 1, name: 't', families: [{ name: 'f' }] }]);
    expect(m.regions[0]!.files).toEqual([7]);
    expect(toHex(m.files[0]!.largest)).toBe('000162');
  });

  it('reports a flipped payload byte with the checksum offset, and a newer version as not supported', () => {
    const bytes = encodeManifest(MANIFEST);
    const bad = bytes.slice();
    bad[40] = bad[40]! ^ 0x01;
    expect(() => decodeManifest(bad, '/d/MANIFEST')).toThrow(/\/d\/MANIFEST: checksum mismatch at offset 16/);
    const newer = bytes.slice();
    newer[11] = 2; // a newer writer's intact header: its checksum matches
    new DataView(newer.buffer).setUint32(16, maskCrc(manifestCrc(newer)));
    expect(() => decodeManifest(newer, '/d/MANIFEST')).toThrow(/version 2 is newer than supported version 1/);
  });
});
