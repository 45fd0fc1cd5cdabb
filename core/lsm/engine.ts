/**
 * The embedded LSM engine: one directory, one WAL, one manifest, many tables split into
 * regions (leveldb's db_impl crossed with an HBase region server). It opens and recovers
 * the store, takes writes, and wires its parts:
 *
 * - version-set.ts: live tables, regions and files, manifest edits, obsolete-file cleanup;
 * - wal-manager.ts: the WAL's segments, roll, replay, deletion of dead segments;
 * - scheduler.ts: when flushes, compactions and splits run, the periodic maintenance pass
 *   (region-jobs.ts runs them);
 * - background.ts: background work in flight, its errors, the counters;
 * - error-handler.ts: what a failed log, manifest or flush does to writes, and the
 *   recovery from running out of space;
 * - read-path.ts reads through it (gets, scans).
 *
 * Write path: validate, wait if memstores are over budget, take row locks only when a
 * read-modify-write holds one, assign sequence numbers, encode the batch once (it is the
 * WAL record; the memstores copy each entry from it by offset into their slabs), apply to
 * the regions' memstores, append to the WAL (group commit), and resolve once the WAL
 * acknowledged it and the read point (seq-tracker.ts) covers it.
 *
 * Recovery: read the manifest, delete files it does not know, replay every WAL file,
 * skipping entries a region already flushed, and start a new WAL.
 *
 * Concurrency: single-threaded; state changes happen between awaits. Reads (read-path.ts)
 * pin the files they use.
 */
import type { RowMutation, TableSpec, WriteOptions } from '../api/store.js';
import { StoreError, ioError } from '../api/errors.js';
import { compareBytes } from '../api/bytes.js';
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import type { FileLock } from '../fs/fs.js';
import { LruCache } from '../cache/lru-cache.js';
import { Background } from './background.js';
import { ErrorHandler } from './error-handler.js';
import type { EngineCounters } from './background.js';
import { LOCK_NAME, parseName, sstName } from './filenames.js';
import { TRAILER_BYTES, seqOf } from './internal-key.js';
import { InlineJobRunner, WorkerJobRunner } from './job-runner.js';
import type { JobRunner } from './job-runner.js';
import { emptyManifest, readManifest } from './manifest.js';
import type { EngineOptions, ResolvedEngineOptions } from './options.js';
import { DEFAULT_ENGINE_OPTIONS } from './options.js';
import type { RangeDelete } from './range-deletes.js';
import { rangesMeet } from './range-deletes.js';
import { ReaderPool } from './reader-pool.js';
import type { TableState } from './region.js';
import { RowLocks } from './row-locks.js';
import { Scheduler } from './scheduler.js';
import { SeqTracker } from './seq-tracker.js';
import { VersionSet } from './version-set.js';
import { WalManager } from './wal-manager.js';
import { decodeBatchEntries, encodeBatch } from './write-batch.js';

export type { EngineCounters } from './background.js';

export class Engine {
  readonly opts: ResolvedEngineOptions;
  readonly fs: FileSystem;
  readonly dir: string;
  readonly clock: () => number;
  readonly readers: ReaderPool;
  readonly blockCache: LruCache<unknown>;
  readonly locks = new RowLocks();
  readonly background: Background;
  readonly versions: VersionSet;
  readonly wal: WalManager;
  readonly scheduler: Scheduler;
  readonly errors: ErrorHandler;
  seqs!: SeqTracker;
  /** Last sequence number assigned. */
  lastSeq = 0;

  private lock: FileLock | undefined;
  private runner!: JobRunner;
  private stallWaiters: (() => void)[] = [];
  private closed = false;
  private closing: Promise<void> | undefined;

  private constructor(opts: ResolvedEngineOptions) {
    this.opts = opts;
    this.fs = opts.fs;
    this.dir = opts.dir;
    this.clock = opts.clock;
    this.blockCache = new LruCache<unknown>(opts.blockCacheBytes);
    this.readers = new ReaderPool(this.fs, this.dir, opts.maxOpenFiles, this.blockCache as LruCache<never>, opts.verifyChecksums);
    const { fs, dir } = this;
    const background = (this.background = new Background(this.readers));
    const versions = (this.versions = new VersionSet({
      fs, dir, readers: this.readers, blockCache: this.blockCache, background,
      lastSeq: () => this.lastSeq,
      onManifestError: (err) => this.errors.fail(err),
    }));
    const wal = (this.wal = new WalManager({
      fs, dir, opts, versions, background,
      flushOldest: () => this.scheduler.flushOldest(),
      failed: () => this.errors.stopped !== undefined,
    }));
    const scheduler = (this.scheduler = new Scheduler({ opts, dir, clock: this.clock, versions, wal, readers: this.readers, background, host: this }));
    this.errors = new ErrorHandler({
      dir, background, versions, wal, scheduler,
      seqs: () => this.seqs,
      isClosed: () => this.closed,
      wakeStalled: () => {
        for (const w of this.stallWaiters.splice(0)) w();
      },
    });
  }

