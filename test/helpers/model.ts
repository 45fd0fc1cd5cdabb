/**
 * Test helpers for Store tests: a seeded PRNG, a fake clock, and a deliberately tiny model
 * of a table (newest version per cell only) for bulk tests that compare a backend's
 * scans and gets against what was written. The model is independent of
 * core/memory/memory-store.ts so it can check the memory store too.
 *
 * Model keys are lowercase hex strings: their string order equals unsigned byte order
 * (two chars per byte, so a prefix still sorts first).
 */
import { fromHex, toHex } from '../../core/api/bytes.js';
import type { Row } from '../../core/api/store.js';

/** mulberry32: a small, fast, seeded PRNG in [0, 1). Same seed, same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed for randomized tests: TEST_SEED when set (to replay a failure), else `fallback`. */
export function testSeed(fallback: number): number {
  const env = process.env['TEST_SEED'];
  return env === undefined || env === '' ? fallback : Number(env);
}

/** A manual clock in ms: `now` is passed to stores as their clock. */
export class FakeClock {
  ms: number;
  readonly now: () => number;

  constructor(startMs: number) {
    this.ms = startMs;
    this.now = () => this.ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * Newest-value model of one table: keyHex → "family qualifierHex" → valueHex. Only
 * suitable for families with maxVersions 1 and writes whose timestamps increase (server
 * timestamps from a clock that never goes back), where the last write wins.
 */
export class LatestModel {
  private readonly rows = new Map<string, Map<string, string>>();

  put(key: Uint8Array, family: string, qualifier: Uint8Array, value: Uint8Array): void {
    const k = toHex(key);
    let row = this.rows.get(k);
    if (row === undefined) this.rows.set(k, (row = new Map()));
    row.set(`${family} ${toHex(qualifier)}`, toHex(value));
  }

  deleteCell(key: Uint8Array, family: string, qualifier: Uint8Array): void {
    const k = toHex(key);
    const row = this.rows.get(k);
    if (row === undefined) return;
    row.delete(`${family} ${toHex(qualifier)}`);
    if (row.size === 0) this.rows.delete(k);
  }

  deleteFamily(key: Uint8Array, family: string): void {
    const k = toHex(key);
    const row = this.rows.get(k);
    if (row === undefined) return;
    for (const c of [...row.keys()]) if (c.startsWith(`${family} `)) row.delete(c);
    if (row.size === 0) this.rows.delete(k);
  }

  deleteRow(key: Uint8Array): void {
    this.rows.delete(toHex(key));
  }

  /** Row keys (hex), ascending. */
  keys(): string[] {
    return [...this.rows.keys()].sort();
  }

  /** Every key ever used, as bytes, ascending (for gets of present and absent rows). */
  keyBytes(): Uint8Array[] {
    return this.keys().map(fromHex);
  }

  /** The expected row in `summarizeRow` form, or undefined when absent. */
  expected(keyHex: string): string[] | undefined {
    const row = this.rows.get(keyHex);
    if (row === undefined) return undefined;
    // Family names are [A-Za-z0-9_.-], all above ' ', so sorting "family qualifierHex"
    // strings is family order, then qualifier byte order.
    return [...row.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, v]) => `${c}=${v}`);
  }

  /** The whole table in `summarizeRows` form, ascending. */
  all(): [string, string[]][] {
    return this.keys().map((k) => [k, this.expected(k)!]);
  }
}

/** A returned row in the model's form: ["family qualifierHex=valueHex", ...]. */
export function summarizeRow(row: Row): string[] {
  return row.cells.map((c) => `${c.family} ${toHex(c.qualifier)}=${toHex(c.value)}`);
}

/** Rows in the model's form: [[keyHex, cells], ...]. */
export function summarizeRows(rows: readonly Row[]): [string, string[]][] {
  return rows.map((r) => [toHex(r.key), summarizeRow(r)]);
}
