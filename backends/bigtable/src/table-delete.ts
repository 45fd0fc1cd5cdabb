/**
 * deleteRange(): a range that is exactly the rows of one key prefix (how the time-series
 * layer deletes a metric: one prefix per salt bucket) or the whole table is one
 * DropRowRange, the admin call that deletes those rows inside Bigtable without reading
 * them. Any other range is read (keys only: one cell a row, its value stripped) and each
 * row deleted (DeleteFromRow), in batches. Either way only the rows there now go; later
 * writes are kept.
 */
import { equalBytes, prefixEnd } from '../../../core/api/bytes.js';
import { throwIfAborted } from '../../../core/api/errors.js';
import type { KeyRange, RowMutation } from '../../../core/api/store.js';
import { validateKeyRange } from '../../../core/api/validate.js';
import { checkOpen } from './context.js';
import type { StoreContext, TableState } from './context.js';
import { guarded, scanKeys } from './table-read.js';
import { mutateRows } from './table-write.js';

/** Rows deleted per mutate() when the range is not a prefix. */
const DELETE_BATCH_ROWS = 1000;

export async function deleteRange(ctx: StoreContext, t: TableState, range: KeyRange, signal: AbortSignal | undefined): Promise<void> {
  checkOpen(ctx);
  validateKeyRange(range, ctx.caps);
  throwIfAborted(signal);
  const { start, end } = range;
  const wholeTable = start.length === 0 && end.length === 0;
  if (wholeTable || (start.length > 0 && equalBytes(end, prefixEnd(start)))) {
    await guarded(ctx, `delete rows of table ${t.spec.name}`, () => ctx.conn.dropRowRange(t.tableId, wholeTable ? undefined : start), signal);
    return;
  }
  let batch: RowMutation[] = [];
  for await (const keys of scanKeys(ctx, t, { start, end }, DELETE_BATCH_ROWS, signal)) {
    for (const key of keys) batch.push({ key, mutations: [{ type: 'deleteRow' }] });
    if (batch.length >= DELETE_BATCH_ROWS) {
      await mutateRows(ctx, t, batch, { durability: 'sync', ...(signal === undefined ? {} : { signal }) });
      batch = [];
    }
  }
  if (batch.length > 0) await mutateRows(ctx, t, batch, { durability: 'sync', ...(signal === undefined ? {} : { signal }) });
}
