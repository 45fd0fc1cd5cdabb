/**
 * Flush and compaction jobs as plain functions over a FileSystem, so the same code runs
 * inline (tests, the in-memory file system) or in a worker thread (job-worker.ts). Job
 * descriptions and results are structured-clone friendly.
 *
 * A flush turns a memstore's entries (its slabs and an index in key order) into one SST. A compaction
 * merges input SSTs restricted to a region's row range into one SST; a major compaction
 * also drops delete markers, versions beyond the family's limit and expired cells
 * (row-reader.ts `compactRow`). Outputs are written as NNNNNN.sst.tmp, synced, and renamed
 * into place; the caller installs them in the manifest.
 */
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import { ioError } from '../api/errors.js';
import { MergingIterator } from '../iter/merging-iterator.js';
import type { InternalIterator } from '../iter/internal-iterator.js';
import { SstWriter } from '../sst/sst-writer.js';
import { SstReader } from '../sst/sst-reader.js';
import type { FileMeta } from './file-meta.js';
import { PROP_DELETIONS, PROP_MAX_ROW_TIME, PROP_MAX_SEQ, PROP_MAX_TS, PROP_MIN_ROW_TIME, PROP_MIN_SEQ, PROP_MIN_TS } from './file-meta.js';
import { sstName } from './filenames.js';
import { KeyKind, compareKeyRow, kindOf, rowStartKey, seqOf, timestampOf } from './internal-key.js';
import type { FamilyRule } from './row-reader.js';
import { uvarintSize } from './memstore-slab.js';
import { compactRow } from './row-reader.js';
import type { SstSettings } from './sst-options.js';
import type { RowTransform, RowTransformFactory } from '../api/row-transform.js';
import { rowTransformEntry } from '../api/row-transform.js';
import type { TransformSpec } from './row-transformer.js';
import { RowTransformer } from './row-transformer.js';
import { bloomKey, compare, compareRange } from './sst-options.js';
import { RangeDeleteIterator, covered } from './range-deletes.js';
import type { RangeBound } from './range-deletes.js';


/** The row transforms of a job's table and what they need (row-transformer.ts). */
export interface JobTransforms {
  readonly specs: readonly TransformSpec[];
  /** Only entries at or below it are resolved and transformed (CompactionJob.keepSeq). */
  readonly keepSeq: number;
  readonly nowMs: number;
  readonly families: readonly (readonly [string, FamilyRule])[];
}

export interface FlushJob {
  readonly kind: 'flush';
  readonly dir: string;
  readonly fileNumber: number;
  /** Set when the table has a registered row transform: rows go through it. */
  readonly transforms?: JobTransforms;
  /**
   * Range tombstones older than every held snapshot: the entries they cover are not
   * written (so a row transform never merges them with newer cells; range-deletes.ts).
   */
  readonly rangeDeletes?: readonly RangeBound[];
  /**
   * The memstore's slabs (SharedArrayBuffers: a worker reads them in place) holding its
   * entries as [uvarint keyLen][key][uvarint valueLen][value] (memstore-slab.ts).
   */
  readonly slabs: readonly Uint8Array[];
  /** Per entry, in internal-key order: slab, key offset, key length, value length. */
  readonly index: Uint32Array;
  readonly count: number;
  readonly sst: SstSettings;
}

export interface CompactionJob {
  readonly kind: 'compact';
  readonly dir: string;
  readonly inputs: readonly number[];
  readonly outputNumber: number;
  /** Region row range [start, end); empty = unbounded. */
  readonly start: Uint8Array;
  readonly end: Uint8Array;
  readonly major: boolean;
  /**
   * A major compaction resolves only entries with seq <= keepSeq (the oldest snapshot a
   * read may still use, SeqTracker.oldestSnapshot) and keeps newer ones as they are, so
   * a read whose snapshot is older than the compaction still finds what it sees.
   */
  readonly keepSeq: number;
  readonly nowMs: number;
  readonly families: readonly (readonly [string, FamilyRule])[];
  /** The table's registered row transforms, if any (major or minor: rows go through them). */
  readonly transforms?: readonly TransformSpec[];
  /** Range tombstones older than keepSeq: the entries they cover are dropped (range-deletes.ts). */
  readonly rangeDeletes?: readonly RangeBound[];
  readonly sst: SstSettings;
}

export type Job = FlushJob | CompactionJob;

/** Result: the new file, or undefined when the output would be empty (nothing written). */
export type JobResult = FileMeta | undefined;

