/**
 * The engine's error handler (RocksDB's ErrorHandler): what a failed log append, manifest
 * write or flush does to writes, and the recovery from running out of space.
 *
 * - A WAL or manifest I/O error, or a flush failing with anything but "no space", stops
 *   writes until the store is reopened (`stopped`): memstores may hold unacknowledged
 *   entries, and the WAL still holds everything acknowledged.
 * - Out of space for the log or the manifest only pauses writes (`STORE_NO_SPACE`,
 *   retryable) until recoverFromNoSpace has brought the store back by itself.
 *
 * Owns: the stopping error, the no-space pause and the writes it failed.
 */
import { StoreError, ioError } from '../api/errors.js';
import type { Background } from './background.js';
import { sleep } from './background.js';
import type { Scheduler } from './scheduler.js';
import type { SeqTracker } from './seq-tracker.js';
import type { VersionSet } from './version-set.js';
import type { WalManager } from './wal-manager.js';

/** A write's entry in the read point (SeqTracker.begin). */
type InflightWrite = { last: number; done: boolean };

export interface ErrorHandlerDeps {
  readonly dir: string;
  readonly background: Background;
  readonly versions: VersionSet;
  readonly wal: WalManager;
  readonly scheduler: Scheduler;
  readonly seqs: () => SeqTracker;
  readonly isClosed: () => boolean;
  /** Wakes every writer waiting for memstore space (they then see why writes are refused). */
  readonly wakeStalled: () => void;
}

export class ErrorHandler {
  private readonly d: ErrorHandlerDeps;
  private fatal: StoreError | undefined;
  /** Set while writes are refused because the log or manifest ran out of space; cleared by recoverFromNoSpace. */
  private noSpace: StoreError | undefined;
  /** Writes whose log append failed for lack of space: visible once recovery has flushed them. */
  private readonly unacked: InflightWrite[] = [];

  constructor(deps: ErrorHandlerDeps) {
    this.d = deps;
  }

  /** Writes stopped until a reopen, or undefined. */
  get stopped(): StoreError | undefined {
    return this.fatal;
  }

  /** Why writes are refused: a failure that needs a reopen, or out of space (recovers by itself). */
  get failure(): StoreError | undefined {
    return this.fatal ?? this.noSpace;
  }

  /** Throws when writes are refused. */
  checkWritable(): void {
    const { dir } = this.d;
    if (this.fatal !== undefined) {
      throw new StoreError(this.fatal.code, `store ${dir} stopped accepting writes after an earlier failure: ${this.fatal.message}`, { cause: this.fatal });
    }
    if (this.noSpace !== undefined) {
      throw new StoreError('STORE_NO_SPACE', `store ${dir} refuses writes until space is freed: ${this.noSpace.message}`, { cause: this.noSpace, retryable: true });
    }
  }

  /**
   * A WAL failure stops writes and flushes: memstores may hold unacknowledged entries.
   * Out of space (the log or the manifest) only pauses writes: see recoverFromNoSpace.
   * `inflight` is the failed write's read-point entry.
   */
  fail(err: unknown, inflight?: InflightWrite): void {
    if (this.fatal === undefined && !this.d.isClosed() && err instanceof StoreError && err.code === 'STORE_NO_SPACE') {
      if (inflight !== undefined) this.unacked.push(inflight);
      if (this.noSpace === undefined) {
        this.noSpace = err;
        this.d.background.track(this.recoverFromNoSpace());
      }
      this.d.wakeStalled();
      return;
    }
    if (this.fatal === undefined) {
      this.fatal = err instanceof StoreError ? err : ioError(`store ${this.d.dir}`, err);
    }
    this.d.wakeStalled();
    // Writes the WAL acknowledged after a failed one must not wait forever for the read
    // point to pass it.
    this.d.seqs().releaseWaiters();
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
    const { versions, wal, scheduler, background, isClosed } = this.d;
    let delay = 50;
    while (!isClosed() && this.fatal === undefined) {
      await sleep(delay);
      delay = Math.min(1000, delay * 2);
      if (isClosed() || this.fatal !== undefined) return;
      try {
        await wal.replaceFailed();
        await scheduler.flushRegions(versions.allRegions());
        await versions.saveManifest();
        await wal.deleteObsolete();
      } catch (err) {
        background.noteError(err);
        continue;
      }
      if (isClosed() || this.fatal !== undefined) return;
      for (const w of this.unacked.splice(0)) this.d.seqs().complete(w);
      this.noSpace = undefined;
      background.counters.noSpaceRecoveries++;
      return;
    }
  }
}
