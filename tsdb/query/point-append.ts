/**
 * Growing a series' typed arrays row by row as a scan decodes it (scanner.ts on the main
 * thread, decode-worker.ts in a worker): rows of one series come in base-hour order.
 */
import type { PointBlock } from '../codec/point-block.js';
import type { Points } from './series.js';

/** Appends the block's points inside [startMs, endMs]; returns how many. */
export function appendRow(s: Points, b: PointBlock, baseMs: number, startMs: number, endMs: number): number {
  const need = s.count + b.count;
  if (need > s.ts.length) grow(s, capacityFor(need, baseMs, startMs, endMs, s.ts.length));
  if (b.bigInts !== undefined && s.exact === undefined) s.exact = new BigInt64Array(s.ts.length);
  let n = 0;
  for (let i = 0; i < b.count; i++) {
    const t = baseMs + b.offsetsMs[i]!;
    if (t < startMs || t > endMs) continue;
    const j = s.count++;
    s.ts[j] = t;
    s.values[j] = b.values[i]!;
    s.isInt[j] = b.isInt[i]!;
    if (s.exact !== undefined) s.exact[j] = b.bigInts?.[i] ?? 0n;
    n++;
  }
  return n;
}

const HOUR_MS = 3_600_000;

/**
 * The new capacity of a series' arrays once `need` points do not fit: rows come in
 * base-hour order, so the points seen per hour so far project the series' total over the
 * window (one allocation for a regular series, instead of a doubling chain whose copies
 * and fresh pages cost more than the decoding); at least double, never below `need`.
 */
function capacityFor(need: number, baseMs: number, startMs: number, endMs: number, cap: number): number {
  const first = Math.floor(startMs / HOUR_MS);
  const hoursSeen = Math.max(1, Math.floor(baseMs / HOUR_MS) - first + 1);
  const hoursTotal = Math.max(hoursSeen, Math.floor(endMs / HOUR_MS) - first + 1);
  const projected = Math.ceil((need / hoursSeen) * hoursTotal);
  return Math.max(need, cap * 2, projected);
}

function grow(s: Points, cap: number): void {
  const ts = new Float64Array(cap);
  ts.set(s.ts.subarray(0, s.count));
  const values = new Float64Array(cap);
  values.set(s.values.subarray(0, s.count));
  const isInt = new Uint8Array(cap);
  isInt.set(s.isInt.subarray(0, s.count));
  s.ts = ts;
  s.values = values;
  s.isInt = isInt;
  if (s.exact !== undefined) {
    const exact = new BigInt64Array(cap);
    exact.set(s.exact.subarray(0, s.count));
    s.exact = exact;
  }
}
