/**
 * The bound of the per-series maps kept in memory (newest-hours.ts, last-values.ts): once a
 * map holds `max` entries, the oldest-inserted eighth is dropped to make room.
 */

/** Drops the oldest-inserted eighth of `map` when it holds `max` entries or more; true when it did. */
export function makeRoom(map: Map<string, unknown>, max: number): boolean {
  if (map.size < max) return false;
  let drop = Math.max(1, max >> 3);
  for (const k of map.keys()) {
    map.delete(k);
    if (--drop === 0) break;
  }
  return true;
}