/** Collects per-file metadata while entries are added. */
class MetaTracker {
  minTs = Infinity;
  maxTs = -Infinity;
  minSeq = Infinity;
  maxSeq = 0;
  deletions = 0;
  /** Row-time range, set by a transformed job when every row had one. */
  rowTimes: { min: number; max: number } | undefined;

  add(key: Uint8Array): void {
    const ts = timestampOf(key);
    const seq = seqOf(key);
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
    if (seq < this.minSeq) this.minSeq = seq;
    if (seq > this.maxSeq) this.maxSeq = seq;
    if (kindOf(key) !== KeyKind.Put) this.deletions++;
  }

  props(): Record<string, number> {
    return {
      [PROP_MIN_TS]: this.minTs, [PROP_MAX_TS]: this.maxTs,
      [PROP_MIN_SEQ]: this.minSeq, [PROP_MAX_SEQ]: this.maxSeq, [PROP_DELETIONS]: this.deletions,
      ...(this.rowTimes === undefined ? {} : { [PROP_MIN_ROW_TIME]: this.rowTimes.min, [PROP_MAX_ROW_TIME]: this.rowTimes.max }),
    };
  }
}

const PENDING_FLUSH_BYTES = 4 << 20;

async function writeSst(
  fs: FileSystem, dir: string, number: number, settings: SstSettings,
  fill: (add: (k: Uint8Array, v: Uint8Array) => void, drain: () => Promise<void>) => Promise<void>,
  rowTimes?: () => { min: number; max: number } | undefined,
): Promise<JobResult> {
  const finalPath = joinPath(dir, sstName(number));
  const tmpPath = `${finalPath}.tmp`;
  let file;
  try {
    file = await fs.openAppend(tmpPath, { truncate: true });
  } catch (e) {
    throw ioError(`sst ${tmpPath}: create`, e);
  }
  const writer = new SstWriter(file, {
    compare, bloomKey,
    blockSizeBytes: settings.blockSizeBytes,
    restartInterval: settings.restartInterval,
    compression: settings.compression,
    bloomBitsPerKey: settings.bloomBitsPerKey,
  });
  const meta = new MetaTracker();
  let entries = 0;
  try {
    const drain = async (): Promise<void> => {
      if (writer.pendingBytes > PENDING_FLUSH_BYTES) await writer.flushPending();
    };
    await fill((k, v) => {
      writer.add(k, v);
      meta.add(k);
      entries++;
    }, drain);
    if (entries === 0) {
      await file.close();
      await fs.remove(tmpPath);
      return undefined;
    }
    meta.rowTimes = rowTimes?.();
    const info = await writer.finish(meta.props());
    await fs.rename(tmpPath, finalPath);
    await fs.syncDir(dir);
    return {
      number, sizeBytes: info.sizeBytes, entries: info.entries,
      smallest: info.smallestKey.slice(), largest: info.largestKey.slice(),
      minTs: meta.minTs, maxTs: meta.maxTs, minSeq: meta.minSeq, maxSeq: meta.maxSeq, deletions: meta.deletions,
      ...(meta.rowTimes === undefined ? {} : { minRowTime: meta.rowTimes.min, maxRowTime: meta.rowTimes.max }),
    };
  } catch (e) {
    await file.close().catch(() => undefined);
    await fs.remove(tmpPath).catch(() => undefined);
    throw ioError(`sst ${finalPath}: write`, e);
  }
}

export async function runFlush(fs: FileSystem, job: FlushJob): Promise<JobResult> {
  const tr = job.transforms === undefined ? undefined : await transformerOf(job.transforms.specs, job.transforms, false);
  return writeSst(fs, job.dir, job.fileNumber, job.sst, async (add, drain) => {
    const { slabs, index } = job;
    const rows = tr?.transformer;
    const dels = job.rangeDeletes === undefined || job.rangeDeletes.length === 0 ? undefined : job.rangeDeletes;
    for (let i = 0; i < job.count; i++) {
      const j = 4 * i;
      const slab = slabs[index[j]!]!;
      const ko = index[j + 1]!;
      const kl = index[j + 2]!;
      const vl = index[j + 3]!;
      const vo = ko + kl + uvarintSize(vl);
      const key = slab.subarray(ko, ko + kl);
      const value = slab.subarray(vo, vo + vl);
      if (dels !== undefined && covered(dels, key)) continue;
      if (rows === undefined) add(key, value);
      else {
        if (rows.newRow(key)) rows.finish(add);
        rows.add(key, value);
      }
      if ((i & 4095) === 4095) await drain();
    }
    rows?.finish(add);
  }, () => tr?.rowTimes());
}

/** Modules imported by this thread, by URL. */
const imported = new Map<string, Promise<Record<string, unknown>>>();

