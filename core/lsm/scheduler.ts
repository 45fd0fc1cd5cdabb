/**
 * The maintenance scheduler (Pebble's compaction picker and leveldb's background work):
 * decides when a region's memstore flushes, when its files compact, when it splits, when
 * expired or deleted files are dropped whole and when the WAL of a quiet store rolls, and
 * starts those jobs (region-jobs.ts runs and installs them, on the job runner: a worker
 * thread with the real file system).
 *
 * Owns: what runs for each region (RegionJobs), the hand-off of memstores shared by the
 * children of a split (SharedFlush), the periodic maintenance pass.
 *
 * Triggers: the write path (a memstore full, all memstores over budget, a stalled
 * writer), a WAL with too many segments, the periodic pass (aged and idle memstores,
 * compactions due, an idle store's WAL), and each job's end (a flush loop or compaction
 * considers a split, then a compaction).
 */
import { StoreError } from '../api/errors.js';
import { sleep } from './background.js';
import { DEFAULT_RATIO, pickMinor, tombstoneHeavy } from './compaction-picker.js';
import type { JobRunner } from './job-runner.js';
import { expiredBefore } from './job-plans.js';
import { Memstore } from './memstore.js';
import { applicable, fileCovered } from './range-deletes.js';
import type { Region, TableState } from './region.js';
import { compact, flushLoop, splitAt } from './region-jobs.js';
import type { JobContext, RegionJobs, SchedulerDeps, SharedFlush } from './region-jobs.js';
import { pickSplitKey, successors } from './split.js';
import { TransformMigration } from './transform-migration.js';
import type { TransformBacklog } from './transform-migration.js';

/** A quiet store rolls its WAL (so the dead one is deleted) once it is at least this big. */
const IDLE_WAL_ROLL_BYTES = 1024 * 1024;
/** Under memory pressure, flushes are started until those queued bring the memstores under this share of the bound. */
const PRESSURE_LOW_MARK = 0.9;
/** While flushes are under way, an active memstore under this share of the bound is not flushed for pressure. */
const PRESSURE_MIN_SHARE = 1 / 64;

export class Scheduler {
  private readonly d: SchedulerDeps;
  private readonly regionJobs = new WeakMap<Region, RegionJobs>();
  private readonly shared = new WeakMap<Memstore, SharedFlush>();
  private runner!: JobRunner;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** What the jobs of region-jobs.ts see of the scheduler. */
  private readonly ctx: JobContext;
  /** Rewrites files written before their table's transforms (transform-migration.ts). */
  private readonly migration: TransformMigration;

  constructor(deps: SchedulerDeps) {
    this.d = deps;
    const self = this;
    this.ctx = {
      ...deps,
      get runner() {
        return self.runner;
      },
      shared: this.shared,
      jobsOf: (r) => this.jobsOf(r),
      maybeFlush: (r, force) => this.maybeFlush(r, force),
      maybeCompact: (r, major) => this.maybeCompact(r, major),
      maybeSplit: (r) => this.maybeSplit(r),
      splitDue: (r) => this.splitDue(r),
      pruneRangeDeletes: (t) => this.pruneRangeDeletes(t),
    };
    this.migration = new TransformMigration({
      bytesPerSec: deps.opts.transformMigrationBytesPerSec, versions: deps.versions, background: deps.background,
      halted: () => this.halted, jobsOf: (r) => this.jobsOf(r), compact: (r, inputs, major) => compact(this.ctx, r, inputs, major),
    });
  }

  /** What runs for region r. */
  jobsOf(r: Region): RegionJobs {
    let j = this.regionJobs.get(r);
    if (j === undefined) {
      j = { flushing: false, compacting: false, splitting: false, splitKeyMissing: false, flushFailures: 0, lastMajorCompactionMs: r.createdAtMs };
      this.regionJobs.set(r, j);
    }
    return j;
  }

  /** After recovery: jobs run on `runner`; the periodic pass starts; memstores replayed full flush. */
  start(runner: JobRunner): void {
    this.runner = runner;
    if (this.d.opts.maintenanceIntervalMs > 0) {
      this.timer = setInterval(() => this.maintenance(), this.d.opts.maintenanceIntervalMs);
      this.timer.unref();
    }
    for (const r of this.d.versions.allRegions()) this.maybeFlush(r);
    this.migrateTransforms();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.migration.stop();
  }

