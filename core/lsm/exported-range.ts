/**
 * A forward scan of one key range, captured as plain data (ExportedRange, core/api/store.ts)
 * that another thread turns into rows with this engine's own code (readExportedRange): the
 * block iterator, the merging iterator, the row assembly of row-reader.ts and the read
 * filter, without the engine, its files or its caches. A decode worker can then read its
 * share of a query's rows itself instead of being sent them row by row.
 *
 * An export holds every source of the range in its region, each as a run of sorted blocks:
 * the entries of each memstore in the range, encoded as blocks (block-builder.ts), and each
 * overlapping file's data blocks from the one holding the start row to the one holding the
 * last row before `end` (decompressed, as the block cache holds them), copied; with the
 * read point, the clock, the families' rules and the validated read options.
 * readExportedRange merges the runs as a scan merges memstores and files, so it gives
 * exactly the rows a scan of the same spec started at the moment of export would (tested
 * against table.scan), whatever happens to the table afterwards. A range over several
 * regions is not exported.
 */
import { compareBytes } from '../api/bytes.js';
import type { Cell, ExportedRange, Row } from '../api/store.js';
import type { NormalizedScanSpec } from '../api/validate.js';
import { compileReadFilter } from '../api/filters.js';
import { StoreError } from '../api/errors.js';
import type { InternalIterator } from '../iter/internal-iterator.js';
import { MergingIterator } from '../iter/merging-iterator.js';
import { Block } from '../sst/block.js';
import { BlockBuilder } from '../sst/block-builder.js';
import { SstIterator } from '../sst/sst-reader.js';
import type { SstReader } from '../sst/sst-reader.js';
import type { Engine } from './engine.js';
import type { FileMeta } from './file-meta.js';
import { compareKeyRow, rowOf, rowStartKey } from './internal-key.js';
import type { Memstore } from './memstore.js';
import type { TableState } from './region.js';
import type { FamilyRule, RowReadContext } from './row-reader.js';
import { readRow } from './row-reader.js';
import { compare, compareRange } from './sst-options.js';

const FORMAT = 'horae-exported-range/3';

/** Bytes of memstore entries per block of an export. */
const MEMSTORE_BLOCK_BYTES = 64 * 1024;

/**
 * The export of `s` (a forward scan, validated), or undefined when its range lies in more
 * than one region, or the spec is reverse or limited (the caller scans as usual).
 * Synchronous once the files' readers are open: nothing changes the region's sources
 * between taking the read point and copying them.
 */
export async function exportRange(engine: Engine, t: TableState, s: NormalizedScanSpec): Promise<ExportedRange | undefined> {
  if (s.reverse || s.limit !== Infinity) return undefined;
  engine.checkOpen();
  const { start, end } = s;
  const region = t.regionFor(start);
  if (region.end.length > 0 && (end.length === 0 || compareBytes(end, region.end) > 0)) return undefined;
  const overlapping = (): FileMeta[] => region.files.filter((f) => !(compareKeyRow(f.largest, start) < 0) && !(end.length > 0 && compareKeyRow(f.smallest, end) >= 0));
  const files = overlapping();
  for (const f of files) engine.pin(f.number);
  const readers: SstReader[] = [];
  try {
    for (const f of files) readers.push(engine.readers.tryAcquire(f.number) ?? (await engine.readers.acquire(f.number)));
    // The opens may have waited: after a flush, compaction or split meanwhile, the caller scans.
    const now = overlapping();
    if (t.regionFor(start) !== region || now.length !== files.length || now.some((f, i) => f !== files[i])) return undefined;
    const lo = rowStartKey(start);
    const hi = end.length === 0 ? undefined : rowStartKey(end);
    const runs: Run[] = [];
    for (const m of [region.active, ...region.immutables]) {
      const run = memstoreRun(m, lo, end);
      if (run.blocks.length > 0) runs.push(run);
    }
    for (const reader of readers) {
      const { first, last } = reader.blocksBetween(lo, hi);
      const run: Run = { blocks: [], indexKeys: [] };
      for (let i = first; i <= last; i++) {
        run.blocks.push(reader.readBlock(i).data.slice());
        run.indexKeys.push(reader.indexKey(i).slice());
      }
      if (run.blocks.length > 0) runs.push(run);
    }
    return {
      format: FORMAT,
      start: start.slice(),
      end: end.slice(),
      runs,
      snapshotSeq: engine.seqs.visibleSeq,
      nowMs: engine.clock(),
      families: [...t.families],
      read: {
        families: s.families === undefined ? undefined : [...s.families],
        timeRange: s.timeRange,
        maxVersions: s.maxVersions,
        filter: s.filter,
        borrowValues: s.borrowValues,
      },
    };
  } finally {
    for (let i = 0; i < readers.length; i++) engine.readers.release(files[i]!.number);
    for (const f of files) engine.unpin(f.number);
  }
}

