/**
 * The WAL's manager: the log segments on disk (each with the largest sequence number it
 * holds), the current segment and its writer, rolling to a new segment, the replay of the
 * segments at open (records handed to the engine, which applies them), and the deletion
 * of segments recovery would no longer need.
 *
 * Owns: the current WalWriter, the list of live segments, the roll in progress.
 */
import { StoreError } from '../api/errors.js';
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import { WalWriter } from '../wal/wal-writer.js';
import { readWal } from '../wal/wal-reader.js';
import { WAL_META_RECORD_SIZE } from '../wal/wal-format.js';
import type { Background } from './background.js';
import { walName } from './filenames.js';
import type { ResolvedEngineOptions } from './options.js';
import type { Region } from './region.js';
import type { VersionSet } from './version-set.js';

interface Segment {
  readonly number: number;
  /** The largest sequence number of an entry in it (0: none). */
  maxSeq: number;
}

export interface WalManagerDeps {
  readonly fs: FileSystem;
  readonly dir: string;
  readonly opts: ResolvedEngineOptions;
  readonly versions: VersionSet;
  readonly background: Background;
  /** Too many segments: flush the region pinning the oldest (the scheduler's). */
  readonly flushOldest: () => void;
  /** Whether the engine stopped writes for good (then no roll starts). */
  readonly failed: () => boolean;
}

/** Applies one replayed record; returns the largest sequence number in it. */
export type ReplayApply = (record: Uint8Array, path: string) => number;

export class WalManager {
  private readonly deps: WalManagerDeps;
  private writer!: WalWriter;
  private segments: Segment[] = [];
  private rolling: Promise<void> | undefined;

  constructor(deps: WalManagerDeps) {
    this.deps = deps;
  }