async function factoryOf(spec: TransformSpec): Promise<RowTransformFactory | undefined> {
  const local = rowTransformEntry(spec.name);
  if (local?.factory !== undefined && local.module === spec.module && local.exportName === spec.exportName) return local.factory;
  let mod = imported.get(spec.module);
  if (mod === undefined) {
    mod = import(spec.module) as Promise<Record<string, unknown>>;
    imported.set(spec.module, mod);
  }
  try {
    const f = (await mod)[spec.exportName];
    return typeof f === 'function' ? (f as RowTransformFactory) : undefined;
  } catch {
    imported.delete(spec.module);
    return undefined;
  }
}

/**
 * The row transformer of a job. A transform that cannot be loaded or made is left out: its
 * family's cells are kept as they are (correctness never depends on a transform).
 */
async function transformerOf(
  specs: readonly TransformSpec[], t: { keepSeq: number; nowMs: number; families: readonly (readonly [string, FamilyRule])[] }, major: boolean,
): Promise<{ transformer: RowTransformer; rowTimes: () => { min: number; max: number } | undefined }> {
  const transforms = new Map<string, RowTransform>();
  let rowTime: ((row: Uint8Array) => number | undefined) | undefined;
  for (const spec of specs) {
    let made: RowTransform | undefined;
    try {
      made = (await factoryOf(spec))?.(spec.options);
    } catch {
      made = undefined;
    }
    if (made === undefined) continue;
    transforms.set(spec.family, made);
    if (spec.rowTime && made.rowTime !== undefined) rowTime = made.rowTime.bind(made);
  }
  const transformer = new RowTransformer({ keepSeq: t.keepSeq, nowMs: t.nowMs, major, families: new Map(t.families), transforms, rowTime });
  return {
    transformer,
    rowTimes: () => (transformer.rowTimeUnknown || transformer.minRowTime > transformer.maxRowTime ? undefined : { min: transformer.minRowTime, max: transformer.maxRowTime }),
  };
}

/** Opens the job's input files and merges them; the caller closes what it returns. */
function openInputs(fs: FileSystem, dir: string, inputs: readonly number[]): Promise<{ it: InternalIterator; close: () => Promise<void> }> {
  return (async () => {
    const files: { close(): Promise<void> }[] = [];
    const iters: InternalIterator[] = [];
    try {
      for (const n of inputs) {
        const f = await fs.openRead(joinPath(dir, sstName(n)));
        files.push(f);
        const reader = await SstReader.open(f, { compare, compareRange, bloomKey, cacheId: n });
        iters.push(reader.iterator());
      }
    } catch (e) {
      for (const f of files) await f.close().catch(() => undefined);
      throw e;
    }
    const it = new MergingIterator(iters, compare);
    return {
      it,
      close: async () => {
        it.close();
        for (const f of files) await f.close().catch(() => undefined);
      },
    };
  })();
}

export async function runCompaction(fs: FileSystem, job: CompactionJob): Promise<JobResult> {
  const tr = job.transforms === undefined || job.transforms.length === 0 ? undefined : await transformerOf(job.transforms, job, job.major);
  const inputs = await openInputs(fs, job.dir, job.inputs);
  const { close } = inputs;
  const it = job.rangeDeletes === undefined || job.rangeDeletes.length === 0 ? inputs.it : new RangeDeleteIterator(inputs.it, job.rangeDeletes);
  const families = new Map(job.families);
  try {
    return await writeSst(fs, job.dir, job.outputNumber, job.sst, async (add, drain) => {
      if (job.start.length > 0) it.seek(rowStartKey(job.start));
      else it.seekToFirst();
      const end = job.end;
      const rows = tr?.transformer;
      let n = 0;
      while (it.valid) {
        if (end.length > 0 && compareKeyRow(it.key(), end) >= 0) break;
        if (rows !== undefined) {
          const key = it.key().slice();
          if (rows.newRow(key)) rows.finish(add);
          rows.add(key, it.value());
          it.next();
        } else if (job.major) {
          compactRow(it, job.keepSeq, job.nowMs, families, add);
        } else {
          add(it.key(), it.value());
          it.next();
        }
        if (++n % 4096 === 0) await drain();
      }
      rows?.finish(add);
      const err = it.error();
      if (err !== undefined) throw err;
    }, () => tr?.rowTimes());
  } finally {
    await close();
  }
}

export function runJob(fs: FileSystem, job: Job): Promise<JobResult> {
  return job.kind === 'flush' ? runFlush(fs, job) : runCompaction(fs, job);
}
