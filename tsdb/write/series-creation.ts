/**
 * Series creation in batches (issue 32): the series that write calls see for the first
 * time are created together. One batch runs at a time; calls that need series while it
 * runs join the next one (a group commit of creations; an idle server's first call goes
 * at once). A batch:
 *   1. validates each series (OpenTSDB's checks and messages: data-point.ts);
 *   2. resolves its distinct metric names, tag keys and tag values per kind at once
 *      (UidTable.resolveMany: one batched read, then — where auto-create is on — one
 *      synced increment reserving a block of ids and the check-and-puts of all new names
 *      together, buffered, tsdb/SCHEMA.md "Assignment");
 *   3. records its series new to the index (Catalog.recordSeries: the index is not read
 *      for a series carrying a name assigned in step 2), postings buffered, index rows
 *      in one synced write, which makes the names of step 2 durable with them;
 *   4. makes the entries live (Catalog.series) only then.
 * Synced rounds per batch: one per kind with new names (their increments share the
 * counter row, one after the other), plus one; a batch of new series of known names: one.
 * So a series and its names are durable before any of its points is written: the
 * writer waits for its batch before queueing the points ("recorded before acknowledged").
 * series_created counts the series step 3 recorded (new to the database); a known series
 * made live again (dropped from the in-memory entries, or after a restart) is counted
 * apart (seriesReadmitted).
 */
import type { Catalog, SeriesRecorded } from '../catalog/catalog.js';
import type { TsdbConfig } from '../config.js';
import { TsdbError, isTsdbError } from '../errors.js';
import { tsuidKeyOfRowKey } from '../meta/newest-hours.js';
import { encodeSeriesKey, tsuidOfKey } from '../schema/row-key.js';
import type { SchemaWidths } from '../schema/widths.js';
import { validateSeries } from './data-point.js';
import type { IncomingPoint } from './data-point.js';
import type { PointOutcome } from './put-entry.js';
import { newSeriesEntry } from './write-group.js';
import type { SeriesEntry } from './write-group.js';

/** One call's series to create: text → indexes of its points, with where to put the results. */
export interface CreationJob {
  readonly points: readonly IncomingPoint[];
  readonly owned: ReadonlyArray<readonly [string, readonly number[]]>;
  readonly entries: (SeriesEntry | undefined)[];
  readonly outcomes: PointOutcome[];
  /** Keep the series' texts (Catalog.series.setText; default true): false where a byte cache finds them. */
  readonly keepTexts?: boolean;
}

interface Queued extends CreationJob {
  resolve(): void;
  reject(err: unknown): void;
}

export interface CreationStats {
  /** Series new to the database: recorded in the series index by this process. */
  readonly seriesCreated: number;
  /**
   * Series the index held already that were made live again: written before (by this
   * process, dropped from the in-memory entries since, or by another process or before a
   * restart). Not counted in seriesCreated.
   */
  readonly seriesReadmitted: number;
  /** Batches run. */
  readonly batches: number;
}

export class SeriesCreator {
  private readonly catalog: Catalog<SeriesEntry>;
  private readonly config: TsdbConfig;
  private readonly widths: SchemaWidths;
  private readonly now: () => number;
  private queue: Queued[] = [];
  private running = false;
  private created = 0;
  private readmitted = 0;
  private batches = 0;

  constructor(catalog: Catalog<SeriesEntry>, config: TsdbConfig, widths: SchemaWidths, now: () => number) {
    this.catalog = catalog;
    this.config = config;
    this.widths = widths;
    this.now = now;
  }

