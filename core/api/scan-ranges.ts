/**
 * Scans of several key ranges (ScanSpec.ranges): their validation, and the way a store
 * that reads one range at a time serves them, walking the ranges in key order (reverse:
 * from the last) with one limit across them all.
 */
import { compareBytes, toHex } from './bytes.js';
import type { KeyRange, Row } from './store.js';

const EMPTY_KEY = new Uint8Array(0);

/**
 * Copies and checks ScanSpec.ranges: an array of ranges, each start ≤ end (end empty = the
 * table's end, only in the last range), sorted and not overlapping (each start ≥ the end
 * before it). Empty ranges (start = end) stay and read nothing. RangeError / TypeError.
 */
export function normalizeRanges(ranges: unknown): KeyRange[] {
  if (!Array.isArray(ranges)) throw new TypeError('scan ranges must be an array');
  const out: KeyRange[] = [];
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i] as Partial<KeyRange> | null;
    if (r === null || typeof r !== 'object') throw new TypeError(`scan range ${i} must be an object`);
    const start = copyKey(r.start, `scan range ${i} start`);
    const end = copyKey(r.end, `scan range ${i} end`);
    if (end.length > 0 && compareBytes(start, end) > 0) throw new RangeError(`scan range ${i}: start ${toHex(start)} is after end ${toHex(end)}`);
    const prev = out[out.length - 1];
    if (prev !== undefined) {
      if (prev.end.length === 0) throw new RangeError(`scan range ${i - 1} runs to the end of the table but is not the last`);
      if (compareBytes(start, prev.end) < 0) throw new RangeError(`scan range ${i} starts before range ${i - 1} ends: ranges must be sorted and not overlap`);
    }
    out.push({ start, end });
  }
  return out;
}

function copyKey(k: unknown, what: string): Uint8Array {
  if (k === undefined) return EMPTY_KEY;
  if (!(k instanceof Uint8Array)) throw new TypeError(`${what} must be a Uint8Array`);
  return k.slice();
}

/** What scanEachRange needs of a normalized spec. */
interface RangedSpec {
  readonly start: Uint8Array;
  readonly end: Uint8Array;
  readonly ranges: readonly KeyRange[] | undefined;
  readonly reverse: boolean;
  readonly limit: number;
}

/**
 * The rows of `spec`: `run` over [start, end) when it has no ranges; else `run` over each
 * range in scan order, the limit counted across them (a store whose every range costs the
 * same as a scan of its own).
 */
export async function* scanEachRange<S extends RangedSpec>(spec: S, run: (s: S) => AsyncIterable<readonly Row[]>): AsyncGenerator<readonly Row[]> {
  if (spec.ranges === undefined) {
    yield* run(spec);
    return;
  }
  const order = spec.reverse ? [...spec.ranges].reverse() : spec.ranges;
  let left = spec.limit;
  for (const r of order) {
    if (left <= 0) return;
    if (r.end.length > 0 && compareBytes(r.start, r.end) >= 0) continue;
    for await (const rows of run({ ...spec, start: r.start, end: r.end, ranges: undefined, limit: left })) {
      left -= rows.length;
      yield rows;
    }
  }
}
