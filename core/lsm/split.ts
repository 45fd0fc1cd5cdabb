/**
 * Where a region splits: at the first row of the middle data block (among the blocks whose
 * rows lie inside the region) of the region's largest file, as HBase splits at the middle
 * key of its largest store file. The key must fall strictly inside the region, so both
 * children get data.
 */
import { compareBytes } from '../api/bytes.js';
import { BlockIterator } from '../sst/block.js';
import type { SstReader } from '../sst/sst-reader.js';
import { compareInternalKeys, rowOf } from './internal-key.js';
import type { Region } from './region.js';
import type { ReaderPool } from './reader-pool.js';

function firstRowOfBlock(reader: SstReader, i: number): Uint8Array | undefined {
  const it = new BlockIterator(reader.readBlock(i), compareInternalKeys);
  it.seekToFirst();
  return it.valid ? rowOf(it.key()).slice() : undefined;
}

function inside(r: Region, row: Uint8Array): boolean {
  return compareBytes(row, r.start) > 0 && (r.end.length === 0 || compareBytes(row, r.end) < 0);
}

export function pickSplitKey(readers: ReaderPool, r: Region): Uint8Array | undefined {
  if (r.files.length === 0) return undefined;
  let largest = r.files[0]!;
  for (const f of r.files) if (f.sizeBytes > largest.sizeBytes) largest = f;
  return readers.use(largest.number, (reader) => {
    const n = reader.dataBlocks;
    if (n < 2) return undefined;
    // Blocks [lo, hi) whose first rows are inside the region.
    let lo = 0;
    let hi = n;
    let a = 0;
    let b = n;
    while (a < b) {
      const m = (a + b) >>> 1;
      const row = firstRowOfBlock(reader, m);
      if (row !== undefined && compareBytes(row, r.start) <= 0) a = m + 1;
      else b = m;
    }
    lo = a;
    a = lo;
    b = n;
    while (a < b) {
      const m = (a + b) >>> 1;
      const row = firstRowOfBlock(reader, m);
      if (row !== undefined && (r.end.length === 0 || compareBytes(row, r.end) < 0)) a = m + 1;
      else b = m;
    }
    hi = a;
    if (hi <= lo) return undefined;
    const row = firstRowOfBlock(reader, (lo + hi) >>> 1);
    return row !== undefined && inside(r, row) ? row : undefined;
  });
}

/**
 * The live regions now holding the keys of `regions`: each region retired by a split is
 * replaced by the regions of its table that overlap its range (its children, or theirs);
 * regions of dropped tables go.
 */
export function successors(regions: readonly Region[]): Region[] {
  if (!regions.some((r) => r.retired)) return regions as Region[];
  const out = new Set<Region>();
  for (const r of regions) {
    if (!r.retired) out.add(r);
    else if (!r.table.dropped) for (const c of r.table.regions) if (overlaps(c, r)) out.add(c);
  }
  return [...out];
}

function overlaps(a: Region, b: Region): boolean {
  return (b.end.length === 0 || compareBytes(a.start, b.end) < 0) && (a.end.length === 0 || compareBytes(a.end, b.start) > 0);
}
