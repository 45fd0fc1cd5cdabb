/**
 * The read-back hour compactor, for stores that do not compress rows themselves (Bigtable,
 * the memory store; compact/hour-transform.ts is the embedded store's way): once a series-hour is closed, its cells (single points,
 * OpenTSDB compacted columns, earlier compressed cells) are rewritten as ONE compressed
 * cell (tsdb/SCHEMA.md "Suffixed hour cells") by one check-and-put per row that puts the
 * new cell under a fresh qualifier and deletes each consumed cell up to the version read,
 * applied only while the newest consumed cell is still as read (compactionOf). A point
 * written meanwhile survives and is merged on the next pass; any number of servers may run
 * it at once (on by default): a row two of them read is rewritten by one, and a row
 * deleted after the read is not written back. Reads see the same points before and after.
 *
 * Which rows: the writer reports each (row, hour) when a series first writes into it and
 * touches it on every write (markDirty). A row is due when its hour ended more than
 * `compactGraceMs` ago and it saw no write for `compactIdleMs`. Where servers share the
 * store, each lists what it owes in the compaction ledger before writing it
 * (compaction-ledger.ts): a server that dies or stops leaves its rows to a live one, which
 * compacts each owed (metric, hour) key range in every salt bucket (compactRange), as it
 * does the rows past a full dirty set. Elsewhere rows written before a restart are found
 * by sweep(), which scans the data table for closed hours that are not yet a single
 * compressed cell (after a start, only the cells written before it; none when the table
 * was empty at the start); with a ledger that start sweep is made once per store, by the
 * first servers that open it with one.
 *
 * The dirty set is bounded in bytes (`maxDirtyBytes`, its share of
 * horae.catalog.memory_bytes; a row costs DIRTY_ROW_BYTES beside twice its key,
 * memory/catalog-memory.ts). A row that finds it full is remembered by its (metric, hour)
 * instead — in the ledger where there is one, else in `overflow` here (one entry per
 * metric and hour, whatever the series) — and once that hour is closed the pass compacts
 * its key range in every salt bucket (compactRange): what a full dirty set costs is a
 * read of those ranges, never of the whole table.
 */
import type { Cell, Mutation, Table } from '../../core/api/store.js';
import type { TsdbConfig } from '../config.js';
import { encodeHourBlock } from '../codec/hour-codec.js';
import { randomFillSync } from 'node:crypto';
import { compareWriteOrder, mergeRowCells, isDataPointCell } from '../query/row-merge.js';
import { hourCellQualifier, isHourCellQualifier } from '../schema/qualifier.js';
import { baseTimeOfKey, writeBaseTimeAt } from '../schema/row-key.js';
import { saltBytes } from '../schema/salt.js';
import type { SchemaWidths } from '../schema/widths.js';
import { DATA_FAMILY } from '../tables.js';
import type { DirtyMark } from '../write/dirty-mark.js';
import { latin1 } from '../../core/api/bytes.js';
import { DIRTY_ROW_BYTES } from '../memory/catalog-memory.js';
import { CompactionLedger, LEDGER_BEAT_MS } from './compaction-ledger.js';
import type { Pair } from './compaction-ledger.js';

export interface HourCompactorDeps {
  readonly data: Table;
  readonly widths: SchemaWidths;
  readonly config: TsdbConfig;
  readonly now: () => number;
  readonly log?: (msg: string) => void;
  /** The compaction ledger's table and this server's id, where other servers share the store. */
  readonly ledger?: { readonly table: Table; readonly server: Uint8Array };
  /** Bytes of the dirty set at most (default 256 MiB). */
  readonly maxDirtyBytes?: number;
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
  /** Bytes of the dirty set by the estimate. */
  readonly dirtyBytes?: number;
  /** (metric, hour) pairs remembered here after the dirty set was full (without a ledger), waiting for their hour to close. */
  readonly overflowPairs?: number;
  /** Rows another compactor (or a delete) changed between this one's read and write: left as they were. */
  readonly racesLost?: number;
  /** (metric, hour) key ranges compacted (owed after a takeover or a full dirty set), and servers taken over. */
  readonly rangesCompacted?: number;
  readonly takeovers?: number;
  /** (metric, hour) pairs this server lists in the ledger. */
  readonly ledgerPairs?: number;
  readonly lastError?: string;
}

