/**
 * What a table handle shares with its store: the connection, the clock, limits, retry
 * policy, the open/closed state, and per-table state that outlives handles (counters,
 * in-process increment queues).
 */
import { StoreError } from '../../../core/api/errors.js';
import type { Capabilities, TableSpec } from '../../../core/api/store.js';
import type { Connection } from './client.js';
import type { TableCounters } from './region-stats.js';
import type { RetryPolicy } from './retry.js';

export interface WriteLimits {
  /** Mutations per MutateRows request (Bigtable: at most 100,000). */
  readonly maxMutationsPerRequest: number;
  /** Approximate bytes per MutateRows request (Bigtable: 256 MiB per request). */
  readonly maxRequestBytes: number;
  /** MutateRows requests of one mutate() call in flight at once. */
  readonly parallelRequests: number;
}

export interface StoreContext {
  readonly conn: Connection;
  readonly caps: Capabilities;
  /** Server clock (ms) for puts without a timestamp and for TTL. */
  readonly clock: () => number;
  /** True when `clock` is real time (no clock was injected): the server's agrees with it. */
  readonly realClock: boolean;
  readonly retry: RetryPolicy;
  readonly limits: WriteLimits;
  readonly closed: boolean;
}

/** Per-table state shared by every handle of the table in one store. */
export interface TableState {
  readonly spec: TableSpec;
  readonly tableId: string;
  readonly tableName: string;
  readonly counters: TableCounters;
  /** Tail of each counter cell's in-process increment queue (TTL families). */
  readonly incrementQueues: Map<string, Promise<unknown>>;
  /** Regions reported by the last regions() call (for stats). */
  lastRegionCount: number;
}

export function closedError(): StoreError {
  return new StoreError('STORE_CLOSED', 'bigtable: the store is closed');
}

export function checkOpen(ctx: StoreContext): void {
  if (ctx.closed) throw closedError();
}
