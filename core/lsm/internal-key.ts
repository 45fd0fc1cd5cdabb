/**
 * Internal keys: how a cell (row, family, qualifier, timestamp) plus the engine's sequence
 * number and entry kind is laid out as one byte string in the memstore, WAL and SSTs.
 * Format: core/FORMAT.md, "Internal key".
 *
 *   [u16 rowLen][row][u8 famLen][family][qualifier][u64 ~timestamp][u56 ~seq][u8 kind]
 *
 * `~x` is MAX - x, so that ascending byte order of the trailer means timestamp descending,
 * then sequence descending: the newest version of a cell comes first. The order of whole
 * keys is `compareInternalKeys`: row bytes, family bytes, qualifier bytes, then the
 * 16-byte trailer bytewise. Markers that delete more than one cell sort before what they
 * cover: a row delete has the empty family (names are never empty), a family or cell
 * delete has the empty qualifier or the cell's own qualifier with the highest timestamp it
 * covers.
 */
import { compareRange } from '../api/bytes.js';

/** Entry kinds stored in the last key byte. DO NOT CHANGE: on-disk values. */
export const KeyKind = {
  Put: 1,
  /** Masks the version with exactly this timestamp. */
  DeleteVersion: 2,
  /** Masks every version of the cell with timestamp <= this one. */
  DeleteCell: 3,
  /** Masks every cell of the family (qualifier is empty) with timestamp <= this one. */
  DeleteFamily: 4,
  /** Masks every cell of the row (family and qualifier empty) with timestamp <= this one. */
  DeleteRow: 5,
} as const;
export type KeyKind = (typeof KeyKind)[keyof typeof KeyKind];

export const TRAILER_BYTES = 16;
export const MAX_TS = Number.MAX_SAFE_INTEGER; // 2^53 - 1
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;
export const MAX_ROW_BYTES = 0xffff;

const TWO32 = 0x100000000;

export interface ParsedKey {
  row: Uint8Array;
  family: string;
  qualifier: Uint8Array;
  timestamp: number;
  seq: number;
  kind: KeyKind;
}

/** Encoded length of a key for these parts (family is ASCII). */
export function internalKeySize(rowLen: number, familyLen: number, qualifierLen: number): number {
  return 2 + rowLen + 1 + familyLen + qualifierLen + TRAILER_BYTES;
}

/**
 * Writes a key into dst at offset `o` and returns the offset after it. `family` must be
 * ASCII (FAMILY_NAME_PATTERN), so one char is one byte.
 */
export function writeInternalKey(
  dst: Uint8Array, o: number, row: Uint8Array, family: string, qualifier: Uint8Array,
  timestamp: number, seq: number, kind: number,
): number {
  const rl = row.length;
  dst[o] = rl >>> 8;
  dst[o + 1] = rl & 0xff;
  dst.set(row, o + 2);
  o += 2 + rl;
  const fl = family.length;
  dst[o++] = fl;
  for (let i = 0; i < fl; i++) dst[o++] = family.charCodeAt(i);
  dst.set(qualifier, o);
  o += qualifier.length;
  return writeTrailer(dst, o, timestamp, seq, kind);
}

export function writeTrailer(dst: Uint8Array, o: number, timestamp: number, seq: number, kind: number): number {
  const its = MAX_TS - timestamp;
  const hi = Math.floor(its / TWO32);
  const lo = its >>> 0;
  dst[o] = hi >>> 24; dst[o + 1] = (hi >>> 16) & 0xff; dst[o + 2] = (hi >>> 8) & 0xff; dst[o + 3] = hi & 0xff;
  dst[o + 4] = lo >>> 24; dst[o + 5] = (lo >>> 16) & 0xff; dst[o + 6] = (lo >>> 8) & 0xff; dst[o + 7] = lo & 0xff;
  const iseq = MAX_SEQ - seq;
  const shi = Math.floor(iseq / 0x1000000); // top 29 bits of the 53 -> 4 bytes
  const slo = iseq % 0x1000000; // low 24 bits -> 3 bytes
  dst[o + 8] = shi >>> 24; dst[o + 9] = (shi >>> 16) & 0xff; dst[o + 10] = (shi >>> 8) & 0xff; dst[o + 11] = shi & 0xff;
  dst[o + 12] = slo >>> 16; dst[o + 13] = (slo >>> 8) & 0xff; dst[o + 14] = slo & 0xff;
  dst[o + 15] = kind;
  return o + TRAILER_BYTES;
}

export function encodeInternalKey(
  row: Uint8Array, family: string, qualifier: Uint8Array, timestamp: number, seq: number, kind: number,
): Uint8Array {
  const out = new Uint8Array(internalKeySize(row.length, family.length, qualifier.length));
  writeInternalKey(out, 0, row, family, qualifier, timestamp, seq, kind);
  return out;
}

/** The total order of internal keys. */
export function compareInternalKeys(a: Uint8Array, b: Uint8Array): number {
  const rla = (a[0]! << 8) | a[1]!;
  const rlb = (b[0]! << 8) | b[1]!;
  let c = compareRange(a, 2, 2 + rla, b, 2, 2 + rlb);
  if (c !== 0) return c;
  const fa = 2 + rla;
  const fb = 2 + rlb;
  const qa = fa + 1 + a[fa]!;
  const qb = fb + 1 + b[fb]!;
  c = compareRange(a, fa + 1, qa, b, fb + 1, qb);
  if (c !== 0) return c;
  const ta = a.length - TRAILER_BYTES;
  const tb = b.length - TRAILER_BYTES;
  c = compareRange(a, qa, ta, b, qb, tb);
  if (c !== 0) return c;
  return compareRange(a, ta, a.length, b, tb, b.length);
}