  static async open(options: EngineOptions, defaultFs: () => Promise<FileSystem>): Promise<Engine> {
    const fs = options.fs ?? (await defaultFs());
    const stall = options.memstoreStallBytes ?? 2 * (options.memstoreTotalBytes ?? DEFAULT_ENGINE_OPTIONS.memstoreTotalBytes);
    const resolved: ResolvedEngineOptions = {
      ...DEFAULT_ENGINE_OPTIONS,
      backgroundThreads: options.fs === undefined ? 1 : 0,
      memstoreStallBytes: stall,
      ...stripUndefined(options),
      fs,
      clock: options.clock ?? Date.now,
    } as ResolvedEngineOptions;
    const e = new Engine(resolved);
    await e.recover();
    return e;
  }

  get counters(): EngineCounters {
    return this.background.counters;
  }

  get tables(): ReadonlyMap<string, TableState> {
    return this.versions.tables;
  }

  // ---------------------------------------------------------------------------------
  // Open and recovery

  private async recover(): Promise<void> {
    const { fs, dir } = this;
    try {
      await fs.mkdir(dir);
    } catch (err) {
      throw ioError(`store ${dir}: create directory`, err);
    }
    try {
      this.lock = await fs.lock(joinPath(dir, LOCK_NAME));
    } catch (err) {
      throw new StoreError('STORE_UNAVAILABLE', `store ${dir} is locked by another process: ${(err as Error).message}`, { cause: err });
    }
    try {
      await this.recoverLocked();
    } catch (err) {
      await this.lock.release().catch(() => undefined);
      throw err;
    }
  }

  private async recoverLocked(): Promise<void> {
    const { fs, dir, versions } = this;
    const state = (await readManifest(fs, dir)) ?? emptyManifest();
    let lastSeq = versions.load(state, this.clock());

    // Check the files the manifest names; remove strays (crashed flushes/compactions).
    let names: string[];
    try {
      names = await fs.list(dir);
    } catch (err) {
      throw ioError(`store ${dir}: list`, err);
    }
    const present = new Set(names);
    for (const n of versions.liveFileNumbers()) {
      if (!present.has(sstName(n))) {
        throw new StoreError('STORE_CORRUPTION', `store ${dir}: file ${sstName(n)} named by the manifest is missing`);
      }
    }
    const wals: number[] = [];
    for (const name of names) {
      const p = parseName(name);
      // NB: a crashed process may have used file numbers the manifest never recorded (a
      // WAL rolled after the last manifest write): never hand those numbers out again.
      if (p.type === 'sst' || p.type === 'wal') versions.noteFileNumber(p.number);
      if (p.type === 'tmp') await fs.remove(joinPath(dir, name));
      else if (p.type === 'sst' && !versions.isLiveFile(p.number)) await fs.remove(joinPath(dir, name));
      else if (p.type === 'wal') wals.push(p.number);
    }
    wals.sort((a, b) => a - b);

    const replayed = await this.wal.replay(wals, state.cleanLog, (rec, path) => this.replayRecord(rec, path));
    if (replayed > lastSeq) lastSeq = replayed;
    this.lastSeq = lastSeq;
    this.seqs = new SeqTracker(lastSeq);

    await this.wal.start();
    await versions.saveManifest();
    await this.wal.deleteObsolete();

    this.runner = this.opts.backgroundThreads > 0 ? new WorkerJobRunner(this.opts.backgroundThreads) : new InlineJobRunner(fs);
    this.scheduler.start(this.runner);
  }

