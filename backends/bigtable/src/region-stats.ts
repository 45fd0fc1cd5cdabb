/**
 * Per-region request counters of one table, kept by this process (Bigtable reports none
 * of these per tablet through its data API). Regions are the ranges between the table's
 * split points; the tablets Bigtable adds by itself only size them (regions()).
 */
import { compareBytes } from '../../../core/api/bytes.js';

export interface RegionCounters {
  cellsWritten: number;
  bytesWritten: number;
  rowsRead: number;
  readRequests: number;
  writeRequests: number;
}

export class TableCounters {
  readonly regions: RegionCounters[];

  /** `splits`: the table's split points, sorted. */
  constructor(readonly splits: readonly Uint8Array[]) {
    this.regions = Array.from({ length: splits.length + 1 }, () => ({
      cellsWritten: 0, bytesWritten: 0, rowsRead: 0, readRequests: 0, writeRequests: 0,
    }));
  }

  /** Index of the region holding `key`: the number of split points <= key. */
  indexOf(key: Uint8Array): number {
    let lo = 0;
    let hi = this.splits.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(this.splits[mid]!, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Counts one write call: cells and bytes per row, one request per region touched. */
  recordWrite(rows: readonly { key: Uint8Array; cells: number; bytes: number }[]): void {
    const touched = new Set<number>();
    for (const r of rows) {
      const i = this.indexOf(r.key);
      const c = this.regions[i]!;
      c.cellsWritten += r.cells;
      c.bytesWritten += r.bytes;
      touched.add(i);
    }
    for (const i of touched) this.regions[i]!.writeRequests++;
  }

  /** Counts one read call's rows, one request per region they came from (at least one). */
  recordRead(keys: readonly Uint8Array[], fallback: Uint8Array): void {
    const touched = new Set<number>([this.indexOf(fallback)]);
    for (const k of keys) {
      const i = this.indexOf(k);
      this.regions[i]!.rowsRead++;
      touched.add(i);
    }
    for (const i of touched) this.regions[i]!.readRequests++;
  }
}
