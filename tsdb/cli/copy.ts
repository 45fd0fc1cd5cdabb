/**
 * `horae copy`: every table of one store into another — the migration between the
 * embedded store and Bigtable (docs/SCALING.md), either way. Works on the Store interface
 * only: each table is created in the destination with the same spec (families, versions,
 * TTLs, split points; an existing table of that name is written into), then its rows are
 * scanned with every version kept and written with their timestamps, batch by batch.
 * UIDs, the series index and compressed hours travel as the cells they are, so the copy
 * answers every query as the source does. Cells expired by TTL or deleted are not copied,
 * nor rows `options.expired` says hold only expired data (copy-retention.ts: the data rows
 * past the configured retention).
 * The source must not change during the copy (stop the servers writing to it). The
 * change log and heartbeats of servers sharing the source (tsdb-changes, tsdb-servers)
 * are not copied: they only mean something to the servers of the store they were written in.
 */
import type { Mutation, RowMutation, Store } from '../../core/api/store.js';
import { CHANGES_TABLE } from '../meta/change-log.js';
import { SERVERS_TABLE } from '../meta/servers.js';
import type { ExpiredRow } from './copy-retention.js';

/** Tables of the servers' coordination, left out of a copy. */
const NOT_COPIED: ReadonlySet<string> = new Set([CHANGES_TABLE, SERVERS_TABLE]);

export interface CopyProgress {
  /** Called after each table with its row and cell counts (and rows left out as expired). */
  table?(name: string, rows: number, cells: number, expired: number): void;
  /** Rows of expired data, left out. */
  readonly expired?: ExpiredRow;
}

export interface CopyResult {
  readonly tables: number;
  readonly rows: number;
  readonly cells: number;
  /** Rows left out as expired. */
  readonly expiredRows: number;
}

/** Rows per scan batch and per mutate call. */
const BATCH_ROWS = 500;

export async function copyStore(from: Store, to: Store, progress: CopyProgress = {}): Promise<CopyResult> {
  let rows = 0;
  let cells = 0;
  let expiredRows = 0;
  const names = (await from.listTables()).filter((n) => !NOT_COPIED.has(n));
  for (const name of names) {
    const src = await from.openTable(name);
    const dst = await to.createTable(src.spec, { ifNotExists: true });
    const maxVersions = Math.max(...src.spec.families.map((f) => f.maxVersions ?? 1));
    let tableRows = 0;
    let tableCells = 0;
    let tableExpired = 0;
    for await (const all of src.scan({ maxVersions, batchRows: BATCH_ROWS })) {
      const expired = progress.expired;
      const batch = expired === undefined ? all : all.filter((row) => !expired(name, row.key));
      tableExpired += all.length - batch.length;
      if (batch.length === 0) continue;
      const out: RowMutation[] = batch.map((row) => ({
        key: row.key,
        mutations: row.cells.map((c): Mutation => ({ type: 'put', family: c.family, qualifier: c.qualifier, value: c.value, timestamp: c.timestamp })),
      }));
      await dst.mutate(out);
      tableRows += batch.length;
      for (const r of batch) tableCells += r.cells.length;
    }
    progress.table?.(name, tableRows, tableCells, tableExpired);
    rows += tableRows;
    cells += tableCells;
    expiredRows += tableExpired;
  }
  return { tables: names.length, rows, cells, expiredRows };
}
