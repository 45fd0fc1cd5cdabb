/**
 * Deleting series for good (issue 31; VictoriaMetrics' delete_series, Prometheus'
 * admin delete, in OpenTSDB's `metric{tag=filter,…}` syntax): every point of every
 * matching series at any time, its series-index row, and what the layer keeps in memory
 * of it (newest points, newest hours, UID and series caches). `DELETE /api/query` is
 * different and unchanged: it deletes the hour rows a query reads, nothing else.
 *
 *  - `metric` (or `metric{}`): the whole metric — one range delete per salt bucket over
 *    its rows (the store drops whole files inside them and the rest at compaction: no
 *    marker per row or cell), one over its series-index rows, then its name and UID as
 *    OpenTSDB's `uid delete` does (tsdb/uid/uid-table.ts `delete`): the name can be
 *    written again and gets a new UID; the old UID is never reused.
 *  - `metric{k=v,…}` (any OpenTSDB filter: literal_or, wildcard, regexp, `*`): the series
 *    of the metric in the series index whose tags match; their rows are found by one scan
 *    per salt bucket of the metric's rows (a key filter on their TSUIDs) and deleted one
 *    row (series-hour) at a time; their index rows go; UIDs stay (other series use them).
 *
 * Points written to a series while it is being deleted may or may not survive (stop the
 * writers first); a delete that failed part-way can be run again.
 */
import { prefixEnd } from '../../core/api/bytes.js';
import type { RowMutation } from '../../core/api/store.js';
import { TsdbError } from '../errors.js';
import { parseMetricWithFilters } from '../query/query-string.js';
import { tsuidKeyRegex } from '../query/row-key-filter.js';
import { matchAllTagFilters } from '../query/tag-filter.js';
import { saltBytes } from '../schema/salt.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { Tsdb } from '../tsdb.js';

/** What one match deleted. */
export interface SeriesDeleted {
  readonly match: string;
  readonly metric: string;
  /** Series removed from the series index. */
  readonly series: number;
  /** Hour rows deleted one by one (series deletes); null for a whole metric (range deletes). */
  readonly rows: number | null;
  /** True when the whole metric went, with its name and UID. */
  readonly metricDeleted: boolean;
}

/** Rows per mutate() of a series delete. */
const DELETE_BATCH_ROWS = 1000;

/**
 * Deletes what `match` (`metric` or `metric{filters}`) names. Rejects with
 * TSDB_ILLEGAL_ARGUMENT for a malformed match and TSDB_NO_SUCH_NAME for an unknown metric.
 */
export async function deleteSeries(tsdb: Tsdb, match: string, signal?: AbortSignal): Promise<SeriesDeleted> {
  const { metric, filters } = parseMetricWithFilters(match.trim());
  const uid = await tsdb.metrics.requireId(metric);
  try {
    if (filters.length === 0) {
      const all = await tsdb.index.ofMetric(uid, signal);
      const series = all.length;
      for (const p of saltPrefixes(tsdb.widths, uid)) {
        signal?.throwIfAborted();
        await tsdb.data.deleteRange({ start: p, end: prefixEnd(p) });
      }
      await tsdb.index.remove(uid);
      await tsdb.metrics.delete(metric);
      await tsdb.rowsDeleted(all);
      return { match, metric, series, rows: null, metricDeleted: true };
    }
    const matching: Uint8Array[] = [];
    for (const tsuid of await tsdb.index.ofMetric(uid, signal)) {
      const named = tsdb.catalog.names.names(tsuid);
      const names = named instanceof Promise ? await named : named;
      if (names !== undefined && matchAllTagFilters(filters, names.tags)) matching.push(tsuid);
    }
    let rows = 0;
    if (matching.length > 0) {
      const pattern = tsuidKeyRegex(tsdb.widths, matching);
      for (const p of saltPrefixes(tsdb.widths, uid)) {
        let batch: RowMutation[] = [];
        for await (const found of tsdb.data.scan({ start: p, end: prefixEnd(p), filter: { kind: 'keyRegex', pattern }, ...(signal === undefined ? {} : { signal }) })) {
          for (const r of found) batch.push({ key: r.key, mutations: [{ type: 'deleteRow' }] });
          if (batch.length >= DELETE_BATCH_ROWS) {
            await tsdb.data.mutate(batch, { durability: 'sync' });
            rows += batch.length;
            batch = [];
          }
        }
        if (batch.length > 0) await tsdb.data.mutate(batch, { durability: 'sync' });
        rows += batch.length;
      }
      await tsdb.index.remove(uid, matching);
      await tsdb.rowsDeleted(matching);
    }
    return { match, metric, series: matching.length, rows, metricDeleted: false };
  } finally {
    // Whatever went (even part-way): no cache of this server may answer for it (newest
    // points and hours, the writers' series entries, names and UIDs). Other servers on the
    // same store hear of the deleted rows (their newest points) through the catalog's
    // change log (Tsdb.rowsDeleted), not of a deleted name: see README "Deleting series".
    tsdb.dropCaches();
  }
}

/** The row-key prefix of a metric in each salt bucket ([salt][metric UID]). */
function saltPrefixes(w: SchemaWidths, uid: Uint8Array): Uint8Array[] {
  if (w.saltWidth === 0) return [uid];
  return Array.from({ length: w.saltBuckets }, (_, b) => {
    const p = new Uint8Array(w.saltWidth + uid.length);
    p.set(saltBytes(b, w.saltWidth));
    p.set(uid, w.saltWidth);
    return p;
  });
}

/** Checks a match's syntax without touching the store (a 400 before anything is deleted). */
export function checkMatch(match: string): void {
  if (typeof match !== 'string' || match.trim() === '') throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'Missing match: give match[]=metric or match[]=metric{tag=filter,...}');
  parseMetricWithFilters(match.trim());
}
