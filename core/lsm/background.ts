/**
 * The engine's background bookkeeping: the promises of work running on its own (flushes,
 * compactions, manifest writes, log rolls), the errors they met, and the engine's counters.
 * Each part of the engine writes its own counters here (named beside each field); readers
 * (stats, tests) hold the object itself, which never changes identity.
 */
import type { DamagedFile } from '../api/store.js';
import type { ReaderPool } from './reader-pool.js';

export interface EngineCounters {
  /** Scheduler (scheduler.ts): */
  flushesDone: number;
  compactionsDone: number;
  majorCompactionsDone: number;
  splitsDone: number;
  /** Flushes of a memstore shared after a split that installed the other child's file (no job). */
  sharedFlushInstalls: number;
  flushesInProgress: number;
  compactionsInProgress: number;
  /** Files dropped whole because a range delete covered them. */
  deletedFilesDropped: number;
  /** Files dropped whole because every row in them expired (row transforms' expiredBefore). */
  expiredFilesDropped: number;
  /** Compactions started to rewrite files written before their table's transforms (transform-migration.ts). */
  transformMigrations: number;
  /** Write path (engine.ts): */
  stalledWriters: number;
  /** Error handler (error-handler.ts): times the store ran out of space for its log or manifest and recovered. */
  noSpaceRecoveries: number;
  /** Recovery (engine.ts, wal-manager.ts): bytes of damaged WAL records dropped. */
  recoveryDroppedBytes: number;
  /** The damaged WAL records dropped at open: file name, offset, what failed (once each). */
  recoveryDamage: DamagedFile[];
  /** Bytes of a torn record at the end of the newest WAL file at open (a crash mid-append). */
  recoveryTornTailBytes: number;
  /** The WAL replay of the last open: files, bytes and records read, entries applied, ms it took. */
  walReplay: { files: number; bytes: number; records: number; entries: number; ms: number };
  /** Background (this file): */
  backgroundErrors: number;
  lastBackgroundError: string | undefined;
}

export class Background {
  readonly counters: EngineCounters = {
    flushesDone: 0, compactionsDone: 0, majorCompactionsDone: 0, splitsDone: 0, sharedFlushInstalls: 0,
    flushesInProgress: 0, compactionsInProgress: 0, deletedFilesDropped: 0, expiredFilesDropped: 0, transformMigrations: 0,
    stalledWriters: 0, noSpaceRecoveries: 0,
    recoveryDroppedBytes: 0, recoveryDamage: [], recoveryTornTailBytes: 0, walReplay: { files: 0, bytes: 0, records: 0, entries: 0, ms: 0 },
    backgroundErrors: 0, lastBackgroundError: undefined,
  };
  private readonly running = new Set<Promise<unknown>>();
  private readonly readers: ReaderPool;

  constructor(readers: ReaderPool) {
    this.readers = readers;
  }

  /** Runs `p` in the background: its error is noted, `idle` waits for it. */
  track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.noteError(err));
    this.running.add(q);
    void q.finally(() => this.running.delete(q));
  }

  noteError(err: unknown): void {
    this.readers.noteJobError(err);
    this.counters.backgroundErrors++;
    this.counters.lastBackgroundError = err instanceof Error ? err.message : String(err);
  }

  /** Waits until nothing tracked is running (tests, close). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
