/**
 * The memory budget (horae.memory.budget_bytes): one figure for the whole process, from
 * which every memory bound that is not set on its own takes its share. `horae serve` sets
 * V8's heap limit from it (bin/horae.js runs the server on a worker thread with that
 * old-space limit, cli/heap-limit.ts), the store gets its memstore and block-cache bytes, the catalog
 * its bytes for every per-series structure, the write path its in-flight points; past the heap share the server
 * refuses writes and queries (memory/guard.ts) instead of dying of heap exhaustion.
 *
 * Of a budget B:
 *
 *   V8 old space (the heap limit)   3/4 B   everything on the JS heap, the shares below included
 *   block cache                     1/8 B   (horae.storage.block_cache_bytes)
 *   memstores                       1/8 B   (horae.storage.memstore_total_bytes; writers wait at 2×)
 *   per-series state                1/4 B   (horae.catalog.memory_bytes): every cache and map of series
 *                                           and names, split into fixed shares (memory/catalog-memory.ts)
 *   points in flight                1/16 B  (horae.write.max_inflight_points)
 *   queries' points                 1/4 B   over horae.query.max_concurrent (horae.query.max_points each)
 *   queries running at once         one per QUERY_BYTES of B (horae.query.max_concurrent: a query's
 *                                   scan buffers and decoding cost more than its points; measured:
 *                                   4 big queries at once exhausted a 48 MiB heap, 2 did not)
 *   one request body                1/64 B  (horae.http.max_body_bytes; parsed, it takes ~10× that)
 *
 * Points are converted to bytes by the estimates below (what one costs on the heap). A
 * share never exceeds the bound's own default: a big budget leaves the defaults as they
 * are (and raises the heap limit), a small one lowers every bound with it. The per-series
 * state is the exception: it grows with the fleet, so it is always a quarter of the
 * budget (a cap of 1 GiB put the cliff of a 1 M-series fleet at ~480 k series: every
 * point of a series past it went through series creation again).
 */
import { CONFIG_KEYS } from '../config-keys.js';
import type { IntKey } from '../config-keys.js';

/** Heap bytes of one accepted, not yet durable point (parsed point, its strings; estimate). */
export const INFLIGHT_POINT_BYTES = 256;
/** Budget bytes per query running at once. */
export const QUERY_BYTES = 24 * 1024 * 1024;
/** Heap bytes of one point a query reads (decoded columns, a copy through the pipeline, its JSON text). */
export const QUERY_POINT_BYTES = 64;

/** What a budget gives each bound (each within its config key's range). */
export interface MemoryShares {
  /** V8's old-space limit, in bytes (node's --max-old-space-size is this in MiB). */
  readonly heapBytes: number;
  readonly blockCacheBytes: number;
  readonly memstoreTotalBytes: number;
  readonly catalogMemoryBytes: number;
  readonly maxInflightPoints: number;
  readonly queryMaxPoints: number;
  readonly maxBodyBytes: number;
  readonly queryMaxConcurrent: number;
}

/**
 * `queryMaxConcurrent`: queries running at once when set on its own (0: no limit, taken as
 * the default), which share the queries' part; else the budget's share.
 */
export function memoryShares(budgetBytes: number, queryMaxConcurrent?: number): MemoryShares {
  const b = budgetBytes;
  const concurrent = Math.min(CONFIG_KEYS.queryMaxConcurrent.default, Math.max(1, Math.floor(b / QUERY_BYTES)));
  const queries = queryMaxConcurrent === undefined ? concurrent : queryMaxConcurrent > 0 ? queryMaxConcurrent : CONFIG_KEYS.queryMaxConcurrent.default;
  return {
    heapBytes: heapLimitBytes(b),
    blockCacheBytes: clampTo(CONFIG_KEYS.blockCacheBytes, b / 8),
    memstoreTotalBytes: clampTo(CONFIG_KEYS.memstoreTotalBytes, b / 8),
    catalogMemoryBytes: Math.min(CONFIG_KEYS.catalogMemoryBytes.max, Math.max(CONFIG_KEYS.catalogMemoryBytes.min, Math.floor(b / 4))),
    maxInflightPoints: clampTo(CONFIG_KEYS.maxInflightPoints, b / 16 / INFLIGHT_POINT_BYTES),
    queryMaxPoints: clampTo(CONFIG_KEYS.queryMaxPoints, b / 4 / queries / QUERY_POINT_BYTES),
    maxBodyBytes: clampTo(CONFIG_KEYS.maxBodyBytes, b / 64),
    queryMaxConcurrent: concurrent,
  };
}

/** The heap share of a budget, in bytes. */
export function heapLimitBytes(budgetBytes: number): number {
  return Math.floor((budgetBytes * 3) / 4);
}

/** The heap limit of a budget in whole MiB (node's --max-old-space-size). */
export function heapLimitMb(budgetBytes: number): number {
  return Math.floor(heapLimitBytes(budgetBytes) / (1024 * 1024));
}

/** A share: at most the bound's own default (a budget lowers a bound, it never raises it), at least its minimum. */
function clampTo(def: IntKey, v: number): number {
  return Math.min(def.default, Math.max(def.min, Math.floor(v)));
}

/** The fields a budget sets, by the part of the settings they land in. */
export const BUDGET_STORE_FIELDS = ['blockCacheBytes', 'memstoreTotalBytes'] as const;
export const BUDGET_TSDB_FIELDS = ['catalogMemoryBytes', 'maxInflightPoints', 'queryMaxPoints', 'maxBodyBytes', 'queryMaxConcurrent'] as const;

/**
 * Fills every bound of `store` and `tsdb` that was not set on its own (absent) with its
 * share of `budgetBytes`; a bound set explicitly stays as set.
 */
export function applyMemoryBudget(
  budgetBytes: number,
  store: { [K in (typeof BUDGET_STORE_FIELDS)[number]]?: number },
  tsdb: { [K in (typeof BUDGET_TSDB_FIELDS)[number]]?: number },
): void {
  const s = memoryShares(budgetBytes, tsdb.queryMaxConcurrent);
  for (const f of BUDGET_STORE_FIELDS) store[f] ??= s[f];
  for (const f of BUDGET_TSDB_FIELDS) tsdb[f] ??= s[f];
}