  /**
   * Creates the job's series in the next batch: fills `entries` (live, recorded) or
   * `outcomes` (the series' error) for their points. Rejects when the store fails.
   */
  create(job: CreationJob): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...job, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  stats(): CreationStats {
    return { seriesCreated: this.created, seriesReadmitted: this.readmitted, batches: this.batches };
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const jobs = this.queue;
        this.queue = [];
        try {
          await this.createBatch(jobs);
          for (const j of jobs) j.resolve();
        } catch (err) {
          for (const j of jobs) j.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async createBatch(jobs: readonly Queued[]): Promise<void> {
    this.batches++;
    const { config, catalog } = this;
    const todo: Array<{ job: Queued; text: string; idx: readonly number[]; p: IncomingPoint }> = [];
    const names = { metric: new Set<string>(), tagk: new Set<string>(), tagv: new Set<string>() };
    for (const job of jobs) {
      for (const [text, idx] of job.owned) {
        const p = job.points[idx[0]!]!;
        try {
          if (p.tags.length > config.maxTags) catalog.limiter.refusedTags();
          validateSeries(p, config.maxTags, config.allowSpecialChars);
        } catch (err) {
          if (!isTsdbError(err)) throw err;
          for (const i of idx) job.outcomes[i] = err;
          continue;
        }
        todo.push({ job, text, idx, p });
        names.metric.add(p.metric);
        for (const [k, v] of p.tags) {
          names.tagk.add(k);
          names.tagv.add(v);
        }
      }
    }
    if (todo.length === 0) return;
    // New names' forward mappings buffered: the series index write below is synced.
    const assigned = { metric: new Set<string>(), tagk: new Set<string>(), tagv: new Set<string>() };
    const [metrics, tagks, tagvs] = await Promise.all([
      catalog.metrics.resolveMany([...names.metric], { create: config.autoCreateMetrics, durability: 'buffered', assigned: assigned.metric }),
      catalog.tagks.resolveMany([...names.tagk], { create: config.autoCreateTagks, durability: 'buffered', assigned: assigned.tagk }),
      catalog.tagvs.resolveMany([...names.tagv], { create: config.autoCreateTagvs, durability: 'buffered', assigned: assigned.tagv }),
    ]);
    const { widths } = this;
    const made: Array<{ job: Queued; text: string; idx: readonly number[]; e: SeriesEntry; live: boolean; fresh: boolean }> = [];
    for (const { job, text, idx, p } of todo) {
      const err = errorOf(metrics.get(p.metric)!, p.tags.map(([k, v]) => [tagks.get(k)!, tagvs.get(v)!] as const));
      if (err !== undefined) {
        for (const i of idx) job.outcomes[i] = err;
        continue;
      }
      const pairs = p.tags.map(([k, v]) => concat(tagks.get(k) as Uint8Array, tagvs.get(v) as Uint8Array));
      const template = encodeSeriesKey(widths, metrics.get(p.metric) as Uint8Array, pairs);
      const key = tsuidKeyOfRowKey(template, widths.saltWidth, widths.metric);
      const live = catalog.series.get(key);
      // A series with a name assigned just now cannot be in the index yet: not read there.
      const fresh = assigned.metric.has(p.metric) || p.tags.some(([k, v]) => assigned.tagk.has(k) || assigned.tagv.has(v));
      made.push({ job, text, idx, e: live ?? newSeriesEntry(template, key), live: live !== undefined, fresh });
    }
    // Series past a cardinality limit (Catalog.recordSeries): their points get the refusal.
    let verdicts: SeriesRecorded[] = [];
    if (made.length > 0) {
      try {
        verdicts = await catalog.recordSeries(made.map((m) => tsuidOfKey(widths, m.e.template)), this.now(), made.map((m) => m.fresh));
      } catch (err) {
        throw new TsdbError('TSDB_STORAGE', `storage failed the series index write: ${(err as Error).message}`, { cause: err });
      }
    }
    if (verdicts.some((v) => v === 'new')) {
      // The index write was synced: the names assigned above are durable with it.
      catalog.metrics.synced(assigned.metric);
      catalog.tagks.synced(assigned.tagk);
      catalog.tagvs.synced(assigned.tagv);
    }
    // Live only once recorded: a failed index write is retried with the next point.
    for (let m = 0; m < made.length; m++) {
      const { job, text, idx, e, live: wasLive } = made[m]!;
      const verdict = verdicts[m]!;
      if (verdict instanceof TsdbError) {
        for (const i of idx) job.outcomes[i] = verdict;
        continue;
      }
      const live = catalog.series.intern(e);
      // Counted once per series (two texts of one series in a batch share the entry).
      if (live === e && !wasLive) {
        if (verdict === 'new') this.created++;
        else this.readmitted++;
      }
      for (const i of idx) job.entries[i] = live;
      if (job.keepTexts !== false) catalog.series.setText(text, live);
    }
  }
}

/** The first error among a series' names: its metric's, then each tag key's and value's in order. */
function errorOf(metric: Uint8Array | TsdbError, pairs: ReadonlyArray<readonly [Uint8Array | TsdbError, Uint8Array | TsdbError]>): TsdbError | undefined {
  if (metric instanceof TsdbError) return metric;
  for (const [k, v] of pairs) {
    if (k instanceof TsdbError) return k;
    if (v instanceof TsdbError) return v;
  }
  return undefined;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
