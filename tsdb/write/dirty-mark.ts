/**
 * A row's mark in the hour compactor's dirty list (tsdb/compact/hour-compactor.ts), shared
 * by the writers (write-group.ts) and the compactor. Handle returned by onRowWritten: the
 * writer updates lastWriteMs on every later point of the row, and reports the row again
 * once `live` turns false (the row was compacted).
 */
export interface DirtyMark {
  lastWriteMs: number;
  live: boolean;
}
