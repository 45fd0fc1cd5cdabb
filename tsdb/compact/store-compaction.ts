/**
 * Hour compaction on a store that applies row transforms (the embedded engine): the store
 * compresses each row's points as it flushes them and folds a row's compressed cells as
 * it compacts (compact/hour-transform.ts), by itself. Nothing is read back and nothing runs
 * on a timer here: `runOnce` (tools, tests, `horae fsck`) only asks the store to flush
 * and compact now, so every row leaves memory compressed and each region's files merge.
 */
import type { Table } from '../../core/api/store.js';
import type { HourCompaction, HourCompactorStats } from './hour-compactor.js';

export class StoreCompaction implements HourCompaction {
  private readonly data: Table;
  /** Awaited before each pass (the transform's options up to date: retention rules resolved). */
  private readonly ready: () => Promise<void>;
  private passes = 0;

  constructor(data: Table, ready: () => Promise<void> = () => Promise.resolve()) {
    this.data = data;
    this.ready = ready;
  }

  start(): void {}

  /** Flushes the data table and compacts it (every file of each region with `force`). */
  async runOnce(opts: { force?: boolean; sweep?: boolean } = {}): Promise<void> {
    this.passes++;
    await this.ready();
    await this.data.flush();
    await this.data.compact({ major: opts.force === true || opts.sweep === true });
  }

  async stop(): Promise<void> {}

  stats(): HourCompactorStats {
    return { rowsCompacted: 0, pointsCompacted: 0, pendingRows: 0, passes: this.passes, errors: 0, dirtyOverflows: 0 };
  }
}
