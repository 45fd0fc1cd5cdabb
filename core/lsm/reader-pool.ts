/**
 * The engine's open SST readers: the TableCache (core/cache/table-cache.ts) with the
 * engine's opener (file path, comparator, bloom key, block cache, checksum setting) and a
 * `use` helper for synchronous reads of a reader some caller already holds.
 */
import type { FileSystem, RandomAccessFile } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import type { LruCache } from '../cache/lru-cache.js';
import { TableCache } from '../cache/table-cache.js';
import type { Block } from '../sst/block.js';
import { SstReader } from '../sst/sst-reader.js';
import { StoreError, ioError } from '../api/errors.js';
import { DamageLog } from './damage-log.js';
import { sstName } from './filenames.js';
import { bloomKey, compare, compareRange } from './sst-options.js';

export class ReaderPool {
  /** Files whose damage a read (opening one, or a data block) met. */
  readonly damage = new DamageLog();
  private readonly cache: TableCache;
  private readonly dir: string;

  constructor(fs: FileSystem, dir: string, maxOpen: number, blocks: LruCache<Block>, verify: boolean) {
    this.dir = dir;
    this.cache = new TableCache({
      maxOpenFiles: maxOpen,
      open: async (n) => {
        const path = joinPath(dir, sstName(n));
        let file: RandomAccessFile;
        try {
          file = await fs.openRead(path);
        } catch (err) {
          throw ioError(`sst ${path}: open`, err);
        }
        try {
          const onCorruption = (err: StoreError): void => this.damage.note(sstName(n), path, err.message);
          return SstReader.open(file, { compare, compareRange, bloomKey, cache: blocks, cacheId: n, verifyChecksums: verify, onCorruption });
        } catch (err) {
          await file.close().catch(() => undefined);
          if (err instanceof StoreError && err.code === 'STORE_CORRUPTION') this.damage.note(sstName(n), path, err.message);
          throw err;
        }
      },
    });
  }

  /**
   * A background job (a compaction on the job runner, which opens its own readers) failed
   * with `err`: when it is damage in an SST of this store, record it.
   */
  noteJobError(err: unknown): void {
    if (!(err instanceof StoreError) || err.code !== 'STORE_CORRUPTION') return;
    const m = /sst (\S*?(\d+)\.sst)\b/.exec(err.message);
    if (m === null) return;
    const n = Number(m[2]);
    this.damage.note(sstName(n), m[1]!, err.message);
  }

  /** Opens (or finds) a reader and pins it until release(n). */
  acquire(n: number): Promise<SstReader> {
    return this.cache.acquire(n);
  }

  /** Takes a reference without waiting when the reader is open already; undefined otherwise. */
  tryAcquire(n: number): SstReader | undefined {
    return this.cache.tryAcquire(n);
  }

  release(n: number): void {
    this.cache.release(n);
  }

  /**
   * Runs fn with the file's reader if it is open (REQUIRES: the caller holds an acquire
   * of it, so it is), else returns undefined.
   */
  use<T>(n: number, fn: (r: SstReader) => T): T | undefined {
    const r = this.cache.tryAcquire(n);
    if (r === undefined) return undefined;
    try {
      return fn(r);
    } finally {
      this.cache.release(n);
    }
  }

  /** The file is being deleted: close its reader (now or at its last release). */
  evict(n: number): void {
    this.cache.evict(n);
  }

  get openCount(): number {
    return this.cache.stats().open;
  }

  close(): Promise<void> {
    return this.cache.close();
  }
}
