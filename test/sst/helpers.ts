/**
 * Shared helpers for the SST/cache tests: seeded data generators over internal keys, SST
 * write/open shortcuts on MemFileSystem, a sorted-array model iterator, and seed reporting.
 * Test-only; never imported by source.
 */
import { equalBytes, toHex } from '../../core/api/bytes.js';
import type { Comparator, InternalIterator } from '../../core/iter/internal-iterator.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { KeyKind, compareInternalKeys, encodeInternalKey, rowOf } from '../../core/lsm/internal-key.js';
import { Random } from '../../core/util/random.js';
import { SstWriter } from '../../core/sst/sst-writer.js';
import type { SstInfo, SstWriterOptions } from '../../core/sst/sst-writer.js';
import { SstReader } from '../../core/sst/sst-reader.js';
import type { SstReaderOptions } from '../../core/sst/sst-reader.js';
import type { SstProps } from '../../core/sst/sst-format.js';

export interface Entry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** The seed for a test: TEST_SEED when set (to replay a failure), else `fallback`. */
export function testSeed(fallback: number): number {
  const env = process.env['TEST_SEED'];
  return env !== undefined && env !== '' ? Number(env) : fallback;
}

/** Runs fn with a seeded Random; on failure rethrows with the seed in the message. */
export function withSeed<T>(seed: number, fn: (rng: Random) => T): T {
  try {
    return fn(new Random(seed));
  } catch (err) {
    if (err instanceof Error) err.message = `[seed ${seed}; replay with TEST_SEED=${seed}] ${err.message}`;
    throw err;
  }
}

/** An async withSeed. */
export async function withSeedAsync<T>(seed: number, fn: (rng: Random) => Promise<T>): Promise<T> {
  try {
    return await fn(new Random(seed));
  } catch (err) {
    if (err instanceof Error) err.message = `[seed ${seed}; replay with TEST_SEED=${seed}] ${err.message}`;
    throw err;
  }
}

/** The engine's comparator and bloom key. */
export const compare: Comparator = compareInternalKeys;
export const bloomKey = rowOf;

/** A row key for row number i (so rows sort by i). */
export function rowKey(i: number, prefix = 'row'): Uint8Array {
  return new TextEncoder().encode(`${prefix}-${String(i).padStart(8, '0')}`);
}

/**
 * `n` distinct internal-key entries in order: rows with several cells and versions, values
 * 0..maxValue bytes (mostly short), some tombstones.
 */
export function genEntries(rng: Random, n: number, opts: { maxValue?: number; rowsStart?: number } = {}): Entry[] {
  const maxValue = opts.maxValue ?? 64;
  const out: Entry[] = [];
  let row = opts.rowsStart ?? 0;
  while (out.length < n) {
    row += 1 + rng.int(3);
    const r = rowKey(row);
    const cells = 1 + rng.int(4);
    for (let c = 0; c < cells && out.length < n; c++) {
      const q = rng.bytes(1 + rng.int(4));
      q[0] = c; // distinct qualifiers, ascending
      const versions = 1 + rng.int(3);
      let ts = 1_600_000_000_000 + rng.int(1_000_000);
      for (let v = 0; v < versions && out.length < n; v++) {
        const kind = rng.chance(0.05) ? KeyKind.DeleteVersion : KeyKind.Put;
        const vlen = rng.chance(0.02) ? rng.int(maxValue * 8 + 1) : rng.int(maxValue + 1);
        out.push({ key: encodeInternalKey(r, 't', q, ts, 1 + rng.int(1_000_000), kind), value: rng.bytes(vlen) });
        ts -= 1 + rng.int(1000); // newer versions first
      }
    }
  }
  out.sort((a, b) => compare(a.key, b.key));
  for (let i = 1; i < out.length; i++) {
    if (compare(out[i - 1]!.key, out[i]!.key) >= 0) throw new Error('generator produced duplicate keys');
  }
  return out;
}

/** Writes entries to `path` on `fs` and returns the SstInfo and the file bytes. */
export async function writeSst(
  fs: MemFileSystem, path: string, entries: readonly Entry[],
  opts: Partial<SstWriterOptions> = {}, props: SstProps = {},
): Promise<{ info: SstInfo; bytes: Uint8Array }> {
  const f = await fs.openAppend(path, { truncate: true });
  const w = new SstWriter(f, { compare, bloomKey, ...opts });
  let i = 0;
  for (const e of entries) {
    w.add(e.key, e.value);
    if (++i % 1000 === 0) await w.flushPending();
  }
  const info = await w.finish(props);
  return { info, bytes: await fs.readFile(path) };
}

/** Opens `path` on `fs`. */
export async function openSst(fs: MemFileSystem, path: string, opts: Partial<SstReaderOptions> = {}): Promise<SstReader> {
  return SstReader.open(await fs.openRead(path), { compare, bloomKey, cacheId: 1, ...opts });
}

/** A fresh MemFileSystem with /d created. */
export async function memFs(): Promise<MemFileSystem> {
  const fs = new MemFileSystem();
  await fs.mkdir('/d');
  return fs;
}

/** Collects [key, value] copies walking forward from the current position. */
export function drainForward(it: InternalIterator): Entry[] {
  const out: Entry[] = [];
  for (; it.valid; it.next()) out.push({ key: it.key().slice(), value: it.value().slice() });
  return out;
}

export function drainBackward(it: InternalIterator): Entry[] {
  const out: Entry[] = [];
  for (; it.valid; it.prev()) out.push({ key: it.key().slice(), value: it.value().slice() });
  return out;
}

/** Index of the first entry with key >= target (entries.length when none). */
export function lowerBound(entries: readonly Entry[], target: Uint8Array, cmp: Comparator = compare): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(entries[mid]!.key, target) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the last entry with key <= target (-1 when none). */
export function floorIndex(entries: readonly Entry[], target: Uint8Array, cmp: Comparator = compare): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(entries[mid]!.key, target) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}


/** Index of the first entry that differs (or the shorter length), -1 when equal. */
export function firstDifference(got: readonly Entry[], want: readonly Entry[]): number {
  const n = Math.min(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (!equalBytes(got[i]!.key, want[i]!.key) || !equalBytes(got[i]!.value, want[i]!.value)) return i;
  }
  return got.length === want.length ? -1 : n;
}

/** Asserts equal entry lists, reporting the first difference in hex. */
export function expectSameEntries(got: readonly Entry[], want: readonly Entry[], what = 'entries'): void {
  const i = firstDifference(got, want);
  if (i < 0) return;
  const show = (e: Entry | undefined): string => (e === undefined ? '(none)' : `${toHex(e.key)} = ${toHex(e.value.subarray(0, 64))}`);
  throw new Error(`${what}: differ at #${i} (got ${got.length}, want ${want.length}): got ${show(got[i])}, want ${show(want[i])}`);
}
