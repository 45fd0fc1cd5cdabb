/**
 * WalReader: reads the records of a WAL file back, for recovery (leveldb log::Reader).
 * Format: core/FORMAT.md, "WAL"; constants in wal-format.ts.
 *
 * Reader rules:
 *  - The file must begin with a valid META record; otherwise open() rejects with
 *    STORE_CORRUPTION naming the path, or with STORE_NOT_SUPPORTED (naming both versions)
 *    when the format version is newer than this build's.
 *  - A checksum mismatch, impossible length, zeroed header or mid-file garbage drops the
 *    rest of its 32 KiB block (records cannot be resynchronized inside a block) and any
 *    fragmented record in progress; each drop is reported to `onCorruption` with offset
 *    and byte count, and reading resumes at the next block.
 *  - The end of the file is where a crash leaves debris: a truncated header, a record
 *    whose plausible length runs past EOF, a fragmented record without its LAST fragment,
 *    or zeros through EOF are a torn tail: not an error, not reported as corruption, but
 *    counted in `tornTailBytes`/`droppedBytes` with `tornTail` set.
 *  - Fragments out of sequence and records of unknown type are reported and skipped.
 *
 * Memory: the file is read in chunks of 16 blocks; returned payloads of FULL records are
 * views into a chunk, fragmented ones are fresh copies. Chunks are never reused, so every
 * returned payload stays valid (and keeps its chunk alive while referenced).
 *
 * Concurrency: next() is synchronous; one reader is used by one caller at a time.
 */
import { ioError, StoreError } from '../api/errors.js';
import { crc32c, unmaskCrc } from '../util/crc32c.js';
import type { FileSystem, RandomAccessFile } from '../fs/fs.js';
import {
  WAL_BLOCK_SIZE,
  WAL_FORMAT_VERSION,
  WAL_HEADER_SIZE,
  WAL_MAGIC,
  WAL_META_PAYLOAD_SIZE,
  WalRecordType,
} from './wal-format.js';

/** A region the reader dropped for a reason other than a torn tail. */
export interface WalCorruption {
  readonly path: string;
  /** File offset where the dropped bytes start. */
  readonly offset: number;
  /** Number of bytes dropped. */
  readonly bytes: number;
  readonly reason: string;
}

export interface WalReadOptions {
  /** Called for each dropped region inside the file (not for a torn tail). */
  readonly onCorruption?: (info: WalCorruption) => void;
}

export interface WalReadResult {
  /** The log number from the META record. */
  readonly logNumber: number;
  /** Reassembled payloads in log order, META excluded. */
  readonly records: Uint8Array[];
  /** Bytes that did not contribute to a record: corruption drops plus the torn tail. */
  readonly droppedBytes: number;
  /** True when the file ended in an incomplete record or zeros (a crash mid-append). */
  readonly tornTail: boolean;
  /** Bytes of the torn tail (included in droppedBytes). */
  readonly tornTailBytes: number;
}

const CHUNK_BYTES = 16 * WAL_BLOCK_SIZE;

function hex32(v: number): string {
  return `0x${v.toString(16).padStart(8, '0')}`;
}

/** Streams the records of one WAL file. Create with WalReader.open(). */
export class WalReader {
  readonly path: string;
  /** The log number from the META record. */
  readonly logNumber: number;
  private readonly file: RandomAccessFile;
  private readonly fileSize: number;
  private readonly onCorruption: ((info: WalCorruption) => void) | undefined;

  private chunk: Uint8Array;
  private chunkStart: number;
  /** File offset of the next physical record. */
  private pos: number;

  private frags: Uint8Array[] = [];
  private fragBytes = 0;
  private fragPhysBytes = 0;
  private fragStart = -1;

  private dropped = 0;
  private torn = false;
  private tornBytes = 0;

  private constructor(
    path: string, file: RandomAccessFile, chunk: Uint8Array, logNumber: number,
    start: number, opts: WalReadOptions,
  ) {
    this.path = path;
    this.file = file;
    this.fileSize = file.size;
    this.chunk = chunk;
    this.chunkStart = 0;
    this.logNumber = logNumber;
    this.pos = start;
    this.onCorruption = opts.onCorruption;
  }

  /**
   * Opens `path` and validates its META record. Rejects with STORE_CORRUPTION when it is
   * missing or damaged, STORE_NOT_SUPPORTED for a newer format version, STORE_IO when the
   * file cannot be read.
   */
  static async open(fs: FileSystem, path: string, opts: WalReadOptions = {}): Promise<WalReader> {
    let file: RandomAccessFile;
    try {
      file = await fs.openRead(path);
    } catch (err) {
      throw ioError(`wal ${path}: open failed`, err);
    }
    try {
      const chunk = readChunk(file, 0, Math.min(CHUNK_BYTES, file.size));
      const { logNumber, end } = parseMeta(path, chunk);
      return new WalReader(path, file, chunk, logNumber, end, opts);
    } catch (err) {
      await file.close().catch(() => undefined);
      throw err;
    }
  }

