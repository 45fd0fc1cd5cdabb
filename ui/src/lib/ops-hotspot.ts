/**
 * Hotspots: the regions (or salt buckets) taking a disproportionate part of the writes.
 *
 * With n parts sharing `total` writes, a part's *share* is its writes / total and its
 * *skew* is share × n (1 = its fair share). A part is hot when it takes most of the writes
 * (share > 1/2, with at least two parts) or at least HOT_SKEW times its fair share. With
 * the default 20 salt buckets, that is any bucket with 20% of the writes or more. Pure.
 */

/** Times the fair share from which a part counts as hot. */
export const HOT_SKEW = 4;

export interface Share {
  readonly writes: number;
  /** writes / total, 0 when nothing was written. */
  readonly share: number;
  /** share × number of parts (1 = fair). */
  readonly skew: number;
  readonly hot: boolean;
}

export function isHot(share: number, parts: number): boolean {
  if (parts < 2 || !(share > 0)) return false;
  // NB: the epsilon keeps exactly HOT_SKEW × fair from missing by a rounding error.
  return share > 0.5 || share * parts >= HOT_SKEW - 1e-9;
}

/** Shares of each part, in input order. */
export function writeShares(writes: readonly number[]): Share[] {
  const total = writes.reduce((s, w) => s + w, 0);
  const n = writes.length;
  return writes.map((w) => {
    const share = total > 0 ? w / total : 0;
    return { writes: w, share, skew: share * n, hot: isHot(share, n) };
  });
}

/**
 * Writes per salt bucket (index = bucket) from the regions' writes and their start
 * buckets; a region whose start has no salt hint (the table's first region) is bucket 0.
 * Buckets beyond `buckets` are ignored (a boundary key past the last bucket).
 */
export function bucketWrites(regions: readonly { readonly salt: number | undefined; readonly writes: number }[], buckets: number): number[] {
  const out = new Array<number>(buckets).fill(0);
  for (const r of regions) {
    const b = r.salt ?? 0;
    if (b >= 0 && b < buckets) out[b]! += r.writes;
  }
  return out;
}

/**
 * Heat of a part for its colour: 0 without writes, 0.1 at or below its fair share (an even
 * spread looks calm), rising linearly to 1 at HOT_SKEW times the fair share.
 */
export function heat(s: Share): number {
  if (s.writes === 0) return 0;
  return 0.1 + 0.9 * Math.min(1, Math.max(0, (s.skew - 1) / (HOT_SKEW - 1)));
}
