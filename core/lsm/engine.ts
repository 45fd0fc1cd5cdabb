/**
 * The embedded LSM engine: one directory, one WAL, one manifest, many tables split into
 * regions (leveldb's db_impl crossed with an HBase region server).
 *
 * Write path: validate, wait if memstores are over budget, take row locks only when a
 * read-modify-write holds one, assign sequence numbers, encode the batch once (it is the
 * WAL record; the memstores copy each entry from it by offset into their slabs), apply to
 * the regions' memstores, append to the WAL (group commit), and resolve once the WAL acknowledged it
 * and the read point (seq-tracker.ts) covers it.
 *
 * Background work: flushes (memstore -> SST) and compactions (SSTs -> SST) run on the job
 * runner (a worker thread with the real file system) and are installed here, in one
 * synchronous step each, followed by a manifest write. Obsolete SSTs are deleted once no
 * manifest and no reader refers to them; WAL files once every region flushed past them.
 *
 * Recovery: read the manifest, delete files it does not know, replay every WAL file,
 * skipping entries a region already flushed, and start a new WAL.
 *
 * Concurrency: single-threaded; state changes happen between awaits. Reads (read-path.ts)
 * pin the files they use.
 */
import type { FamilySpec, RowMutation, TableSpec, WriteOptions } from '../api/store.js';
import { StoreError, ioError } from '../api/errors.js';
import { compareBytes } from '../api/bytes.js';
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import type { FileLock } from '../fs/fs.js';
import { LruCache } from '../cache/lru-cache.js';
import { WalWriter } from '../wal/wal-writer.js';
import { readWal } from '../wal/wal-reader.js';
import { WAL_META_RECORD_SIZE } from '../wal/wal-format.js';
import type { FileMeta } from './file-meta.js';
import { LOCK_NAME, parseName, sstName, walName } from './filenames.js';
import { TRAILER_BYTES, seqOf } from './internal-key.js';
import type { JobRunner } from './job-runner.js';
import { InlineJobRunner, WorkerJobRunner } from './job-runner.js';
import type { CompactionJob, FlushJob } from './jobs.js';
import type { TransformSpec } from './row-transformer.js';
import { rowTransformEntry } from '../api/row-transform.js';
import type { ManifestState, RegionMeta, TableMeta } from './manifest.js';
import { emptyManifest, readManifest, writeManifest } from './manifest.js';
import { Memstore } from './memstore.js';
import type { EngineOptions, ResolvedEngineOptions } from './options.js';
import { DEFAULT_ENGINE_OPTIONS } from './options.js';
import { Region, TableState } from './region.js';
import { RowLocks } from './row-locks.js';
import { SeqTracker } from './seq-tracker.js';
import type { SstSettings } from './sst-options.js';
import { decodeBatchEntries, encodeBatch } from './write-batch.js';
import { pickMinor, tombstoneHeavy, DEFAULT_RATIO } from './compaction-picker.js';
import { ReaderPool } from './reader-pool.js';
import { pickSplitKey, successors } from './split.js';
import { applicable, fileCovered, fileMeets, rangesMeet } from './range-deletes.js';
import type { RangeDelete } from './range-deletes.js';

/** A quiet store rolls its WAL (so the dead one is deleted) once it is at least this big. */
const IDLE_WAL_ROLL_BYTES = 1024 * 1024;

interface WalFileInfo {
  readonly number: number;
  maxSeq: number;
}

export interface EngineCounters {
  flushesDone: number;
  compactionsDone: number;
  majorCompactionsDone: number;
  splitsDone: number;
  /** Flushes of a memstore shared after a split that installed the other child's file (no job). */
  sharedFlushInstalls: number;
  flushesInProgress: number;
  compactionsInProgress: number;
  stalledWriters: number;
  recoveryDroppedBytes: number;
  /** Bytes of a torn record at the end of the newest WAL file at open (a crash mid-append). */
  recoveryTornTailBytes: number;
  /** The WAL replay of the last open: files, bytes and records read, entries applied, ms it took. */
  walReplay: { files: number; bytes: number; records: number; entries: number; ms: number };
  backgroundErrors: number;
  lastBackgroundError: string | undefined;
  /** Times the store ran out of space for its log or manifest and recovered (recoverFromNoSpace). */
  noSpaceRecoveries: number;
  /** Files dropped whole because a range delete covered them. */
  deletedFilesDropped: number;
  /** Files dropped whole because every row in them expired (row transforms' expiredBefore). */
  expiredFilesDropped: number;
}

export class Engine {
  readonly opts: ResolvedEngineOptions;
  readonly fs: FileSystem;
  readonly dir: string;
  readonly clock: () => number;
  readonly tables = new Map<string, TableState>();
  readonly tablesById = new Map<number, TableState>();
  readonly readers: ReaderPool;
  readonly blockCache: LruCache<unknown>;
  readonly locks = new RowLocks();
  readonly counters: EngineCounters = {
    flushesDone: 0, compactionsDone: 0, majorCompactionsDone: 0, splitsDone: 0, sharedFlushInstalls: 0,
    flushesInProgress: 0, compactionsInProgress: 0, stalledWriters: 0,
    recoveryDroppedBytes: 0, recoveryTornTailBytes: 0, walReplay: { files: 0, bytes: 0, records: 0, entries: 0, ms: 0 }, backgroundErrors: 0, lastBackgroundError: undefined,
    noSpaceRecoveries: 0, deletedFilesDropped: 0, expiredFilesDropped: 0,
  };
  seqs!: SeqTracker;
  /** Last sequence number assigned. */
  lastSeq = 0;

  private lock: FileLock | undefined;
  private wal!: WalWriter;
  private walFiles: WalFileInfo[] = [];
  private walRotating: Promise<void> | undefined;
  private runner!: JobRunner;
  private nextFileNumber = 1;
  private nextTableId = 1;
  private nextRegionId = 1;
  /** File metadata of every file some region uses. */
  private readonly files = new Map<number, FileMeta>();
  /** Files no region uses any more, deleted once unpinned and out of the manifest. */
  private readonly obsolete = new Set<number>();
  /** Outputs of running jobs (never deleted as strays). */
  private readonly pendingOutputs = new Set<number>();
  /** Reader pins per file number (0 once unpinned, until the file is deleted). */
  private readonly pins = new Map<number, number>();
  private manifestChain: Promise<void> = Promise.resolve();
  /** The regions of the last manifest written to disk (what recovery would start from). */
  private durableRegions: readonly RegionMeta[] = [];
  private manifestQueued: Promise<void> | undefined;
  private stallWaiters: (() => void)[] = [];
  private fatal: StoreError | undefined;
  /** Set while writes are refused because the log or manifest ran out of space; cleared by recoverFromNoSpace. */
  private noSpace: StoreError | undefined;
  /** Writes whose log append failed for lack of space: visible once recovery has flushed them. */
  private readonly unacked: { last: number; done: boolean }[] = [];
  /** Set at a graceful close once the WAL is synced and closed (see ManifestState.cleanLog). */
  private cleanLog: number | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private maintenanceTimer: ReturnType<typeof setInterval> | undefined;
  private readonly background = new Set<Promise<unknown>>();

