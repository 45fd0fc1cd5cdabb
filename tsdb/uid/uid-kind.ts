/**
 * The three UID kinds and how they are named in the UID table and in the API
 * (tsdb/SCHEMA.md "UID table"). OpenTSDB's qualifiers are `metrics`, `tagk`, `tagv`.
 */

export const UID_KINDS = ['metric', 'tagk', 'tagv'] as const;
export type UidKind = (typeof UID_KINDS)[number];

/** Qualifier of the kind in the UID table (OpenTSDB's spelling). */
export const UID_QUALIFIER: Readonly<Record<UidKind, string>> = { metric: 'metrics', tagk: 'tagk', tagv: 'tagv' };

/** Accepts the API and CLI spellings: metric/metrics, tagk, tagv (any case). */
export function parseUidKind(s: string): UidKind | undefined {
  switch (s.toLowerCase()) {
    case 'metric':
    case 'metrics':
      return 'metric';
    case 'tagk':
      return 'tagk';
    case 'tagv':
      return 'tagv';
    default:
      return undefined;
  }
}

/** The table that holds the UID mappings, and its families. */
export const UID_TABLE = 'tsdb-uid';
export const UID_FAMILY_ID = 'id';
export const UID_FAMILY_NAME = 'name';
/** Row of the per-kind id counters. */
export const UID_COUNTER_ROW = Uint8Array.of(0);