  /** Goes on rewriting files written before their table's transforms (transform-migration.ts). */
  migrateTransforms(): void {
    this.migration.step();
  }

  /** Files still to be rewritten through their table's transforms. */
  transformBacklog(): TransformBacklog {
    return this.migration.backlog();
  }

  private get halted(): boolean {
    return this.d.host.isClosed || this.d.host.stopped !== undefined;
  }

  // ---------------------------------------------------------------------------------
  // The periodic pass

  /** Periodic: flush aged and idle memstores, start due compactions, roll an idle WAL. */
  private maintenance(): void {
    if (this.halted) return;
    const now = this.d.clock();
    for (const r of this.d.versions.allRegions()) {
      const j = this.jobsOf(r);
      if (!r.active.empty && (now - r.active.createdAtMs >= this.d.opts.memstoreMaxAgeMs || this.idleLongEnough(r.active, now))) this.maybeFlush(r, true);
      else if (!j.flushing && !j.compacting) this.maybeCompact(r, this.idleCompactionDue(r, now));
    }
    for (const t of this.d.versions.tables.values()) if (t.rangeDeletes.length > 0 && this.pruneRangeDeletes(t)) this.d.background.track(this.d.versions.saveManifest());
    this.migrateTransforms();
    this.d.background.track(this.rollIdleWal(true));
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
    const idle = this.d.opts.memstoreIdleFlushMs;
    return idle > 0 && now - m.lastWriteMs >= idle;
  }

  /**
   * When every memstore is empty, the current WAL holds nothing recovery needs: start a
   * new one so the old one is deleted (otherwise a quiet store keeps up to walFileBytes
   * of dead log on disk). Memstores holding only a little (under IDLE_WAL_ROLL_BYTES, e.g.
   * a rarely written table) are flushed first, so they do not pin a big log. A log under
   * IDLE_WAL_ROLL_BYTES is rolled only by the periodic pass (`quiet`), once the idle
   * flushes emptied every memstore, and only when it holds an entry: so a store left
   * alone keeps no dead log, and an idle store does not churn files.
   */
  private async rollIdleWal(quiet = false): Promise<void> {
    const { wal } = this.d;
    // Older logs still on disk are pinned by some memstore: worth freeing even when the
    // current log is small.
    const small = wal.segmentCount <= 1 && wal.sizeBytes < IDLE_WAL_ROLL_BYTES;
    if (this.halted || (small && !(quiet && wal.currentHoldsEntries))) return;
    const busy = this.d.versions.allRegions().filter((r) => !r.active.empty || r.immutables.length > 0 || this.jobsOf(r).flushing);
    if (small && busy.length > 0) return;
    let pending = 0;
    for (const r of busy) pending += r.active.sizeBytes + r.immutables.reduce((n, m) => n + m.sizeBytes, 0);
    if (pending >= IDLE_WAL_ROLL_BYTES) return;
    if (busy.length > 0) await this.flushRegions(busy);
    const idle = this.d.versions.allRegions().every((r) => r.active.empty && r.immutables.length === 0 && !this.jobsOf(r).flushing);
    if (!idle || this.d.host.isClosed) return;
    if (!small && wal.sizeBytes < IDLE_WAL_ROLL_BYTES) {
      await wal.deleteObsolete();
      return;
    }
    await wal.roll();
  }

  // ---------------------------------------------------------------------------------
  // Flushes

  /**
   * Memory pressure (all memstores past memstoreTotalBytes): flushes the largest active
   * memstore, unless the memstores already queued for flush cover the excess over the low
   * mark (PRESSURE_LOW_MARK of the bound), or nothing large enough to relieve anything is
   * left while flushes are under way: a write under pressure must not switch out a
   * memstore of a few cells (each such flush wrote a one-cell file, thousands of them,
   * and every read then walked them all: the 1 M-series cliff). Writers past the stall
   * bound wait for the queued flushes instead.
   */
  flushLargest(): void {
    let best: Region | undefined;
    let total = 0;
    let queued = 0;
    for (const r of this.d.versions.allRegions()) {
      const bytes = r.memstoreBytes();
      total += bytes;
      queued += bytes - r.active.sizeBytes;
      if (!r.active.empty && (best === undefined || r.active.sizeBytes > best.active.sizeBytes)) best = r;
    }
    if (best === undefined) return;
    const bound = this.d.opts.memstoreTotalBytes;
    if (queued > 0 && (queued >= total - bound * PRESSURE_LOW_MARK || best.active.sizeBytes < bound * PRESSURE_MIN_SHARE)) return;
    this.maybeFlush(best, true);
  }

