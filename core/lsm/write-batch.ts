/**
 * Write batches: the WAL record payload for one mutate() on one table, and the source of
 * memstore entries (the memstore copies each key and value from the payload by offset into
 * its slabs; no per-cell views). Format: core/FORMAT.md, "Write batch".
 *
 *   [u8 tag = 1][u32 tableId][u32 count] then count x [uvarint keyLen][key][uvarint valueLen][value]
 *
 * Keys are internal keys (internal-key.ts) carrying their own sequence numbers, so replay
 * order does not matter.
 */
import type { RowMutation } from '../api/store.js';
import { MAX_TIMESTAMP } from '../api/store.js';
import { StoreError } from '../api/errors.js';
import { uvarintSize } from '../util/coding.js';
import { KeyKind, internalKeySize, writeInternalKey } from './internal-key.js';

export const BATCH_TAG = 1;
const EMPTY = new Uint8Array(0);

export interface EncodedBatch {
  readonly payload: Uint8Array;
  readonly count: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /**
   * Where entry i is in `payload`: [4i] key offset, [4i+1] key length, [4i+2] value offset,
   * [4i+3] value length (Memstore.addFrom).
   */
  readonly entries: Uint32Array;
  /** Index of the first entry of each RowMutation (rows[i] -> rowStart[i]). */
  readonly rowStart: number[];
}

/**
 * Encodes validated row mutations. Entry i gets sequence number firstSeq + i; puts without
 * a timestamp get `nowMs`.
 */
export function encodeBatch(tableId: number, rows: readonly RowMutation[], firstSeq: number, nowMs: number): EncodedBatch {
  let size = 9;
  let count = 0;
  for (const r of rows) {
    for (const m of r.mutations) {
      const q = m.type === 'put' || m.type === 'deleteCell' || m.type === 'deleteVersion' ? m.qualifier.length : 0;
      const f = m.type === 'deleteRow' ? 0 : m.family.length;
      const kl = internalKeySize(r.key.length, f, q);
      const vl = m.type === 'put' ? m.value.length : 0;
      size += uvarintSize(kl) + kl + uvarintSize(vl) + vl;
      count++;
    }
  }
  const buf = new Uint8Array(size);
  buf[0] = BATCH_TAG;
  const dv = new DataView(buf.buffer);
  dv.setUint32(1, tableId);
  dv.setUint32(5, count);
  let o = 9;
  const entries = new Uint32Array(4 * count);
  const rowStart: number[] = new Array(rows.length);
  let i = 0;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    rowStart[r] = i;
    for (const m of row.mutations) {
      // NB: per cell on the write path; no per-mutation objects.
      let family = '';
      let qualifier: Uint8Array = EMPTY;
      let value: Uint8Array = EMPTY;
      let ts: number;
      let kind: number;
      switch (m.type) {
        case 'put':
          family = m.family; qualifier = m.qualifier; value = m.value; ts = m.timestamp ?? nowMs; kind = KeyKind.Put;
          break;
        case 'deleteCell':
          family = m.family; qualifier = m.qualifier; ts = m.upTo ?? MAX_TIMESTAMP; kind = KeyKind.DeleteCell;
          break;
        case 'deleteVersion':
          family = m.family; qualifier = m.qualifier; ts = m.timestamp; kind = KeyKind.DeleteVersion;
          break;
        case 'deleteFamily':
          family = m.family; ts = m.upTo ?? MAX_TIMESTAMP; kind = KeyKind.DeleteFamily;
          break;
        case 'deleteRow':
          ts = m.upTo ?? MAX_TIMESTAMP; kind = KeyKind.DeleteRow;
          break;
        default:
          throw new StoreError('STORE_INVALID_ARGUMENT', `unknown mutation type ${(m as { type: string }).type}`);
      }
      const kl = internalKeySize(row.key.length, family.length, qualifier.length);
      o = putUvarint(buf, o, kl);
      const ko = o;
      o = writeInternalKey(buf, o, row.key, family, qualifier, ts, firstSeq + i, kind);
      entries[4 * i] = ko;
      entries[4 * i + 1] = o - ko;
      o = putUvarint(buf, o, value.length);
      buf.set(value, o);
      entries[4 * i + 2] = o;
      entries[4 * i + 3] = value.length;
      o += value.length;
      i++;
    }
  }
  return { payload: buf, count, firstSeq, lastSeq: firstSeq + count - 1, entries, rowStart };
}

