/**
 * Opens an SST (layout in sst-format.ts; core/FORMAT.md "SST") and iterates it.
 *
 * open() reads and verifies the footer, properties, index and filter blocks and keeps
 * them for the reader's lifetime (the index is decoded into arrays of last keys and
 * handles, so choosing a block is a binary search with no decoding). Data blocks are read
 * on demand through the shared block cache, keyed by (cacheId, block offset).
 *
 * Invariants checked at open: magic, version, footer checksum, block checksums, handles
 * inside the file, data blocks contiguous from offset 0, index keys strictly increasing,
 * the last index key equal to the largest key. Every failure is a StoreError naming the
 * file path and byte offset; nothing decoded from a block that failed its checksum (when
 * verifyChecksums is on, the default) is ever returned.
 *
 * Concurrency: reads are synchronous positional reads, so any number of iterators may be
 * used interleaved from the one JavaScript thread. close() closes the file; iterators that
 * need another block afterwards record STORE_CLOSED.
 */
import type { Comparator, InternalIterator, RangeComparator } from '../iter/internal-iterator.js';
import type { RandomAccessFile } from '../fs/fs.js';
import type { LruCache } from '../cache/lru-cache.js';
import { StoreError, ioError } from '../api/errors.js';
import { crc32c, maskCrc } from '../util/crc32c.js';
import { ByteReader } from '../util/coding.js';
import { Block } from './block.js';
import type { BlockIterator } from './block.js';
import { BloomFilter } from './bloom.js';
import { decompressBlock } from './compression.js';
import {
  BLOCK_TRAILER_BYTES, FOOTER_BYTES, corruption, decodeFooter, decodeProperties, hex32,
} from './sst-format.js';
import type { BlockHandle, Footer, SstProperties, SstProps } from './sst-format.js';

/** SstReader.open options. */
export interface SstReaderOptions {
  /** The order the file was written in. */
  readonly compare: Comparator;
  /**
   * Optional in-place form of `compare` (must return exactly what compare(a.subarray(s, e), b)
   * does); block seeks then compare without creating key views. Results are unchanged.
   */
  readonly compareRange?: RangeComparator;
  /** Maps a full key to its bloom key, for mayContainKey(). Default: the whole key. */
  readonly bloomKey?: (key: Uint8Array) => Uint8Array;
  /** Shared block cache; without one, each iterator re-reads blocks it leaves. */
  readonly cache?: LruCache<Block>;
  /**
   * This file's id in the block cache: unique among files sharing the cache for as long as
   * any of its blocks may be cached (a file number within one store, or cache.newId()).
   */
  readonly cacheId: number;
  /** Verify block checksums on every read from the file. Default true. */
  readonly verifyChecksums?: boolean;
  /** Told of every STORE_CORRUPTION a data block read throws (before it is thrown). */
  readonly onCorruption?: (err: StoreError) => void;
}

/** An open, immutable SST. */
export class SstReader {
  readonly path: string;
  readonly sizeBytes: number;
  readonly cacheId: number;
  /** The decoded properties block. */
  readonly properties: SstProperties;
  readonly footer: Footer;
  private readonly file: RandomAccessFile;
  private readonly compare: Comparator;
  private readonly compareRange: RangeComparator | undefined;
  private readonly bloomKeyFn: ((key: Uint8Array) => Uint8Array) | undefined;
  private readonly cache: LruCache<Block> | undefined;
  private readonly verify: boolean;
  private readonly onCorruption: ((err: StoreError) => void) | undefined;
  private readonly filter: BloomFilter | undefined;
  /** Last key of each data block (copies), ascending. */
  private readonly indexKeys: Uint8Array[];
  private readonly blockOffsets: number[];
  private readonly blockSizes: number[];
  private closed = false;

