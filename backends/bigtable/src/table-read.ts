/**
 * Gets and scans. A scan reads pages of rows (ReadRows with rowsLimit), each resumed after
 * its last row when a transient error cuts the stream, and hands them out in batches of
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
  let range: KeyRange | undefined = { start: s.start, end: s.end };
  const prefix = prefixOfFilter(s.filter);
  if (prefix !== undefined) range = intersectPrefixRange(range, prefix);
  if (range === undefined || (range.end.length > 0 && compareBytes(range.start, range.end) >= 0)) return;
  const filter = readFilter(t.spec, s, ctx.clock());
  let remaining = s.limit;
  let after: Uint8Array | undefined;
  for (;;) {
    const page = Math.min(remaining, Math.max(s.batchRows, MIN_PAGE_ROWS));
    const rows = await readPage(ctx, t, range, after, page, s.reverse, filter, s.signal);
    t.counters.recordRead(rows.map((r) => r.key), after ?? range.start);
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
    const rows = await readPage(ctx, t, range, after, batchRows, false, filter, signal);
    if (rows.length > 0) yield rows.map((r) => r.key);
    if (rows.length < batchRows) return;
    after = rows[rows.length - 1]!.key;
  }
}

/** Up to `limit` rows of `range` after (forward) or before (reverse) `after`. */
async function readPage(
  ctx: StoreContext, t: TableState, range: KeyRange, after: Uint8Array | undefined, limit: number,
  reverse: boolean, filter: IRowFilter, signal: AbortSignal | undefined,
): Promise<Row[]> {
  const out: Row[] = [];
  await guarded(ctx, `scan of table ${t.spec.name}`, () => {
    const from = out.length > 0 ? out[out.length - 1]!.key : after;
    const merger = new RowMerger((row) => out.push(row));
    const req: IReadRowsRequest = { tableName: t.tableName, filter, rowsLimit: String(limit - out.length) };
    const rowRange = rangeOf(range, from, reverse);
    if (rowRange !== undefined) req.rows = { rowRanges: [rowRange] };
    if (reverse) req.reversed = true;
    return ctx.conn.readRows(req, (r) => merger.push(r), signal);
  }, signal);
  return out;
}

type RowRange = NonNullable<NonNullable<IReadRowsRequest['rows']>['rowRanges']>[number];

function rangeOf(range: KeyRange, from: Uint8Array | undefined, reverse: boolean): RowRange | undefined {
  const r: RowRange = {};
  if (!reverse && from !== undefined) r.startKeyOpen = Buffer.from(from);
  else if (range.start.length > 0) r.startKeyClosed = Buffer.from(range.start);
  if (reverse && from !== undefined) r.endKeyOpen = Buffer.from(from);
  else if (range.end.length > 0) r.endKeyOpen = Buffer.from(range.end);
  return Object.keys(r).length === 0 ? undefined : r;
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
