/**
 * Shared state and helpers of the Store contract suite (store-contract.ts): the factory
 * interface, the per-test context (a fresh store on a fake clock), mutation builders and
 * read helpers that turn rows into short strings for readable assertions.
 *
 * Helpers call backends inside `async` wrappers, so a backend that throws synchronously
 * and one that rejects are treated alike.
 */
import { expect } from 'vitest';
import { toHex, utf8 } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import type { StoreErrorCode } from '../../core/api/errors.js';
import type {
  Capabilities,
  Mutation,
  Row,
  ScanSpec,
  Store,
  Table,
  TableSpec,
} from '../../core/api/store.js';
import { FakeClock } from '../helpers/model.js';

/** How the contract suite opens stores of one backend configuration. */
export interface StoreFactory {
  /** Known before opening a store, so capability-dependent tests are chosen at collection time. */
  readonly capabilities: Capabilities;
  /**
   * Opens a fresh, empty store, isolated from every other. `clock` is the server clock
   * (integer ms): timestamps of puts without one, and "now" for TTL.
   */
  open(opts: { clock: () => number }): Promise<Store>;
  /**
   * Persistent backends: closes `store` and opens the same data again, with the clock the
   * store was opened with. Absent for backends that keep nothing across close.
   */
  reopen?(store: Store): Promise<Store>;
  /**
   * Set for configurations with tiny options (memstore, block, file and region sizes):
   * the suite then also runs bulk tests that write tens of thousands of cells, which such
   * configurations turn into flushes, compactions and splits.
   */
  heavy?: boolean;
}

/** Start of the fake clock: late 2023, well inside the timestamp range. */
export const T0 = 1_700_000_000_000;

/** Per-test state: set up by beforeEach, torn down by afterEach. */
export class ContractContext {
  readonly factory: StoreFactory;
  readonly caps: Capabilities;
  clock: FakeClock = new FakeClock(T0);
  private current: Store | undefined;

  constructor(factory: StoreFactory) {
    this.factory = factory;
    this.caps = factory.capabilities;
  }

  get store(): Store {
    if (this.current === undefined) throw new Error('BUG: contract store used outside a test');
    return this.current;
  }

  async setUp(): Promise<void> {
    this.clock = new FakeClock(T0);
    this.current = await this.factory.open({ clock: this.clock.now });
  }

  async tearDown(): Promise<void> {
    const s = this.current;
    this.current = undefined;
    await s?.close();
  }

  /** Closes and reopens the store (REQUIRES factory.reopen); returns the new store. */
  async reopen(): Promise<Store> {
    const reopen = this.factory.reopen;
    if (reopen === undefined) throw new Error('BUG: reopen() needs factory.reopen');
    this.current = await reopen.call(this.factory, this.store);
    return this.current;
  }

  /** Creates a table; by default 't' with one family 'cf' (maxVersions 1). */
  async table(spec: Partial<TableSpec> = {}): Promise<Table> {
    return this.store.createTable({ name: 't', families: [{ name: 'cf' }], ...spec });
  }
}

// ---------------------------------------------------------------------------------------
// Bytes and mutations

/** Bytes from numbers. */
export function b(...bytes: number[]): Uint8Array {
  return Uint8Array.from(bytes);
}

/** Bytes from a string (UTF-8), or the bytes themselves. */
export function bytesOf(v: string | Uint8Array): Uint8Array {
  return typeof v === 'string' ? utf8(v) : v;
}

export function put(family: string, qualifier: string | Uint8Array, value: string | Uint8Array, timestamp?: number): Mutation {
  return timestamp === undefined
    ? { type: 'put', family, qualifier: bytesOf(qualifier), value: bytesOf(value) }
    : { type: 'put', family, qualifier: bytesOf(qualifier), value: bytesOf(value), timestamp };
}

/** Writes rows: [key, mutations] pairs, in one mutate call. */
export async function write(table: Table, ...rows: [string | Uint8Array, Mutation[]][]): Promise<void> {
  await table.mutate(rows.map(([key, mutations]) => ({ key: bytesOf(key), mutations })));
}

// ---------------------------------------------------------------------------------------
// Rendering

/** Printable ASCII as text; anything else as 0x-hex. Empty bytes as ''. */
export function fmt(v: Uint8Array): string {
  for (const c of v) if (c < 0x21 || c > 0x7e) return `0x${toHex(v)}`;
  return String.fromCharCode(...v);
}

/** Cells of a row as "family:qualifier=value", or "family:qualifier@ts=value" with `withTs`. */
export function cells(row: Row | undefined, withTs = false): string[] | undefined {
  if (row === undefined) return undefined;
  return row.cells.map((c) => `${c.family}:${fmt(c.qualifier)}${withTs ? `@${c.timestamp}` : ''}=${fmt(c.value)}`);
}

/** Timestamps of a row's cells, in order. */
export function stamps(row: Row | undefined): number[] | undefined {
  return row?.cells.map((c) => c.timestamp);
}

/** Keys of rows via fmt. */
export function keys(rows: readonly (Row | undefined)[]): (string | undefined)[] {
  return rows.map((r) => (r === undefined ? undefined : fmt(r.key)));
}

/** Gets one row. */
export async function getRow(table: Table, key: string | Uint8Array, opts?: Parameters<Table['get']>[1]): Promise<Row | undefined> {
  const [row] = await table.get([bytesOf(key)], opts);
  return row;
}

/** A whole scan: its rows and its batches. */
export async function scanAll(table: Table, spec?: ScanSpec): Promise<{ rows: Row[]; batches: (readonly Row[])[] }> {
  const rows: Row[] = [];
  const batches: (readonly Row[])[] = [];
  for await (const batch of table.scan(spec)) {
    batches.push(batch);
    rows.push(...batch);
  }
  return { rows, batches };
}

/** Keys (via fmt) of a whole scan. */
export async function scanKeys(table: Table, spec?: ScanSpec): Promise<string[]> {
  return (await scanAll(table, spec)).rows.map((r) => fmt(r.key));
}

// ---------------------------------------------------------------------------------------
// Errors

/** Runs `fn`, turning a synchronous throw into a rejection. */
export async function attempt(fn: () => unknown): Promise<unknown> {
  return await fn();
}

/** Expects `fn` to fail with a StoreError of `code`; returns the error for more checks. */
export async function expectStoreError(fn: () => unknown, code: StoreErrorCode): Promise<Error> {
  let caught: unknown;
  try {
    await fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a StoreError ${code}, but the call succeeded`).toBeDefined();
  expect(isStoreError(caught), `expected a StoreError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code, String(caught)).toBe(code);
  return caught as Error;
}

/** Expects `fn` to fail with an error of class `cls` (TypeError, RangeError). */
export async function expectErrorClass(fn: () => unknown, cls: new (...args: never[]) => Error): Promise<void> {
  await expect(attempt(fn)).rejects.toBeInstanceOf(cls);
}
