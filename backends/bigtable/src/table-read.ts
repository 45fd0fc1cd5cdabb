/**
 * Gets and scans. A scan reads pages of rows (ReadRows with rowsLimit; a scan of several
 * ranges, each page one ReadRows over the ranges not yet passed), each resumed after its
 * last row when a transient error cuts the stream, and hands them out in batches of
 * batchRows. Rows written after the scan started may or may not appear, as the Store
 * allows; each row is read atomically by Bigtable.
 */
import { compareBytes, latin1 } from '../../../core/api/bytes.js';
import { throwIfAborted } from '../../../core/api/errors.js';
import { intersectPrefixRange, prefixOfFilter } from '../../../core/api/filters.js';
import type { GetOptions, KeyRange, Row } from '../../../core/api/store.js';
import { normalizeGetOptions, validateKeys } from '../../../core/api/validate.js';
import type { NormalizedScanSpec } from '../../../core/api/validate.js';
import type { IReadRowsRequest, IRowFilter } from './client.js';
import { checkOpen, closedError } from './context.js';
import type { StoreContext, TableState } from './context.js';
import { storeErrorOf } from './errors.js';
import { readFilter } from './filters.js';
import { withRetry } from './retry.js';
import { RowMerger } from './rows.js';

/** Rows per ReadRows page at least (small batchRows still read in bigger pages). */
const MIN_PAGE_ROWS = 500;

export async function getRows(ctx: StoreContext, t: TableState, keys: readonly Uint8Array[], opts: GetOptions | undefined): Promise<(Row | undefined)[]> {
  checkOpen(ctx);
  validateKeys(keys, ctx.caps);
  const ro = normalizeGetOptions(t.spec, opts, ctx.caps);
  throwIfAborted(ro.signal);
  if (keys.length === 0) return [];
  const filter = readFilter(t.spec, ro, ctx.clock());
  const wanted = new Map<string, Uint8Array>();
  for (const k of keys) wanted.set(latin1(k), k);
  const found = new Map<string, Row>();
  await guarded(ctx, `get from table ${t.spec.name}`, (n) => {
    // A retry asks again for the keys not answered yet.
    const pending = n === 1 ? [...wanted.values()] : [...wanted].filter(([s]) => !found.has(s)).map(([, k]) => k);
    const merger = new RowMerger((row) => found.set(latin1(row.key), row));
    return ctx.conn.readRows({
      tableName: t.tableName, rows: { rowKeys: pending.map((k) => Buffer.from(k)) }, filter,
    }, (r) => merger.push(r), ro.signal);
  }, ro.signal);
  t.counters.recordRead([...found.values()].map((r) => r.key), keys[0]!);
  return keys.map((k) => found.get(latin1(k)));
}

export async function* scanRows(ctx: StoreContext, t: TableState, s: NormalizedScanSpec): AsyncGenerator<readonly Row[]> {
  checkOpen(ctx);
  throwIfAborted(s.signal);
  const prefix = prefixOfFilter(s.filter);
  const ranges: KeyRange[] = [];
  for (const r of s.ranges ?? [{ start: s.start, end: s.end }]) {
    const within = prefix === undefined ? r : intersectPrefixRange(r, prefix);
    if (within !== undefined && (within.end.length === 0 || compareBytes(within.start, within.end) < 0)) ranges.push(within);
  }
  if (ranges.length === 0) return;
  const filter = readFilter(t.spec, s, ctx.clock());
  let remaining = s.limit;
  let after: Uint8Array | undefined;
  for (;;) {
    const page = Math.min(remaining, Math.max(s.batchRows, MIN_PAGE_ROWS));
    const rows = await readPage(ctx, t, ranges, after, page, s.reverse, filter, s.signal);
    t.counters.recordRead(rows.map((r) => r.key), after ?? ranges[0]!.start);
    for (let i = 0; i < rows.length; i += s.batchRows) {
      checkOpen(ctx);
      throwIfAborted(s.signal);
      yield rows.slice(i, i + s.batchRows);
    }
    remaining -= rows.length;
    if (rows.length < page || remaining <= 0) return;
    after = rows[rows.length - 1]!.key;
  }
}