  /** Flushes the region holding the oldest unflushed entry, so old WAL files can go. */
  flushOldest(): void {
    let best: Region | undefined;
    for (const r of this.d.versions.allRegions()) {
      if (r.active.empty) continue;
      if (best === undefined || r.active.minSeq < best.active.minSeq) best = r;
    }
    if (best !== undefined) this.maybeFlush(best, true);
  }

  /** Switches the region's memstore and starts its flush loop when due (or `force`d). */
  maybeFlush(r: Region, force = false): void {
    if (this.d.host.stopped !== undefined || r.retired) return;
    if (!r.active.empty && (force || r.active.sizeBytes >= this.d.opts.memstoreFlushBytes)) {
      r.immutables.push(r.active);
      r.active = new Memstore(this.d.clock());
    }
    const j = this.jobsOf(r);
    if (r.immutables.length > 0 && !j.flushing && !j.splitting) this.d.background.track(flushLoop(this.ctx, r));
  }

  async flushRegions(regions: Region[]): Promise<void> {
    for (const r of regions) this.maybeFlush(r, true);
    const failures = new Map<Region, number>();
    const failed = (r: Region): boolean => {
      const before = failures.get(r);
      const now = this.jobsOf(r).flushFailures;
      if (before === undefined) failures.set(r, now);
      return before !== undefined && now > before;
    };
    for (;;) {
      // A region split meanwhile handed its queued memstores to its children: wait for them.
      regions = successors(regions);
      const busy = regions.filter((r) => this.jobsOf(r).flushing || this.jobsOf(r).splitting || r.immutables.length > 0);
      if (busy.length === 0) break;
      if (this.d.host.stopped !== undefined) throw this.d.host.stopped;
      // A flush failed (its loop retries it later), or a loop stopped with memstores still
      // queued (the manifest recording its last flush could not be written). Either way,
      // waiting here would not end.
      if (regions.some(failed) || busy.some((r) => !this.jobsOf(r).flushing && !this.jobsOf(r).splitting)) {
        throw new StoreError('STORE_NO_SPACE', `store ${this.d.dir}: flush failed: ${this.d.background.counters.lastBackgroundError ?? 'unknown error'}`, { retryable: true });
      }
      await sleep(2);
    }
  }

  /** Flushes every region of a table (or all) and waits for the files to be installed. */
  async flushAll(t?: TableState): Promise<void> {
    await this.flushRegions(t === undefined ? this.d.versions.allRegions() : t.regions.slice());
    await this.rollIdleWal();
  }

  // ---------------------------------------------------------------------------------
  // Compactions

  maybeCompact(r: Region, major = false): boolean {
    const j = this.jobsOf(r);
    if (j.compacting || r.retired || this.halted) return false;
    this.dropExpiredFiles(r);
    if (this.dropDeletedFiles(r)) this.d.background.track(this.d.versions.saveManifest());
    const { opts } = this.d;
    const files = r.files;
    let from = 0;
    let to = files.length;
    const now = this.d.clock();
    const ttl = [...r.table.families.values()].some((f) => f.ttlMs !== undefined);
    if (!major) {
      const dueByTime = opts.majorCompactionIntervalMs > 0 && now - j.lastMajorCompactionMs >= opts.majorCompactionIntervalMs &&
        (files.length > 1 || (files.length === 1 && (files[0]!.deletions > 0 || ttl)));
      if (dueByTime || (files.length > 1 && tombstoneHeavy(files, opts.tombstoneCompactionRatio))) {
        major = true;
      } else {
        const pick = pickMinor(files, { minFiles: opts.compactionMinFiles, maxFiles: opts.compactionMaxFiles, ratio: DEFAULT_RATIO });
        if (pick === undefined) return false;
        from = pick.from;
        to = pick.to;
      }
    }
    if (files.length === 0) return false;
    const inputs = files.slice(from, to);
    if (inputs.length === 0) return false;
    // NB: a compaction of every file of the region may drop markers: nothing older exists.
    this.d.background.track(compact(this.ctx, r, inputs, major || inputs.length === files.length));
    return true;
  }

