/**
 * Writes one immutable sorted file (SST): data blocks as entries arrive, then the filter,
 * properties and index blocks and the footer (layout in sst-format.ts; core/FORMAT.md "SST").
 *
 *   add() ─► BlockBuilder ─(block full)─► compress ─► pending bytes ─(flushPending)─► file
 *
 * add() is synchronous and allocation-free per entry apart from the caller's bloom-key
 * view: it is the flush/compaction hot path. Completed blocks (with trailers) accumulate in
 * memory until the caller awaits flushPending() (every few MB keeps memory bounded) or
 * finish(). Index entries use each block's last key: a shorter separator would need
 * knowledge of the key format, which this layer deliberately does not have.
 *
 * Invariants: keys strictly increase under `compare` (checked when HORAE_INVARIANTS=1);
 * block offsets are contiguous from 0; bytes reach the file in order. Concurrency: add() may
 * run while a flushPending() is in flight; flushPending()/finish() calls are serialized.
 */
import type { Comparator } from '../iter/internal-iterator.js';
import type { WritableFile } from '../fs/fs.js';
import { ioError } from '../api/errors.js';
import { toHex } from '../api/bytes.js';
import { ByteWriter } from '../util/coding.js';
import { crc32c, maskCrc } from '../util/crc32c.js';
import { murmur3 } from '../util/hash.js';
import { BlockBuilder } from './block-builder.js';
import { BloomBuilder } from './bloom.js';
import { compressBlock } from './compression.js';
import {
  BLOCK_TRAILER_BYTES, BLOOM_HASH_SEED, CompressionType, FOOTER_BYTES, encodeBlockHandle, encodeFooter,
  encodeProperties,
} from './sst-format.js';
import type { BlockHandle, Compression, SstProps } from './sst-format.js';

/** SstWriter options. Defaults suit the engine's internal keys (20-60 bytes). */
export interface SstWriterOptions {
  /** The order keys arrive in (checked only under HORAE_INVARIANTS). */
  readonly compare: Comparator;
  /**
   * The part of a key the bloom filter indexes (for internal keys, the row). May return a
   * view into `key`. Default: the whole key. Ignored when bloomBitsPerKey is 0.
   */
  readonly bloomKey?: (key: Uint8Array) => Uint8Array;
  /**
   * Target uncompressed data block size. Default 16 KiB. Larger blocks compress better and
   * shrink the index; smaller blocks make point reads touch (and cache) fewer bytes.
   */
  readonly blockSizeBytes?: number;
  /** Entries between restart points. Default 16. Smaller = faster seeks, larger blocks. */
  readonly restartInterval?: number;
  /** Per-block compression. Default 'none'. */
  readonly compression?: Compression;
  /** Bloom filter bits per distinct bloom key. Default 10 (~1% false positives); 0 = no filter. */
  readonly bloomBitsPerKey?: number;
}

/** What finish() wrote. */
export interface SstInfo {
  readonly path: string;
  /** Total file size in bytes. */
  readonly sizeBytes: number;
  readonly entries: number;
  readonly dataBlocks: number;
  /** Copies of the first and last keys; empty arrays for a file without entries. */
  readonly smallestKey: Uint8Array;
  readonly largestKey: Uint8Array;
  readonly props: SstProps;
}

const EMPTY = new Uint8Array(0);
const State = { Open: 0, Finishing: 1, Done: 2 } as const;
type State = (typeof State)[keyof typeof State];

/** Builds one SST into a freshly created (empty) WritableFile. */
export class SstWriter {
  private readonly file: WritableFile;
  private readonly compare: Comparator;
  private readonly bloomKey: ((key: Uint8Array) => Uint8Array) | undefined;
  private readonly blockSize: number;
  private readonly compression: Compression;
  private readonly bloomBitsPerKey: number;
  private readonly invariants: boolean;
  private readonly block: BlockBuilder;
  private readonly bloom: BloomBuilder | undefined;
  /** Completed blocks not yet handed to the file; starts at file offset `flushed`. */
  private out: ByteWriter;
  private spare: ByteWriter | undefined;
  private flushed = 0;
  private chain: Promise<void> = Promise.resolve();
  private writeError: unknown;
  private readonly indexKeys: Uint8Array[] = [];
  private readonly indexHandles: BlockHandle[] = [];
  private indexBytes = 0;
  private count = 0;
  private rawKeyBytes = 0;
  private rawValueBytes = 0;
  private smallest: Uint8Array = EMPTY;
  private state: State = State.Open;

