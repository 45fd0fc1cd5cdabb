/**
 * What the hour compactor still owes in a shared store, read by the test process itself
 * (not through a server): the rows of given metrics and hours whose data-point cells are
 * not one compressed hour cell (tsdb/compact/hour-compactor.ts needsCompaction), and their
 * data-point cells. Metric UIDs come from the UID table; each (salt bucket, metric) is read
 * as one key range of the data table over the hours.
 */
import { utf8 } from '../../../core/api/bytes.js';
import type { Store } from '../../../core/api/store.js';
import { needsCompaction } from '../../../tsdb/compact/hour-compactor.js';
import { isDataPointCell } from '../../../tsdb/query/row-merge.js';
import { writeBaseTimeAt } from '../../../tsdb/schema/row-key.js';
import { saltBytes } from '../../../tsdb/schema/salt.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';
import { DATA_FAMILY, DATA_TABLE } from '../../../tsdb/tables.js';
import { UID_FAMILY_ID, UID_QUALIFIER, UID_TABLE } from '../../../tsdb/uid/uid-kind.js';

export interface RawRows {
  /** Rows of the hours not yet one compressed cell. */
  readonly rows: number;
  /** Data-point cells of those rows. */
  readonly cells: number;
  /** Rows of the hours. */
  readonly total: number;
}

/** The rows of `metrics` in hours [fromSec, toSec) that wait for hour compaction. */
export async function rawRowsOf(store: Store, w: SchemaWidths, metrics: readonly string[], fromSec: number, toSec: number): Promise<RawRows> {
  const uids = await store.openTable(UID_TABLE);
  const data = await store.openTable(DATA_TABLE);
  const qualifier = utf8(UID_QUALIFIER.metric);
  let rows = 0;
  let cells = 0;
  let total = 0;
  for (const name of metrics) {
    const [row] = await uids.get([utf8(name)], { families: [UID_FAMILY_ID] });
    const uid = row?.cells.find((c) => Buffer.compare(c.qualifier, qualifier) === 0)?.value;
    if (uid === undefined) throw new Error(`no metric UID for ${name}`);
    for (let b = 0; b < (w.saltWidth === 0 ? 1 : w.saltBuckets); b++) {
      const start = new Uint8Array(w.saltWidth + w.metric + 4);
      start.set(saltBytes(b, w.saltWidth));
      start.set(uid, w.saltWidth);
      const end = start.slice();
      writeBaseTimeAt(start, w.saltWidth + w.metric, fromSec);
      writeBaseTimeAt(end, w.saltWidth + w.metric, toSec);
      for await (const batch of data.scan({ start, end, families: [DATA_FAMILY] })) {
        for (const r of batch) {
          total++;
          if (!needsCompaction(r.cells)) continue;
          rows++;
          cells += r.cells.filter((c) => isDataPointCell(c.qualifier)).length;
        }
      }
    }
  }
  return { rows, cells, total };
}
