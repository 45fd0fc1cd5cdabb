/**
 * The manifest: the one file that says which tables, regions and SSTs are live, replaced
 * atomically as a whole (write MANIFEST.tmp, fsync, rename over MANIFEST, fsync the
 * directory). Format: core/FORMAT.md, "Manifest".
 *
 *   [8 bytes magic "HORAEMAN"][u32 format version = 1][u32 payload length]
 *   [u32 masked crc32c of bytes 8..16 (version, length) and the payload][payload: MessagePack]
 *
 * Recovery reads it, then replays WAL records newer than each region's flushedSeq.
 */
import { Packr } from 'msgpackr';
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import type { FamilySpec } from '../api/store.js';
import { StoreError, ioError } from '../api/errors.js';
import { crc32c, maskCrc, unmaskCrc } from '../util/crc32c.js';
import type { FileMeta } from './file-meta.js';
import type { RangeDelete } from './range-deletes.js';
import { MANIFEST_NAME, MANIFEST_TMP_NAME } from './filenames.js';

export const MANIFEST_MAGIC = new Uint8Array([0x48, 0x4f, 0x52, 0x41, 0x45, 0x4d, 0x41, 0x4e]); // "HORAEMAN"
export const MANIFEST_VERSION = 1;
const HEADER_BYTES = 20;

export interface TableMeta {
  readonly id: number;
  readonly name: string;
  readonly families: readonly FamilySpec[];
  /** The split points the table was created with (its current regions may differ). */
  readonly splitPoints?: readonly Uint8Array[];
  /** Default TTL of families without their own. */
  readonly ttlMs?: number;
  /** Range tombstones still in force (lsm/range-deletes.ts); absent when none. */
  readonly rangeDeletes?: readonly RangeDelete[];
  /** Files numbered below it were written before a family's transform was named (TableState.transformFrom). */
  readonly transformFrom?: number;
}

export interface RegionMeta {
  readonly id: number;
  readonly tableId: number;
  readonly start: Uint8Array;
  readonly end: Uint8Array;
  /** Every entry of this region with seq <= flushedSeq is in its files. */
  readonly flushedSeq: number;
  /** File numbers, newest first. */
  readonly files: readonly number[];
}

export interface ManifestState {
  readonly nextFileNumber: number;
  readonly nextTableId: number;
  readonly nextRegionId: number;
  /** A lower bound for the next sequence number. */
  readonly lastSeq: number;
  readonly tables: readonly TableMeta[];
  readonly regions: readonly RegionMeta[];
  readonly files: readonly FileMeta[];
  /**
   * Set by a graceful close: the WAL file that was closed and synced whole. A torn record
   * at its end can only be damage, not a crash in the middle of an append.
   */
  readonly cleanLog?: number;
}

export function emptyManifest(): ManifestState {
  return { nextFileNumber: 1, nextTableId: 1, nextRegionId: 1, lastSeq: 0, tables: [], regions: [], files: [] };
}

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

export function encodeManifest(state: ManifestState): Uint8Array {
  const payload: Uint8Array = packr.pack(state);
  const out = new Uint8Array(HEADER_BYTES + payload.length);
  out.set(MANIFEST_MAGIC, 0);
  const dv = new DataView(out.buffer);
  dv.setUint32(8, MANIFEST_VERSION);
  dv.setUint32(12, payload.length);
  out.set(payload, HEADER_BYTES);
  dv.setUint32(16, maskCrc(manifestCrc(out)));
  return out;
}

/** CRC-32C over the version and length fields, then the payload (the crc field skipped). */
export function manifestCrc(bytes: Uint8Array): number {
  return crc32c(bytes, HEADER_BYTES, bytes.length, crc32c(bytes, 8, 16));
}

function toBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
  throw new TypeError('expected bytes');
}

export function decodeManifest(bytes: Uint8Array, path: string): ManifestState {
  if (bytes.length < HEADER_BYTES) {
    throw new StoreError('STORE_CORRUPTION', `manifest ${path}: ${bytes.length} bytes, shorter than its ${HEADER_BYTES}-byte header`);
  }
  for (let i = 0; i < 8; i++) {
    if (bytes[i] !== MANIFEST_MAGIC[i]) throw new StoreError('STORE_CORRUPTION', `manifest ${path}: bad magic at offset 0`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = dv.getUint32(12);
  if (HEADER_BYTES + len !== bytes.length) {
    throw new StoreError('STORE_CORRUPTION', `manifest ${path}: payload length ${len} at offset 12 does not match file size ${bytes.length}`);
  }
  // NB: the checksum covers the version: check it first, so bit rot reads as corruption.
  const stored = unmaskCrc(dv.getUint32(16));
  const computed = manifestCrc(bytes);
  if (stored !== computed) {
    throw new StoreError('STORE_CORRUPTION', `manifest ${path}: checksum mismatch at offset 16: stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)}`);
  }
  const version = dv.getUint32(8);
  if (version > MANIFEST_VERSION) {
    throw new StoreError('STORE_NOT_SUPPORTED', `manifest ${path}: format version ${version} is newer than supported version ${MANIFEST_VERSION}`);
  }
  if (version === 0) throw new StoreError('STORE_CORRUPTION', `manifest ${path}: invalid format version 0 at offset 8`);
  const payload = bytes.subarray(HEADER_BYTES);
  let raw: ManifestState;
  try {
    raw = packr.unpack(payload) as ManifestState;
  } catch (e) {
    throw new StoreError('STORE_CORRUPTION', `manifest ${path}: undecodable payload`, { cause: e });
  }
  return {
    ...raw,
    tables: raw.tables.map((t) => t.rangeDeletes === undefined ? t
      : { ...t, rangeDeletes: t.rangeDeletes.map((d) => ({ start: toBytes(d.start), end: toBytes(d.end), seq: d.seq, cleared: [...d.cleared] })) }),
    regions: raw.regions.map((r) => ({ ...r, start: toBytes(r.start), end: toBytes(r.end), files: [...r.files] })),
    files: raw.files.map((f) => ({ ...f, smallest: toBytes(f.smallest), largest: toBytes(f.largest) })),
  };
}

/** Reads the manifest, or undefined when the directory has none (a new store). */
export async function readManifest(fs: FileSystem, dir: string): Promise<ManifestState | undefined> {
  const path = joinPath(dir, MANIFEST_NAME);
  if (!(await fs.exists(path))) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(path);
  } catch (e) {
    throw ioError(`manifest ${path}: read`, e);
  }
  return decodeManifest(bytes, path);
}

/** Atomically replaces the manifest: write tmp, fsync, rename, fsync dir. */
export async function writeManifest(fs: FileSystem, dir: string, state: ManifestState): Promise<void> {
  const tmp = joinPath(dir, MANIFEST_TMP_NAME);
  const bytes = encodeManifest(state);
  try {
    const f = await fs.openAppend(tmp, { truncate: true });
    try {
      await f.append(bytes);
      await f.sync();
    } finally {
      await f.close();
    }
    await fs.rename(tmp, joinPath(dir, MANIFEST_NAME));
    await fs.syncDir(dir);
  } catch (e) {
    throw ioError(`manifest ${joinPath(dir, MANIFEST_NAME)}: write`, e);
  }
}
