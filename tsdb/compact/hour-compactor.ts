/**
 * Hour compaction: once a series-hour is closed, its cells (single points, OpenTSDB
 * compacted columns, an earlier compressed cell) are rewritten as ONE compressed hour
 * cell (tsdb/SCHEMA.md "Compressed hour cell"), in one atomic row mutation that puts the
 * new cell and deletes each consumed cell up to the version that was read — so a point
 * written meanwhile survives, and a later point lands next to the compressed cell and is
 * merged on the next pass. Reads see the same points before and after.
 *
 * Which rows: the writer reports each (row, hour) when a series first writes into it and
 * touches it on every write (markDirty). A row is due when its hour ended more than
 * `compactGraceMs` ago and it saw no write for `compactIdleMs`. Rows written before a
 * restart, or while the dirty set was full, are found by sweep(), which scans the data
 * table for closed hours that are not yet a single compressed cell (after a start, only
 * the cells written before it; none when the table was empty at the start).
 */
import type { Cell, Mutation, Table } from '../../core/api/store.js';
import type { TsdbConfig } from '../config.js';
import { encodeHourBlock } from '../codec/hour-codec.js';
import { mergeRowCells, isDataPointCell } from '../query/row-merge.js';
import { HOUR_CELL_QUALIFIER, HOUR_CELL_QUALIFIER_BYTE, isHourCellQualifier } from '../schema/qualifier.js';
import { baseTimeOfKey } from '../schema/row-key.js';
import type { SchemaWidths } from '../schema/widths.js';
import { DATA_FAMILY } from '../tables.js';
import type { DirtyMark } from '../write/ingest.js';

export interface HourCompactorDeps {
  readonly data: Table;
  readonly widths: SchemaWidths;
  readonly config: TsdbConfig;
  readonly now: () => number;
  readonly log?: (msg: string) => void;
}

interface DirtyRow extends DirtyMark {
  readonly key: Uint8Array;
  readonly baseSec: number;
}

export interface HourCompactorStats {
  readonly rowsCompacted: number;
  readonly pointsCompacted: number;
  readonly pendingRows: number;
  readonly passes: number;
  readonly errors: number;
  readonly dirtyOverflows: number;
  readonly lastError?: string;
}

/** What markDirty hands out while the dirty set is full: sweep() finds those rows. */
const OVERFLOW_MARK: DirtyMark = { lastWriteMs: 0, live: true };
/** Rows fetched and rewritten per mutate. */
const BATCH_ROWS = 256;
/** The dirty set stops growing here; sweep() finds the rest. */
const MAX_DIRTY_ROWS = 2_000_000;

/** What the layer's hour compaction offers, whichever runs it (this class or the store). */
export interface HourCompaction {
  /** Starts periodic work (none where the store compacts by itself). */
  start(): void;
  /** One pass now; `force` ignores grace and idle times, `sweep` looks at the whole table. */
  runOnce(opts?: { force?: boolean; sweep?: boolean }): Promise<void>;
  stop(): Promise<void>;
  stats(): HourCompactorStats;
}

export class HourCompactor implements HourCompaction {
  private readonly deps: HourCompactorDeps;
  private readonly dirty = new Map<string, DirtyRow>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private needSweep = true;
  /**
   * The automatic sweep after a start looks only at cells written before it (cell times
   * are write times): rows this process writes are in the dirty set, and reading them all
   * again mid-ingest cost ~6% of the server's CPU in a telnet profile. After a dirty-set overflow: the whole
   * table (undefined).
   */
  private sweepBefore: number | undefined;
  private rowsCompacted = 0;
  private pointsCompacted = 0;
  private passes = 0;
  private errors = 0;
  private dirtyOverflows = 0;
  private lastError: string | undefined;

  constructor(deps: HourCompactorDeps) {
    this.deps = deps;
    this.sweepBefore = deps.now();
  }

  /**
   * The data table held no rows when this process opened it: the sweep owed after a start
   * (for cells written before it) would only read through what this process writes, which
   * markDirty tracks. A dirty-set overflow still owes one.
   */
  nothingWrittenBefore(): void {
    if (this.sweepBefore === undefined) return;
    this.needSweep = false;
    this.sweepBefore = undefined;
  }

  /** Registers a (row, hour) the writer just wrote into; returns the mark it touches later. */
  markDirty(key: Uint8Array, baseSec: number, nowMs: number): DirtyMark {
    const id = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
    let row = this.dirty.get(id);
    if (row === undefined) {
      if (this.dirty.size >= MAX_DIRTY_ROWS) {
        this.dirtyOverflows++;
        this.needSweep = true;
        this.sweepBefore = undefined;
        return OVERFLOW_MARK;
      }
      row = { key, baseSec, lastWriteMs: nowMs, live: true };
      this.dirty.set(id, row);
    } else {
      row.lastWriteMs = nowMs;
    }
    return row;
  }

