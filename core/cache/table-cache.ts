/**
 * A bounded set of open SstReaders keyed by file number (leveldb db/table_cache.cc), so
 * reads do not reopen files and the process stays under its file-descriptor budget.
 *
 * Lifecycle of an entry: acquire() opens the file through the caller's opener (once, even
 * when several acquires race) and pins it; release() unpins it; an unpinned reader sits in
 * an idle LRU and is closed when more than `maxOpenFiles` readers are open. A pinned reader
 * is never closed: the cache may exceed maxOpenFiles while more files than that are in use,
 * and shrinks back as they are released. evict() (the file was deleted) drops the reader's
 * cached blocks and closes it now or, if pinned, at its last release; until then acquiring
 * that file number again is refused, so release(fileNumber) is never ambiguous.
 *
 * Invariants: every acquire that resolved is matched by exactly one release(fileNumber);
 * `refs` counts them. Single-threaded; acquire is async only because opening a file is.
 */
import { StoreError } from '../api/errors.js';
import type { SstReader } from '../sst/sst-reader.js';

/**
 * Opens the SST with this file number (e.g. fs.openRead + SstReader.open). The returned
 * reader is owned by the cache, which closes it with reader.close().
 */
export type TableOpener = (fileNumber: number) => SstReader | Promise<SstReader>;

/** TableCache options. */
export interface TableCacheOptions {
  readonly open: TableOpener;
  /**
   * Readers kept open, pinned or idle. Default 500. More means fewer reopen costs (footer,
   * index and filter reads) and more file descriptors and pinned index/filter memory.
   */
  readonly maxOpenFiles?: number;
}

/** Counters from TableCache.stats(). */
export interface TableCacheStats {
  /** Readers open or opening. */
  readonly open: number;
  /** Readers with at least one outstanding acquire. */
  readonly inUse: number;
  readonly hits: number;
  readonly misses: number;
  /** Reader close() calls that failed (the error is otherwise dropped: a read-only close). */
  readonly closeErrors: number;
}

interface Entry {
  readonly fileNumber: number;
  reader: SstReader | undefined;
  opening: Promise<SstReader> | undefined;
  refs: number;
  /** Close at the last release (evicted or cache closed). */
  closeOnRelease: boolean;
  /** evict()ed: the file is being deleted; its blocks are dropped from the block cache. */
  deleted: boolean;
}

/** Caches open SstReaders by file number. */
export class TableCache {
  readonly maxOpenFiles: number;
  private readonly opener: TableOpener;
  private readonly entries = new Map<number, Entry>();
  /** Unpinned, open entries not closing at release; Map order is least recently released first. */
  private readonly idle = new Map<number, Entry>();
  private readonly closing = new Set<Promise<void>>();
  private hits = 0;
  private misses = 0;
  private closeErrors = 0;
  private closed = false;

  constructor(opts: TableCacheOptions) {
    const max = opts.maxOpenFiles ?? 500;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxOpenFiles must be an integer >= 1, got ${max}`);
    this.maxOpenFiles = max;
    this.opener = opts.open;
  }

  /**
   * The reader for `fileNumber`, opened if needed, pinned until release(fileNumber).
   * Rejects with the opener's error (then no release is due), with STORE_CLOSED after
   * close(), or with STORE_INVALID_ARGUMENT for a file evicted while still in use.
   */
  async acquire(fileNumber: number): Promise<SstReader> {
    const hit = this.tryAcquire(fileNumber);
    if (hit !== undefined) return hit;
    let e = this.entries.get(fileNumber);
    if (e === undefined) {
      this.misses++;
      e = { fileNumber, reader: undefined, opening: undefined, refs: 0, closeOnRelease: false, deleted: false };
      const entry = e;
      this.entries.set(fileNumber, entry);
      entry.opening = (async () => this.opener(fileNumber))().then(
        (reader) => {
          entry.reader = reader;
          entry.opening = undefined;
          if (entry.refs === 0) this.unpinned(entry);
          else this.trim();
          return reader;
        },
        (err: unknown) => {
          entry.opening = undefined;
          if (this.entries.get(fileNumber) === entry) this.entries.delete(fileNumber);
          entry.refs = 0;
          throw err;
        },
      );
    } else {
      if (e.deleted) throw evictedInUse(fileNumber);
      this.hits++; // another acquire is opening it
    }
    e.refs++;
    return e.opening!;
  }

  /**
   * The reader when it is already open (pinned like acquire), else undefined without
   * opening anything: a synchronous fast path for point reads.
   */
  tryAcquire(fileNumber: number): SstReader | undefined {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'table cache is closed');
    const e = this.entries.get(fileNumber);
    if (e === undefined || e.reader === undefined) return undefined;
    if (e.deleted) throw evictedInUse(fileNumber);
    this.hits++;
    e.refs++;
    this.idle.delete(fileNumber);
    return e.reader;
  }

  /** Unpins one acquire of `fileNumber`. Throws Error('BUG: ...') when nothing is pinned. */
  release(fileNumber: number): void {
    const e = this.entries.get(fileNumber);
    if (e === undefined || e.refs === 0) throw new Error(`BUG: TableCache.release(${fileNumber}) without acquire`);
    e.refs--;
    if (e.refs === 0 && e.reader !== undefined) this.unpinned(e);
  }

  /**
   * Forgets `fileNumber` because the file is being deleted: drops its cached blocks and
   * closes its reader now, or at its last release when pinned. No-op when not open.
   */
  evict(fileNumber: number): void {
    const e = this.entries.get(fileNumber);
    if (e === undefined) return;
    e.deleted = true;
    e.closeOnRelease = true;
    e.reader?.dropCachedBlocks();
    if (e.refs === 0 && e.reader !== undefined) this.closeEntry(e);
    // An entry still opening is dropped when its open settles (refs > 0 then).
  }

  /**
   * Closes every idle reader and refuses further acquires; pinned readers close at their
   * release. Resolves when the closes started so far have finished.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const e of [...this.idle.values()]) this.closeEntry(e);
    for (const e of this.entries.values()) e.closeOnRelease = true;
    await Promise.all([...this.closing]);
  }

  stats(): TableCacheStats {
    let inUse = 0;
    for (const e of this.entries.values()) if (e.refs > 0) inUse++;
    return { open: this.entries.size, inUse, hits: this.hits, misses: this.misses, closeErrors: this.closeErrors };
  }

  /** An open entry just lost its last pin. */
  private unpinned(e: Entry): void {
    if (e.closeOnRelease) {
      if (e.deleted) e.reader?.dropCachedBlocks(); // blocks read since evict()
      this.closeEntry(e);
      return;
    }
    this.idle.delete(e.fileNumber);
    this.idle.set(e.fileNumber, e);
    this.trim();
  }

  private trim(): void {
    while (this.entries.size > this.maxOpenFiles && this.idle.size > 0) {
      const oldest = this.idle.values().next().value as Entry;
      this.closeEntry(oldest);
    }
  }

  private closeEntry(e: Entry): void {
    e.closeOnRelease = true;
    this.idle.delete(e.fileNumber);
    if (this.entries.get(e.fileNumber) === e) this.entries.delete(e.fileNumber);
    const reader = e.reader;
    e.reader = undefined;
    if (reader === undefined) return;
    const p = reader.close().catch(() => {
      this.closeErrors++;
    });
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
  }
}

function evictedInUse(fileNumber: number): StoreError {
  return new StoreError('STORE_INVALID_ARGUMENT', `table cache: file ${fileNumber} was evicted (deleted) but is still in use`);
}
