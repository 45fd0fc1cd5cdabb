/**
 * The store tables of the time-series layer and how they are created
 * (tsdb/SCHEMA.md "Tables"): the data table, pre-split on salt buckets so that each
 * bucket starts in its own region, and the UID table.
 */
import type { TableSpec } from '../core/api/store.js';
import { saltSplitKeys } from './schema/salt.js';
import type { SchemaWidths } from './schema/widths.js';
import { UID_FAMILY_ID, UID_FAMILY_NAME, UID_TABLE } from './uid/uid-kind.js';

export const DATA_TABLE = 'tsdb';
export const DATA_FAMILY = 't';

/** The data family's row transform (tsdb/compact/hour-transform.ts); stores without row transforms ignore it. */
export const DATA_TRANSFORM = 'tsdb.hour';

/** Data table: one version per cell (a rewrite of a timestamp replaces it). */
export function dataTableSpec(w: SchemaWidths): TableSpec {
  return { name: DATA_TABLE, families: [{ name: DATA_FAMILY, maxVersions: 1, transform: DATA_TRANSFORM }], splitPoints: saltSplitKeys(w) };
}

export function uidTableSpec(): TableSpec {
  return { name: UID_TABLE, families: [{ name: UID_FAMILY_ID, maxVersions: 1 }, { name: UID_FAMILY_NAME, maxVersions: 1 }] };
}
