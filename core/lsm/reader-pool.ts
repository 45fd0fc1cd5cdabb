/**
 * Open SST readers of one store, bounded (leveldb's table cache): readers are opened on
 * first use, kept in LRU order, and closed past `maxOpen` once no read is using them.
 * Reads are synchronous, so "in use" only spans a synchronous call (`use`) or an explicit
 * acquire/release pair held by a scan across its batches.
 */
import type { FileSystem, RandomAccessFile } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import type { LruCache } from '../cache/lru-cache.js';
import type { Block } from '../sst/block.js';
import { SstReader } from '../sst/sst-reader.js';
import { ioError } from '../api/errors.js';
import { sstName } from './filenames.js';
import { bloomKey, compare } from './sst-options.js';

interface Entry {
  reader: SstReader;
  file: RandomAccessFile;
  refs: number;
}

export class ReaderPool {
  private readonly fs: FileSystem;
  private readonly dir: string;
  private readonly maxOpen: number;
  private readonly cache: LruCache<Block>;
  private readonly verify: boolean;
  /** Insertion order = LRU order (re-inserted on use). */
  private readonly open = new Map<number, Entry>();
  /** Files being opened (async open of the file handle). */
  private readonly opening = new Map<number, Promise<Entry>>();

  constructor(fs: FileSystem, dir: string, maxOpen: number, cache: LruCache<Block>, verify: boolean) {
    this.fs = fs;
    this.dir = dir;
    this.maxOpen = maxOpen;
    this.cache = cache;
    this.verify = verify;
  }

  /** Opens (or finds) a reader and takes a reference. */
  async acquire(n: number): Promise<SstReader> {
    let e = this.open.get(n);
    if (e === undefined) {
      let p = this.opening.get(n);
      if (p === undefined) {
        p = this.openEntry(n);
        this.opening.set(n, p);
      }
      try {
        e = await p;
      } finally {
        this.opening.delete(n);
      }
      this.open.set(n, e);
    } else {
      this.open.delete(n);
      this.open.set(n, e);
    }
    e.refs++;
    this.trim();
    return e.reader;
  }

  release(n: number): void {
    const e = this.open.get(n);
    if (e === undefined) return;
    e.refs--;
    this.trim();
  }

  /** Runs fn with an open reader. REQUIRES: the reader is open (acquired by someone) —
   * otherwise the file is opened synchronously is not possible, so callers acquire first. */
  use<T>(n: number, fn: (r: SstReader) => T): T | undefined {
    const e = this.open.get(n);
    if (e === undefined) return undefined;
    e.refs++;
    try {
      return fn(e.reader);
    } finally {
      e.refs--;
    }
  }

  private async openEntry(n: number): Promise<Entry> {
    const path = joinPath(this.dir, sstName(n));
    let file: RandomAccessFile;
    try {
      file = await this.fs.openRead(path);
    } catch (err) {
      throw ioError(`sst ${path}: open`, err);
    }
    try {
      const reader = SstReader.open(file, { compare, bloomKey, cache: this.cache, cacheId: n, verifyChecksums: this.verify });
      return { reader, file, refs: 0 };
    } catch (err) {
      await file.close().catch(() => undefined);
      throw err;
    }
  }

  private trim(): void {
    if (this.open.size <= this.maxOpen) return;
    for (const [n, e] of this.open) {
      if (this.open.size <= this.maxOpen) break;
      if (e.refs > 0) continue;
      this.open.delete(n);
      void e.reader.close();
    }
  }

  /** Closes the file's reader (the file is being deleted). */
  evict(n: number): void {
    const e = this.open.get(n);
    if (e === undefined) return;
    this.open.delete(n);
    void e.reader.close();
  }

  get openCount(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((e) => e.reader.close()));
  }
}