  private constructor(file: RandomAccessFile, opts: SstReaderOptions) {
    this.file = file;
    this.path = file.path;
    this.sizeBytes = file.size;
    this.cacheId = opts.cacheId;
    this.compare = opts.compare;
    this.compareRange = opts.compareRange;
    this.bloomKeyFn = opts.bloomKey;
    this.cache = opts.cache;
    this.verify = opts.verifyChecksums ?? true;
    this.onCorruption = opts.onCorruption;

    const size = file.size;
    if (size < FOOTER_BYTES) {
      throw corruption(`sst ${this.path}: file too short: ${size} bytes, a footer alone is ${FOOTER_BYTES} @0`);
    }
    const footerOffset = size - FOOTER_BYTES;
    this.footer = decodeFooter(this.read(footerOffset, FOOTER_BYTES, 'footer'), this.path, footerOffset);
    const f = this.footer;
    this.properties = decodeProperties(this.readBlockContents(f.properties, 'properties block'), `sst ${this.path}: properties block @${f.properties.offset}`);
    this.filter = f.filter.size === 0 ? undefined : new BloomFilter(this.readBlockContents(f.filter, 'filter block'));

    const indexWhere = `sst ${this.path}: index block @${f.index.offset}`;
    const index = Block.parse(this.readBlockContents(f.index, 'index block'), indexWhere);
    const it = index.iterator(this.compare);
    this.indexKeys = [];
    this.blockOffsets = [];
    this.blockSizes = [];
    let expectOffset = 0;
    for (it.seekToFirst(); it.valid; it.next()) {
      const key = it.key().slice();
      const r = new ByteReader(it.value());
      const offset = r.uvarint();
      const bsize = r.uvarint();
      const i = this.indexKeys.length;
      if (r.err !== undefined || r.remaining !== 0) throw corruption(`${indexWhere}: entry ${i}: malformed block handle`);
      if (offset !== expectOffset) throw corruption(`${indexWhere}: entry ${i}: block @${offset}, want @${expectOffset} (blocks are contiguous)`);
      if (i > 0 && this.compare(this.indexKeys[i - 1]!, key) >= 0) throw corruption(`${indexWhere}: entry ${i}: keys out of order`);
      this.indexKeys.push(key);
      this.blockOffsets.push(offset);
      this.blockSizes.push(bsize);
      expectOffset = offset + bsize + BLOCK_TRAILER_BYTES;
    }
    const itErr = it.error();
    if (itErr !== undefined) throw itErr;
    const p = this.properties;
    const dataEnd = Math.min(f.properties.offset, f.index.offset, f.filter.size === 0 ? Infinity : f.filter.offset);
    if (expectOffset > dataEnd) throw corruption(`${indexWhere}: data blocks end @${expectOffset}, past the first meta block @${dataEnd}`);
    if (this.indexKeys.length !== p.dataBlocks) {
      throw corruption(`${indexWhere}: ${this.indexKeys.length} entries, properties say ${p.dataBlocks} data blocks`);
    }
    if ((p.entries === 0) !== (p.dataBlocks === 0)) {
      throw corruption(`sst ${this.path}: properties block @${f.properties.offset}: ${p.entries} entries in ${p.dataBlocks} blocks`);
    }
    if (p.dataBlocks > 0 && this.compare(this.indexKeys[p.dataBlocks - 1]!, p.largestKey) !== 0) {
      throw corruption(`${indexWhere}: last key differs from the largest key in the properties`);
    }
  }

  /**
   * Opens `file` (which the reader then owns: close() closes it). Throws STORE_CORRUPTION
   * (file path + offset in the message) when the file is damaged or truncated,
   * STORE_NOT_SUPPORTED when it was written by a newer format version, STORE_IO on a
   * read error.
   */
  static open(file: RandomAccessFile, opts: SstReaderOptions): SstReader {
    return new SstReader(file, opts);
  }

  /** First key in the file (a copy); empty when the file has no entries. */
  get smallestKey(): Uint8Array {
    return this.properties.smallestKey;
  }

  /** Last key in the file (a copy); empty when the file has no entries. */
  get largestKey(): Uint8Array {
    return this.properties.largestKey;
  }

  get entries(): number {
    return this.properties.entries;
  }

  get dataBlocks(): number {
    return this.indexKeys.length;
  }

  /** The caller-defined properties given to SstWriter.finish(). */
  get props(): SstProps {
    return this.properties.props;
  }

  /** Bytes of the filter (0 when there is none). */
  get filterBytes(): number {
    return this.footer.filter.size;
  }

  /** Memory pinned by the reader itself (index + filter), excluding cached data blocks. */
  get memoryBytes(): number {
    let n = this.footer.filter.size + 256;
    for (const k of this.indexKeys) n += k.length + 48;
    return n;
  }

