/**
 * Constants and small codecs shared by the SST writer, reader and dump: magic, format
 * version, footer layout, block handles, block trailers, compression type bytes.
 * Format: core/FORMAT.md, "SST".
 *
 *   file   := dataBlock* filterBlock? propertiesBlock indexBlock footer
 *   block  := <bytes size> trailer             (a handle's size excludes the trailer)
 *   trailer:= <u8 compression type><u32 masked crc32c of the block bytes + type byte>
 *   footer := filter:<u64 off><u32 size> properties:<u64 off><u32 size>
 *             index:<u64 off><u32 size> <u32 version> <u32 masked crc32c of bytes [0, 40)>
 *             <u64 magic "HORAESST">                                           (52 bytes)
 *
 * Integers are big-endian (core/FORMAT.md "Conventions"). Pure data and pure functions; safe
 * from any caller.
 */
import { Packr } from 'msgpackr';
import { StoreError } from '../api/errors.js';
import { crc32c, maskCrc } from '../util/crc32c.js';

/** ASCII "HORAESST" as two u32 halves (the last 8 bytes of every SST). DO NOT CHANGE. */
export const SST_MAGIC_HI = 0x484f5241; // "HORA"
export const SST_MAGIC_LO = 0x45535354; // "ESST"
export const SST_MAGIC_HEX = '484f524145535354';

/**
 * Format versions. Readers refuse versions newer than SST_FORMAT_VERSION.
 * - 1: initial format (leveldb-style blocks, whole-file bloom filter, msgpack properties).
 */
export const SST_FORMAT_VERSION = 1;

/** Bytes in the fixed-size footer. */
export const FOOTER_BYTES = 52;
/** Bytes of the footer covered by its checksum: the three handles and the version. */
export const FOOTER_CHECKSUMMED_BYTES = 40;
/** Bytes after every block: compression type + masked crc32c. */
export const BLOCK_TRAILER_BYTES = 5;

/** Compression type byte in a block trailer. DO NOT CHANGE: on-disk values. */
export const CompressionType = {
  None: 0,
  Lz4: 1,
  Deflate: 2,
} as const;
export type CompressionType = (typeof CompressionType)[keyof typeof CompressionType];

/** Writer-side compression choice. */
export type Compression = 'none' | 'lz4' | 'deflate';

export const COMPRESSION_NAMES: Readonly<Record<number, Compression>> = {
  [CompressionType.None]: 'none',
  [CompressionType.Lz4]: 'lz4',
  [CompressionType.Deflate]: 'deflate',
};

export const COMPRESSION_TYPES: Readonly<Record<Compression, CompressionType>> = {
  none: CompressionType.None,
  lz4: CompressionType.Lz4,
  deflate: CompressionType.Deflate,
};

/** Seed of the murmur3 hash used by the bloom filter (leveldb's bloom seed). DO NOT CHANGE. */
export const BLOOM_HASH_SEED = 0xbc9f1d34;

/** Where a block lives: `size` counts the block bytes only, not its 5-byte trailer. */
export interface BlockHandle {
  readonly offset: number;
  readonly size: number;
}

/** The decoded footer. A filter handle of size 0 means "no filter". */
export interface Footer {
  readonly filter: BlockHandle;
  readonly properties: BlockHandle;
  readonly index: BlockHandle;
  readonly version: number;
  /** The masked crc32c as stored. */
  readonly checksum: number;
}

/** Encodes the footer (52 bytes) including its checksum and the magic. */
export function encodeFooter(filter: BlockHandle, properties: BlockHandle, index: BlockHandle): Uint8Array {
  const out = new Uint8Array(FOOTER_BYTES);
  const dv = new DataView(out.buffer);
  let o = 0;
  for (const h of [filter, properties, index]) {
    dv.setUint32(o, Math.floor(h.offset / 0x100000000));
    dv.setUint32(o + 4, h.offset >>> 0);
    dv.setUint32(o + 8, h.size);
    o += 12;
  }
  dv.setUint32(36, SST_FORMAT_VERSION);
  dv.setUint32(40, maskCrc(crc32c(out, 0, FOOTER_CHECKSUMMED_BYTES)));
  dv.setUint32(44, SST_MAGIC_HI);
  dv.setUint32(48, SST_MAGIC_LO);
  return out;
}

/**
 * Decodes and checks a footer read from the last FOOTER_BYTES of `path`, which starts at
 * byte `footerOffset`. Throws STORE_CORRUPTION on a bad magic, version 0, checksum
 * mismatch or a handle outside [0, footerOffset); STORE_NOT_SUPPORTED on a newer version.
 */
export function decodeFooter(b: Uint8Array, path: string, footerOffset: number): Footer {
  const where = `sst ${path}: footer @${footerOffset}`;
  if (b.length !== FOOTER_BYTES) throw corruption(`${where}: need ${FOOTER_BYTES} bytes, have ${b.length}`);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const hi = dv.getUint32(44);
  const lo = dv.getUint32(48);
  if (hi !== SST_MAGIC_HI || lo !== SST_MAGIC_LO) {
    throw corruption(`${where}: bad magic 0x${hex32(hi)}${hex32(lo)}, want 0x${SST_MAGIC_HEX}`);
  }
  // NB: the checksum covers the version, so check it first: bit rot in the version field
  // must read as corruption, not as "written by a newer version".
  const stored = dv.getUint32(40);
  const computed = maskCrc(crc32c(b, 0, FOOTER_CHECKSUMMED_BYTES));
  if (stored !== computed) {
    throw corruption(`${where}: checksum mismatch: stored 0x${hex32(stored)}, computed 0x${hex32(computed)}`);
  }
  const version = dv.getUint32(36);
  if (version > SST_FORMAT_VERSION) {
    throw new StoreError(
      'STORE_NOT_SUPPORTED',
      `${where}: format version ${version} is newer than the newest this build reads (${SST_FORMAT_VERSION})`,
    );
  }
  if (version === 0) throw corruption(`${where}: invalid format version 0`);
  const handles: BlockHandle[] = [];
  for (let o = 0; o < 36; o += 12) {
    const offHi = dv.getUint32(o);
    const offset = offHi * 0x100000000 + dv.getUint32(o + 4);
    const size = dv.getUint32(o + 8);
    if (offHi > 0x1fffff || offset + size + BLOCK_TRAILER_BYTES > footerOffset) {
      // A size-0 filter handle at offset 0 is "no filter" and always in range.
      throw corruption(`${where}: block handle @${footerOffset + o} (offset ${offset}, size ${size}) is outside the file`);
    }
    handles.push({ offset, size });
  }
  return { filter: handles[0]!, properties: handles[1]!, index: handles[2]!, version, checksum: stored };
}

