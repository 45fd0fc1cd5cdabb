/**
 * The jobs the scheduler (scheduler.ts) starts for one region, run and installed: its
 * flush loop, a compaction, a split. Each installs its result in the version set in one
 * synchronous step, records it in the manifest, then asks the scheduler what follows
 * (a split, a compaction, the next flush).
 */
import { StoreError } from '../api/errors.js';
import type { Background } from './background.js';
import { sleep } from './background.js';
import type { FileMeta } from './file-meta.js';
import type { JobRunner } from './job-runner.js';
import { compactionJob, flushJob } from './job-plans.js';
import type { PlanContext } from './job-plans.js';
import type { Memstore } from './memstore.js';
import type { ResolvedEngineOptions } from './options.js';
import type { ReaderPool } from './reader-pool.js';
import type { Region, TableState } from './region.js';
import type { SeqTracker } from './seq-tracker.js';
import type { VersionSet } from './version-set.js';
import type { WalManager } from './wal-manager.js';

/** What runs for one region. */
export interface RegionJobs {
  flushing: boolean;
  compacting: boolean;
  /**
   * A split is under way (its split key is being read): no new flush starts, so the split
   * finds no flush in flight (memstores rotated meanwhile go to the children). A compaction
   * may run on; a split discards its output.
   */
  splitting: boolean;
  /** The last split attempt found no key to split at; cleared when a compaction installs. */
  splitKeyMissing: boolean;
  flushFailures: number;
  lastMajorCompactionMs: number;
}

/**
 * A memstore held by both children of a split: the first to flush it installs the file in
 * the other too. `inFlight`: a holder's flush of it, which the others wait for; `flushedAs`:
 * its file, while another holder has still to install it.
 */
export interface SharedFlush {
  inFlight: Promise<FileMeta | undefined> | undefined;
  flushedAs: FileMeta | undefined;
}

/** What the scheduler asks of the engine. */
export interface SchedulerHost {
  readonly isClosed: boolean;
  /** Writes stopped for good (until a reopen): no job starts. */
  readonly stopped: StoreError | undefined;
  readonly seqs: SeqTracker;
  readonly lastSeq: number;
  /** A flush failed with anything but "no space": stop writes. */
  fail(err: unknown): void;
  /** Memstore bytes went down: wake stalled writers. */
  releaseStalled(): void;
}

export interface SchedulerDeps {
  readonly opts: ResolvedEngineOptions;
  readonly dir: string;
  readonly clock: () => number;
  readonly versions: VersionSet;
  readonly wal: WalManager;
  readonly readers: ReaderPool;
  readonly background: Background;
  readonly host: SchedulerHost;
}

/** A job's view of the scheduler: its parts, its state, and the decisions that follow a job. */
export interface JobContext extends SchedulerDeps {
  readonly runner: JobRunner;
  readonly shared: WeakMap<Memstore, SharedFlush>;
  jobsOf(r: Region): RegionJobs;
  maybeFlush(r: Region, force?: boolean): void;
  maybeCompact(r: Region, major?: boolean): boolean;
  maybeSplit(r: Region): boolean;
  splitDue(r: Region): boolean;
  pruneRangeDeletes(t: TableState): boolean;
}

function plan(ctx: JobContext): PlanContext {
  return { opts: ctx.opts, dir: ctx.dir, keepSeq: ctx.host.seqs.oldestSnapshot(), nowMs: ctx.clock() };
}

export async function flushLoop(ctx: JobContext, r: Region): Promise<void> {
  const { versions, background, host } = ctx;
  const counters = background.counters;
  const j = ctx.jobsOf(r);
  j.flushing = true;
  counters.flushesInProgress++;
  try {
    while (r.immutables.length > 0 && host.stopped === undefined && !r.retired) {
      const mem = r.immutables[0]!;
      const sf = ctx.shared.get(mem);
      if (sf !== undefined && sf.flushedAs === undefined && sf.inFlight !== undefined) {
        // Shared with the other child of a split, which is flushing it: wait for its file
        // rather than write the same one (after a failure, this loop flushes it itself).
        await sf.inFlight.catch(() => undefined);
        continue;
      }
      let meta: FileMeta | undefined;
      let number = -1;
      const flushed = sf?.flushedAs;
      // The other holder's file, unless it was compacted away meanwhile (then flush again).
      const installShared = flushed !== undefined && versions.isInstalled(flushed);
      if (installShared) {
        meta = flushed;
        counters.sharedFlushInstalls++;
      } else {
        number = versions.newOutput();
        try {
          meta = await runFlushJob(ctx, mem, number, r.table);
          j.flushFailures = 0;
        } catch (err) {
          versions.outputDone(number);
          background.noteError(err);
          j.flushFailures++;
          // Out of space may pass (files get deleted, the disk grows): retry with backoff
          // while the WAL keeps the data. Any other I/O error stops writes (RocksDB's
          // background error): the WAL still holds every acknowledged entry.
          if (!(err instanceof StoreError && err.code === 'STORE_NO_SPACE')) {
            host.fail(err);
            return;
          }
          await sleep(Math.min(5000, 50 * 2 ** j.flushFailures));
          if (host.isClosed) return;
          continue;
        }
      }
      // Install: one synchronous step.
      versions.installFlush(r, meta, mem.maxSeq);
      r.immutables.shift();
      if (--mem.shares === 0) ctx.shared.delete(mem);
      if (!installShared) counters.flushesDone++;
      host.releaseStalled();
      try {
        await versions.saveManifest();
      } catch {
        // The flush is installed but not recorded (saveManifest's handler noted the error
        // and paused or stopped writes). Stop here: flushRegions (the no-space recovery,
        // flushAll) sees a region with memstores queued and no loop, and fails; the
        // recovery retries later and restarts this loop.
        return;
      } finally {
        versions.outputDone(number);
      }
      await ctx.wal.deleteObsolete();
      // A region past its split size stops flushing here so the split can start: under
      // steady writes this loop may not drain for a long time, and a split waits for no
      // flush in flight (its memstores, still queued, go to the children).
      if (ctx.splitDue(r) && !j.splitKeyMissing) break;
      // Under steady writes the loop may not drain for a long time: the files it installs
      // are compacted meanwhile (as RocksDB schedules a compaction after each flush), or
      // a region's file count grows without bound (a compaction runs beside a flush; its
      // install keeps the newer flushed files ahead of its output).
      if (r.immutables.length > 0 && !host.isClosed) ctx.maybeCompact(r);
    }
  } finally {
    j.flushing = false;
    counters.flushesInProgress--;
    host.releaseStalled();
  }
  if (!r.retired && !host.isClosed && !ctx.maybeSplit(r)) {
    ctx.maybeCompact(r);
    // Memstores still queued (the loop stopped for a split that did not start): go on.
    ctx.maybeFlush(r);
  }
}

