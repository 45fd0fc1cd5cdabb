/**
 * mutate(): validated as a whole first (a bad batch writes nothing), then sent as
 * MutateRows requests chunked under Bigtable's limits, several in flight. Entries that fail
 * with a transient status are re-sent alone, with backoff; entries never acknowledged by a
 * broken stream count as failed-transient. Rows with deleteFamily/deleteRow `upTo` go
 * through a guarded CheckAndMutate each (mutations.ts).
 */
import { latin1 } from '../../../core/api/bytes.js';
import { StoreError, throwIfAborted } from '../../../core/api/errors.js';
import type { Mutation, RowMutation, TableSpec, WriteOptions } from '../../../core/api/store.js';
import { hexPreview, validateRowMutations, validateWriteOptions } from '../../../core/api/validate.js';
import type { IMutation, IRowFilter } from './client.js';
import { checkOpen, closedError } from './context.js';
import type { StoreContext, TableState } from './context.js';
import { isTransient, storeErrorOf } from './errors.js';
import { familyPattern } from './filters.js';
import { addColumn, entryBytes, mergeSameKeys, needsColumns, toBigtableMutations, validateTimestampLimit } from './mutations.js';
import type { ColumnSet } from './mutations.js';
import { patternBytes, re2OfComplement } from './regex.js';
import { backoffMs, sleep } from './retry.js';
import { RowMerger } from './rows.js';
import { BIGTABLE_MAX_TIMESTAMP, microsOf } from './timestamps.js';
import { guarded } from './table-read.js';

interface Entry {
  readonly rowKey: Buffer;
  readonly mutations: IMutation[];
  readonly bytes: number;
  readonly cells: number;
}

interface Failure {
  readonly key: Uint8Array;
  readonly error: unknown;
}

/** Attempts to apply a guarded CheckAndMutate before giving up on a busy row. */
const GUARDED_ATTEMPTS = 20;

export async function mutateRows(ctx: StoreContext, t: TableState, rows: readonly RowMutation[], opts: WriteOptions | undefined): Promise<void> {
  checkOpen(ctx);
  validateRowMutations(t.spec, rows, ctx.caps);
  validateTimestampLimit(rows, BIGTABLE_MAX_TIMESTAMP);
  validateWriteOptions(opts);
  throwIfAborted(opts?.signal);
  const now = ctx.clock();
  const simple: Entry[] = [];
  const guardedRows: RowMutation[] = [];
  for (const r of mergeSameKeys(rows)) {
    if (r.mutations.length === 0) continue;
    if (r.mutations.some(needsColumns)) {
      guardedRows.push(r);
      continue;
    }
    const mutations = toBigtableMutations(r.mutations, now);
    simple.push({ rowKey: Buffer.from(r.key), mutations, bytes: entryBytes(r.key, mutations), cells: countPuts(r.mutations) });
  }
  const failures = await writeEntries(ctx, t, simple);
  for (const r of guardedRows) {
    try {
      await mutateWithColumns(ctx, t, r.key, r.mutations, now);
    } catch (error) {
      failures.push({ key: r.key, error });
    }
  }
  const failed = new Set(failures.map((f) => latin1(f.key)));
  t.counters.recordWrite([...simple.map((e) => ({ key: e.rowKey as Uint8Array, cells: e.cells, bytes: e.bytes })),
    ...guardedRows.map((r) => ({ key: r.key, cells: countPuts(r.mutations), bytes: 0 }))].filter((e) => !failed.has(latin1(e.key))));
  if (failures.length === 0) return;
  if (ctx.closed) throw closedError();
  const first = storeErrorOf(`write to table ${t.spec.name}`, failures[0]!.error);
  if (failed.size === simple.length + guardedRows.length) throw first;
  throw new StoreError('STORE_PARTIAL_WRITE',
    `bigtable: write to table ${t.spec.name}: ${failed.size} of ${simple.length + guardedRows.length} rows not applied (first: ${hexPreview(failures[0]!.key)}: ${first.message})`,
    { cause: first, failedKeys: failures.map((f) => f.key), retryable: first.retryable });
}

function countPuts(ms: readonly Mutation[]): number {
  let n = 0;
  for (const m of ms) if (m.type === 'put') n++;
  return n;
}

/** Sends entries in chunks, `parallelRequests` at a time; returns what finally failed. */
async function writeEntries(ctx: StoreContext, t: TableState, entries: readonly Entry[]): Promise<Failure[]> {
  const chunks = chunk(entries, ctx.limits.maxMutationsPerRequest, ctx.limits.maxRequestBytes);
  const failures: Failure[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chunks.length) failures.push(...await writeChunk(ctx, t, chunks[next++]!));
  };
  await Promise.all(Array.from({ length: Math.min(ctx.limits.parallelRequests, chunks.length) }, worker));
  return failures;
}

