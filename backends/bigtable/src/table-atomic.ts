/**
 * increment and checkAndPut.
 *
 * increment: ReadModifyWriteRow where the family has no TTL (atomic in Bigtable; the new
 * cell gets the server's time, or the old cell's when that is in the future). Where the
 * family has a TTL, Bigtable would add to an expired cell its lazy GC has not collected
 * yet, and where the store runs on an injected clock (tests) the new cell must carry that
 * clock's time, so the increment is a compare-and-set loop instead: read the newest live version,
 * CheckAndMutate on exactly that version (timestamp and value), retry when it moved.
 * Increments of one cell from this process queue behind each other, so they do not race
 * each other; other processes are handled by the compare-and-set.
 *
 * checkAndPut: one CheckAndMutate whose predicate selects the newest live version of the
 * checked cell with exactly the expected value (true mutations), or any live version when
 * the cell must be absent (false mutations). Neither call is retried: re-sending one
 * that may have been applied could apply it twice.
 */
import { decodeInt64, encodeInt64 } from '../../../core/api/bytes.js';
import { StoreError, throwIfAborted } from '../../../core/api/errors.js';
import type { CellRef, Mutation, WriteOptions } from '../../../core/api/store.js';
import {
  effectiveTtlMs, validateCellRef, validateKey, validateRowMutations, validateWriteOptions,
} from '../../../core/api/validate.js';
import type { IRowFilter } from './client.js';
import { asBytes } from './client.js';
import { checkOpen, closedError } from './context.js';
import type { StoreContext, TableState } from './context.js';
import { GRPC, grpcCode, storeErrorOf } from './errors.js';
import { newestVersionFilter, ttlFloorMs } from './filters.js';
import { needsColumns, toBigtableMutations, validateTimestampLimit } from './mutations.js';
import { patternBytes, re2OfExact } from './regex.js';
import { backoffMs, sleep } from './retry.js';
import { RowMerger } from './rows.js';
import { guarded } from './table-read.js';
import { readColumns } from './table-write.js';
import { BIGTABLE_MAX_TIMESTAMP, microsOf } from './timestamps.js';

const CAS_ATTEMPTS = 100;

export async function increment(ctx: StoreContext, t: TableState, key: Uint8Array, cell: CellRef, delta: bigint, opts?: WriteOptions): Promise<bigint> {
  checkOpen(ctx);
  validateKey(key, ctx.caps);
  validateCellRef(t.spec, cell);
  if (typeof delta !== 'bigint') throw new TypeError(`delta must be a bigint, got ${typeof delta}`);
  validateWriteOptions(opts);
  throwIfAborted(opts?.signal);
  const family = t.spec.families.find((f) => f.name === cell.family)!;
  const ttl = effectiveTtlMs(t.spec, family);
  const result = ttl === undefined && ctx.realClock
    ? await readModifyWrite(ctx, t, key, cell, delta)
    : await queued(t, key, cell, () => compareAndSetIncrement(ctx, t, key, cell, delta, ttl));
  t.counters.recordWrite([{ key, cells: 1, bytes: key.length + cell.qualifier.length + 8 }]);
  return result;
}

async function readModifyWrite(ctx: StoreContext, t: TableState, key: Uint8Array, cell: CellRef, delta: bigint): Promise<bigint> {
  let row;
  try {
    row = await ctx.conn.readModifyWriteRow({
      tableName: t.tableName, rowKey: Buffer.from(key),
      rules: [{ familyName: cell.family, columnQualifier: Buffer.from(cell.qualifier), incrementAmount: BigInt.asIntN(64, delta).toString() }],
    });
  } catch (err) {
    if (ctx.closed) throw closedError();
    const code = grpcCode(err);
    // Bigtable refuses to increment a value that is not 8 bytes (the emulator says UNKNOWN).
    if (code === GRPC.INVALID_ARGUMENT || code === GRPC.FAILED_PRECONDITION || code === GRPC.UNKNOWN) {
      throw new StoreError('STORE_INVALID_ARGUMENT', `bigtable: increment of table ${t.spec.name}: the cell is not an 8-byte counter`, { cause: err });
    }
    throw storeErrorOf(`increment of table ${t.spec.name}`, err);
  }
  const value = asBytes(row.families?.[0]?.columns?.[0]?.cells?.[0]?.value);
  if (value.length !== 8) throw new StoreError('STORE_IO', `bigtable: increment of table ${t.spec.name} returned ${value.length} bytes`);
  return decodeInt64(value);
}

/** Runs `fn` after every earlier queued increment of the same cell. */
async function queued<T>(t: TableState, key: Uint8Array, cell: CellRef, fn: () => Promise<T>): Promise<T> {
  const id = `${Buffer.from(key).toString('hex')}/${cell.family}/${Buffer.from(cell.qualifier).toString('hex')}`;
  const prev = t.incrementQueues.get(id) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => undefined);
  t.incrementQueues.set(id, tail);
  try {
    return await run;
  } finally {
    if (t.incrementQueues.get(id) === tail) t.incrementQueues.delete(id);
  }
}