/**
 * The keys of every row of `range` (cells, TTLs and versions aside), in pages of
 * `batchRows`: each row read as one cell with its value stripped (deleteRange's read).
 */
export async function* scanKeys(ctx: StoreContext, t: TableState, range: KeyRange, batchRows: number, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array[]> {
  const filter: IRowFilter = { chain: { filters: [{ cellsPerRowLimitFilter: 1 }, { stripValueTransformer: true }] } };
  let after: Uint8Array | undefined;
  for (;;) {
    checkOpen(ctx);
    throwIfAborted(signal);
    const rows = await readPage(ctx, t, [range], after, batchRows, false, filter, signal);
    if (rows.length > 0) yield rows.map((r) => r.key);
    if (rows.length < batchRows) return;
    after = rows[rows.length - 1]!.key;
  }
}

/**
 * Up to `limit` rows of `ranges` (sorted, not overlapping, none empty) after (forward) or
 * before (reverse) `after`: one ReadRows, its row set every range not yet passed.
 */
async function readPage(
  ctx: StoreContext, t: TableState, ranges: readonly KeyRange[], after: Uint8Array | undefined, limit: number,
  reverse: boolean, filter: IRowFilter, signal: AbortSignal | undefined,
): Promise<Row[]> {
  const out: Row[] = [];
  await guarded(ctx, `scan of table ${t.spec.name}`, async () => {
    const from = out.length > 0 ? out[out.length - 1]!.key : after;
    const rowRanges = rangesFrom(ranges, from, reverse);
    if (rowRanges !== undefined && rowRanges.length === 0) return; // every range passed (an empty row set would read the whole table)
    const merger = new RowMerger((row) => out.push(row));
    const req: IReadRowsRequest = { tableName: t.tableName, filter, rowsLimit: String(limit - out.length) };
    if (rowRanges !== undefined) req.rows = { rowRanges };
    if (reverse) req.reversed = true;
    return ctx.conn.readRows(req, (r) => merger.push(r), signal);
  }, signal);
  return out;
}

type RowRange = NonNullable<NonNullable<IReadRowsRequest['rows']>['rowRanges']>[number];

/**
 * The row ranges still to read once the rows up to `from` (forward) or down to `from`
 * (reverse) have been: undefined for the whole table (no row set).
 */
export function rangesFrom(ranges: readonly KeyRange[], from: Uint8Array | undefined, reverse: boolean): RowRange[] | undefined {
  const out: RowRange[] = [];
  for (const range of ranges) {
    const r: RowRange = {};
    if (from !== undefined && !reverse) {
      if (range.end.length > 0 && compareBytes(range.end, from) <= 0) continue; // passed
      if (compareBytes(range.start, from) <= 0) r.startKeyOpen = Buffer.from(from);
    }
    if (from !== undefined && reverse) {
      if (compareBytes(range.start, from) >= 0) continue; // passed
      if (range.end.length === 0 || compareBytes(range.end, from) > 0) r.endKeyOpen = Buffer.from(from);
    }
    if (r.startKeyOpen === undefined && range.start.length > 0) r.startKeyClosed = Buffer.from(range.start);
    if (r.endKeyOpen === undefined && range.end.length > 0) r.endKeyOpen = Buffer.from(range.end);
    out.push(r);
  }
  return out.length === 1 && Object.keys(out[0]!).length === 0 ? undefined : out;
}

/** withRetry that reports STORE_CLOSED when the store closed under the call. */
export async function guarded<T>(ctx: StoreContext, what: string, attempt: (n: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await withRetry(what, ctx.retry, attempt, signal);
  } catch (err) {
    if (ctx.closed) throw closedError();
    throw storeErrorOf(what, err);
  }
}
