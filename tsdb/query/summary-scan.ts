/**
 * Reading hour buckets from summary cells (tsdb/SCHEMA.md "Summary cells"), where the
 * read-back compactor writes them (Bigtable, the memory store): for a query whose
 * downsample buckets are whole hours (point-append.ts summaryUseOf), the rows of the hours
 * that lie whole in the scan window and ended long enough ago to be compacted are read
 * with their values stripped (Store `stripValues`; on Bigtable the bytes of the points
 * never leave the server), and each gives its bucket from its summary cell's qualifier. At the
 * same time, the other hours (the window's partial first and last hours, the hours still
 * being written or compacted) are read in full. A stripped row that its summary cell does
 * not answer exactly (raw points beside the hour cell, an annotation, no summary cell, one
 * left without its hour cell) is read again in full, all such rows in one batched get. So
 * a query makes one read per kind of hour, both at once, plus one get when some rows were
 * not compacted as expected; its answer is the one a full read gives.
 *
 * Rows reach the caller in no set order across the two reads and the get: scanner.ts puts
 * each series' buckets back in time order.
 */
import type { Row, RowFilter } from '../../core/api/store.js';
import { baseTimeOfKey, metricScanRange } from '../schema/row-key.js';
import { readSalt } from '../schema/salt.js';
import { DATA_FAMILY } from '../tables.js';
import type { Tsdb } from '../tsdb.js';

const HOUR_S = 3600;
const DATA_FAMILIES: readonly string[] = [DATA_FAMILY];
/** Every value of the data family: a summary cell states its summary in its qualifier. */
const ALL_VALUES = { family: DATA_FAMILY, start: new Uint8Array(0) };
/** Keys per batched get of the rows read again. */
const GET_BATCH = 2000;

/** The scan window's hours (base times, s): all of them, and those read for their summary cells. */
export interface SummaryHours {
  readonly first: number;
  readonly last: number;
  /** The hours from `from` to `to` (inclusive) are read stripped. */
  readonly from: number;
  readonly to: number;
}

/**
 * The hours of [startMs, endMs] whose rows are read for their summary cells: whole in the
 * window, and ended before the compactor's grace, idle time and pass interval; undefined
 * when there is none.
 */
export function summaryHours(tsdb: Tsdb, startMs: number, endMs: number): SummaryHours | undefined {
  const c = tsdb.config;
  const settled = tsdb.now() - (c.compactGraceMs + c.compactIdleMs + c.compactIntervalMs);
  const first = Math.floor(startMs / 3_600_000) * HOUR_S;
  const last = Math.floor(endMs / 3_600_000) * HOUR_S;
  let from = first;
  if (from * 1000 < startMs) from += HOUR_S;
  let to = last;
  while (to >= from && ((to + HOUR_S) * 1000 - 1 > endMs || (to + HOUR_S) * 1000 > settled)) to -= HOUR_S;
  return to < from ? undefined : { first, last, from, to };
}

/** `C`: the caller's cursor over the series of one salt bucket (or of the exact gets), one per read and bucket. */
export interface SummaryRead<C> {
  readonly metricUid: Uint8Array;
  readonly split: SummaryHours;
  /** The exact rows to read (scanner.ts ScanRequest.keys) instead of every salt bucket's range. */
  readonly keys: readonly Uint8Array[] | undefined;
  readonly filter: RowFilter | undefined;
  readonly signal: AbortSignal | undefined;
  newCursor(): C;
  /** A row read in full (values borrowed). */
  onRow(row: Row, cur: C): void;
  /** A row read stripped: false when its summary cell does not answer it (it is read again in full). */
  onStripped(row: Row, cur: C): boolean;
  /** Between batches: yields to the event loop now and then, checks the deadline. */
  tick(): Promise<void>;
}

/** Reads the rows of `r` as the file header says, handing each to onRow or onStripped. */
export async function readWithSummaryCells<C>(tsdb: Tsdb, r: SummaryRead<C>): Promise<void> {
  const again: { key: Uint8Array; cur: C }[] = [];
  const stripped = (row: Row, cur: C): void => {
    if (!r.onStripped(row, cur)) again.push({ key: row.key, cur });
  };
  const { from, to } = r.split;
  if (r.keys !== undefined) {
    const inSplit = (k: Uint8Array): boolean => {
      const base = baseTimeOfKey(tsdb.widths, k);
      return base >= from && base <= to;
    };
    const a = r.keys.filter(inSplit);
    const b = r.keys.filter((k) => !inSplit(k));
    const curA = r.newCursor();
    const curB = r.newCursor();
    // Not borrowed: each get's rows are read after the other get was asked for.
    await Promise.all([
      a.length === 0 ? undefined : tsdb.data.get(a, { families: DATA_FAMILIES, stripValues: ALL_VALUES, signal: r.signal }).then((rows) => {
        for (const row of rows) if (row !== undefined) stripped(row, curA);
      }),
      b.length === 0 ? undefined : tsdb.data.get(b, { families: DATA_FAMILIES, signal: r.signal }).then((rows) => {
        for (const row of rows) if (row !== undefined) r.onRow(row, curB);
      }),
    ]);
  } else {
    const w = tsdb.widths;
    const buckets = w.saltWidth === 0 ? 1 : w.saltBuckets;
    const inside: { start: Uint8Array; end: Uint8Array }[] = [];
    const outside: { start: Uint8Array; end: Uint8Array }[] = [];
    const { first, last } = r.split;
    for (let salt = 0; salt < buckets; salt++) {
      if (first < from) outside.push(metricScanRange(w, salt, r.metricUid, first, from - HOUR_S));
      inside.push(metricScanRange(w, salt, r.metricUid, from, to));
      if (to < last) outside.push(metricScanRange(w, salt, r.metricUid, to + HOUR_S, last));
    }
    await Promise.all([
      scanRanges(tsdb, r, inside, true, stripped),
      outside.length === 0 ? undefined : scanRanges(tsdb, r, outside, false, (row, cur) => r.onRow(row, cur)),
    ]);
  }
  for (let i = 0; i < again.length; i += GET_BATCH) {
    const batch = again.slice(i, i + GET_BATCH);
    const rows = await tsdb.data.get(batch.map((x) => x.key), { families: DATA_FAMILIES, borrowValues: true, signal: r.signal });
    await r.tick();
    rows.forEach((row, j) => {
      if (row !== undefined) r.onRow(row, batch[j]!.cur);
    });
  }
}

/** One scan of `ranges` (every bucket's, in key order), stripped or in full; a cursor per bucket. */
async function scanRanges<C>(
  tsdb: Tsdb, r: SummaryRead<C>, ranges: { start: Uint8Array; end: Uint8Array }[], strip: boolean, each: (row: Row, cur: C) => void,
): Promise<void> {
  const w = tsdb.widths;
  let cur = r.newCursor();
  let salt = -1;
  const spec = { ranges, families: DATA_FAMILIES, borrowValues: true, batchRows: 256, filter: r.filter, signal: r.signal };
  for await (const rows of tsdb.data.scan(strip ? { ...spec, stripValues: ALL_VALUES } : spec)) {
    await r.tick();
    for (const row of rows) {
      const s = w.saltWidth === 0 ? 0 : readSalt(row.key, w);
      if (s !== salt) {
        salt = s;
        cur = r.newCursor();
      }
      each(row, cur);
    }
  }
}