/** What markDirty hands out while the dirty set is full: its (metric, hour) range is compacted instead. */
const OVERFLOW_MARK: DirtyMark = { lastWriteMs: 0, live: true };
/** Rows fetched per get. */
const BATCH_ROWS = 256;
/** Rows whose check-and-put is in flight at once. */
const PARALLEL_ROWS = 32;
/** The dirty set's default bound in bytes. */
const MAX_DIRTY_BYTES = 256 * 1024 * 1024;

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
  private dirtyHeld = 0;
  private readonly maxDirtyBytes: number;
  /** Without a ledger: the (metric, hour) pairs of rows the dirty set had no room for, by metric (latin1) and hour. */
  private readonly overflow = new Map<string, Pair>();
  /** Where servers share the store (compaction-ledger.ts). */
  private readonly ledger: CompactionLedger | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beatTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private needSweep = true;
  /**
   * The automatic sweep after a start looks only at cells written before it (cell times
   * are write times): rows this process writes are in the dirty set, and reading them all
   * again mid-ingest cost ~6% of the server's CPU in a telnet profile.
   */
  private sweepBefore: number | undefined;
  private rowsCompacted = 0;
  private pointsCompacted = 0;
  private passes = 0;
  private errors = 0;
  private dirtyOverflows = 0;
  private racesLost = 0;
  private rangesCompacted = 0;
  private lastError: string | undefined;

  constructor(deps: HourCompactorDeps) {
    this.deps = deps;
    this.sweepBefore = deps.now();
    this.maxDirtyBytes = deps.maxDirtyBytes ?? MAX_DIRTY_BYTES;
    const l = deps.ledger;
    this.ledger = l === undefined ? undefined : new CompactionLedger({ table: l.table, server: l.server, metricWidth: deps.widths.metric, now: deps.now });
  }

  /**
   * The store was opened (`empty`: its data table held no row). With a ledger, the sweep
   * owed after a start is made only while the ledger does not say one was made (a store
   * written before the ledger); else nothing written before is waited for.
   */
  async opened(empty: boolean): Promise<void> {
    const ledger = this.ledger;
    if (ledger === undefined) {
      if (empty) this.nothingWrittenBefore();
      return;
    }
    if (await ledger.swept()) this.nothingWrittenBefore();
    else if (empty) {
      this.nothingWrittenBefore();
      await ledger.markSwept();
    }
  }

  /**
   * Resolves once the compaction ledger lists every (metric, hour) of the rows reported to
   * markDirty (undefined when it does, or there is none): the write path waits for it
   * before writing them, so no row is written that no server owes.
   */
  listed(): Promise<void> | undefined {
    return this.ledger?.covered();
  }

  /** One beat of the ledger now (the timer does it every LEDGER_BEAT_MS). */
  async beat(): Promise<void> {
    await this.ledger?.beat();
  }

  /** Bytes of the dirty set, by the estimate. */
  dirtyBytes(): number {
    return this.dirtyHeld;
  }

  /**
   * The data table held no rows when this process opened it: the sweep owed after a start
   * (for cells written before it) would only read through what this process writes, which
   * markDirty tracks.
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
      if (this.dirtyHeld + rowBytes(key) > this.maxDirtyBytes) {
        this.dirtyOverflows++;
        const metric = this.metricOf(key);
        if (this.ledger !== undefined) this.ledger.addRange(metric, baseSec);
        else {
          const k = `${latin1(metric)}:${baseSec}`;
          if (!this.overflow.has(k)) this.overflow.set(k, { metric: metric.slice(), hour: baseSec });
        }
        return OVERFLOW_MARK;
      }
      row = { key, baseSec, lastWriteMs: nowMs, live: true };
      this.dirty.set(id, row);
      this.dirtyHeld += rowBytes(key);
      this.ledger?.addRow(this.metricOf(key), baseSec);
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
    if (this.ledger === undefined) return;
    this.beatTimer = setInterval(() => void this.beat(), LEDGER_BEAT_MS);
    this.beatTimer.unref();
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
    clearInterval(this.beatTimer);
    this.timer = undefined;
    this.beatTimer = undefined;
    await this.running?.catch(() => undefined);
    await this.ledger?.stop();
  }

  stats(): HourCompactorStats {
    return {
      rowsCompacted: this.rowsCompacted,
      pointsCompacted: this.pointsCompacted,
      pendingRows: this.dirty.size,
      passes: this.passes,
      errors: this.errors,
      dirtyOverflows: this.dirtyOverflows,
      dirtyBytes: this.dirtyHeld,
      overflowPairs: this.overflow.size,
      racesLost: this.racesLost,
      rangesCompacted: this.rangesCompacted,
      ...(this.ledger === undefined ? {} : { takeovers: this.ledger.stats().takeovers, ledgerPairs: this.ledger.stats().pairs }),
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
        this.dirtyHeld -= rowBytes(row.key);
      }
      for (let i = 0; i < due.length; i += BATCH_ROWS) {
        const batch = due.slice(i, i + BATCH_ROWS);
        try {
          await this.compactRows(batch.map((r) => r.key));
          if (this.ledger !== undefined) for (const r of batch) this.ledger.removeRow(this.metricOf(r.key), r.baseSec);
        } catch (err) {
          // Put them back: the next pass retries (a row written again meanwhile has its new mark).
          for (const r of batch) {
            const id = Buffer.from(r.key).toString('latin1');
            if (this.dirty.has(id)) {
              this.ledger?.removeRow(this.metricOf(r.key), r.baseSec);
              continue;
            }
            r.live = true;
            this.dirty.set(id, r);
            this.dirtyHeld += rowBytes(r.key);
          }
          throw err;
        }
      }
      for (const r of this.ledger?.dueRanges() ?? []) {
        const hourEnd = (r.hour + 3600) * 1000;
        if (hourEnd + (opts.force === true ? 0 : compactGraceMs) > now) continue;
        await this.compactRange(r, opts.force === true);
        this.ledger!.rangeDone(r);
        this.rangesCompacted++;
      }
      for (const [k, r] of this.overflow) {
        if ((r.hour + 3600) * 1000 + (opts.force === true ? 0 : compactGraceMs) > now) continue;
        await this.compactRange(r, opts.force === true);
        this.overflow.delete(k);
        this.rangesCompacted++;
      }
      if (opts.sweep === true || (this.needSweep && opts.sweep !== false)) {
        // An explicit sweep (fsck, tests) reads everything.
        const before = opts.sweep === true ? undefined : this.sweepBefore;
        const atStart = this.needSweep;
        this.needSweep = false;
        this.sweepBefore = undefined;
        await this.sweep(opts.force === true, before);
        if (atStart && !this.stopped) await this.ledger?.markSwept();
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

  /**
   * Compacts the closed rows of one (metric, hour) in every salt bucket: one key range
   * each, `[salt][metric][hour]` up to `[salt][metric][hour + 1 h]`. Rows in the dirty set
   * wait for it (unless `force`).
   */
  private async compactRange(r: Pair, force: boolean): Promise<void> {
    const { saltWidth, saltBuckets } = this.deps.widths;
    const buckets = saltWidth === 0 ? 1 : saltBuckets;
    for (let b = 0; b < buckets; b++) {
      const prefix = saltBytes(b, saltWidth);
      const start = new Uint8Array(saltWidth + r.metric.length + 4);
      start.set(prefix);
      start.set(r.metric, saltWidth);
      const end = start.slice();
      writeBaseTimeAt(start, saltWidth + r.metric.length, r.hour);
      writeBaseTimeAt(end, saltWidth + r.metric.length, r.hour + 3600);
      let pending: Uint8Array[] = [];
      for await (const rows of this.deps.data.scan({ start, end, families: [DATA_FAMILY], batchRows: 512, borrowValues: true })) {
        for (const row of rows) {
          if (!force && this.dirty.has(Buffer.from(row.key).toString('latin1'))) continue;
          if (!needsCompaction(row.cells)) continue;
          pending.push(row.key);
          if (pending.length >= BATCH_ROWS) {
            await this.compactRows(pending);
            pending = [];
          }
        }
      }
      if (pending.length > 0) await this.compactRows(pending);
    }
  }

  private metricOf(key: Uint8Array): Uint8Array {
    const s = this.deps.widths.saltWidth;
    return key.subarray(s, s + this.deps.widths.metric);
  }

  /**
   * Reads `keys` and rewrites each as one compressed cell, each row in one check-and-put
   * that applies only while the newest cell read is still as read (compactionOf), so any
   * number of compactors may run at once: the loser of a race changes nothing.
   */
  private async compactRows(keys: readonly Uint8Array[]): Promise<void> {
    const rows = await this.deps.data.get(keys, { families: [DATA_FAMILY] });
    const durability = { durability: 'buffered' } as const;
    const work: Array<Promise<void>> = [];
    for (let i = 0; i < keys.length; i++) {
      const row = rows[i];
      if (row === undefined || !needsCompaction(row.cells)) continue;
      const c = compactionOf(row.cells);
      const key = keys[i]!;
      work.push(this.deps.data.checkAndPut(key, { family: DATA_FAMILY, qualifier: c.check.qualifier }, c.check.value, c.mutations, durability).then((applied) => {
        if (!applied) {
          this.racesLost++;
          return;
        }
        this.rowsCompacted++;
        this.pointsCompacted += c.points;
      }));
      if (work.length >= PARALLEL_ROWS) await Promise.all(work.splice(0));
    }
    await Promise.all(work);
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
 * How a row's data-point cells become one compressed cell (tsdb/SCHEMA.md "Suffixed hour
 * cells"): a put under a fresh qualifier (`0c` + 8 random bytes), versioned at the newest
 * consumed cell's time, and a delete of exactly each consumed cell up to the version read;
 * to be applied only while `check` (the newest consumed cell) still holds the value read.
 * So two compactors that read the same cells cannot both apply (the second finds the
 * check cell gone), a delete of the row after the read makes the check fail (nothing is
 * written back), and a point written meanwhile is a newer version that no delete reaches.
 * Annotations and unknown cells are left alone.
 */
export function compactionOf(cells: readonly Cell[]): { mutations: Mutation[]; points: number; check: Cell } {
  const block = mergeRowCells(cells);
  const mutations: Mutation[] = [];
  let check: Cell | undefined;
  for (const c of cells) {
    if (!isDataPointCell(c.qualifier)) continue;
    if (check === undefined || compareWriteOrder(c, check) > 0) check = c;
    mutations.push({ type: 'deleteCell', family: DATA_FAMILY, qualifier: c.qualifier, upTo: c.timestamp });
  }
  if (check === undefined) throw new Error('BUG: compactionOf a row without data cells');
  if (block.count > 0) {
    const qualifier = hourCellQualifier(0);
    randomFillSync(qualifier, 1, 8);
    mutations.unshift({ type: 'put', family: DATA_FAMILY, qualifier, value: encodeHourBlock(block), timestamp: check.timestamp });
  }
  return { mutations, points: block.count, check };
}

/** A dirty row's heap bytes by the estimate: the row, its key bytes and its latin1 id. */
function rowBytes(key: Uint8Array): number {
  return DIRTY_ROW_BYTES + 2 * key.length;
}