  /** REQUIRES: `file` is empty (file.size === 0); the writer owns it until finish/abandon. */
  constructor(file: WritableFile, opts: SstWriterOptions) {
    if (file.size !== 0) throw new RangeError(`SstWriter needs an empty file; ${file.path} has ${file.size} bytes`);
    const blockSize = opts.blockSizeBytes ?? 16 * 1024;
    const bits = opts.bloomBitsPerKey ?? 10;
    const compression = opts.compression ?? 'none';
    if (!Number.isInteger(blockSize) || blockSize < 64) throw new RangeError(`blockSizeBytes must be an integer >= 64, got ${blockSize}`);
    if (!(bits >= 0) || bits > 100) throw new RangeError(`bloomBitsPerKey must be in [0, 100], got ${bits}`);
    if (compression !== 'none' && compression !== 'lz4' && compression !== 'deflate') {
      throw new RangeError(`unknown compression ${JSON.stringify(compression)}`);
    }
    this.file = file;
    this.compare = opts.compare;
    this.bloomKey = opts.bloomKey;
    this.blockSize = blockSize;
    this.compression = compression;
    this.bloomBitsPerKey = bits;
    this.invariants = process.env['HORAE_INVARIANTS'] === '1';
    this.block = new BlockBuilder(opts.restartInterval ?? 16, blockSize + (blockSize >>> 2));
    this.bloom = bits > 0 ? new BloomBuilder(bits) : undefined;
    this.out = new ByteWriter(Math.max(64 * 1024, 2 * blockSize));
  }

  /** The file being written. */
  get path(): string {
    return this.file.path;
  }

  /** Entries added so far. */
  get entries(): number {
    return this.count;
  }

  /** Approximate final file size if finish() were called now. */
  get estimatedSizeBytes(): number {
    return (
      this.flushed + this.out.pos + this.block.sizeEstimate + BLOCK_TRAILER_BYTES + this.indexBytes +
      (this.bloom?.sizeEstimate ?? 0) + 3 * BLOCK_TRAILER_BYTES + 256 + FOOTER_BYTES
    );
  }

  /** Bytes of completed blocks waiting for flushPending() (memory held). */
  get pendingBytes(): number {
    return this.out.pos;
  }

  /**
   * Appends an entry. REQUIRES: `key` sorts strictly after the previous key; finish() not
   * called. Neither buffer is retained. Throws Error('BUG: ...') on an out-of-order key
   * when HORAE_INVARIANTS=1 (otherwise the file would silently be unsearchable).
   */
  add(key: Uint8Array, value: Uint8Array): void {
    if (this.state !== State.Open) throw new Error(`BUG: SstWriter.add after finish (${this.file.path})`);
    if (this.invariants) this.checkOrder(key);
    if (this.bloom !== undefined) {
      const bk = this.bloomKey === undefined ? key : this.bloomKey(key);
      this.bloom.addHash(murmur3(bk, 0, bk.length, BLOOM_HASH_SEED));
    }
    if (this.count === 0) this.smallest = key.slice();
    const block = this.block;
    block.add(key, value);
    this.count++;
    this.rawKeyBytes += key.length;
    this.rawValueBytes += value.length;
    if (block.sizeEstimate >= this.blockSize) this.finishDataBlock();
  }

