/**
 * Row locks for read-modify-write operations (increment, checkAndPut): while one holds a
 * row, other read-modify-writes and plain mutations of that row wait, so the read and the
 * write act as one step (HBase row locks). Plain mutations only check for locks when any
 * are held, so the common write path pays one Map size check.
 */
import { latin1 } from '../api/bytes.js';

export class RowLocks {
  private readonly held = new Map<string, Promise<void>>();

  get size(): number {
    return this.held.size;
  }

  private static id(tableId: number, row: Uint8Array): string {
    return `${tableId}:${latin1(row)}`;
  }

  /** Resolves when none of the rows is locked (by others). */
  async waitUnlocked(tableId: number, rows: readonly Uint8Array[]): Promise<void> {
    for (;;) {
      let wait: Promise<void> | undefined;
      for (const r of rows) {
        wait = this.held.get(RowLocks.id(tableId, r));
        if (wait !== undefined) break;
      }
      if (wait === undefined) return;
      await wait;
    }
  }

  /** Runs fn holding the row's lock. */
  async with<T>(tableId: number, row: Uint8Array, fn: () => Promise<T>): Promise<T> {
    const id = RowLocks.id(tableId, row);
    for (;;) {
      const cur = this.held.get(id);
      if (cur === undefined) break;
      await cur;
    }
    let release!: () => void;
    this.held.set(id, new Promise<void>((r) => (release = r)));
    try {
      return await fn();
    } finally {
      this.held.delete(id);
      release();
    }
  }
}