interface Run {
  readonly blocks: Uint8Array[];
  readonly indexKeys: Uint8Array[];
}

/** The memstore's entries of rows [lo's row, end) encoded as blocks, each indexed by its last key. */
function memstoreRun(m: Memstore, lo: Uint8Array, end: Uint8Array): Run {
  const run: Run = { blocks: [], indexKeys: [] };
  if (m.empty) return run;
  const b = new BlockBuilder();
  const cut = (): void => {
    run.indexKeys.push(b.lastKeyView().slice());
    run.blocks.push(b.finish().slice());
    b.reset();
  };
  const it = m.iterator();
  try {
    for (it.seek(lo); it.valid; it.next()) {
      const k = it.key();
      if (end.length > 0 && compareKeyRow(k, end) >= 0) break;
      b.add(k, it.value());
      if (b.sizeEstimate >= MEMSTORE_BLOCK_BYTES) cut();
    }
  } finally {
    it.close();
  }
  if (b.entries > 0) cut();
  return run;
}

/**
 * Calls `onRow` with each row of the export, in key order: the rows (cells, versions,
 * values) a scan of the exported spec would have given at the moment of export. Runs on
 * any thread; values are views of the export's blocks when it was made with
 * `borrowValues`, copies otherwise. Throws STORE_INVALID_ARGUMENT for something that is
 * not an export, STORE_CORRUPTION for a damaged block.
 */
export function readExportedRange(x: ExportedRange, onRow: (row: Row) => void): void {
  if (x === null || typeof x !== 'object' || x.format !== FORMAT) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `not an exported range (format ${String((x as { format?: unknown } | null)?.format)})`);
  }
  if (x.runs.length === 0) return;
  const read = x.read;
  const filter = compileReadFilter(read);
  const ctx: RowReadContext = {
    snapshotSeq: x.snapshotSeq,
    nowMs: x.nowMs,
    families: new Map<string, FamilyRule>(x.families),
    familyFilter: undefined,
    cellMatches: filter.hasCellFilter ? (f, q, ts) => filter.cellMatches(f, q, ts) : undefined,
    maxVersions: read.maxVersions,
    borrowValues: read.borrowValues,
  };
  const children: InternalIterator[] = x.runs.map((run, r) => {
    const blocks = run.blocks.map((b, i) => Block.parse(b, `exported range: run ${r} block ${i}`));
    return new SstIterator({ readBlock: (i) => blocks[i]!, rechargeBlock: () => undefined }, compare, run.indexKeys, compareRange);
  });
  const it = children.length === 1 ? children[0]! : new MergingIterator(children, compare);
  const end = x.end;
  it.seek(rowStartKey(x.start));
  while (it.valid) {
    const k = it.key();
    if (end.length > 0 && compareKeyRow(k, end) >= 0) break;
    if (filter.hasRowFilter) {
      const row = rowOf(k);
      if (!filter.rowMatches(row)) {
        skipRow(it, row.slice());
        continue;
      }
    }
    const row = readRow(it, ctx);
    if (row.cells.length > 0) onRow(row as { key: Uint8Array; cells: Cell[] });
  }
  const err = it.error();
  if (err !== undefined) throw err;
}

/** Advances past every entry of `row` (the iterator at its first one). */
function skipRow(it: InternalIterator, row: Uint8Array): void {
  do it.next();
  while (it.valid && compareKeyRow(it.key(), row) === 0);
}
