/**
 * RegionTotals: store-wide cells written and rows read as counters that only grow, from
 * per-region counters that do not: a split replaces a region by two children whose
 * counters start at zero, so the plain sum over regions drops at every split.
 *
 * Each `update` adds, per region (by table and id), the growth since the previous update:
 * a region seen before adds its counter's increase; a new region (a split's child, a new
 * table) adds its whole counter, all of which happened since it was created; a counter that
 * went down (the region was reopened) adds its new value. The first update takes the sums
 * as they are. Single-threaded.
 *
 * NB: an approximation at splits: what a region took between the last update and its
 * split is lost with it (only its children's counters remain). Updates come every few
 * seconds and splits are rare, so the rate dips slightly once instead of reading null.
 */
import type { RegionsByTable } from './overview-snapshot.js';

export interface RegionCounterTotals {
  readonly cellsWritten: number;
  readonly rowsRead: number;
}

export class RegionTotals {
  private last = new Map<string, RegionCounterTotals>();
  private cellsWritten = 0;
  private rowsRead = 0;

  update(tables: readonly RegionsByTable[]): RegionCounterTotals {
    const next = new Map<string, RegionCounterTotals>();
    for (const t of tables) {
      for (const r of t.regions) {
        const key = `${t.name}\u0000${r.id}`;
        const now = { cellsWritten: r.stats.cellsWritten, rowsRead: r.stats.rowsRead };
        const before = this.last.get(key);
        this.cellsWritten += growth(before?.cellsWritten, now.cellsWritten);
        this.rowsRead += growth(before?.rowsRead, now.rowsRead);
        next.set(key, now);
      }
    }
    this.last = next;
    return { cellsWritten: this.cellsWritten, rowsRead: this.rowsRead };
  }
}

function growth(before: number | undefined, now: number): number {
  return before === undefined || now < before ? now : now - before;
}
