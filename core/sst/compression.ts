/**
 * Per-block compression for SSTs. A compressed block is stored as
 *
 *   <uvarint rawLen><compressed bytes>
 *
 * where the compressed bytes are an LZ4 *block* (the LZ4 block format, no frame) for type
 * lz4, or raw DEFLATE (RFC 1951, zlib level 1) for type deflate. rawLen lets the reader
 * size the output and check that decompression produced exactly that many bytes.
 * A block whose compression saves less than 12.5% is stored uncompressed (type none).
 * Format: core/FORMAT.md, "SST", block trailer.
 *
 * Buffer appears here only because lz4-napi and node:zlib take and return Buffers; every
 * result leaves this file as a plain Uint8Array view (no Buffer#slice hazards). Functions
 * are synchronous and stateless.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { compressSync, uncompressSync } from 'lz4-napi';
import { CompressionType, putUvarint } from './sst-format.js';
import type { Compression } from './sst-format.js';
import { corruption } from './sst-format.js';

/** Largest rawLen a reader accepts (a guard against absurd allocations). */
export const MAX_RAW_BLOCK_BYTES = 256 * 1024 * 1024;

/** The bytes to store for a block and the trailer's type byte. */
export interface CompressedBlock {
  readonly type: CompressionType;
  /** `raw` itself when type is none; else a new array. */
  readonly bytes: Uint8Array;
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function asU8(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Compresses `raw` with `compression`, falling back to none when it saves < 12.5%.
 * `raw` is not retained when a compressed form is returned.
 */
export function compressBlock(raw: Uint8Array, compression: Compression): CompressedBlock {
  if (compression === 'none' || raw.length === 0) return { type: CompressionType.None, bytes: raw };
  let body: Uint8Array;
  let type: CompressionType;
  if (compression === 'lz4') {
    // lz4-napi prepends the raw length as a little-endian u32; we store our own uvarint.
    body = asU8(compressSync(asBuffer(raw))).subarray(4);
    type = CompressionType.Lz4;
  } else {
    body = asU8(deflateRawSync(raw, { level: 1 }));
    type = CompressionType.Deflate;
  }
  const out = new Uint8Array(10 + body.length);
  const o = putUvarint(out, 0, raw.length);
  if (o + body.length > raw.length - raw.length / 8) return { type: CompressionType.None, bytes: raw };
  out.set(body, o);
  return { type, bytes: out.subarray(0, o + body.length) };
}

/**
 * Returns the raw block for a stored block of `type`. Throws STORE_CORRUPTION whose
 * message starts with `where` on an unknown type, a bad length prefix, a decompressor
 * failure or a length mismatch. The result may alias `stored` (type none).
 */
export function decompressBlock(type: number, stored: Uint8Array, where: string): Uint8Array {
  if (type === CompressionType.None) return stored;
  if (type !== CompressionType.Lz4 && type !== CompressionType.Deflate) {
    throw corruption(`${where}: unknown compression type ${type}`);
  }
  let rawLen = 0;
  let p = 0;
  for (let shift = 0; ; shift += 7) {
    if (p >= stored.length || shift > 28) throw corruption(`${where}: malformed raw length prefix`);
    const b = stored[p++]!;
    rawLen += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  if (rawLen > MAX_RAW_BLOCK_BYTES) throw corruption(`${where}: raw length ${rawLen} exceeds ${MAX_RAW_BLOCK_BYTES}`);
  const body = stored.subarray(p);
  let out: Uint8Array;
  try {
    if (type === CompressionType.Lz4) {
      const framed = Buffer.allocUnsafe(4 + body.length);
      framed.writeUInt32LE(rawLen, 0);
      framed.set(body, 4);
      out = asU8(uncompressSync(framed));
    } else {
      out = asU8(inflateRawSync(body, { maxOutputLength: Math.max(1, rawLen) }));
    }
  } catch (err) {
    const name = type === CompressionType.Lz4 ? 'lz4' : 'deflate';
    throw corruption(`${where}: ${name} decompression failed: ${(err as Error)?.message ?? String(err)}`, err);
  }
  if (out.length !== rawLen) {
    throw corruption(`${where}: decompressed to ${out.length} bytes, want ${rawLen}`);
  }
  return out;
}