export function chunk<E extends { mutations: readonly unknown[]; bytes: number }>(entries: readonly E[], maxMutations: number, maxBytes: number): E[][] {
  const out: E[][] = [];
  let cur: E[] = [];
  let muts = 0;
  let bytes = 0;
  for (const e of entries) {
    if (cur.length > 0 && (muts + e.mutations.length > maxMutations || bytes + e.bytes > maxBytes)) {
      out.push(cur);
      cur = [];
      muts = 0;
      bytes = 0;
    }
    cur.push(e);
    muts += e.mutations.length;
    bytes += e.bytes;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** One chunk with retries of its failed entries only. */
async function writeChunk(ctx: StoreContext, t: TableState, entries: readonly Entry[]): Promise<Failure[]> {
  let pending = entries;
  const failures: Failure[] = [];
  for (let n = 1; pending.length > 0; n++) {
    const statuses: ({ code?: number | null; message?: string | null } | undefined)[] = new Array(pending.length);
    let streamError: unknown;
    try {
      await ctx.conn.mutateRows({ tableName: t.tableName, entries: [...pending] }, (resp) => {
        for (const e of resp.entries ?? []) statuses[Number(e.index)] = e.status ?? { code: 0 };
      });
    } catch (err) {
      streamError = err;
    }
    const retry: Entry[] = [];
    pending.forEach((e, i) => {
      const st = statuses[i];
      if (st !== undefined && (st.code ?? 0) === 0) return;
      const error = st === undefined
        ? streamError ?? Object.assign(new Error('no status for the entry'), { code: 13 })
        : Object.assign(new Error(st.message ?? `status ${st.code}`), { code: st.code, details: st.message });
      if (isTransient(error) && n < ctx.retry.attempts && !ctx.closed) retry.push(e);
      else failures.push({ key: e.rowKey, error });
    });
    pending = retry;
    if (pending.length > 0) await sleep(backoffMs(ctx.retry, n));
  }
  return failures;
}

/**
 * A row whose mutations delete a family or the row up to a timestamp: read the columns
 * holding cells at or before the latest upTo, then CheckAndMutate with a predicate that
 * matches only if some OTHER column holds such cells by then (a concurrent writer added
 * one): in that case nothing was applied and the row is read again.
 */
export async function mutateWithColumns(ctx: StoreContext, t: TableState, key: Uint8Array, mutations: readonly Mutation[], now: number): Promise<void> {
  const upTo = Math.max(...mutations.filter(needsColumns).map((m) => (m as { upTo: number }).upTo));
  for (let n = 1; n <= GUARDED_ATTEMPTS; n++) {
    const cols = await readColumns(ctx, t, key, upTo);
    const muts = toBigtableMutations(mutations, now, cols);
    if (muts.length === 0) return;
    const predicate = otherColumnsFilter(t.spec, cols, upTo);
    const matched = await guarded(ctx, `write to table ${t.spec.name}`,
      () => ctx.conn.checkAndMutateRow({ tableName: t.tableName, rowKey: Buffer.from(key), predicateFilter: predicate, falseMutations: muts }));
    if (!matched) return;
    await sleep(backoffMs(ctx.retry, Math.min(n, 6)));
  }
  throw new StoreError('STORE_UNAVAILABLE', `bigtable: row ${hexPreview(key)} of table ${t.spec.name} kept gaining columns during a delete`, { retryable: true });
}

/** The row's columns holding a cell with timestamp <= upTo, values stripped. */
export async function readColumns(ctx: StoreContext, t: TableState, key: Uint8Array, upTo: number): Promise<ColumnSet> {
  const cols: ColumnSet = new Map();
  const filter: IRowFilter = { chain: { filters: [
    { timestampRangeFilter: { endTimestampMicros: microsOf(upTo + 1) } },
    { cellsPerColumnLimitFilter: 1 },
    { stripValueTransformer: true },
  ] } };
  await guarded(ctx, `read of table ${t.spec.name}`, () => {
    const merger = new RowMerger((row) => {
      for (const c of row.cells) addColumn(cols, c.family, c.qualifier);
    });
    return ctx.conn.readRows({ tableName: t.tableName, rows: { rowKeys: [Buffer.from(key)] }, filter }, (r) => merger.push(r));
  });
  return cols;
}

/** Cells at or before upTo in columns outside `cols`, any family. */
function otherColumnsFilter(spec: TableSpec, cols: ColumnSet, upTo: number): IRowFilter {
  const branches: IRowFilter[] = spec.families.map((f) => ({ chain: { filters: [
    { familyNameRegexFilter: familyPattern(f.name) },
    { columnQualifierRegexFilter: patternBytes(re2OfComplement([...(cols.get(f.name)?.values() ?? [])])) },
    { timestampRangeFilter: { endTimestampMicros: microsOf(upTo + 1) } },
  ] } }));
  return branches.length === 1 ? branches[0]! : { interleave: { filters: branches } };
}