  private constructor(opts: ResolvedEngineOptions) {
    this.opts = opts;
    this.fs = opts.fs;
    this.dir = opts.dir;
    this.clock = opts.clock;
    this.blockCache = new LruCache<unknown>(opts.blockCacheBytes);
    this.readers = new ReaderPool(this.fs, this.dir, opts.maxOpenFiles, this.blockCache as LruCache<never>, opts.verifyChecksums);
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
    const { fs, dir } = this;
    const state = (await readManifest(fs, dir)) ?? emptyManifest();
    this.nextFileNumber = state.nextFileNumber;
    this.nextTableId = state.nextTableId;
    this.nextRegionId = state.nextRegionId;
    let lastSeq = state.lastSeq;
    for (const f of state.files) {
      this.files.set(f.number, f);
      if (f.maxSeq > lastSeq) lastSeq = f.maxSeq;
    }
    const now = this.clock();
    for (const t of state.tables) {
      const ts = new TableState(t.id, {
        name: t.name, families: t.families,
        ...(t.splitPoints !== undefined ? { splitPoints: t.splitPoints.map((p) => new Uint8Array(p)) } : {}),
        ...(t.ttlMs !== undefined ? { ttlMs: t.ttlMs } : {}),
      });
      this.tables.set(t.name, ts);
      this.tablesById.set(t.id, ts);
      if (t.rangeDeletes !== undefined) ts.rangeDeletes = t.rangeDeletes.map((d) => ({ ...d, cleared: [...d.cleared] }));
    }
    for (const r of state.regions) {
      const t = this.tablesById.get(r.tableId);
      if (t === undefined) throw new StoreError('STORE_CORRUPTION', `manifest ${dir}: region ${r.id} names unknown table ${r.tableId}`);
      const files = r.files.map((n) => {
        const f = this.files.get(n);
        if (f === undefined) throw new StoreError('STORE_CORRUPTION', `manifest ${dir}: region ${r.id} names unknown file ${n}`);
        return f;
      });
      t.regions.push(new Region(r.id, t, r.start, r.end, files, r.flushedSeq, now));
    }
    for (const t of this.tables.values()) t.regions.sort((a, b) => compareBytes(a.start, b.start));

    // Check the files the manifest names; remove strays (crashed flushes/compactions).
    let names: string[];
    try {
      names = await fs.list(dir);
    } catch (err) {
      throw ioError(`store ${dir}: list`, err);
    }
    const present = new Set(names);
    for (const n of this.files.keys()) {
      if (!present.has(sstName(n))) {
        throw new StoreError('STORE_CORRUPTION', `store ${dir}: file ${sstName(n)} named by the manifest is missing`);
      }
    }
    const wals: number[] = [];
    for (const name of names) {
      const p = parseName(name);
      // NB: a crashed process may have used file numbers the manifest never recorded (a
      // WAL rolled after the last manifest write): never hand those numbers out again.
      if ((p.type === 'sst' || p.type === 'wal') && p.number >= this.nextFileNumber) this.nextFileNumber = p.number + 1;
      if (p.type === 'tmp') await fs.remove(joinPath(dir, name));
      else if (p.type === 'sst' && !this.files.has(p.number)) await fs.remove(joinPath(dir, name));
      else if (p.type === 'wal') wals.push(p.number);
    }
    wals.sort((a, b) => a - b);

    // Replay the WAL.
    const replay = this.counters.walReplay;
    const replayStart = performance.now();
    for (const n of wals) {
      const path = joinPath(dir, walName(n));
      const walSize = await fs.size(path);
      if (walSize <= WAL_META_RECORD_SIZE) {
        // A crash while the log was being created: it cannot hold an acknowledged record
        // (the META record is synced before the first append is accepted).
        await fs.remove(path);
        continue;
      }
      const res = await readWal(fs, path, {
        onCorruption: (info) => {
          this.counters.recoveryDroppedBytes += info.bytes;
          if (this.opts.paranoidChecks) {
            throw new StoreError('STORE_CORRUPTION', `wal ${info.path}: offset ${info.offset}: ${info.reason} (${info.bytes} bytes dropped)`);
          }
        },
      });
      if (res.tornTail && res.tornTailBytes > 0) {
        // Normal at the end of the newest log after a crash (mid-append). Anywhere else (an
        // older log, or a log the last graceful close synced whole) a "torn tail" can only
        // be damage (a flipped length byte) and acknowledged records after it are lost:
        // count it, and refuse to open with paranoidChecks.
        const crashTail = n === wals[wals.length - 1] && state.cleanLog !== n;
        if (!crashTail) {
          this.counters.recoveryDroppedBytes += res.tornTailBytes;
          if (this.opts.paranoidChecks) {
            throw new StoreError('STORE_CORRUPTION', `wal ${path}: offset ${res.records.length > 0 ? 'after the last good record' : 'after the header'}: ${res.tornTailBytes} bytes at the end of a log that was closed whole cannot be read (a damaged record)`);
          }
        } else {
          this.counters.recoveryTornTailBytes += res.tornTailBytes;
        }
      }
      let maxSeq = 0;
      for (const rec of res.records) {
        const b = decodeBatchEntries(rec, `wal ${path}`);
        const t = this.tablesById.get(b.tableId);
        const e = b.entries;
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
          replay.entries++;
        }
      }
      if (maxSeq > lastSeq) lastSeq = maxSeq;
      this.walFiles.push({ number: n, maxSeq });
      replay.files++;
      replay.bytes += walSize;
      replay.records += res.records.length;
    }
    replay.ms = performance.now() - replayStart;
    this.lastSeq = lastSeq;
    this.seqs = new SeqTracker(lastSeq);

    const walNumber = this.nextFileNumber++;
    this.wal = await WalWriter.open(fs, joinPath(dir, walName(walNumber)), walNumber, { bufferedWindowMs: this.opts.bufferedWindowMs });
    this.walFiles.push({ number: walNumber, maxSeq: 0 });
    await this.saveManifest();
    await this.deleteObsoleteWals();

