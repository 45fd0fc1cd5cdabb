/**
 * What the engine knows about one SST without opening it: recorded in the manifest, used to
 * skip files by key range, time range and sequence range, and to pick compactions.
 */
export interface FileMeta {
  readonly number: number;
  readonly sizeBytes: number;
  readonly entries: number;
  /** Smallest and largest internal keys in the file. */
  readonly smallest: Uint8Array;
  readonly largest: Uint8Array;
  /** Cell timestamp range of puts and markers (Infinity/-Infinity when empty). */
  readonly minTs: number;
  readonly maxTs: number;
  readonly minSeq: number;
  readonly maxSeq: number;
  /** Delete markers in the file (drives tombstone-triggered major compactions). */
  readonly deletions: number;
  /**
   * Smallest and largest row time (a time its table's row transform derives from the row
   * key, core/api/row-transform.ts) of the file's rows; absent when some row has none or
   * the file was written without the transform.
   */
  readonly minRowTime?: number;
  readonly maxRowTime?: number;
}

/** SST property names the engine writes (see core/FORMAT.md, "Properties block"). */
export const PROP_MIN_TS = 'horae.minTs';
export const PROP_MAX_TS = 'horae.maxTs';
export const PROP_MIN_SEQ = 'horae.minSeq';
export const PROP_MAX_SEQ = 'horae.maxSeq';
export const PROP_DELETIONS = 'horae.deletions';
export const PROP_MIN_ROW_TIME = 'horae.minRowTime';
export const PROP_MAX_ROW_TIME = 'horae.maxRowTime';
