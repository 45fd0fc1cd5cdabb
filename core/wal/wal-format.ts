/**
 * WAL framing constants shared by wal-writer.ts and wal-reader.ts (leveldb db/log_format.h).
 * Format: core/FORMAT.md, "WAL".
 *
 * A WAL file is a sequence of 32 KiB blocks (the last one may be partial). Each block holds
 * physical records `[crc <u32>][len <u16>][type <u8>][data <bytes len>]`, big-endian; a
 * record never crosses a block boundary, and when fewer than 7 bytes remain in a block the
 * writer fills them with zeros. A logical record (a payload) longer than what fits is split
 * into FIRST, MIDDLE..., LAST fragments. `crc` is the masked CRC-32C of the type byte
 * followed by the data.
 *
 * The first physical record of every file, at offset 0, is a META record:
 * `[magic <bytes 8> "HORAEWAL"][format version <u32>][log number <u64>]`.
 */

/** Size of a block. DO NOT CHANGE: on-disk value. */
export const WAL_BLOCK_SIZE = 32 * 1024;

/** Size of a physical record header: crc (4) + len (2) + type (1). */
export const WAL_HEADER_SIZE = 7;

/** Physical record types. DO NOT CHANGE: on-disk values. */
export const WalRecordType = {
  /** Reserved: zeroed or preallocated space, never written as a record. */
  Zero: 0,
  /** A whole payload in one record. */
  Full: 1,
  /** The first fragment of a payload. */
  First: 2,
  /** A fragment that is neither first nor last. */
  Middle: 3,
  /** The last fragment of a payload. */
  Last: 4,
  /** The file header record; exactly one, at offset 0. */
  Meta: 5,
} as const;
export type WalRecordType = (typeof WalRecordType)[keyof typeof WalRecordType];

/** "HORAEWAL" in ASCII: the first 8 bytes of the META payload. */
export const WAL_MAGIC: Uint8Array = new Uint8Array([0x48, 0x4f, 0x52, 0x41, 0x45, 0x57, 0x41, 0x4c]);

/**
 * Format versions, one comment per version. Readers refuse versions newer than
 * WAL_FORMAT_VERSION with STORE_NOT_SUPPORTED.
 *
 * 1: leveldb framing with big-endian header fields and a META record at offset 0.
 */
export const WAL_FORMAT_VERSION = 1;

/** META payload length for format version 1: magic (8) + version (4) + log number (8). */
export const WAL_META_PAYLOAD_SIZE = 20;

/**
 * Bytes of the META record on disk. A file shorter than this cannot hold any acknowledged
 * record: the writer syncs META before it accepts the first append.
 */
export const WAL_META_RECORD_SIZE = WAL_HEADER_SIZE + WAL_META_PAYLOAD_SIZE;