  /** Compacts every region of a table (or all), waiting for the result. */
  async compactAll(t: TableState | undefined, major: boolean): Promise<void> {
    await this.flushAll(t);
    const regions = () => (t === undefined ? this.d.versions.allRegions() : t.regions.slice());
    for (const r of regions()) {
      while (this.jobsOf(r).compacting) await sleep(2);
      if (major ? r.files.length > 0 : r.files.length > 1) {
        if (major) this.maybeCompact(r, true);
        else this.d.background.track(compact(this.ctx, r, r.files.slice(), false));
      }
    }
    for (;;) {
      if (!regions().some((r) => this.jobsOf(r).compacting)) break;
      await sleep(2);
    }
  }

  /** Drops the region's files whose rows have all expired (whole files, nothing rewritten). */
  private dropExpiredFiles(r: Region): void {
    const j = this.jobsOf(r);
    if (j.compacting || j.splitting || r.retired) return;
    const cutoff = expiredBefore(r.table, this.d.clock());
    if (cutoff === undefined) return;
    const expired = r.files.filter((f) => f.maxRowTime !== undefined && f.maxRowTime < cutoff);
    if (expired.length === 0) return;
    this.d.versions.removeFiles(r, expired);
    this.d.background.counters.expiredFilesDropped += expired.length;
    this.d.background.track(this.d.versions.saveManifest());
  }

  /**
   * Drops the region's files that a tombstone older than every held snapshot covers whole;
   * true when it dropped one (the caller saves the manifest).
   */
  dropDeletedFiles(r: Region): boolean {
    const dels = r.table.rangeDeletes;
    const j = this.jobsOf(r);
    if (dels.length === 0 || j.compacting || j.splitting || r.retired) return false;
    const visible = applicable(dels, this.d.host.seqs.oldestSnapshot(), r.start, r.end);
    if (visible.length === 0) return false;
    const gone = r.files.filter((f) => visible.some((d) => fileCovered(f, d)));
    if (gone.length === 0) return false;
    this.d.versions.removeFiles(r, gone);
    this.d.background.counters.deletedFilesDropped += gone.length;
    return true;
  }

  /** Removes the table's tombstones no region can hold an entry of; true when one went. */
  pruneRangeDeletes(t: TableState): boolean {
    return this.d.versions.pruneRangeDeletes(t, (r) => this.jobsOf(r).flushing);
  }

  // ---------------------------------------------------------------------------------
  // Splits

  /** Whether the region is past its split size (and may split). */
  splitDue(r: Region): boolean {
    return this.d.opts.autoSplit && !r.retired && !this.halted && r.files.length > 0 &&
      this.d.versions.regionSizeBytes(r) >= this.d.opts.regionSplitBytes;
  }

  /**
   * Splits the region in two when it is past the split size and no flush is in flight.
   * Until the split key is read (the largest file opened), no new flush starts; a
   * compaction in flight runs on, and the split discards its output (HBase aborts it).
   * Under steady writes a flush loop stops for a split (see flushLoop): before, a split
   * waited for an idle region, and a region written without pause never split.
   */
  maybeSplit(r: Region): boolean {
    const j = this.jobsOf(r);
    if (j.flushing || j.splitting || !this.splitDue(r)) return false;
    const { versions, background, readers } = this.d;
    let largest = r.files[0]!;
    for (const f of r.files) if (f.sizeBytes > largest.sizeBytes) largest = f;
    const n = largest.number;
    j.splitting = true;
    versions.pin(n);
    background.track(
      readers.acquire(n).then(() => {
        try {
          if (r.retired || this.halted) return;
          const key = pickSplitKey(readers, r);
          if (key !== undefined) splitAt(this.ctx, r, key);
          else j.splitKeyMissing = true;
        } finally {
          readers.release(n);
        }
      }).finally(() => {
        versions.unpin(n);
        j.splitting = false;
        if (r.retired) return;
        // No split: the memstores queued meanwhile flush, and compactions go on.
        this.maybeFlush(r);
        if (!this.d.host.isClosed) this.maybeCompact(r);
      }),
    );
    return true;
  }
}