  /** Applies one WAL record at recovery (entries a region already flushed are skipped); returns its largest seq. */
  private replayRecord(rec: Uint8Array, path: string): number {
    const b = decodeBatchEntries(rec, `wal ${path}`);
    const t = this.versions.tablesById.get(b.tableId);
    const e = b.entries;
    let maxSeq = 0;
    for (let i = 0; i < b.count; i++) {
      const j = 4 * i;
      const ko = e[j]!;
      const kl = e[j + 1]!;
      if (kl < TRAILER_BYTES + 3 || 3 + ((rec[ko]! << 8) | rec[ko + 1]!) > kl - TRAILER_BYTES) {
        throw new StoreError('STORE_CORRUPTION', `wal ${path}: batch entry ${i} of table ${b.tableId} is not an internal key (${kl} bytes)`);
      }
      const seq = seqOf(rec.subarray(ko + kl - TRAILER_BYTES, ko + kl));
      if (seq > maxSeq) maxSeq = seq;
      if (t === undefined || t.dropped) continue;
      const region = t.regionFor(rec.subarray(ko + 2, ko + 2 + ((rec[ko]! << 8) | rec[ko + 1]!)));
      if (seq <= region.flushedSeq) continue;
      region.active.addFrom(rec, ko, kl, e[j + 2]!, e[j + 3]!);
      this.counters.walReplay.entries++;
    }
    return maxSeq;
  }

  // ---------------------------------------------------------------------------------
  // Tables

  checkOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', `store ${this.dir} is closed`);
  }

  async createTable(spec: TableSpec): Promise<TableState> {
    this.checkOpen();
    const t = this.versions.addTable(spec, this.lastSeq, this.clock());
    await this.versions.saveManifest();
    return t;
  }

  async dropTable(name: string): Promise<void> {
    this.checkOpen();
    const t = this.versions.tables.get(name);
    if (t === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${name} does not exist`);
    this.versions.removeTable(t);
    await this.versions.saveManifest();
  }

  // ---------------------------------------------------------------------------------
  // Writes

  /**
   * REQUIRES: rows validated. Resolves when applied, acknowledged and visible; rejects when
   * the store failed before this write or an earlier one was acknowledged.
   */
  async write(t: TableState, rows: readonly RowMutation[], opts: WriteOptions | undefined, lockedRow?: Uint8Array): Promise<void> {
    this.checkWritable();
    if (rows.length === 0) return;
    if (this.memstoreBytes() > this.opts.memstoreStallBytes) await this.stall();
    if (this.locks.size > 0) {
      const keys = lockedRow === undefined ? rows.map((r) => r.key) : rows.map((r) => r.key).filter((k) => compareBytes(k, lockedRow) !== 0);
      await this.locks.waitUnlocked(t.id, keys);
    }
    this.checkWritable();
    if (t.dropped) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${t.name} was dropped`);
    const now = this.clock();
    // Rows grouped by region: each region's entries then lie back to back in the batch
    // and go into its memstore as one run, copied in one piece (Memstore.addRun).
    const { rows: ordered, regionIndex } = t.groupByRegion(rows);
    const batch = encodeBatch(t.id, ordered, this.lastSeq + 1, now);
    if (batch.count === 0) return;
    this.lastSeq = batch.lastSeq;
    const { payload, entries, rowStart } = batch;
    const inflight = this.seqs.begin(batch.lastSeq);
    // The log write and its fsync go first, so the disk works while the memstores fill.
    // NB: nothing awaits between the append and the inserts below: a flush, a log roll or
    // a WAL sweep sees this batch in both or in neither.
    const acked = this.wal.append(payload, (opts?.durability ?? 'sync') === 'sync', batch.lastSeq);
    // Each region's rows, one run of entries (regions stay put: nothing awaited since grouping).
    const n = ordered.length;
    for (let r = 0; r < n;) {
      const ri = regionIndex[r]!;
      let e = r + 1;
      while (e < n && regionIndex[e] === ri) e++;
      const region = t.regions[ri]!;
      const from = rowStart[r]!;
      const to = e < n ? rowStart[e]! : batch.count;
      const mem = region.active;
      if (to > from) mem.addRun(payload, entries, from, to);
      mem.lastWriteMs = now;
      region.counters.cellsWritten += to - from;
      region.counters.writeRequests += e - r;
      if (mem.sizeBytes >= this.opts.memstoreFlushBytes) this.scheduler.maybeFlush(region);
      r = e;
    }
    if (this.memstoreBytes() > this.opts.memstoreTotalBytes) this.scheduler.flushLargest();
    this.wal.rollIfFull();
    try {
      await acked;
    } catch (err) {
      this.errors.fail(err, inflight);
      throw err;
    }
    this.seqs.complete(inflight);
    await this.seqs.waitVisible(batch.lastSeq);
    if (this.seqs.visibleSeq < batch.lastSeq) {
      // The store failed before an earlier write was acknowledged (this one may have gone
      // to a newer log): it will not become visible, and whether it survives is unknown.
      this.checkWritable();
      throw new StoreError('STORE_IO', `store ${this.dir}: a write failed before this one was acknowledged`);
    }
  }

  private checkWritable(): void {
    this.checkOpen();
    this.errors.checkWritable();
  }

  /** A failure (the scheduler's flushes): see ErrorHandler.fail. */
  fail(err: unknown): void {
    this.errors.fail(err);
  }

  memstoreBytes(): number {
    let n = 0;
    for (const t of this.versions.tables.values()) for (const r of t.regions) n += r.memstoreBytes();
    return n;
  }

  private stall(): Promise<void> {
    this.counters.stalledWriters++;
    this.scheduler.flushLargest();
    return new Promise<void>((resolve) => this.stallWaiters.push(resolve)).finally(() => {
      this.counters.stalledWriters--;
    });
  }

  releaseStalled(): void {
    if (this.stallWaiters.length === 0) return;
    if (this.memstoreBytes() <= this.opts.memstoreStallBytes || this.errors.stopped !== undefined || this.closed) {
      for (const w of this.stallWaiters.splice(0)) w();
    }
  }

  /**
   * Table.deleteRange: one range tombstone over rows [start, end) (range-deletes.ts), in
   * force once the manifest holding it is durable; then the files it covers whole are
   * dropped. The rest of its entries go at compaction.
   */
  async deleteRange(t: TableState, start: Uint8Array, end: Uint8Array): Promise<void> {
    this.checkWritable();
    if (t.dropped) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${t.name} was dropped`);
    const seq = ++this.lastSeq;
    const d: RangeDelete = { start: start.slice(), end: end.slice(), seq, cleared: [] };
    const w = this.seqs.begin(seq);
    t.rangeDeletes.push(d);
    try {
      await this.versions.saveManifest();
    } catch (err) {
      t.rangeDeletes = t.rangeDeletes.filter((x) => x !== d);
      throw err;
    } finally {
      // Reads at or after seq apply it (only while it is listed: a failed save removed it).
      this.seqs.complete(w);
    }
    let dropped = false;
    for (const r of t.regions) if (rangesMeet(r.start, r.end, start, end) && this.scheduler.dropDeletedFiles(r)) dropped = true;
    if (this.scheduler.pruneRangeDeletes(t) || dropped) await this.versions.saveManifest();
  }

  /** Flushes every region of a table (or all) and waits for the files to be installed. */
  async flushAll(t?: TableState): Promise<void> {
    this.checkOpen();
    await this.scheduler.flushAll(t);
  }

  /** Compacts every region of a table (or all), waiting for the result. */
  async compactAll(t: TableState | undefined, major: boolean): Promise<void> {
    this.checkOpen();
    await this.scheduler.compactAll(t, major);
  }

  walBytes(): number {
    return this.wal.sizeBytes;
  }

  /** Waits until no flush, compaction or manifest write is running (tests, close). */
  idle(): Promise<void> {
    return this.background.idle();
  }

  async close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    // Every public call from now on rejects with STORE_CLOSED; background work drains.
    this.closed = true;
    this.closing = (async () => {
      const { versions, background } = this;
      this.scheduler.stop();
      if (this.opts.flushOnClose && this.errors.stopped === undefined) {
        await this.scheduler.flushRegions(versions.allRegions()).catch((err: unknown) => background.noteError(err));
      }
      this.releaseStalled();
      await this.idle();
      await this.wal.rolled();
      let cleanLog: number | undefined;
      await this.wal.close().then((n) => (cleanLog = n), (err: unknown) => background.noteError(err));
      await versions.settled();
      if (cleanLog !== undefined && this.errors.stopped === undefined) {
        versions.cleanLog = cleanLog;
        await versions.saveManifest().catch((err: unknown) => background.noteError(err));
        await versions.settled();
        // Everything flushed: the closed log is dead weight on disk.
        if (this.errors.stopped === undefined) await this.wal.deleteObsolete(true);
      }
      await this.runner.close();
      await this.readers.close();
      await this.lock?.release().catch(() => undefined);
    })();
    return this.closing;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes stopped until a reopen (a WAL, manifest or flush failure), or undefined. */
  get stopped(): StoreError | undefined {
    return this.errors.stopped;
  }

  /** Why writes are refused: a failure that needs a reopen, or out of space (recovers by itself). */
  get failure(): StoreError | undefined {
    return this.errors.failure;
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}
