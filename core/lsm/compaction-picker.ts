/**
 * Chooses what a region's next compaction merges (HBase's exploring policy, simplified).
 * Files are ordered newest first. A minor compaction takes a run of adjacent files, newest
 * first, where each older file is not much bigger than everything newer in the run (size
 * ratio), so small flush outputs get merged together before they are merged into big old
 * files: every byte is rewritten O(log n) times. A major compaction takes every file.
 */
import type { FileMeta } from './file-meta.js';

export interface PickOptions {
  readonly minFiles: number;
  readonly maxFiles: number;
  /** An older file joins the run when its size <= ratio x (sum of the newer files in it). */
  readonly ratio: number;
}

export const DEFAULT_RATIO = 1.5;

/** Indices [from, to) of files to merge in a minor compaction, or undefined. */
export function pickMinor(files: readonly FileMeta[], opts: PickOptions): { from: number; to: number } | undefined {
  if (files.length < opts.minFiles) return undefined;
  let best: { from: number; to: number; score: number } | undefined;
  for (let from = 0; from + opts.minFiles <= files.length; from++) {
    let sum = files[from]!.sizeBytes;
    let to = from + 1;
    while (to < files.length && to - from < opts.maxFiles && files[to]!.sizeBytes <= opts.ratio * sum) {
      sum += files[to]!.sizeBytes;
      to++;
    }
    if (to - from >= opts.minFiles) {
      // Prefer more files for fewer bytes.
      const score = (to - from) / Math.max(1, sum);
      if (best === undefined || score > best.score) best = { from, to, score };
    }
  }
  if (best !== undefined) return { from: best.from, to: best.to };
  // Too many files and no good run: merge the newest maxFiles so reads stay bounded.
  if (files.length >= opts.maxFiles + opts.minFiles) return { from: 0, to: opts.maxFiles };
  return undefined;
}

/** True when the region's files are delete-marker heavy enough to deserve a major compaction. */
export function tombstoneHeavy(files: readonly FileMeta[], ratio: number): boolean {
  let entries = 0;
  let deletions = 0;
  for (const f of files) {
    entries += f.entries;
    deletions += f.deletions;
  }
  return entries > 0 && deletions / entries >= ratio;
}