/**
 * compareInternalKeys(a.subarray(aStart, aEnd), b) without creating the view (a
 * RangeComparator for SST block seeks). Returns exactly the same value; keys whose layout
 * does not fit inside [aStart, aEnd) take the view path, so even malformed keys compare
 * identically.
 */
export function compareInternalKeyRange(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array): number {
  const len = aEnd - aStart;
  if (len < TRAILER_BYTES) return compareInternalKeys(a.subarray(aStart, aEnd), b);
  const rla = (a[aStart]! << 8) | a[aStart + 1]!;
  const fa = aStart + 2 + rla;
  if (fa >= aEnd) return compareInternalKeys(a.subarray(aStart, aEnd), b);
  const qa = fa + 1 + a[fa]!;
  if (qa > aEnd) return compareInternalKeys(a.subarray(aStart, aEnd), b);
  const rlb = (b[0]! << 8) | b[1]!;
  let c = compareRange(a, aStart + 2, fa, b, 2, 2 + rlb);
  if (c !== 0) return c;
  const fb = 2 + rlb;
  const qb = fb + 1 + b[fb]!;
  c = compareRange(a, fa + 1, qa, b, fb + 1, qb);
  if (c !== 0) return c;
  const ta = aEnd - TRAILER_BYTES;
  const tb = b.length - TRAILER_BYTES;
  c = compareRange(a, qa, ta, b, qb, tb);
  if (c !== 0) return c;
  return compareRange(a, ta, aEnd, b, tb, b.length);
}

/** Compares only (row, family, qualifier): zero for two versions of one cell. */
export function compareCellIdentity(a: Uint8Array, b: Uint8Array): number {
  return compareRange(a, 0, a.length - TRAILER_BYTES, b, 0, b.length - TRAILER_BYTES);
}

export function rowLength(key: Uint8Array): number {
  return (key[0]! << 8) | key[1]!;
}

/** A view of the row bytes of a key (the bloom filter key). */
export function rowOf(key: Uint8Array): Uint8Array {
  return key.subarray(2, 2 + ((key[0]! << 8) | key[1]!));
}

/** Compares the row of internal key `k` with a user row key. */
export function compareKeyRow(k: Uint8Array, row: Uint8Array): number {
  return compareRange(k, 2, 2 + ((k[0]! << 8) | k[1]!), row, 0, row.length);
}

export function kindOf(key: Uint8Array): number {
  return key[key.length - 1]!;
}

export function timestampOf(key: Uint8Array): number {
  const o = key.length - TRAILER_BYTES;
  const hi = ((key[o]! << 24) | (key[o + 1]! << 16) | (key[o + 2]! << 8) | key[o + 3]!) >>> 0;
  const lo = ((key[o + 4]! << 24) | (key[o + 5]! << 16) | (key[o + 6]! << 8) | key[o + 7]!) >>> 0;
  return MAX_TS - (hi * TWO32 + lo);
}

export function seqOf(key: Uint8Array): number {
  const o = key.length - 8;
  const hi = ((key[o]! << 24) | (key[o + 1]! << 16) | (key[o + 2]! << 8) | key[o + 3]!) >>> 0;
  const lo = (key[o + 4]! << 16) | (key[o + 5]! << 8) | key[o + 6]!;
  return MAX_SEQ - (hi * 0x1000000 + lo);
}

export function familyOf(key: Uint8Array): string {
  const f = 2 + ((key[0]! << 8) | key[1]!);
  const n = key[f]!;
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(key[f + 1 + i]!);
  return s;
}

/** Offset of the qualifier's first byte. */
export function qualifierStart(key: Uint8Array): number {
  const f = 2 + ((key[0]! << 8) | key[1]!);
  return f + 1 + key[f]!;
}

export function qualifierOf(key: Uint8Array): Uint8Array {
  return key.subarray(qualifierStart(key), key.length - TRAILER_BYTES);
}

export function parseInternalKey(key: Uint8Array): ParsedKey {
  return {
    row: rowOf(key),
    family: familyOf(key),
    qualifier: qualifierOf(key),
    timestamp: timestampOf(key),
    seq: seqOf(key),
    kind: kindOf(key) as KeyKind,
  };
}

/** A key that sorts before every entry of `row` (use with seek). */
export function rowStartKey(row: Uint8Array): Uint8Array {
  const out = new Uint8Array(2 + row.length + 1 + TRAILER_BYTES);
  out[0] = row.length >>> 8;
  out[1] = row.length & 0xff;
  out.set(row, 2);
  // famLen 0, no qualifier, trailer all zero = newest possible timestamp and sequence.
  return out;
}

/** A key that sorts after every entry of `row` (use with seekForPrev). */
export function rowEndKey(row: Uint8Array): Uint8Array {
  // Family bytes are ASCII (< 0x80), so a one-byte family 0xff sorts after every family.
  const out = new Uint8Array(2 + row.length + 2 + TRAILER_BYTES).fill(0xff);
  out[0] = row.length >>> 8;
  out[1] = row.length & 0xff;
  out.set(row, 2);
  out[2 + row.length] = 1;
  return out;
}
