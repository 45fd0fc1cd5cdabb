/**
 * What a flush or compaction job is given (jobs.ts): the SST settings, the range
 * tombstones and row transforms in force for its table, and the snapshot bounds; plus the
 * row time below which a table's rows have expired. Plain functions of the table and the
 * moment the job is planned.
 */
import { rowTransformEntry } from '../api/row-transform.js';
import type { FileMeta } from './file-meta.js';
import type { CompactionJob, FlushJob } from './jobs.js';
import type { Memstore } from './memstore.js';
import type { ResolvedEngineOptions } from './options.js';
import { applicable } from './range-deletes.js';
import type { Region, TableState } from './region.js';
import type { TransformSpec } from './row-transformer.js';
import type { SstSettings } from './sst-options.js';

/** The moment a job is planned: the oldest snapshot a read holds, and the clock. */
export interface PlanContext {
  readonly opts: ResolvedEngineOptions;
  readonly dir: string;
  readonly keepSeq: number;
  readonly nowMs: number;
}

export function sstSettings(o: ResolvedEngineOptions): SstSettings {
  return { blockSizeBytes: o.blockSizeBytes, restartInterval: o.restartInterval, compression: o.compression, bloomBitsPerKey: o.bloomBitsPerKey };
}

/**
 * The flush job of an immutable memstore: its slabs as they are (shared memory) and an
 * index of its entries in key order; nothing is copied on this thread.
 */
export function flushJob(ctx: PlanContext, mem: Memstore, number: number, t: TableState): FlushJob {
  const { slabs, index } = mem.flushInput();
  const specs = transformSpecs(t);
  const dels = t.rangeDeletes.length === 0 ? [] : applicable(t.rangeDeletes, ctx.keepSeq, new Uint8Array(0), new Uint8Array(0));
  return {
    kind: 'flush', dir: ctx.dir, fileNumber: number, slabs, index, count: index.length / 4, sst: sstSettings(ctx.opts),
    ...(dels.length === 0 ? {} : { rangeDeletes: dels.map((d) => ({ start: d.start, end: d.end, seq: d.seq })) }),
    ...(specs === undefined ? {} : {
      transforms: { specs, keepSeq: ctx.keepSeq, nowMs: ctx.nowMs, families: [...t.families.entries()] },
    }),
  };
}

/** The compaction job merging `inputs` of region r into file `number`. */
export function compactionJob(ctx: PlanContext, r: Region, inputs: readonly FileMeta[], number: number, major: boolean): CompactionJob {
  const job: CompactionJob = {
    kind: 'compact', dir: ctx.dir, inputs: inputs.map((f) => f.number), outputNumber: number,
    start: r.start, end: r.end, major, keepSeq: ctx.keepSeq, nowMs: ctx.nowMs,
    families: [...r.table.families.entries()], sst: sstSettings(ctx.opts),
  };
  // Tombstones older than every held snapshot: their entries go (range-deletes.ts).
  const dels = applicable(r.table.rangeDeletes, ctx.keepSeq, r.start, r.end).map((d) => ({ start: d.start, end: d.end, seq: d.seq }));
  if (dels.length > 0) Object.assign(job, { rangeDeletes: dels });
  const transforms = transformSpecs(r.table);
  if (transforms !== undefined) Object.assign(job, { transforms });
  return job;
}

/**
 * The registered row transforms of the table's families (core/api/row-transform.ts), read
 * when a job is planned; undefined when none is registered (cells are written as they are).
 */
export function transformSpecs(t: TableState): TransformSpec[] | undefined {
  let specs: TransformSpec[] | undefined;
  for (const f of t.spec.families) {
    if (f.transform === undefined) continue;
    const e = rowTransformEntry(f.transform);
    if (e === undefined) continue;
    (specs ??= []).push({ family: f.name, name: f.transform, module: e.module, exportName: e.exportName, options: e.options?.(), rowTime: specs.length === 0 });
  }
  return specs;
}

/**
 * The row time below which every row of the table has expired: defined when every
 * family has a registered transform that says so (the smallest of their answers).
 */
export function expiredBefore(t: TableState, nowMs: number): number | undefined {
  let cutoff: number | undefined;
  for (const f of t.spec.families) {
    const e = f.transform === undefined ? undefined : rowTransformEntry(f.transform);
    const c = e?.expiredBefore?.(nowMs);
    if (c === undefined) return undefined;
    cutoff = cutoff === undefined ? c : Math.min(cutoff, c);
  }
  return cutoff;
}