  /**
   * False only when no key with this bloom key was written (no false negatives). Always
   * true for a file written without a filter.
   */
  mayContain(bloomKey: Uint8Array): boolean {
    return this.filter === undefined ? true : this.filter.mayContain(bloomKey);
  }

  /** mayContain(bloomKey(key)) with the reader's bloomKey function. */
  mayContainKey(key: Uint8Array): boolean {
    if (this.filter === undefined) return true;
    return this.filter.mayContain(this.bloomKeyFn === undefined ? key : this.bloomKeyFn(key));
  }

  /** A new two-level iterator over the whole file, unpositioned. */
  iterator(): SstIterator {
    return new SstIterator(this, this.compare, this.indexKeys, this.compareRange);
  }

  /** The handle of data block `i` (0-based, file order). */
  blockHandle(i: number): BlockHandle {
    return { offset: this.blockOffsets[i]!, size: this.blockSizes[i]! };
  }

  /**
   * Data block `i`, from the cache or the file (then cached). Throws STORE_CORRUPTION,
   * STORE_IO or STORE_CLOSED. Used by SstIterator.
   */
  readBlock(i: number): Block {
    const offset = this.blockOffsets[i]!;
    const cache = this.cache;
    if (cache !== undefined) {
      const hit = cache.get(this.cacheId, offset);
      if (hit !== undefined) return hit;
    }
    const handle = { offset, size: this.blockSizes[i]! };
    let block: Block;
    try {
      block = Block.parse(this.readBlockContents(handle, 'block'), `sst ${this.path}: block @${offset}`);
    } catch (err) {
      if (this.onCorruption !== undefined && err instanceof StoreError && err.code === 'STORE_CORRUPTION') this.onCorruption(err);
      throw err;
    }
    cache?.set(this.cacheId, offset, block, block.charge);
    return block;
  }

  /**
   * Charges the block cache for block `i` again, its entry index included (block.ts: built
   * by a seek into a block that keeps being sought). Used by SstIterator.
   */
  rechargeBlock(i: number, block: Block): void {
    this.cache?.set(this.cacheId, this.blockOffsets[i]!, block, block.charge + block.indexBytes);
  }

  /** Drops this file's blocks from the block cache (call when the file is deleted). */
  dropCachedBlocks(): void {
    this.cache?.evictFile(this.cacheId);
  }

  /** Closes the file. Idempotent. Cached blocks stay (see dropCachedBlocks). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.file.close();
  }

  /** Reads a block + trailer, verifies the checksum and decompresses. */
  private readBlockContents(h: BlockHandle, what: string): Uint8Array {
    const where = `sst ${this.path}: ${what} @${h.offset}`;
    const buf = this.read(h.offset, h.size + BLOCK_TRAILER_BYTES, what);
    const n = h.size;
    if (this.verify) {
      const stored = ((buf[n + 1]! << 24) | (buf[n + 2]! << 16) | (buf[n + 3]! << 8) | buf[n + 4]!) >>> 0;
      const computed = maskCrc(crc32c(buf, 0, n + 1));
      if (stored !== computed) {
        throw corruption(`${where}: checksum mismatch: stored 0x${hex32(stored)}, computed 0x${hex32(computed)}`);
      }
    }
    return decompressBlock(buf[n]!, buf.subarray(0, n), where);
  }

  private read(offset: number, length: number, what: string): Uint8Array {
    if (this.closed) throw new StoreError('STORE_CLOSED', `sst ${this.path}: reader is closed`);
    if (offset + length > this.sizeBytes) {
      throw corruption(`sst ${this.path}: ${what} @${offset}: ${length} bytes run past the end of the file (${this.sizeBytes} bytes)`);
    }
    try {
      return this.file.readSync(offset, length);
    } catch (err) {
      if ((err as { code?: string })?.code === 'ESHORT') {
        throw corruption(`sst ${this.path}: ${what} @${offset}: file truncated (${(err as Error).message})`, err);
      }
      throw ioError(`sst ${this.path}: ${what} @${offset}`, err);
    }
  }
}