/**
 * Runs the flush job of `mem`. While other regions hold it too (the children of a split),
 * they wait for it (`inFlight`) and then install its file (`flushedAs`), set before they
 * resume, rather than flush the same entries again.
 */
async function runFlushJob(ctx: JobContext, mem: Memstore, number: number, t: TableState): Promise<FileMeta | undefined> {
  const job = ctx.runner.run(flushJob(plan(ctx), mem, number, t));
  let sf: SharedFlush | undefined;
  if (mem.shares > 1) {
    sf = ctx.shared.get(mem) ?? { inFlight: undefined, flushedAs: undefined };
    ctx.shared.set(mem, sf);
    sf.inFlight = job;
  }
  try {
    const meta = await job;
    if (meta !== undefined) ctx.versions.addFile(meta);
    if (sf !== undefined) sf.flushedAs = meta;
    return meta;
  } finally {
    if (sf !== undefined) sf.inFlight = undefined;
  }
}


export async function compact(ctx: JobContext, r: Region, inputs: FileMeta[], major: boolean): Promise<void> {
  const { versions, background, host } = ctx;
  const counters = background.counters;
  const j = ctx.jobsOf(r);
  const files0 = r.files.length;
  j.compacting = true;
  counters.compactionsInProgress++;
  const number = versions.newOutput();
  for (const f of inputs) versions.pin(f.number);
  try {
    const job = compactionJob(plan(ctx), r, inputs, number, major);
    // Every entry at or below this is in the region's files now (all of them, when its
    // memstores are empty: entries written later are newer than every tombstone applied).
    const flushedAtStart = r.active.empty && r.immutables.length === 0 && !j.flushing ? host.lastSeq : r.flushedSeq;
    let meta: FileMeta | undefined;
    try {
      meta = await ctx.runner.run(job);
    } catch (err) {
      background.noteError(err);
      return;
    }
    if (r.retired) {
      // The region split or its table was dropped meanwhile: discard the output.
      if (meta !== undefined) versions.discardOutput(meta);
      return;
    }
    versions.installCompaction(r, inputs, meta);
    j.splitKeyMissing = false;
    if (major) {
      j.lastMajorCompactionMs = ctx.clock();
      counters.majorCompactionsDone++;
      // Every file was rewritten without the entries of these tombstones, and every
      // older entry was in a file: the region holds none of them any more.
      const dels = job.rangeDeletes ?? [];
      if (inputs.length === files0 && dels.length > 0) {
        for (const d of r.table.rangeDeletes) if (d.seq <= flushedAtStart && dels.some((x) => x.seq === d.seq)) d.cleared.push(r.id);
      }
      ctx.pruneRangeDeletes(r.table);
    }
    counters.compactionsDone++;
    await versions.saveManifest();
  } finally {
    versions.outputDone(number);
    for (const f of inputs) versions.unpin(f.number);
    j.compacting = false;
    counters.compactionsInProgress--;
  }
  if (!r.retired && !host.isClosed) {
    if (!ctx.maybeSplit(r)) ctx.maybeCompact(r);
  }
}

/** Replaces r by [start, key) and [key, end). Synchronous, then the manifest is saved. */
export function splitAt(ctx: JobContext, r: Region, key: Uint8Array): void {
  const [left, right] = ctx.versions.splitRegion(r, key, ctx.clock());
  // The children share the parent's memstores, queued (oldest first, then the active one,
  // which takes no more writes): each reads its own range of them, and the first to flush
  // one installs the file in the other too (flushLoop). Nothing is copied here, on the
  // writers' thread (dividing them cost ~100 ms per full 32 MiB memstore).
  const queued = r.active.empty ? r.immutables.slice() : [...r.immutables, r.active];
  for (const m of queued) m.shares++; // the parent's share passes to two children
  left.immutables = queued.slice();
  right.immutables = queued;
  ctx.background.counters.splitsDone++;
  ctx.maybeFlush(left);
  ctx.maybeFlush(right);
  ctx.background.track(
    ctx.versions.saveManifest().then(() => {
      // Rewrite the shared files into each child's own.
      ctx.maybeCompact(left, true);
      ctx.maybeCompact(right, true);
    }),
  );
}
