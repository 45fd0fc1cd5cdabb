/**
 * Store mutations → Bigtable mutations. Timestamps are always set client-side (a put
 * without one gets the store clock, read once per call so puts of one call share it), so
 * every MutateRows entry is idempotent and may be re-sent after a transient failure.
 *
 *   put                      SetCell at t·1000 µs
 *   deleteCell [upTo]        DeleteFromColumn, time range [0, (upTo+1)·1000)
 *   deleteVersion t          DeleteFromColumn, time range [t·1000, (t+1)·1000)
 *   deleteFamily             DeleteFromFamily
 *   deleteRow                DeleteFromRow
 *   deleteFamily/Row upTo    Bigtable has no time range on these: the row's columns are
 *                            read first and each gets DeleteFromColumn [0, upTo]; the write
 *                            is then a CheckAndMutate that only applies when no other
 *                            column with such old cells appeared meanwhile (expand.ts).
 */
import { compareBytes, latin1 } from '../../../core/api/bytes.js';
import { StoreError } from '../../../core/api/errors.js';
import { hexPreview } from '../../../core/api/validate.js';
import type { Mutation, RowMutation } from '../../../core/api/store.js';
import type { IMutation } from './client.js';
import { microsOf } from './timestamps.js';

/**
 * Rejects timestamps and `upTo` above `max` (Bigtable's year-9999 limit) with
 * STORE_INVALID_ARGUMENT; run after validateRowMutations, before anything is sent.
 */
export function validateTimestampLimit(rows: readonly RowMutation[], max: number): void {
  for (const r of rows) {
    for (const m of r.mutations) {
      const ts = m.type === 'put' || m.type === 'deleteVersion' ? m.timestamp : m.upTo;
      if (ts !== undefined && ts > max) {
        throw new StoreError('STORE_INVALID_ARGUMENT', `bigtable: row ${hexPreview(r.key)}: ${m.type} timestamp ${ts} is after ${max}, the last one Bigtable stores (year 9999)`);
      }
    }
  }
}

/** True for the deletes that need the row's columns first. */
export function needsColumns(m: Mutation): boolean {
  return (m.type === 'deleteFamily' || m.type === 'deleteRow') && m.upTo !== undefined;
}

/** The columns of a row, per family: qualifiers as latin1 strings → bytes. */
export type ColumnSet = Map<string, Map<string, Uint8Array>>;

/**
 * Converts one row's mutations. `columns` (REQUIRED when some mutation needsColumns) are
 * the row's existing columns holding cells at or below the deletes' upTo; columns put
 * earlier in the same list are added as they go, so `put x; deleteRow upTo` covers x.
 */
export function toBigtableMutations(mutations: readonly Mutation[], now: number, columns?: ColumnSet): IMutation[] {
  const out: IMutation[] = [];
  const cols: ColumnSet | undefined = columns === undefined ? undefined : cloneColumns(columns);
  for (const m of mutations) {
    switch (m.type) {
      case 'put':
        out.push({ setCell: {
          familyName: m.family, columnQualifier: Buffer.from(m.qualifier),
          timestampMicros: microsOf(m.timestamp ?? now), value: Buffer.from(m.value),
        } });
        if (cols !== undefined) addColumn(cols, m.family, m.qualifier);
        break;
      case 'deleteCell':
        out.push({ deleteFromColumn: {
          familyName: m.family, columnQualifier: Buffer.from(m.qualifier),
          ...(m.upTo === undefined ? {} : { timeRange: { startTimestampMicros: '0', endTimestampMicros: microsOf(m.upTo + 1) } }),
        } });
        break;
      case 'deleteVersion':
        out.push({ deleteFromColumn: {
          familyName: m.family, columnQualifier: Buffer.from(m.qualifier),
          timeRange: { startTimestampMicros: microsOf(m.timestamp), endTimestampMicros: microsOf(m.timestamp + 1) },
        } });
        break;
      case 'deleteFamily':
        if (m.upTo === undefined) out.push({ deleteFromFamily: { familyName: m.family } });
        else out.push(...columnDeletes(requireColumns(cols), m.family, m.upTo));
        break;
      case 'deleteRow':
        if (m.upTo === undefined) out.push({ deleteFromRow: {} });
        else for (const family of requireColumns(cols).keys()) out.push(...columnDeletes(cols!, family, m.upTo));
        break;
    }
  }
  return out;
}

function requireColumns(cols: ColumnSet | undefined): ColumnSet {
  if (cols === undefined) throw new Error('BUG: deleteFamily/deleteRow with upTo converted without the row\'s columns');
  return cols;
}

function columnDeletes(cols: ColumnSet, family: string, upTo: number): IMutation[] {
  const quals = [...(cols.get(family)?.values() ?? [])].sort(compareBytes);
  return quals.map((q) => ({ deleteFromColumn: {
    familyName: family, columnQualifier: Buffer.from(q),
    timeRange: { startTimestampMicros: '0', endTimestampMicros: microsOf(upTo + 1) },
  } }));
}

export function addColumn(cols: ColumnSet, family: string, qualifier: Uint8Array): void {
  let f = cols.get(family);
  if (f === undefined) {
    f = new Map();
    cols.set(family, f);
  }
  f.set(latin1(qualifier), qualifier);
}

function cloneColumns(cols: ColumnSet): ColumnSet {
  return new Map([...cols].map(([f, qs]) => [f, new Map(qs)]));
}

/**
 * Merges RowMutations of the same key into one entry, mutations in call order: MutateRows
 * gives no order between entries, and the Store applies a call's rows in order.
 */
export function mergeSameKeys(rows: readonly RowMutation[]): RowMutation[] {
  const byKey = new Map<string, { key: Uint8Array; mutations: Mutation[] }>();
  const out: { key: Uint8Array; mutations: Mutation[] }[] = [];
  for (const r of rows) {
    const k = latin1(r.key);
    const seen = byKey.get(k);
    if (seen !== undefined) {
      seen.mutations.push(...r.mutations);
    } else {
      const entry = { key: r.key, mutations: [...r.mutations] };
      byKey.set(k, entry);
      out.push(entry);
    }
  }
  return out;
}

/** Rough request bytes of one entry (for chunking MutateRows under the size limit). */
export function entryBytes(key: Uint8Array, mutations: readonly IMutation[]): number {
  let n = key.length + 16;
  for (const m of mutations) {
    n += 32;
    const s = m.setCell;
    if (s) n += (s.columnQualifier as Uint8Array).length + (s.value as Uint8Array).length + (s.familyName?.length ?? 0);
    const d = m.deleteFromColumn;
    if (d) n += (d.columnQualifier as Uint8Array).length + (d.familyName?.length ?? 0);
  }
  return n;
}