function putUvarint(buf: Uint8Array, o: number, v: number): number {
  while (v >= 0x80) {
    buf[o++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[o++] = v;
  return o;
}

export interface DecodedBatch {
  readonly tableId: number;
  readonly keys: Uint8Array[];
  readonly values: Uint8Array[];
}

export interface DecodedBatchEntries {
  readonly tableId: number;
  readonly count: number;
  /** As EncodedBatch.entries: [4i] key offset, [4i+1] key length, [4i+2] value offset, [4i+3] value length. */
  readonly entries: Uint32Array;
}

/** Decodes a payload; entries are views into it. Throws STORE_CORRUPTION on malformed input. */
export function decodeBatch(payload: Uint8Array, where: string): DecodedBatch {
  const { tableId, count, entries } = decodeBatchEntries(payload, where);
  const keys: Uint8Array[] = new Array(count);
  const values: Uint8Array[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const j = 4 * i;
    keys[i] = payload.subarray(entries[j]!, entries[j]! + entries[j + 1]!);
    values[i] = payload.subarray(entries[j + 2]!, entries[j + 2]! + entries[j + 3]!);
  }
  return { tableId, keys, values };
}

/**
 * Decodes a payload into entry offsets (no views: recovery copies entries from the payload
 * into memstores with Memstore.addFrom). Throws STORE_CORRUPTION on malformed input.
 */
export function decodeBatchEntries(payload: Uint8Array, where: string): DecodedBatchEntries {
  if (payload.length < 9 || payload[0] !== BATCH_TAG) {
    throw new StoreError('STORE_CORRUPTION', `${where}: not a write batch (tag ${payload[0]}, ${payload.length} bytes)`);
  }
  const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const tableId = dv.getUint32(1);
  const count = dv.getUint32(5);
  // Every entry takes at least 2 bytes: a count past that is damage, not an allocation to make.
  if (count > (payload.length - 9) / 2) throw new StoreError('STORE_CORRUPTION', `${where}: batch of ${count} entries in ${payload.length} bytes`);
  const entries = new Uint32Array(4 * count);
  let o = 9;
  for (let i = 0; i < count; i++) {
    let kl: number;
    [kl, o] = getUvarint(payload, o, where);
    if (o + kl > payload.length) throw new StoreError('STORE_CORRUPTION', `${where}: batch key ${i} overruns the record`);
    entries[4 * i] = o;
    entries[4 * i + 1] = kl;
    o += kl;
    let vl: number;
    [vl, o] = getUvarint(payload, o, where);
    if (o + vl > payload.length) throw new StoreError('STORE_CORRUPTION', `${where}: batch value ${i} overruns the record`);
    entries[4 * i + 2] = o;
    entries[4 * i + 3] = vl;
    o += vl;
  }
  if (o !== payload.length) throw new StoreError('STORE_CORRUPTION', `${where}: ${payload.length - o} trailing bytes after batch`);
  return { tableId, count, entries };
}

function getUvarint(b: Uint8Array, o: number, where: string): [number, number] {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 8; i++) {
    if (o >= b.length) break;
    const x = b[o++]!;
    v += (x & 0x7f) * mul;
    if (x < 0x80) return [v, o];
    mul *= 128;
  }
  throw new StoreError('STORE_CORRUPTION', `${where}: bad varint in write batch`);
}