  /** Starts the periodic pass (timer unref'd: it never keeps the process alive). */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => void this.runOnce(), this.deps.config.compactIntervalMs);
    this.timer.unref();
  }

  /**
   * One pass: compacts every due row (with `force`, every row of an ended hour, ignoring
   * grace and idle times), then a sweep if one is owed. Passes never overlap.
   */
  runOnce(opts: { force?: boolean; sweep?: boolean } = {}): Promise<void> {
    const prev = this.running ?? Promise.resolve();
    const p = prev.then(() => this.pass(opts));
    this.running = p.finally(() => {
      if (this.running === p) this.running = undefined;
    });
    return p;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  stats(): HourCompactorStats {
    return {
      rowsCompacted: this.rowsCompacted,
      pointsCompacted: this.pointsCompacted,
      pendingRows: this.dirty.size,
      passes: this.passes,
      errors: this.errors,
      dirtyOverflows: this.dirtyOverflows,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    };
  }

  private async pass(opts: { force?: boolean; sweep?: boolean }): Promise<void> {
    if (this.stopped && opts.force !== true) return;
    this.passes++;
    try {
      const now = this.deps.now();
      const { compactGraceMs, compactIdleMs } = this.deps.config;
      const due: DirtyRow[] = [];
      for (const [id, row] of this.dirty) {
        const hourEnd = (row.baseSec + 3600) * 1000;
        const ready = opts.force === true ? hourEnd <= now : hourEnd + compactGraceMs <= now && row.lastWriteMs + compactIdleMs <= now;
        if (!ready) continue;
        due.push(row);
        row.live = false;
        this.dirty.delete(id);
      }
      for (let i = 0; i < due.length; i += BATCH_ROWS) {
        const batch = due.slice(i, i + BATCH_ROWS);
        try {
          await this.compactRows(batch.map((r) => r.key));
        } catch (err) {
          // Put them back: the next pass retries.
          for (const r of batch) {
            r.live = true;
            this.dirty.set(Buffer.from(r.key).toString('latin1'), r);
          }
          throw err;
        }
      }
      if (opts.sweep === true || (this.needSweep && opts.sweep !== false)) {
        // An explicit sweep (fsck, tests) reads everything.
        const before = opts.sweep === true ? undefined : this.sweepBefore;
        this.needSweep = false;
        this.sweepBefore = undefined;
        await this.sweep(opts.force === true, before);
      }
    } catch (err) {
      this.errors++;
      this.lastError = (err as Error).message;
      this.deps.log?.(`hour compaction failed: ${this.lastError}`);
    }
  }

  /**
   * Scans the data table (only cells written before `before`, when given) and compacts
   * every closed hour not yet in one cell. Only qualifiers are looked at: values are
   * borrowed, never copied.
   */
  private async sweep(force: boolean, before: number | undefined): Promise<void> {
    const now = this.deps.now();
    const grace = force ? 0 : this.deps.config.compactGraceMs;
    let pending: Uint8Array[] = [];
    const spec = { families: [DATA_FAMILY], batchRows: 512, borrowValues: true, ...(before === undefined ? {} : { timeRange: { start: 0, end: before } }) };
    for await (const rows of this.deps.data.scan(spec)) {
      for (const row of rows) {
        const base = baseTimeOfKey(this.deps.widths, row.key);
        if ((base + 3600) * 1000 + grace > now) continue;
        if (!force && this.dirty.has(Buffer.from(row.key).toString('latin1'))) continue; // tracked: waits for idle
        if (!needsCompaction(row.cells)) continue;
        pending.push(row.key);
        if (pending.length >= BATCH_ROWS) {
          await this.compactRows(pending);
          pending = [];
        }
      }
      if (this.stopped && !force) return;
    }
    if (pending.length > 0) await this.compactRows(pending);
  }

  /** Reads `keys` and rewrites each as one compressed cell. */
  private async compactRows(keys: readonly Uint8Array[]): Promise<void> {
    const rows = await this.deps.data.get(keys, { families: [DATA_FAMILY] });
    const muts: Array<{ key: Uint8Array; mutations: Mutation[] }> = [];
    for (let i = 0; i < keys.length; i++) {
      const row = rows[i];
      if (row === undefined || !needsCompaction(row.cells)) continue;
      const mutations = compactionMutations(row.cells);
      if (mutations === undefined) continue;
      muts.push({ key: keys[i]!, mutations: mutations.mutations });
      this.pointsCompacted += mutations.points;
    }
    if (muts.length === 0) return;
    await this.deps.data.mutate(muts, { durability: 'buffered' });
    this.rowsCompacted += muts.length;
  }
}

/** True when the row holds data-point cells other than a lone compressed hour cell. */
export function needsCompaction(cells: readonly Cell[]): boolean {
  let data = 0;
  let hourCell = false;
  for (const c of cells) {
    if (!isDataPointCell(c.qualifier)) continue;
    data++;
    if (isHourCellQualifier(c.qualifier)) hourCell = true;
  }
  return data > 1 || (data === 1 && !hourCell);
}

/**
 * The mutations that replace a row's data-point cells by one compressed cell: the put
 * (versioned at the newest consumed cell's time) and a delete of every other consumed
 * cell up to the version read. Annotations and unknown cells are left alone.
 */
export function compactionMutations(cells: readonly Cell[]): { mutations: Mutation[]; points: number } | undefined {
  const block = mergeRowCells(cells);
  const mutations: Mutation[] = [];
  let newest = 0;
  for (const c of cells) {
    if (!isDataPointCell(c.qualifier)) continue;
    if (c.timestamp > newest) newest = c.timestamp;
    if (c.qualifier.length === 1 && c.qualifier[0] === HOUR_CELL_QUALIFIER_BYTE) continue;
    mutations.push({ type: 'deleteCell', family: DATA_FAMILY, qualifier: c.qualifier, upTo: c.timestamp });
  }
  if (block.count === 0) {
    mutations.push({ type: 'deleteCell', family: DATA_FAMILY, qualifier: HOUR_CELL_QUALIFIER, upTo: newest });
  } else {
    mutations.unshift({ type: 'put', family: DATA_FAMILY, qualifier: HOUR_CELL_QUALIFIER, value: encodeHourBlock(block), timestamp: newest });
  }
  return { mutations, points: block.count };
}
