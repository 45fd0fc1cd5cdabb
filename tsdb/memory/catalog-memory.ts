/**
 * The catalog's memory: one byte budget (horae.catalog.memory_bytes, a share of
 * horae.memory.budget_bytes: memory/budget.ts) for every per-series and per-name structure
 * the layer keeps in memory, each given a fixed share of it and sized in bytes. Where a
 * structure holds JS objects its bytes are counted by the estimates below (measured with
 * scripts/heap-per-series.ts on Node 20: what an entry costs on the heap with its keys and
 * its map slot, beside the key bytes counted as they are), so the bounds hold in bytes
 * whatever the names' lengths; columnar structures count their arrays.
 *
 *   structure                         share   per entry (beside key bytes)
 *   series entries, texts, byte keys  1/2     SERIES_ENTRY_BYTES, TEXT_ENTRY_BYTES, BYTE_SLOT_BYTES
 *   UID caches (3 kinds × 2 ways)     1/8     UID_ENTRY_BYTES
 *   series index copy                 1/8     its arrays (meta/active-series.ts)
 *   hour compactor's dirty rows       1/16    DIRTY_ROW_BYTES (read-back compactor only)
 *   newest-hour hints                 1/16    its arrays (catalog/key-table.ts and a column)
 *   newest points (/api/query/last)   1/16    its arrays (catalog/key-table.ts and columns)
 *   series names                      1/32    NAMES_ENTRY_BYTES + names' lengths
 *   series plans and counts           1/32    PLAN_BYTES + TSUID_REF_BYTES a matched series;
 *     (with the limiter's per-metric       (an eighth)  METRIC_COUNT_BYTES (limits/series-limiter.ts)
 *     counts)
 *
 * Every structure evicts a part when it reaches its bound (the oldest-inserted eighth, or
 * the generation not used since the last half of its bound was filled), never the whole
 * at once; dropCaches (the catalog's) is the only thing that empties them all.
 */

/** The share of horae.catalog.memory_bytes each structure is bounded by. */
export const CATALOG_SHARES = {
  seriesEntries: 1 / 2,
  uidCaches: 1 / 8,
  index: 1 / 8,
  dirtyRows: 1 / 16,
  newestHours: 1 / 16,
  lastValues: 1 / 16,
  names: 1 / 32,
  plans: 1 / 32,
} as const;

export type CatalogStructure = keyof typeof CATALOG_SHARES;

/** Heap bytes of one writer series entry: the object, its row-key template (a Uint8Array) and TSUID string headers, its map slot. */
export const SERIES_ENTRY_BYTES = 360;
/**
 * Bytes a series costs in the series entries' share, all three caches of it together with
 * typical keys (a ~60-byte TSUID, a ~120-byte text and byte key): to convert a count.
 */
export const SERIES_BYTES_PER_ENTRY = 800;
/** Heap bytes of one series-text cache entry beside the text: string header, map slot. */
export const TEXT_ENTRY_BYTES = 64;
/** Heap bytes of one byte-cache slot beside its key bytes (series-byte-cache.ts: the slot object and its bucket; keys are packed in arenas). */
export const BYTE_SLOT_BYTES = 128;
/** Heap bytes of one UID cache entry beside the name: id bytes, string header, map slot. */
export const UID_ENTRY_BYTES = 200;
/**
 * Bytes of one hint beside its TSUID key in the arrays of meta/newest-hours.ts (table 22,
 * column 4), at the lowest load after a doubling: to convert a count. The hints count
 * their arrays themselves.
 */
export const NEWEST_HOUR_BYTES = 52;
/**
 * Bytes of one newest point beside its TSUID key in the arrays of meta/last-values.ts
 * (table 22, columns 33), at the lowest load after a doubling: to convert a count. The
 * cache counts its arrays itself.
 */
export const LAST_VALUE_BYTES = 110;
/** Heap bytes of one dirty row beside its key: the row object, key Uint8Array and string, map slot. */
export const DIRTY_ROW_BYTES = 260;
/** Heap bytes of one series' names beside the name lengths: frozen tags object, map of hex UIDs, TSUID hex. */
export const NAMES_ENTRY_BYTES = 400;
/** Heap bytes of one kept plan (resolved filters, row-key plan) without its matched series. */
export const PLAN_BYTES = 1024;
/** Heap bytes of one matched series a plan keeps (a TSUID Uint8Array beside its bytes). */
export const TSUID_REF_BYTES = 120;

export interface StructureStats {
  readonly name: CatalogStructure;
  readonly bytes: number;
  readonly maxBytes: number;
  readonly entries: number;
}

interface Registered {
  readonly bytes: () => number;
  readonly entries: () => number;
}

/** The budget's split and what each structure holds now (the catalog's stats, /api/stats). */
export class CatalogMemory {
  readonly totalBytes: number;
  private readonly structures = new Map<CatalogStructure, Registered>();

  constructor(totalBytes: number) {
    this.totalBytes = totalBytes;
  }

  /** The bytes a structure is bounded by. */
  share(name: CatalogStructure): number {
    return Math.floor(this.totalBytes * CATALOG_SHARES[name]);
  }

  /** Counts a structure's bytes and entries in the stats (the last registration of a name wins). */
  register(name: CatalogStructure, bytes: () => number, entries: () => number): void {
    this.structures.set(name, { bytes, entries });
  }

  /** Each registered structure's bytes against its bound. */
  stats(): StructureStats[] {
    return [...this.structures].map(([name, s]) => ({ name, bytes: s.bytes(), maxBytes: this.share(name), entries: s.entries() }));
  }

  /** The bytes of every registered structure together. */
  usedBytes(): number {
    let n = 0;
    for (const s of this.structures.values()) n += s.bytes();
    return n;
  }
}
