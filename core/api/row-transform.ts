/**
 * Row transforms: a layer above the store may rewrite the cells of one family as they go
 * to disk (HBase's RegionObserver preFlush/preCompact, RocksDB's compaction filter). A
 * FamilySpec names a transform (`transform`); the layer registers it here by that name,
 * with the module and export a background thread imports to get it. The store knows
 * nothing of what the cells mean: it only knows "this family has a transform".
 *
 * What a store with `capabilities.rowTransforms` does (the embedded engine; core/README.md
 * "Row transforms"): during every flush and compaction, for each row, it resolves the
 * entries of the job's inputs that every read may see (sequence number at or below the
 * oldest snapshot a read holds: deletes applied, versions beyond the family's limit and
 * expired cells dropped), hands the family's surviving cells to the transform, and writes
 * the cells it returns in their place. Newer entries, and delete markers a minor
 * compaction or a flush must keep, are written as they are.
 *
 * The contract a transform keeps:
 * - It returns cells that read the same to its layer as the ones it was given: the store
 *   cannot check this, and readers must accept both forms (raw and transformed cells
 *   side by side: a transform may not run at all, e.g. when its module fails to load or
 *   no transform is registered; the store then keeps the cells as they are).
 * - A returned cell's timestamp must not exceed the largest timestamp of the cells given
 *   (so a later delete marker that covered every input covers the output). Returned
 *   cells are written with the largest sequence number of the inputs (`ctx.tag`).
 * - It is a pure function of its arguments (it runs on a worker thread, possibly twice for
 *   the same cells, e.g. when a job is retried); synchronous; it must not keep the
 *   values it is given past the call.
 * - Deletes address cells as they are stored: a transform that rewrites qualifiers is
 *   used only by layers that delete whole rows or the cells they read.
 * - Returning `undefined` keeps the cells as they are; returning `[]` drops them all.
 */

/** One cell of a family as handed to (and returned by) a transform. */
export interface TransformCell {
  readonly qualifier: Uint8Array;
  readonly timestamp: number;
  readonly value: Uint8Array;
}

export interface RowTransformContext {
  /** The job's clock, ms. */
  readonly nowMs: number;
  /**
   * The largest sequence number among the cells given: unique to this set of cells within
   * the row, and greater for any set holding a later write (a name for the output).
   */
  readonly tag: number;
  /** True in a major compaction (every file of the region is an input). */
  readonly major: boolean;
}

export interface RowTransform {
  /** The cells that replace `cells` (one family of row `row`, sorted by qualifier, then timestamp descending). */
  transformRow(row: Uint8Array, cells: readonly TransformCell[], ctx: RowTransformContext): readonly TransformCell[] | undefined;
  /**
   * Optional: a time (ms) derived from the row key alone ("row time"). The store records
   * each file's smallest and largest row time, and drops a whole file whose largest row
   * time is below `expiredBefore` (RowTransformEntry).
   */
  rowTime?(row: Uint8Array): number | undefined;
}

/** A module's export that makes the transform from the registered options (plain data). */
export type RowTransformFactory = (options: unknown) => RowTransform;

export interface RowTransformEntry {
  /** URL of the ES module (import.meta.url-relative, a file: URL) a worker imports. */
  readonly module: string;
  /** The name of its RowTransformFactory export. */
  readonly exportName: string;
  /** The factory itself, used on this thread (inline jobs) instead of importing `module`. */
  readonly factory?: RowTransformFactory;
  /** Options handed to the factory, read when each job is planned (structured-clone safe). */
  readonly options?: () => unknown;
  /**
   * Optional: rows whose row time is below the returned time are expired for good (the
   * transform drops them); undefined: none. A store drops files that hold only such rows.
   */
  readonly expiredBefore?: (nowMs: number) => number | undefined;
}

const registry = new Map<string, RowTransformEntry>();

/** Registers (or replaces) the transform named `name` for this process. */
export function registerRowTransform(name: string, entry: RowTransformEntry): void {
  registry.set(name, entry);
}

export function unregisterRowTransform(name: string): void {
  registry.delete(name);
}

/** The registered transform of that name, or undefined. */
export function rowTransformEntry(name: string): RowTransformEntry | undefined {
  return registry.get(name);
}