  /** Bytes dropped so far (corruption and torn tail). */
  get droppedBytes(): number {
    return this.dropped;
  }

  /** True once the end of the file turned out to be torn. */
  get tornTail(): boolean {
    return this.torn;
  }

  get tornTailBytes(): number {
    return this.tornBytes;
  }

  /**
   * The next payload, or undefined at the end of the file. Throws a StoreError with
   * STORE_IO when a read fails; corruption is reported, not thrown.
   */
  next(): Uint8Array | undefined {
    const size = this.fileSize;
    for (;;) {
      const pos = this.pos;
      if (pos >= size) {
        if (this.fragStart >= 0) this.tearAt(pos);
        return undefined;
      }
      const blockStart = pos - (pos % WAL_BLOCK_SIZE);
      const blockEnd = Math.min(blockStart + WAL_BLOCK_SIZE, size);
      const leftInBlock = blockStart + WAL_BLOCK_SIZE - pos;
      if (leftInBlock < WAL_HEADER_SIZE) {
        this.pos = blockEnd; // block trailer: zero padding
        continue;
      }
      if (size - pos < WAL_HEADER_SIZE) {
        this.tearAt(pos); // truncated header
        continue;
      }
      this.load(blockStart, blockEnd);
      const c = this.chunk;
      const o = pos - this.chunkStart;
      const stored = ((c[o]! << 24) | (c[o + 1]! << 16) | (c[o + 2]! << 8) | c[o + 3]!) >>> 0;
      const len = (c[o + 4]! << 8) | c[o + 5]!;
      const type = c[o + 6]!;
      if (stored === 0 && len === 0 && type === WalRecordType.Zero) {
        if (this.zerosToEnd(pos)) this.tearAt(pos);
        else this.dropBlock(pos, blockEnd, 'zeroed record header');
        continue;
      }
      if (WAL_HEADER_SIZE + len > leftInBlock) {
        this.dropBlock(pos, blockEnd, `bad record length ${len}: only ${leftInBlock - WAL_HEADER_SIZE} bytes left in the block`);
        continue;
      }
      const end = pos + WAL_HEADER_SIZE + len;
      if (end > size) {
        this.tearAt(pos); // plausible length, cut short by EOF
        continue;
      }
      const computed = crc32c(c, o + 6, o + WAL_HEADER_SIZE + len);
      if (unmaskCrc(stored) !== computed) {
        this.dropBlock(pos, blockEnd, `checksum mismatch: stored ${hex32(unmaskCrc(stored))}, computed ${hex32(computed)}`);
        continue;
      }
      this.pos = end;
      const data = c.subarray(o + WAL_HEADER_SIZE, o + WAL_HEADER_SIZE + len);
      const phys = WAL_HEADER_SIZE + len;
      switch (type) {
        case WalRecordType.Full:
          if (this.fragStart >= 0) this.dropPartial('FULL record inside a fragmented record');
          return data;
        case WalRecordType.First:
          if (this.fragStart >= 0) this.dropPartial('FIRST record inside a fragmented record');
          this.fragStart = pos;
          this.frags.push(data);
          this.fragBytes = len;
          this.fragPhysBytes = phys;
          break;
        case WalRecordType.Middle:
        case WalRecordType.Last:
          if (this.fragStart < 0) {
            this.report(pos, phys, `${type === WalRecordType.Middle ? 'MIDDLE' : 'LAST'} record without a FIRST`);
            break;
          }
          this.frags.push(data);
          this.fragBytes += len;
          this.fragPhysBytes += phys;
          if (type === WalRecordType.Last) return this.assemble();
          break;
        case WalRecordType.Meta:
          this.report(pos, phys, 'unexpected META record after offset 0');
          break;
        default:
          this.report(pos, phys, `unknown record type ${type}`);
      }
    }
  }

  /** Releases the file. Idempotent. */
  close(): Promise<void> {
    return this.file.close();
  }

  private assemble(): Uint8Array {
    const out = new Uint8Array(this.fragBytes);
    let at = 0;
    for (const f of this.frags) {
      out.set(f, at);
      at += f.length;
    }
    this.resetFrags();
    return out;
  }

  private resetFrags(): void {
    this.frags = [];
    this.fragBytes = 0;
    this.fragPhysBytes = 0;
    this.fragStart = -1;
  }

  private report(offset: number, bytes: number, reason: string): void {
    this.dropped += bytes;
    this.onCorruption?.({ path: this.path, offset, bytes, reason });
  }