    this.runner = this.opts.backgroundThreads > 0 ? new WorkerJobRunner(this.opts.backgroundThreads) : new InlineJobRunner(fs);
    if (this.opts.maintenanceIntervalMs > 0) {
      this.maintenanceTimer = setInterval(() => this.maintenance(), this.opts.maintenanceIntervalMs);
      this.maintenanceTimer.unref();
    }
    for (const t of this.tables.values()) for (const r of t.regions) this.maybeFlush(r);
  }

  // ---------------------------------------------------------------------------------
  // Tables

  checkOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', `store ${this.dir} is closed`);
  }

  async createTable(spec: TableSpec): Promise<TableState> {
    this.checkOpen();
    const id = this.nextTableId++;
    const families: FamilySpec[] = spec.families.map((f) => ({
      name: f.name,
      ...(f.maxVersions !== undefined ? { maxVersions: f.maxVersions } : {}),
      ...(f.ttlMs !== undefined ? { ttlMs: f.ttlMs } : {}),
      ...(f.transform !== undefined ? { transform: f.transform } : {}),
    }));
    const splits = [...(spec.splitPoints ?? [])].map((s) => s.slice()).sort(compareBytes);
    const t = new TableState(id, {
      name: spec.name, families,
      ...(splits.length > 0 ? { splitPoints: splits } : {}),
      ...(spec.ttlMs !== undefined ? { ttlMs: spec.ttlMs } : {}),
    });
    const bounds = [new Uint8Array(0), ...splits, new Uint8Array(0)];
    const now = this.clock();
    for (let i = 0; i + 1 < bounds.length; i++) {
      t.regions.push(new Region(this.nextRegionId++, t, bounds[i]!, bounds[i + 1]!, [], this.lastSeq, now));
    }
    this.tables.set(spec.name, t);
    this.tablesById.set(id, t);
    await this.saveManifest();
    return t;
  }

  async dropTable(name: string): Promise<void> {
    this.checkOpen();
    const t = this.tables.get(name);
    if (t === undefined) throw new StoreError('STORE_TABLE_NOT_FOUND', `table ${name} does not exist`);
    t.dropped = true;
    this.tables.delete(name);
    this.tablesById.delete(t.id);
    for (const r of t.regions) this.retireRegion(r);
    await this.saveManifest();
  }

  private retireRegion(r: Region): void {
    r.retired = true;
    for (const f of r.files) this.unrefFile(f.number);
  }

  /** Marks a file obsolete when no live region uses it any more. */
  private unrefFile(n: number): void {
    for (const t of this.tables.values()) {
      for (const r of t.regions) {
        if (r.retired) continue;
        for (const f of r.files) if (f.number === n) return;
      }
    }
    this.obsolete.add(n);
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
    const wal = this.wal;
    const walInfo = this.walFiles[this.walFiles.length - 1]!;
    if (batch.lastSeq > walInfo.maxSeq) walInfo.maxSeq = batch.lastSeq;
    const acked = wal.append(payload, (opts?.durability ?? 'sync') === 'sync');
    // The log write and its fsync go first, so the disk works while the memstores fill.
    // NB: nothing awaits between the append and the inserts below: a flush, a log roll or
    // a WAL sweep sees this batch in both or in neither.
    wal.startRound();
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
      if (mem.sizeBytes >= this.opts.memstoreFlushBytes) this.maybeFlush(region);
      r = e;
    }
    if (this.memstoreBytes() > this.opts.memstoreTotalBytes) this.flushLargest();
    if (wal.sizeBytes >= this.opts.walFileBytes) this.rotateWal();
    try {
      await acked;
    } catch (err) {
      this.fail(err, inflight);
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
    if (this.fatal !== undefined) {
      throw new StoreError(this.fatal.code, `store ${this.dir} stopped accepting writes after an earlier failure: ${this.fatal.message}`, { cause: this.fatal });
    }
    if (this.noSpace !== undefined) {
      throw new StoreError('STORE_NO_SPACE', `store ${this.dir} refuses writes until space is freed: ${this.noSpace.message}`, { cause: this.noSpace, retryable: true });
    }
  }

  /**
   * A WAL failure stops writes and flushes: memstores may hold unacknowledged entries.
   * Out of space (the log or the manifest) only pauses writes: see recoverFromNoSpace.
   * `inflight` is the failed write's read-point entry.
   */
  private fail(err: unknown, inflight?: { last: number; done: boolean }): void {
    if (this.fatal === undefined && !this.closed && err instanceof StoreError && err.code === 'STORE_NO_SPACE') {
      if (inflight !== undefined) this.unacked.push(inflight);
      if (this.noSpace === undefined) {
        this.noSpace = err;
        this.track(this.recoverFromNoSpace());
      }
      for (const w of this.stallWaiters.splice(0)) w();
      return;
    }
    if (this.fatal === undefined) {
      this.fatal = err instanceof StoreError ? err : ioError(`store ${this.dir}`, err);
    }
    for (const w of this.stallWaiters.splice(0)) w();
    // Writes the WAL acknowledged after a failed one must not wait forever for the read
    // point to pass it.
    this.seqs.releaseWaiters();
  }

  /**
   * After the log or the manifest ran out of space (RocksDB's auto-recovery from NoSpace):
   * retries, with backoff, until space is back, then (1) moves to a new log if the current
   * one failed — its tail may hold a torn record, and it is never appended to again —,
   * (2) flushes every memstore, which holds everything the old logs hold and the failed
   * writes too, so nothing depends on the failed log any more, (3) records that in the
   * manifest, and (4) makes the failed writes visible (they are now durable; their callers
   * were told the write failed, so they may or may not see them) and accepts writes again.
   * An fsync failure (EIO) is not recovered from: nothing is acknowledged until a reopen.
   */
  private async recoverFromNoSpace(): Promise<void> {
    let delay = 50;
    while (!this.closed && this.fatal === undefined) {
      await sleep(delay);
      delay = Math.min(1000, delay * 2);
      if (this.closed || this.fatal !== undefined) return;
      try {
        if (this.walRotating !== undefined) await this.walRotating;
        if (this.wal.error !== undefined) {
          const number = this.nextFileNumber++;
          const path = joinPath(this.dir, walName(number));
          let next: WalWriter;
          try {
            next = await WalWriter.open(this.fs, path, number, { bufferedWindowMs: this.opts.bufferedWindowMs });
          } catch (err) {
            await this.fs.remove(path).catch(() => undefined);
            throw err;
          }
          const old = this.wal;
          this.wal = next;
          this.walFiles.push({ number, maxSeq: 0 });
          await old.close().catch(() => undefined);
        }
        await this.flushRegions(this.allRegions());
        await this.saveManifest();
        await this.deleteObsoleteWals();
      } catch (err) {
        this.noteBackgroundError(err);
        continue;
      }
      if (this.closed || this.fatal !== undefined) return;
      for (const w of this.unacked.splice(0)) this.seqs.complete(w);
      this.noSpace = undefined;
      this.counters.noSpaceRecoveries++;
      return;
    }
  }

  memstoreBytes(): number {
    let n = 0;
    for (const t of this.tables.values()) for (const r of t.regions) n += r.memstoreBytes();
    return n;
  }

  private stall(): Promise<void> {
    this.counters.stalledWriters++;
    this.flushLargest();
    return new Promise<void>((resolve) => this.stallWaiters.push(resolve)).finally(() => {
      this.counters.stalledWriters--;
    });
  }

  private releaseStalled(): void {
    if (this.stallWaiters.length === 0) return;
    if (this.memstoreBytes() <= this.opts.memstoreStallBytes || this.fatal !== undefined || this.closed) {
      for (const w of this.stallWaiters.splice(0)) w();
    }
  }

  private rotateWal(): void {
    if (this.walRotating !== undefined || this.fatal !== undefined) return;
    const number = this.nextFileNumber++;
    this.walRotating = (async () => {
      try {
        const next = await WalWriter.open(this.fs, joinPath(this.dir, walName(number)), number, { bufferedWindowMs: this.opts.bufferedWindowMs });
        const old = this.wal;
        this.wal = next;
        this.walFiles.push({ number, maxSeq: 0 });
        await old.close();
        if (this.walFiles.length > this.opts.maxWalFiles) this.flushOldest();
        await this.saveManifest();
        await this.deleteObsoleteWals();
      } catch (err) {
        this.noteBackgroundError(err);
      } finally {
        this.walRotating = undefined;
      }
    })();
    this.track(this.walRotating);
  }

  // ---------------------------------------------------------------------------------
  // Flushes

  private allRegions(): Region[] {
    const out: Region[] = [];
    for (const t of this.tables.values()) for (const r of t.regions) out.push(r);
    return out;
  }

  private flushLargest(): void {
    let best: Region | undefined;
    for (const r of this.allRegions()) {
      if (!r.active.empty && (best === undefined || r.active.sizeBytes > best.active.sizeBytes)) best = r;
    }
    if (best !== undefined) this.maybeFlush(best, true);
  }

  /** Flushes the region holding the oldest unflushed entry, so old WAL files can go. */
  private flushOldest(): void {
    let best: Region | undefined;
    for (const r of this.allRegions()) {
      if (r.active.empty) continue;
      if (best === undefined || r.active.minSeq < best.active.minSeq) best = r;
    }
    if (best !== undefined) this.maybeFlush(best, true);
  }

  /** Switches the region's memstore and starts its flush loop when due (or `force`d). */
  maybeFlush(r: Region, force = false): void {
    if (this.fatal !== undefined || r.retired) return;
    if (!r.active.empty && (force || r.active.sizeBytes >= this.opts.memstoreFlushBytes)) {
      r.immutables.push(r.active);
      r.active = new Memstore(this.clock());
    }
    if (r.immutables.length > 0 && !r.flushing && !r.splitting) this.track(this.flushLoop(r));
  }

  private async flushLoop(r: Region): Promise<void> {
    r.flushing = true;
    this.counters.flushesInProgress++;
    try {
      while (r.immutables.length > 0 && this.fatal === undefined && !r.retired) {
        const mem = r.immutables[0]!;
        if (mem.flushedAs === undefined && mem.inFlight !== undefined) {
          // Shared with the other child of a split, which is flushing it: wait for its file
          // rather than write the same one (after a failure, this loop flushes it itself).
          await mem.inFlight.catch(() => undefined);
          continue;
        }
        let meta: FileMeta | undefined;
        let number = -1;
        const flushed = mem.flushedAs;
        // The other holder's file, unless it was compacted away meanwhile (then flush again).
        const shared = flushed !== undefined && this.files.get(flushed.number) === flushed && !this.obsolete.has(flushed.number);
        if (shared) {
          meta = flushed;
          this.counters.sharedFlushInstalls++;
        } else {
          number = this.nextFileNumber++;
          this.pendingOutputs.add(number);
          try {
            meta = await this.runFlushJob(mem, number, r.table);
            r.flushFailures = 0;
          } catch (err) {
            this.pendingOutputs.delete(number);
            this.noteBackgroundError(err);
            r.flushFailures++;
            // Out of space may pass (files get deleted, the disk grows): retry with backoff
            // while the WAL keeps the data. Any other I/O error stops writes (RocksDB's
            // background error): the WAL still holds every acknowledged entry.
            if (!(err instanceof StoreError && err.code === 'STORE_NO_SPACE')) {
              this.fail(err);
              return;
            }
            await sleep(Math.min(5000, 50 * 2 ** r.flushFailures));
            if (this.closed) return;
            continue;
          }
        }
        // Install: one synchronous step.
        if (meta !== undefined) {
          this.files.set(meta.number, meta);
          r.files.unshift(meta);
        }
        r.immutables.shift();
        if (--mem.shares === 0) mem.flushedAs = undefined;
        if (mem.maxSeq > r.flushedSeq) r.flushedSeq = mem.maxSeq;
        if (!shared) this.counters.flushesDone++;
        this.releaseStalled();
        try {
          await this.saveManifest();
        } catch {
          // The flush is installed but not recorded (saveManifest's handler noted the error
          // and paused or stopped writes). Stop here: flushRegions (the no-space recovery,
          // flushAll) sees a region with memstores queued and no loop, and fails; the
          // recovery retries later and restarts this loop.
          return;
        } finally {
          this.pendingOutputs.delete(number);
        }
        await this.deleteObsoleteWals();
        // A region past its split size stops flushing here so the split can start: under
        // steady writes this loop may not drain for a long time, and a split waits for no
        // flush in flight (its memstores, still queued, go to the children).
        if (this.splitDue(r) && !r.splitKeyMissing) break;
        // Under steady writes the loop may not drain for a long time: the files it installs
        // are compacted meanwhile (as RocksDB schedules a compaction after each flush), or
        // a region's file count grows without bound (a compaction runs beside a flush; its
        // install keeps the newer flushed files ahead of its output).
        if (r.immutables.length > 0 && !this.closed) this.maybeCompact(r);
      }
    } finally {
      r.flushing = false;
      this.counters.flushesInProgress--;
      this.releaseStalled();
    }
    if (!r.retired && !this.closed && !this.maybeSplit(r)) {
      this.maybeCompact(r);
      // Memstores still queued (the loop stopped for a split that did not start): go on.
      this.maybeFlush(r);
    }
  }

  /**
   * Runs the flush job of `mem`. While other regions hold it too (the children of a split),
   * they wait for it (`inFlight`) and then install its file (`flushedAs`), set before they
   * resume, rather than flush the same entries again.
   */
  private async runFlushJob(mem: Memstore, number: number, t: TableState): Promise<FileMeta | undefined> {
    const job = this.runner.run(this.flushJob(mem, number, t));
    if (mem.shares > 1) mem.inFlight = job;
    try {
      const meta = await job;
      if (meta !== undefined) this.files.set(meta.number, meta);
      if (mem.shares > 1) mem.flushedAs = meta;
      return meta;
    } finally {
      mem.inFlight = undefined;
    }
  }

  private sstSettings(): SstSettings {
    const o = this.opts;
    return { blockSizeBytes: o.blockSizeBytes, restartInterval: o.restartInterval, compression: o.compression, bloomBitsPerKey: o.bloomBitsPerKey };
  }

  /**
   * The flush job of an immutable memstore: its slabs as they are (shared memory) and an
   * index of its entries in key order; nothing is copied on this thread.
   */
  private flushJob(mem: Memstore, number: number, t: TableState): FlushJob {
    const { slabs, index } = mem.flushInput();
    const specs = this.transformSpecs(t);
    const dels = t.rangeDeletes.length === 0 ? [] : applicable(t.rangeDeletes, this.seqs.oldestSnapshot(), new Uint8Array(0), new Uint8Array(0));
    return {
      kind: 'flush', dir: this.dir, fileNumber: number, slabs, index, count: index.length / 4, sst: this.sstSettings(),
      ...(dels.length === 0 ? {} : { rangeDeletes: dels.map((d) => ({ start: d.start, end: d.end, seq: d.seq })) }),
      ...(specs === undefined ? {} : {
        transforms: { specs, keepSeq: this.seqs.oldestSnapshot(), nowMs: this.clock(), families: [...t.families.entries()] },
      }),
    };
  }

  /**
   * The registered row transforms of the table's families (core/api/row-transform.ts), read
   * when a job is planned; undefined when none is registered (cells are written as they are).
   */
  private transformSpecs(t: TableState): TransformSpec[] | undefined {
    let specs: TransformSpec[] | undefined;
    for (const f of t.spec.families) {
      if (f.transform === undefined) continue;
      const e = rowTransformEntry(f.transform);
      if (e === undefined) continue;
      (specs ??= []).push({ family: f.name, name: f.transform, module: e.module, exportName: e.exportName, options: e.options?.(), rowTime: specs.length === 0 });
    }
    return specs;
  }

  /**
   * The row time below which every row of the table has expired: defined when every
   * family has a registered transform that says so (the smallest of their answers).
   */
  private expiredBefore(t: TableState): number | undefined {
    let cutoff: number | undefined;
    const now = this.clock();
    for (const f of t.spec.families) {
      const e = f.transform === undefined ? undefined : rowTransformEntry(f.transform);
      const c = e?.expiredBefore?.(now);
      if (c === undefined) return undefined;
      cutoff = cutoff === undefined ? c : Math.min(cutoff, c);
    }
    return cutoff;
  }

  /** Drops the region's files whose rows have all expired (whole files, nothing rewritten). */
  private dropExpiredFiles(r: Region): void {
    if (r.compacting || r.splitting || r.retired) return;
    const cutoff = this.expiredBefore(r.table);
    if (cutoff === undefined) return;
    const expired = r.files.filter((f) => f.maxRowTime !== undefined && f.maxRowTime < cutoff);
    if (expired.length === 0) return;
    r.files = r.files.filter((f) => !expired.includes(f));
    for (const f of expired) this.unrefFile(f.number);
    this.counters.expiredFilesDropped += expired.length;
    this.track(this.saveManifest());
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
      await this.saveManifest();
    } catch (err) {
      t.rangeDeletes = t.rangeDeletes.filter((x) => x !== d);
      throw err;
    } finally {
      // Reads at or after seq apply it (only while it is listed: a failed save removed it).
      this.seqs.complete(w);
    }
    let dropped = false;
    for (const r of t.regions) if (rangesMeet(r.start, r.end, start, end) && this.dropDeletedFiles(r)) dropped = true;
    if (this.pruneRangeDeletes(t) || dropped) await this.saveManifest();
  }

  /**
   * Drops the region's files that a tombstone older than every held snapshot covers whole;
   * true when it dropped one (the caller saves the manifest).
   */
  private dropDeletedFiles(r: Region): boolean {
    const dels = r.table.rangeDeletes;
    if (dels.length === 0 || r.compacting || r.splitting || r.retired) return false;
    const visible = applicable(dels, this.seqs.oldestSnapshot(), r.start, r.end);
    if (visible.length === 0) return false;
    const gone = r.files.filter((f) => visible.some((d) => fileCovered(f, d)));
    if (gone.length === 0) return false;
    r.files = r.files.filter((f) => !gone.includes(f));
    for (const f of gone) this.unrefFile(f.number);
    this.counters.deletedFilesDropped += gone.length;
    return true;
  }

  /**
   * Removes the tombstones no region can hold an entry of any more (range-deletes.ts);
   * true when one was removed (the caller saves the manifest).
   */
  private pruneRangeDeletes(t: TableState): boolean {
    const before = t.rangeDeletes.length;
    // A region with nothing in its memstores holds every entry in files (a crash replays
    // only entries past its flushedSeq, which would be in its memstores).
    const unflushed = (r: Region, d: RangeDelete): boolean =>
      r.flushedSeq < d.seq && (!r.active.empty || r.immutables.length > 0 || r.flushing);
    t.rangeDeletes = t.rangeDeletes.filter((d) => t.regions.some((r) => rangesMeet(r.start, r.end, d.start, d.end) &&
      !d.cleared.includes(r.id) && (unflushed(r, d) || r.files.some((f) => fileMeets(f, d) && f.minSeq <= d.seq))));
    return t.rangeDeletes.length < before;
  }

  /** Flushes every region of a table (or all) and waits for the files to be installed. */
  async flushAll(t?: TableState): Promise<void> {
    this.checkOpen();
    await this.flushRegions(t === undefined ? this.allRegions() : t.regions.slice());
    await this.rollIdleWal();
  }

  /**
   * When every memstore is empty, the current WAL holds nothing recovery needs: start a
   * new one so the old one is deleted (otherwise a quiet store keeps up to walFileBytes
   * of dead log on disk). Memstores holding only a little (under IDLE_WAL_ROLL_BYTES, e.g.
   * a rarely written table) are flushed first, so they do not pin a big log. Skipped for
   * logs under IDLE_WAL_ROLL_BYTES, so idle stores do not churn files.
   */
  private async rollIdleWal(): Promise<void> {
    // Older logs still on disk are pinned by some memstore: worth freeing even when the
    // current log is small.
    if (this.closed || this.fatal !== undefined || (this.walFiles.length <= 1 && this.wal.sizeBytes < IDLE_WAL_ROLL_BYTES)) return;
    const busy = this.allRegions().filter((r) => !r.active.empty || r.immutables.length > 0 || r.flushing);
    let pending = 0;
    for (const r of busy) pending += r.active.sizeBytes + r.immutables.reduce((n, m) => n + m.sizeBytes, 0);
    if (pending >= IDLE_WAL_ROLL_BYTES) return;
    if (busy.length > 0) await this.flushRegions(busy);
    const idle = this.allRegions().every((r) => r.active.empty && r.immutables.length === 0 && !r.flushing);
    if (!idle || this.closed) return;
    if (this.wal.sizeBytes < IDLE_WAL_ROLL_BYTES) {
      await this.deleteObsoleteWals();
      return;
    }
    this.rotateWal();
    await this.walRotating;
  }

  private async flushRegions(regions: Region[]): Promise<void> {
    for (const r of regions) this.maybeFlush(r, true);
    const failures = new Map<Region, number>();
    const failed = (r: Region): boolean => {
      const before = failures.get(r);
      if (before === undefined) failures.set(r, r.flushFailures);
      return before !== undefined && r.flushFailures > before;
    };
    for (;;) {
      // A region split meanwhile handed its queued memstores to its children: wait for them.
      regions = successors(regions);
      const busy = regions.filter((r) => r.flushing || r.splitting || r.immutables.length > 0);
      if (busy.length === 0) break;
      if (this.fatal !== undefined) throw this.fatal;
      // A flush failed (its loop retries it later), or a loop stopped with memstores still
      // queued (the manifest recording its last flush could not be written). Either way,
      // waiting here would not end.
      if (regions.some(failed) || busy.some((r) => !r.flushing && !r.splitting)) {
        throw new StoreError('STORE_NO_SPACE', `store ${this.dir}: flush failed: ${this.counters.lastBackgroundError ?? 'unknown error'}`, { retryable: true });
      }
      await sleep(2);
    }
  }

  // ---------------------------------------------------------------------------------
  // Compactions

  maybeCompact(r: Region, major = false): boolean {
    if (r.compacting || r.retired || this.fatal !== undefined || this.closed) return false;
    this.dropExpiredFiles(r);
    if (this.dropDeletedFiles(r)) this.track(this.saveManifest());
    const files = r.files;
    let from = 0;
    let to = files.length;
    const now = this.clock();
    const ttl = [...r.table.families.values()].some((f) => f.ttlMs !== undefined);
    if (!major) {
      const dueByTime = this.opts.majorCompactionIntervalMs > 0 && now - r.lastMajorCompactionMs >= this.opts.majorCompactionIntervalMs &&
        (files.length > 1 || (files.length === 1 && (files[0]!.deletions > 0 || ttl)));
      if (dueByTime || (files.length > 1 && tombstoneHeavy(files, this.opts.tombstoneCompactionRatio))) {
        major = true;
      } else {
        const pick = pickMinor(files, { minFiles: this.opts.compactionMinFiles, maxFiles: this.opts.compactionMaxFiles, ratio: DEFAULT_RATIO });
        if (pick === undefined) return false;
        from = pick.from;
        to = pick.to;
      }
    }
    if (files.length === 0) return false;
    const inputs = files.slice(from, to);
    if (inputs.length === 0) return false;
    // NB: a compaction of every file of the region may drop markers: nothing older exists.
    this.track(this.compact(r, inputs, major || inputs.length === files.length));
    return true;
  }

  private async compact(r: Region, inputs: FileMeta[], major: boolean): Promise<void> {
    const files0 = r.files.length;
    r.compacting = true;
    this.counters.compactionsInProgress++;
    const number = this.nextFileNumber++;
    this.pendingOutputs.add(number);
    for (const f of inputs) this.pin(f.number);
    try {
      const job: CompactionJob = {
        kind: 'compact', dir: this.dir, inputs: inputs.map((f) => f.number), outputNumber: number,
        start: r.start, end: r.end, major, keepSeq: this.seqs.oldestSnapshot(), nowMs: this.clock(),
        families: [...r.table.families.entries()], sst: this.sstSettings(),
      };
      // Tombstones older than every held snapshot: their entries go (range-deletes.ts).
      const keepSeq = job.keepSeq;
      const dels = applicable(r.table.rangeDeletes, keepSeq, r.start, r.end).map((d) => ({ start: d.start, end: d.end, seq: d.seq }));
      // Every entry at or below this is in the region's files now (all of them, when its
      // memstores are empty: entries written later are newer than every tombstone in dels).
      const flushedAtStart = r.active.empty && r.immutables.length === 0 && !r.flushing ? this.lastSeq : r.flushedSeq;
      if (dels.length > 0) Object.assign(job, { rangeDeletes: dels });
      const transforms = this.transformSpecs(r.table);
      if (transforms !== undefined) Object.assign(job, { transforms });
      let meta: FileMeta | undefined;
      try {
        meta = await this.runner.run(job);
      } catch (err) {
        this.noteBackgroundError(err);
        return;
      }
      if (r.retired) {
        // The region split or its table was dropped meanwhile: discard the output.
        if (meta !== undefined) this.obsolete.add(meta.number);
        return;
      }
      // Install: replace the inputs (still contiguous, newer flushes may precede them).
      const inputSet = new Set(inputs.map((f) => f.number));
      const at = r.files.findIndex((f) => inputSet.has(f.number));
      const kept = r.files.filter((f) => !inputSet.has(f.number));
      if (meta !== undefined) {
        this.files.set(meta.number, meta);
        kept.splice(at < 0 ? kept.length : at, 0, meta);
      }
      r.files = kept;
      r.splitKeyMissing = false;
      for (const f of inputs) this.unrefFile(f.number);
      if (major) {
        r.lastMajorCompactionMs = this.clock();
        this.counters.majorCompactionsDone++;
        // Every file was rewritten without the entries of these tombstones, and every
        // older entry was in a file: the region holds none of them any more.
        if (inputs.length === files0 && dels.length > 0) {
          for (const d of r.table.rangeDeletes) if (d.seq <= flushedAtStart && dels.some((x) => x.seq === d.seq)) d.cleared.push(r.id);
        }
        this.pruneRangeDeletes(r.table);
      }
      this.counters.compactionsDone++;
      await this.saveManifest();
    } finally {
      this.pendingOutputs.delete(number);
      for (const f of inputs) this.unpin(f.number);
      r.compacting = false;
      this.counters.compactionsInProgress--;
    }
    if (!r.retired && !this.closed) {
      if (!this.maybeSplit(r)) this.maybeCompact(r);
    }
  }

  /** Compacts every region of a table (or all), waiting for the result. */
  async compactAll(t: TableState | undefined, major: boolean): Promise<void> {
    this.checkOpen();
    await this.flushAll(t);
    const regions = () => (t === undefined ? this.allRegions() : t.regions.slice());
    for (const r of regions()) {
      while (r.compacting) await sleep(2);
      if (major ? r.files.length > 0 : r.files.length > 1) {
        if (major) this.maybeCompact(r, true);
        else this.track(this.compact(r, r.files.slice(), false));
      }
    }
    for (;;) {
      if (!regions().some((r) => r.compacting)) break;
      await sleep(2);
    }
  }

  // ---------------------------------------------------------------------------------
  // Splits

  regionSizeBytes(r: Region): number {
    let n = r.memstoreBytes();
    for (const f of r.files) n += f.sizeBytes / this.fileShare(f.number);
    return n;
  }

  /** How many live regions use the file. */
  private fileShare(n: number): number {
    let c = 0;
    for (const t of this.tables.values()) for (const r of t.regions) if (!r.retired && r.files.some((f) => f.number === n)) c++;
    return Math.max(1, c);
  }

  /** Whether the region is past its split size (and may split). */
  private splitDue(r: Region): boolean {
    return this.opts.autoSplit && !r.retired && !this.closed && this.fatal === undefined && r.files.length > 0 &&
      this.regionSizeBytes(r) >= this.opts.regionSplitBytes;
  }

  /**
   * Splits the region in two when it is past the split size and no flush is in flight.
   * Until the split key is read (the largest file opened), no new flush starts; a
   * compaction in flight runs on, and the split discards its output (HBase aborts it).
   * Under steady writes a flush loop stops for a split (see flushLoop): before, a split
   * waited for an idle region, and a region written without pause never split.
   */
  private maybeSplit(r: Region): boolean {
    if (r.flushing || r.splitting || !this.splitDue(r)) return false;
    let largest = r.files[0]!;
    for (const f of r.files) if (f.sizeBytes > largest.sizeBytes) largest = f;
    const n = largest.number;
    r.splitting = true;
    this.pin(n);
    this.track(
      this.readers.acquire(n).then(() => {
        try {
          if (r.retired || this.closed || this.fatal !== undefined) return;
          const key = pickSplitKey(this.readers, r);
          if (key !== undefined) this.splitAt(r, key);
          else r.splitKeyMissing = true;
        } finally {
          this.readers.release(n);
        }
      }).finally(() => {
        this.unpin(n);
        r.splitting = false;
        if (r.retired) return;
        // No split: the memstores queued meanwhile flush, and compactions go on.
        this.maybeFlush(r);
        if (!this.closed) this.maybeCompact(r);
      }),
    );
    return true;
  }

  /** Replaces r by [start, key) and [key, end). Synchronous, then the manifest is saved. */
  private splitAt(r: Region, key: Uint8Array): void {
    const t = r.table;
    const now = this.clock();
    const left = new Region(this.nextRegionId++, t, r.start, key, r.files.slice(), r.flushedSeq, now);
    const right = new Region(this.nextRegionId++, t, key, r.end, r.files.slice(), r.flushedSeq, now);
    // The children share the parent's memstores, queued (oldest first, then the active one,
    // which takes no more writes): each reads its own range of them, and the first to flush
    // one installs the file in the other too (flushLoop). Nothing is copied here, on the
    // writers' thread (dividing them cost ~100 ms per full 32 MiB memstore).
    const queued = r.active.empty ? r.immutables.slice() : [...r.immutables, r.active];
    for (const m of queued) m.shares++; // the parent's share passes to two children
    left.immutables = queued.slice();
    right.immutables = queued;
    const i = t.regions.indexOf(r);
    t.regions.splice(i, 1, left, right);
    r.retired = true;
    this.counters.splitsDone++;
    this.maybeFlush(left);
    this.maybeFlush(right);
    this.track(
      this.saveManifest().then(() => {
        // Rewrite the shared files into each child's own.
        this.maybeCompact(left, true);
        this.maybeCompact(right, true);
      }),
    );
  }

  // ---------------------------------------------------------------------------------
  // Manifest and file lifecycle

  private snapshotManifest(): ManifestState {
    const tables: TableMeta[] = [];
    const regions: RegionMeta[] = [];
    const used = new Set<number>();
    for (const t of this.tables.values()) {
      tables.push({
        id: t.id, name: t.name, families: t.spec.families,
        ...(t.spec.splitPoints !== undefined ? { splitPoints: t.spec.splitPoints } : {}),
        ...(t.spec.ttlMs !== undefined ? { ttlMs: t.spec.ttlMs } : {}),
        ...(t.rangeDeletes.length > 0 ? { rangeDeletes: t.rangeDeletes.map((d) => ({ ...d, cleared: [...d.cleared] })) } : {}),
      });
      for (const r of t.regions) {
        regions.push({ id: r.id, tableId: t.id, start: r.start, end: r.end, flushedSeq: r.flushedSeq, files: r.files.map((f) => f.number) });
        for (const f of r.files) used.add(f.number);
      }
    }
    const files = [...used].map((n) => this.files.get(n)!);
    return {
      nextFileNumber: this.nextFileNumber, nextTableId: this.nextTableId, nextRegionId: this.nextRegionId,
      lastSeq: this.lastSeq, tables, regions, files,
      ...(this.cleanLog !== undefined ? { cleanLog: this.cleanLog } : {}),
    };
  }

  /**
   * Writes the current state. Calls made while a write is queued share it; a call returns
   * after a write that started after the call finished. Then deletes obsolete files.
   */
  saveManifest(): Promise<void> {
    if (this.manifestQueued !== undefined) return this.manifestQueued;
    const p = this.manifestChain.then(async () => {
      this.manifestQueued = undefined;
      const state = this.snapshotManifest();
      await writeManifest(this.fs, this.dir, state);
      this.durableRegions = state.regions;
      await this.deleteObsoleteFiles(state);
    });
    this.manifestQueued = p;
    this.manifestChain = p.catch((err: unknown) => {
      // The manifest on disk is still the previous one (atomic rename) and the WAL still
      // holds everything not in its files, but the state in memory can no longer be
      // recorded: stop writes until the store is reopened.
      this.noteBackgroundError(err);
      this.fail(err);
    });
    return p;
  }

  pin(n: number): void {
    this.pins.set(n, (this.pins.get(n) ?? 0) + 1);
  }

  unpin(n: number): void {
    // A count that reaches 0 stays (every read pins and unpins its files: deleting and
    // re-adding the entry each time churns the map); deleteObsoleteFiles drops it.
    const c = (this.pins.get(n) ?? 0) - 1;
    this.pins.set(n, Math.max(0, c));
    if (c <= 0 && this.obsolete.has(n)) this.track(this.saveManifest());
  }

  private async deleteObsoleteFiles(written: ManifestState): Promise<void> {
    const live = new Set(written.files.map((f) => f.number));
    for (const n of [...this.obsolete]) {
      if (live.has(n) || (this.pins.get(n) ?? 0) > 0 || this.pendingOutputs.has(n)) continue;
      this.obsolete.delete(n);
      this.pins.delete(n);
      this.files.delete(n);
      this.readers.evict(n);
      this.blockCache.evictFile(n);
      await this.fs.remove(joinPath(this.dir, sstName(n))).catch((err: unknown) => this.noteBackgroundError(err));
    }
  }

  /**
   * Deletes WAL files recovery would not need. NB: judged against the last manifest on
   * disk, not the state in memory: a flush installed in memory but not yet recorded by a
   * finished manifest write still needs its WAL (a crash now would recover from the older
   * manifest, which does not know the new file).
   *
   * NB: the logs to delete are chosen, and taken off the list, in one synchronous step
   * before the first unlink is awaited. A roll during those awaits pushes a new current
   * log with no entry yet (maxSeq 0); a sweep that went on judging the live list against
   * the log current when it began unlinked that new log, and every write acknowledged
   * into it was lost in a crash (test/embedded/wal-delete-race.test.ts).
   */
  private async deleteObsoleteWals(closing = false): Promise<void> {
    const live = new Map<number, Region>();
    for (const r of this.allRegions()) live.set(r.id, r);
    let minNeeded = Infinity;
    for (const d of this.durableRegions) {
      const r = live.get(d.id);
      const idle = r !== undefined && r.flushedSeq === d.flushedSeq && r.active.empty && r.immutables.length === 0;
      if (!idle && d.flushedSeq + 1 < minNeeded) minNeeded = d.flushedSeq + 1;
    }
    // At a graceful close the current log is closed too: when everything is flushed (and
    // recorded by the manifest just written) it holds nothing recovery needs.
    const current = closing ? -1 : this.wal.logNumber;
    const keep: WalFileInfo[] = [];
    const obsolete: WalFileInfo[] = [];
    for (const w of this.walFiles) (w.number !== current && w.maxSeq < minNeeded ? obsolete : keep).push(w);
    if (obsolete.length === 0) return;
    this.walFiles = keep;
    for (const w of obsolete) {
      await this.fs.remove(joinPath(this.dir, walName(w.number))).catch((err: unknown) => this.noteBackgroundError(err));
    }
  }

  walBytes(): number {
    return this.wal.sizeBytes;
  }

  fileCount(): number {
    return this.files.size;
  }

  fileBytes(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.sizeBytes;
    return n;
  }

  // ---------------------------------------------------------------------------------
  // Background bookkeeping

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.noteBackgroundError(err));
    this.background.add(q);
    void q.finally(() => this.background.delete(q));
  }

  private noteBackgroundError(err: unknown): void {
    this.readers.noteJobError(err);
    this.counters.backgroundErrors++;
    this.counters.lastBackgroundError = err instanceof Error ? err.message : String(err);
  }

  /** Periodic: flush aged memstores, start due compactions. */
  private maintenance(): void {
    if (this.closed || this.fatal !== undefined) return;
    const now = this.clock();
    for (const r of this.allRegions()) {
      if (!r.active.empty && (now - r.active.createdAtMs >= this.opts.memstoreMaxAgeMs || this.idleLongEnough(r.active, now))) this.maybeFlush(r, true);
      else if (!r.flushing && !r.compacting) this.maybeCompact(r, this.idleCompactionDue(r, now));
    }
    for (const t of this.tables.values()) if (t.rangeDeletes.length > 0 && this.pruneRangeDeletes(t)) this.track(this.saveManifest());
    this.track(this.rollIdleWal());
  }

  /**
   * A region left alone (nothing in memory, no write for `memstoreIdleFlushMs`) with more
   * than one file: merge them all once, so a store left alone after a load reaches its
   * compact state (one file per region; a row transform folds each row's cells into one)
   * instead of keeping the few files under compactionMinFiles that its last flushes left.
   */
  private idleCompactionDue(r: Region, now: number): boolean {
    return r.files.length > 1 && r.active.empty && r.immutables.length === 0 && this.idleLongEnough(r.active, now);
  }

  /** A memstore that took no write for `memstoreIdleFlushMs` (0: never). */
  private idleLongEnough(m: Memstore, now: number): boolean {
    const idle = this.opts.memstoreIdleFlushMs;
    return idle > 0 && now - m.lastWriteMs >= idle;
  }

  /** Waits until no flush, compaction or manifest write is running (tests, close). */
  async idle(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  async close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    // Every public call from now on rejects with STORE_CLOSED; background work drains.
    this.closed = true;
    this.closing = (async () => {
      if (this.maintenanceTimer !== undefined) clearInterval(this.maintenanceTimer);
      if (this.opts.flushOnClose && this.fatal === undefined) {
        await this.flushRegions(this.allRegions()).catch((err: unknown) => this.noteBackgroundError(err));
      }
      this.releaseStalled();
      await this.idle();
      if (this.walRotating !== undefined) await this.walRotating;
      let walClosed = true;
      await this.wal.close().catch((err: unknown) => {
        walClosed = false;
        this.noteBackgroundError(err);
      });
      await this.manifestChain;
      if (walClosed && this.fatal === undefined) {
        this.cleanLog = this.wal.logNumber;
        await this.saveManifest().catch((err: unknown) => this.noteBackgroundError(err));
        await this.manifestChain;
        // Everything flushed: the closed log is dead weight on disk.
        if (this.fatal === undefined) await this.deleteObsoleteWals(true);
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

  /** Why writes are refused: a failure that needs a reopen, or out of space (recovers by itself). */
  get failure(): StoreError | undefined {
    return this.fatal ?? this.noSpace;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}