/** Index of the first block whose index key is >= target (keys.length when none). */
function firstBlockAtOrAfter(keys: readonly Uint8Array[], compare: Comparator, target: Uint8Array): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(keys[mid]!, target) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The two-level iterator over one SST: a binary search over the index's last keys picks a
 * block, a BlockIterator (one object, re-targeted per block) walks it. An error (bad
 * checksum, read failure, closed reader) is sticky: the iterator stays invalid and
 * error() returns it.
 */
export class SstIterator implements InternalIterator {
  private readonly reader: SstReader;
  private readonly compare: Comparator;
  private readonly compareRange: RangeComparator | undefined;
  private readonly indexKeys: readonly Uint8Array[];
  private readonly n: number;
  private blockIdx = -1;
  private data: BlockIterator | undefined;
  private isValid = false;
  private err: Error | undefined;

  /** Use SstReader.iterator(). */
  constructor(reader: SstReader, compare: Comparator, indexKeys: readonly Uint8Array[], compareRange?: RangeComparator) {
    this.reader = reader;
    this.compare = compare;
    this.compareRange = compareRange;
    this.indexKeys = indexKeys;
    this.n = indexKeys.length;
  }

  get valid(): boolean {
    return this.isValid;
  }

  seekToFirst(): void {
    if (!this.load(0)) return;
    this.data!.seekToFirst();
    this.skipForward();
  }

  seekToLast(): void {
    if (!this.load(this.n - 1)) return;
    this.data!.seekToLast();
    this.skipBackward();
  }

  seek(target: Uint8Array): void {
    const i = firstBlockAtOrAfter(this.indexKeys, this.compare, target);
    if (!this.load(i)) return;
    const block = this.data!.currentBlock;
    const indexed = block.index !== undefined;
    this.data!.seek(target);
    if (!indexed && block.index !== undefined) this.reader.rechargeBlock(i, block);
    this.skipForward();
  }

  seekForPrev(target: Uint8Array): void {
    let i = firstBlockAtOrAfter(this.indexKeys, this.compare, target);
    if (i === this.n) i = this.n - 1;
    if (!this.load(i)) return;
    const block = this.data!.currentBlock;
    const indexed = block.index !== undefined;
    this.data!.seekForPrev(target);
    if (!indexed && block.index !== undefined) this.reader.rechargeBlock(i, block);
    this.skipBackward();
  }

  next(): void {
    if (!this.isValid) return;
    this.data!.next();
    this.skipForward();
  }

  prev(): void {
    if (!this.isValid) return;
    this.data!.prev();
    this.skipBackward();
  }

  /** A view of a reused buffer, valid until the next positioning call. */
  key(): Uint8Array {
    return this.data!.key();
  }

  /** A view into an immutable block buffer; may be kept. */
  value(): Uint8Array {
    return this.data!.value();
  }

  error(): Error | undefined {
    return this.err;
  }

  close(): void {
    this.isValid = false;
    this.data = undefined;
    this.blockIdx = -1;
  }


  /** Points `data` at block i (unpositioned); false (iterator invalid) when out of range or on error. */
  private load(i: number): boolean {
    this.isValid = false;
    if (this.err !== undefined || i < 0 || i >= this.n) return false;
    if (i === this.blockIdx && this.data !== undefined) return true;
    let block: Block;
    try {
      block = this.reader.readBlock(i);
    } catch (err) {
      this.err = err instanceof Error ? err : new Error(String(err));
      this.blockIdx = -1;
      return false;
    }
    if (this.data === undefined) this.data = block.iterator(this.compare, this.compareRange);
    else this.data.reset(block);
    this.blockIdx = i;
    return true;
  }

  private skipForward(): void {
    for (;;) {
      const d = this.data!;
      if (d.valid) {
        this.isValid = true;
        return;
      }
      if (this.fromBlockError()) return;
      if (!this.load(this.blockIdx + 1)) return;
      this.data!.seekToFirst();
    }
  }

  private skipBackward(): void {
    for (;;) {
      const d = this.data!;
      if (d.valid) {
        this.isValid = true;
        return;
      }
      if (this.fromBlockError()) return;
      if (!this.load(this.blockIdx - 1)) return;
      this.data!.seekToLast();
    }
  }

  private fromBlockError(): boolean {
    const e = this.data!.error();
    if (e === undefined) return false;
    this.err = e;
    this.isValid = false;
    this.blockIdx = -1;
    return true;
  }
}