async function compareAndSetIncrement(ctx: StoreContext, t: TableState, key: Uint8Array, cell: CellRef, delta: bigint, ttl: number | undefined): Promise<bigint> {
  const qualifier = re2OfExact(cell.qualifier);
  for (let n = 1; n <= CAS_ATTEMPTS; n++) {
    checkOpen(ctx);
    const now = ctx.clock();
    const live = newestVersionFilter(cell.family, qualifier, ttlFloorMs(ttl, now));
    const current = await readNewest(ctx, t, key, live);
    if (current !== undefined && current.value.length !== 8) {
      throw new StoreError('STORE_INVALID_ARGUMENT', `bigtable: increment of table ${t.spec.name}: the cell holds ${current.value.length} bytes, not an 8-byte counter`);
    }
    const next = BigInt.asIntN(64, (current === undefined ? 0n : decodeInt64(current.value)) + delta);
    const ts = current === undefined ? now : Math.max(now, current.timestamp);
    const set = [{ setCell: {
      familyName: cell.family, columnQualifier: Buffer.from(cell.qualifier), timestampMicros: microsOf(ts), value: Buffer.from(encodeInt64(next)),
    } }];
    const rowKey = Buffer.from(key);
    let applied: boolean;
    if (current === undefined) {
      applied = !await checkAndMutate(ctx, t, { tableName: t.tableName, rowKey, predicateFilter: { chain: { filters: live } }, falseMutations: set });
    } else {
      const exact: IRowFilter[] = [...live,
        { timestampRangeFilter: { startTimestampMicros: microsOf(current.timestamp), endTimestampMicros: microsOf(current.timestamp + 1) } },
        { valueRegexFilter: patternBytes(re2OfExact(current.value)) }];
      applied = await checkAndMutate(ctx, t, { tableName: t.tableName, rowKey, predicateFilter: { chain: { filters: exact } }, trueMutations: set });
    }
    if (applied) return next;
    await sleep(backoffMs(ctx.retry, Math.min(n, 5)));
  }
  throw new StoreError('STORE_UNAVAILABLE', `bigtable: increment of table ${t.spec.name}: the counter kept changing`, { retryable: true });
}

async function readNewest(ctx: StoreContext, t: TableState, key: Uint8Array, filters: IRowFilter[]): Promise<{ value: Uint8Array; timestamp: number } | undefined> {
  let found: { value: Uint8Array; timestamp: number } | undefined;
  await guarded(ctx, `read of table ${t.spec.name}`, () => {
    const merger = new RowMerger((row) => {
      const c = row.cells[0];
      if (c !== undefined) found = { value: c.value, timestamp: c.timestamp };
    });
    return ctx.conn.readRows({ tableName: t.tableName, rows: { rowKeys: [Buffer.from(key)] }, filter: { chain: { filters } } }, (r) => merger.push(r));
  });
  return found;
}

async function checkAndMutate(ctx: StoreContext, t: TableState, req: Parameters<StoreContext['conn']['checkAndMutateRow']>[0]): Promise<boolean> {
  try {
    return await ctx.conn.checkAndMutateRow(req);
  } catch (err) {
    if (ctx.closed) throw closedError();
    throw storeErrorOf(`check-and-mutate of table ${t.spec.name}`, err);
  }
}

export async function checkAndPut(
  ctx: StoreContext, t: TableState, key: Uint8Array, check: CellRef, expected: Uint8Array | undefined,
  mutations: readonly Mutation[], opts?: WriteOptions,
): Promise<boolean> {
  checkOpen(ctx);
  validateKey(key, ctx.caps);
  validateCellRef(t.spec, check);
  if (expected !== undefined && !(expected instanceof Uint8Array)) throw new TypeError('expected must be a Uint8Array or undefined');
  validateRowMutations(t.spec, [{ key, mutations }], ctx.caps);
  validateTimestampLimit([{ key, mutations }], BIGTABLE_MAX_TIMESTAMP);
  validateWriteOptions(opts);
  throwIfAborted(opts?.signal);
  const now = ctx.clock();
  const family = t.spec.families.find((f) => f.name === check.family)!;
  const live = newestVersionFilter(check.family, re2OfExact(check.qualifier), ttlFloorMs(effectiveTtlMs(t.spec, family), now));
  const predicate: IRowFilter = { chain: { filters: expected === undefined ? live : [...live, { valueRegexFilter: patternBytes(re2OfExact(expected)) }] } };
  let muts;
  if (mutations.some(needsColumns)) {
    const upTo = Math.max(...mutations.filter(needsColumns).map((m) => (m as { upTo: number }).upTo));
    muts = toBigtableMutations(mutations, now, await readColumns(ctx, t, key, upTo));
  } else {
    muts = toBigtableMutations(mutations, now);
  }
  const rowKey = Buffer.from(key);
  let applied: boolean;
  if (muts.length === 0) {
    // Nothing to write: the answer is whether the condition holds.
    const matched = (await readNewest(ctx, t, key, predicate.chain!.filters!)) !== undefined;
    applied = expected === undefined ? !matched : matched;
  } else if (expected === undefined) {
    applied = !await checkAndMutate(ctx, t, { tableName: t.tableName, rowKey, predicateFilter: predicate, falseMutations: muts });
  } else {
    applied = await checkAndMutate(ctx, t, { tableName: t.tableName, rowKey, predicateFilter: predicate, trueMutations: muts });
  }
  if (applied) t.counters.recordWrite([{ key, cells: mutations.filter((m) => m.type === 'put').length, bytes: 0 }]);
  return applied;
}