  /**
   * Writes every completed block to the file. Call it every few MB to bound memory. Safe
   * to call while add() continues; calls are serialized. A write failure is sticky: this
   * and every later flushPending()/finish() rejects with it (a StoreError, STORE_IO or
   * STORE_NO_SPACE).
   */
  flushPending(): Promise<void> {
    const p = this.chain.then(() => this.writeOut());
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Writes the last data block, filter, properties, index and footer, then syncs and closes
   * the file. `props` are stored in the properties block and returned by SstReader.props.
   * After finish (even a failed one) the writer accepts nothing more.
   */
  async finish(props: SstProps = {}): Promise<SstInfo> {
    if (this.state !== State.Open) throw new Error(`BUG: SstWriter.finish called twice (${this.file.path})`);
    for (const [k, v] of Object.entries(props)) {
      if (typeof v !== 'number' && typeof v !== 'string') throw new TypeError(`props.${k} must be a number or string`);
    }
    this.state = State.Finishing;
    try {
      const largest = this.count === 0 ? EMPTY : this.block.entries > 0 ? this.block.lastKeyView().slice() : this.indexKeys[this.indexKeys.length - 1]!;
      if (this.block.entries > 0) this.finishDataBlock();
      const filter = this.bloom === undefined ? { offset: 0, size: 0 } : this.writeBlock(this.bloom.finish(), CompressionType.None);
      const properties = this.writeBlock(
        encodeProperties({
          smallestKey: this.smallest,
          largestKey: largest,
          entries: this.count,
          dataBlocks: this.indexHandles.length,
          rawKeyBytes: this.rawKeyBytes,
          rawValueBytes: this.rawValueBytes,
          compression: this.compression,
          bloomBitsPerKey: this.bloomBitsPerKey,
          props,
        }),
        CompressionType.None,
      );
      const ib = new BlockBuilder(1, this.indexBytes + 64);
      for (let i = 0; i < this.indexKeys.length; i++) ib.add(this.indexKeys[i]!, encodeBlockHandle(this.indexHandles[i]!));
      const index = this.writeBlock(ib.finish(), CompressionType.None);
      this.out.bytes(encodeFooter(filter, properties, index));
      await this.flushPending();
      try {
        await this.file.sync();
        await this.file.close();
      } catch (err) {
        throw ioError(`sst ${this.file.path}: sync`, err);
      }
      this.state = State.Done;
      return {
        path: this.file.path,
        sizeBytes: this.flushed,
        entries: this.count,
        dataBlocks: this.indexHandles.length,
        smallestKey: this.smallest,
        largestKey: largest,
        props: { ...props },
      };
    } catch (err) {
      this.state = State.Done;
      await this.file.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Gives up: closes the file without finishing it (the caller deletes it). Idempotent;
   * safe after a failed finish().
   */
  async abandon(): Promise<void> {
    this.state = State.Done;
    await this.chain;
    await this.file.close().catch(() => undefined);
  }

  private checkOrder(key: Uint8Array): void {
    if (this.count === 0) return;
    const prev = this.block.entries > 0 ? this.block.lastKeyView() : this.indexKeys[this.indexKeys.length - 1]!;
    if (this.compare(prev, key) >= 0) {
      throw new Error(`BUG: SstWriter.add: key ${toHex(key)} does not sort after ${toHex(prev)} (${this.file.path})`);
    }
  }

  private finishDataBlock(): void {
    const block = this.block;
    const lastKey = block.lastKeyView().slice();
    const c = compressBlock(block.finish(), this.compression);
    const handle = this.writeBlock(c.bytes, c.type);
    this.indexKeys.push(lastKey);
    this.indexHandles.push(handle);
    this.indexBytes += lastKey.length + 16;
    block.reset();
  }

  /** Appends block + trailer to the pending bytes; returns its handle. */
  private writeBlock(bytes: Uint8Array, type: CompressionType): BlockHandle {
    const out = this.out;
    const start = out.pos;
    out.bytes(bytes);
    out.u8(type);
    out.u32(maskCrc(crc32c(out.buf, start, out.pos)));
    return { offset: this.flushed + start, size: bytes.length };
  }

  private async writeOut(): Promise<void> {
    if (this.writeError !== undefined) throw this.writeError;
    const full = this.out;
    if (full.pos === 0) return;
    // Swap buffers synchronously so blocks completed during the await get the right offsets.
    const next = this.spare ?? new ByteWriter(full.buf.length);
    this.spare = undefined;
    next.reset();
    this.out = next;
    this.flushed += full.pos;
    try {
      await this.file.append(full.view());
    } catch (err) {
      this.writeError = ioError(`sst ${this.file.path}: append`, err);
      throw this.writeError;
    }
    full.reset();
    this.spare = full;
  }
}