  private dropPartial(reason: string): void {
    this.report(this.fragStart, this.fragPhysBytes, `fragmented record dropped: ${reason}`);
    this.resetFrags();
  }

  private dropBlock(pos: number, blockEnd: number, reason: string): void {
    if (this.fragStart >= 0) this.dropPartial(`error in a later fragment at offset ${pos}`);
    this.report(pos, blockEnd - pos, reason);
    this.pos = blockEnd;
  }

  /** Everything from `start` (or the fragmented record in progress) to EOF is a torn tail. */
  private tearAt(at: number): void {
    const start = this.fragStart >= 0 ? this.fragStart : at;
    this.torn = true;
    this.tornBytes = this.fileSize - start;
    this.dropped += this.tornBytes;
    this.resetFrags();
    this.pos = this.fileSize;
  }

  private load(blockStart: number, blockEnd: number): void {
    if (blockStart >= this.chunkStart && blockEnd <= this.chunkStart + this.chunk.length) return;
    this.chunk = readChunk(this.file, blockStart, Math.min(CHUNK_BYTES, this.fileSize - blockStart));
    this.chunkStart = blockStart;
  }

  private zerosToEnd(from: number): boolean {
    for (let at = from; at < this.fileSize; at += CHUNK_BYTES) {
      const n = Math.min(CHUNK_BYTES, this.fileSize - at);
      const b = readChunk(this.file, at, n);
      for (let i = 0; i < n; i++) if (b[i] !== 0) return false;
    }
    return true;
  }
}

function readChunk(file: RandomAccessFile, position: number, length: number): Uint8Array {
  try {
    return file.readSync(position, length);
  } catch (err) {
    throw ioError(`wal ${file.path}: read of ${length} bytes at ${position} failed`, err);
  }
}

function parseMeta(path: string, c: Uint8Array): { logNumber: number; end: number } {
  const bad = (why: string): StoreError =>
    new StoreError('STORE_CORRUPTION', `wal ${path}: no valid META record at offset 0: ${why}`);
  if (c.length < WAL_HEADER_SIZE) throw bad(`file is ${c.length} bytes`);
  const dv = new DataView(c.buffer, c.byteOffset, c.byteLength);
  const stored = dv.getUint32(0);
  const len = dv.getUint16(4);
  const type = c[6]!;
  if (type !== WalRecordType.Meta) throw bad(`record type ${type}, want ${WalRecordType.Meta} (META)`);
  if (WAL_HEADER_SIZE + len > c.length) throw bad(`length ${len} runs past the end of the file (${c.length} bytes)`);
  const computed = crc32c(c, 6, WAL_HEADER_SIZE + len);
  if (unmaskCrc(stored) !== computed) {
    throw bad(`checksum mismatch: stored ${hex32(unmaskCrc(stored))}, computed ${hex32(computed)}`);
  }
  if (len < 12) throw bad(`payload is ${len} bytes, too short for magic and version`);
  for (let i = 0; i < WAL_MAGIC.length; i++) {
    if (c[WAL_HEADER_SIZE + i] !== WAL_MAGIC[i]) throw bad('bad magic (not a Horae WAL file)');
  }
  const version = dv.getUint32(WAL_HEADER_SIZE + 8);
  if (version > WAL_FORMAT_VERSION) {
    throw new StoreError(
      'STORE_NOT_SUPPORTED',
      `wal ${path}: format version ${version} is newer than the newest this build reads (${WAL_FORMAT_VERSION})`,
    );
  }
  if (version < 1) throw bad(`format version ${version} does not exist`);
  if (len !== WAL_META_PAYLOAD_SIZE) throw bad(`payload is ${len} bytes, want ${WAL_META_PAYLOAD_SIZE}`);
  const hi = dv.getUint32(WAL_HEADER_SIZE + 12);
  const lo = dv.getUint32(WAL_HEADER_SIZE + 16);
  if (hi > 0x1fffff) throw bad(`log number exceeds 2^53`);
  return { logNumber: hi * 0x100000000 + lo, end: WAL_HEADER_SIZE + len };
}

/** Reads a whole WAL file into memory. Errors as in WalReader.open() and next(). */
export async function readWal(fs: FileSystem, path: string, opts: WalReadOptions = {}): Promise<WalReadResult> {
  const r = await WalReader.open(fs, path, opts);
  try {
    const records: Uint8Array[] = [];
    for (let rec = r.next(); rec !== undefined; rec = r.next()) records.push(rec);
    return {
      logNumber: r.logNumber,
      records,
      droppedBytes: r.droppedBytes,
      tornTail: r.tornTail,
      tornTailBytes: r.tornTailBytes,
    };
  } finally {
    await r.close().catch(() => undefined);
  }
}
