/**
 * The bound of the per-series maps kept in memory (newest-hours.ts, last-values.ts), in
 * bytes: once a map holds `maxBytes` (by its owner's estimate of an entry), its
 * oldest-inserted entries are dropped until an eighth of the bound is free — a part, never
 * the whole map.
 */

/**
 * Drops the oldest-inserted entries of `map` when `bytes` (what it holds) reaches
 * `maxBytes`, until an eighth of maxBytes is freed; returns the bytes freed (0: none).
 */
export function makeRoom<V>(map: Map<string, V>, bytes: number, maxBytes: number, sizeOf: (key: string, value: V) => number): number {
  if (bytes < maxBytes || map.size === 0) return 0;
  const goal = Math.max(1, bytes - maxBytes + (maxBytes >> 3));
  let freed = 0;
  for (const [k, v] of map) {
    map.delete(k);
    freed += sizeOf(k, v);
    if (freed >= goal) break;
  }
  return freed;
}