/** `<uvarint offset><uvarint size>`: the index block's value format. */
export function encodeBlockHandle(h: BlockHandle): Uint8Array {
  const out = new Uint8Array(20);
  let o = putUvarint(out, 0, h.offset);
  o = putUvarint(out, o, h.size);
  return out.subarray(0, o);
}

/** Writes a uvarint at `o` and returns the offset after it. */
export function putUvarint(out: Uint8Array, o: number, v: number): number {
  while (v >= 0x80) {
    out[o++] = (v & 0x7f) | 0x80;
    v = v >= 0x100000000 ? Math.floor(v / 128) : v >>> 7;
  }
  out[o++] = v;
  return o;
}

/** Builds a STORE_CORRUPTION error. */
export function corruption(message: string, cause?: unknown): StoreError {
  return new StoreError('STORE_CORRUPTION', message, cause === undefined ? {} : { cause });
}

/** Eight lowercase hex digits. */
export function hex32(v: number): string {
  return (v >>> 0).toString(16).padStart(8, '0');
}

/** Caller-defined per-file properties (the engine stores timestamp/sequence ranges here). */
export type SstProps = Readonly<Record<string, number | string>>;

/**
 * The properties block, decoded. Encoded as one MessagePack map (standard MessagePack,
 * msgpackr with useRecords: false) with exactly these field names; binary keys are `bin`,
 * counts are integers, `props` is a nested map of string to number or string. Readers
 * ignore fields they do not know.
 */
export interface SstProperties {
  readonly smallestKey: Uint8Array;
  readonly largestKey: Uint8Array;
  readonly entries: number;
  readonly dataBlocks: number;
  /** Sum of key lengths / value lengths as added (before prefix compression). */
  readonly rawKeyBytes: number;
  readonly rawValueBytes: number;
  /** The writer's setting; individual blocks may still be stored uncompressed. */
  readonly compression: Compression;
  /** 0 when the file has no filter. */
  readonly bloomBitsPerKey: number;
  readonly props: SstProps;
}

const packr = new Packr({ useRecords: false });

/** Encodes the properties block. */
export function encodeProperties(p: SstProperties): Uint8Array {
  const b = packr.pack({
    smallestKey: p.smallestKey,
    largestKey: p.largestKey,
    entries: p.entries,
    dataBlocks: p.dataBlocks,
    rawKeyBytes: p.rawKeyBytes,
    rawValueBytes: p.rawValueBytes,
    compression: p.compression,
    bloomBitsPerKey: p.bloomBitsPerKey,
    props: { ...p.props },
  });
  return new Uint8Array(b); // a copy: msgpackr may reuse its output buffer
}

/** Decodes and validates a properties block; throws STORE_CORRUPTION naming `where`. */
export function decodeProperties(b: Uint8Array, where: string): SstProperties {
  let raw: unknown;
  try {
    raw = packr.unpack(b);
  } catch (err) {
    throw corruption(`${where}: undecodable properties: ${(err as Error)?.message ?? String(err)}`, err);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw corruption(`${where}: properties are not a map`);
  }
  const o = raw as Record<string, unknown>;
  const bytes = (name: string): Uint8Array => {
    const v = o[name];
    if (!(v instanceof Uint8Array)) throw corruption(`${where}: property ${name} is not binary`);
    return new Uint8Array(v); // a copy: never a Buffer, never aliasing the block
  };
  const count = (name: string): number => {
    const v = o[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw corruption(`${where}: property ${name} is not a non-negative integer: ${String(v)}`);
    }
    return v;
  };
  const compression = o['compression'];
  if (compression !== 'none' && compression !== 'lz4' && compression !== 'deflate') {
    throw corruption(`${where}: unknown compression ${JSON.stringify(compression)}`);
  }
  const bits = o['bloomBitsPerKey'];
  if (typeof bits !== 'number' || !(bits >= 0)) throw corruption(`${where}: bad bloomBitsPerKey ${String(bits)}`);
  const props = o['props'];
  if (typeof props !== 'object' || props === null || Array.isArray(props) || props instanceof Uint8Array) {
    throw corruption(`${where}: props is not a map`);
  }
  const out: Record<string, number | string> = {};
  for (const [k, v] of Object.entries(props as Record<string, unknown>)) {
    if (typeof v !== 'number' && typeof v !== 'string') throw corruption(`${where}: props.${k} is not a number or string`);
    out[k] = v;
  }
  return {
    smallestKey: bytes('smallestKey'),
    largestKey: bytes('largestKey'),
    entries: count('entries'),
    dataBlocks: count('dataBlocks'),
    rawKeyBytes: count('rawKeyBytes'),
    rawValueBytes: count('rawValueBytes'),
    compression,
    bloomBitsPerKey: bits,
    props: out,
  };
}