  /**
   * Recovery: reads the segments `numbers` (ascending) and hands each record to `apply`;
   * `cleanLog` is the segment the last graceful close synced whole. Returns the largest
   * sequence number replayed.
   */
  async replay(numbers: readonly number[], cleanLog: number | undefined, apply: ReplayApply): Promise<number> {
    const { fs, dir, opts, background } = this.deps;
    const counters = background.counters;
    const replay = counters.walReplay;
    const start = performance.now();
    let lastSeq = 0;
    for (const n of numbers) {
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
          counters.recoveryDroppedBytes += info.bytes;
          // The words `horae fsck` prints for the same record (core/tools/verify.ts).
          const file = walName(n);
          counters.recoveryDamage.push({ file, offset: info.offset, message: `wal ${file}: offset ${info.offset}: ${info.reason} (${info.bytes} bytes dropped)` });
          if (opts.paranoidChecks) {
            throw new StoreError('STORE_CORRUPTION', `wal ${info.path}: offset ${info.offset}: ${info.reason} (${info.bytes} bytes dropped)`);
          }
        },
      });
      if (res.tornTail && res.tornTailBytes > 0) {
        // Normal at the end of the newest log after a crash (mid-append). Anywhere else (an
        // older log, or a log the last graceful close synced whole) a "torn tail" can only
        // be damage (a flipped length byte) and acknowledged records after it are lost:
        // count it, and refuse to open with paranoidChecks.
        const crashTail = n === numbers[numbers.length - 1] && cleanLog !== n;
        if (!crashTail) {
          counters.recoveryDroppedBytes += res.tornTailBytes;
          if (opts.paranoidChecks) {
            throw new StoreError('STORE_CORRUPTION', `wal ${path}: offset ${res.records.length > 0 ? 'after the last good record' : 'after the header'}: ${res.tornTailBytes} bytes at the end of a log that was closed whole cannot be read (a damaged record)`);
          }
        } else {
          counters.recoveryTornTailBytes += res.tornTailBytes;
        }
      }
      let maxSeq = 0;
      for (const rec of res.records) {
        const s = apply(rec, path);
        if (s > maxSeq) maxSeq = s;
      }
      if (maxSeq > lastSeq) lastSeq = maxSeq;
      this.segments.push({ number: n, maxSeq });
      replay.files++;
      replay.bytes += walSize;
      replay.records += res.records.length;
    }
    replay.ms = performance.now() - start;
    return lastSeq;
  }

  /** Opens the first segment written to (after replay). */
  async start(): Promise<void> {
    const number = this.deps.versions.newFileNumber();
    this.writer = await this.openSegment(number);
    this.segments.push({ number, maxSeq: 0 });
  }

  private openSegment(number: number): Promise<WalWriter> {
    return WalWriter.open(this.deps.fs, joinPath(this.deps.dir, walName(number)), number, { bufferedWindowMs: this.deps.opts.bufferedWindowMs });
  }

  /**
   * Makes `next` the current segment. NB: in one synchronous step with its entry in the
   * list: a write in between would count its entries in the wrong segment.
   */
  private switchTo(next: WalWriter): WalWriter {
    const old = this.writer;
    this.writer = next;
    this.segments.push({ number: next.logNumber, maxSeq: 0 });
    return old;
  }

  /**
   * Appends a write batch whose entries end at `lastSeq`, and starts its write and fsync
   * at once (the disk works while the memstores fill). Resolves when acknowledged.
   */
  append(payload: Uint8Array, sync: boolean, lastSeq: number): Promise<void> {
    const seg = this.segments[this.segments.length - 1]!;
    if (lastSeq > seg.maxSeq) seg.maxSeq = lastSeq;
    const acked = this.writer.append(payload, sync);
    this.writer.startRound();
    return acked;
  }

  get sizeBytes(): number {
    return this.writer.sizeBytes;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /** Whether the current segment holds an entry. */
  get currentHoldsEntries(): boolean {
    return this.segments[this.segments.length - 1]!.maxSeq > 0;
  }

  /** Rolls once the current segment reached walFileBytes. */
  rollIfFull(): void {
    if (this.writer.sizeBytes >= this.deps.opts.walFileBytes) this.roll();
  }

  /**
   * Starts a new segment (unless one is starting); the old one is deleted once every
   * region flushed past it and a manifest says so. Resolves when the roll is done.
   */
  roll(): Promise<void> {
    if (this.rolling !== undefined) return this.rolling;
    if (this.deps.failed()) return Promise.resolve();
    const number = this.deps.versions.newFileNumber();
    const { versions, background, opts } = this.deps;
    this.rolling = (async () => {
      try {
        const next = await this.openSegment(number);
        const old = this.switchTo(next);
        // The new segment writes nothing before the old one is durable whole, so the log
        // stays a prefix of what was appended (wal-writer.ts invariant 4).
        const closed = old.close();
        next.follow(closed);
        await closed;
        if (this.segments.length > opts.maxWalFiles) this.deps.flushOldest();
        await versions.saveManifest();
        await this.deleteObsolete();
      } catch (err) {
        background.noteError(err);
      } finally {
        this.rolling = undefined;
      }
    })();
    background.track(this.rolling);
    return this.rolling;
  }

  /** Resolves when no roll is running. */
  async rolled(): Promise<void> {
    if (this.rolling !== undefined) await this.rolling;
  }

  /**
   * After the current segment failed (out of space): moves to a new one, never appending
   * to the failed one again (its tail may hold a torn record). No-op when it did not fail.
   */
  async replaceFailed(): Promise<void> {
    await this.rolled();
    if (this.writer.error === undefined) return;
    const number = this.deps.versions.newFileNumber();
    const path = joinPath(this.deps.dir, walName(number));
    let next: WalWriter;
    try {
      next = await this.openSegment(number);
    } catch (err) {
      await this.deps.fs.remove(path).catch(() => undefined);
      throw err;
    }
    const old = this.switchTo(next);
    await old.close().catch(() => undefined);
  }

  /** Syncs and closes the current segment; returns its number. */
  async close(): Promise<number> {
    await this.writer.close();
    return this.writer.logNumber;
  }

  /**
   * Deletes the segments recovery would not need. NB: judged against the last manifest on
   * disk, not the state in memory: a flush installed in memory but not yet recorded by a
   * finished manifest write still needs its WAL (a crash now would recover from the older
   * manifest, which does not know the new file).
   *
   * NB: the segments to delete are chosen, and taken off the list, in one synchronous step
   * before the first unlink is awaited. A roll during those awaits pushes a new current
   * segment with no entry yet (maxSeq 0); a sweep that went on judging the live list
   * against the segment current when it began unlinked that new one, and every write
   * acknowledged into it was lost in a crash (test/embedded/wal-delete-race.test.ts).
   *
   * `closing`: at a graceful close the current segment is closed too; when everything is
   * flushed (and recorded by the manifest just written) it holds nothing recovery needs.
   */
  async deleteObsolete(closing = false): Promise<void> {
    const { fs, dir, versions, background } = this.deps;
    const live = new Map<number, Region>();
    for (const r of versions.allRegions()) live.set(r.id, r);
    let minNeeded = Infinity;
    for (const d of versions.durableRegions) {
      const r = live.get(d.id);
      const idle = r !== undefined && r.flushedSeq === d.flushedSeq && r.active.empty && r.immutables.length === 0;
      if (!idle && d.flushedSeq + 1 < minNeeded) minNeeded = d.flushedSeq + 1;
    }
    const current = closing ? -1 : this.writer.logNumber;
    const keep: Segment[] = [];
    const obsolete: Segment[] = [];
    for (const w of this.segments) (w.number !== current && w.maxSeq < minNeeded ? obsolete : keep).push(w);
    if (obsolete.length === 0) return;
    this.segments = keep;
    for (const w of obsolete) {
      await fs.remove(joinPath(dir, walName(w.number))).catch((err: unknown) => background.noteError(err));
    }
  }
}
