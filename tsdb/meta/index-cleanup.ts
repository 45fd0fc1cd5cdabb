/**
 * The index cleanup (`horae.retention.cleanup`, tsdb/SCHEMA.md "Index cleanup"): once every
 * data row of a series has expired under its metric's retention, its series-index row and
 * postings go; then each name (metric, tag key, tag value) that only such series carried
 * goes too, both mappings (UidTable.delete). The id counter is never touched, so no UID is
 * handed out twice: a name written again gets a new one.
 *
 * One pass, on a store with one writer (capabilities.singleWriter: this process):
 *  1. Candidates: for each metric with a retention, the series of the index with no data
 *     row in the hours kept (one scan of those rows per salt bucket, as queries read them).
 *  2. Their writer entries are dropped and they are marked retiring (creation-gate.ts): a
 *     write of one from now on goes through Catalog.recordSeries, which records it again
 *     and takes it off the mark. Then the pass waits until every write call made before has
 *     ended (Ingest.callsEnded), so every write that used an entry from before has landed
 *     where step 4 reads (later calls cannot hold a dropped entry).
 *  3. The creation gate closes: no series is recorded until the pass ends.
 *  4. The candidates still marked are checked again (step 1's scan): those still without a
 *     kept row are removed: index row, postings, and the value rows left with no posting.
 *  5. The UIDs of removed series that no series left in the index carries are deleted and
 *     retired: a series carrying one is refused (retryable) rather than recorded.
 *  6. The gate opens; writers waiting there record their series as new.
 * A pass whose earlier write calls do not end within DRAIN_MS gives up (retried at the
 * next pass).
 */
import { PeriodicPass } from '../periodic-pass.js';
import { compareBytes, latin1, prefixEnd, toHex } from '../../core/api/bytes.js';
import type { RowMutation, Table } from '../../core/api/store.js';
import type { RetentionConfig } from '../compact/retention.js';
import { retentionOfName } from '../compact/retention.js';
import { writeBaseTimeAt } from '../schema/row-key.js';
import { saltBytes } from '../schema/salt.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { UidTable } from '../uid/uid-table.js';
import type { UidKind } from '../uid/uid-kind.js';
import type { CreationGate } from './creation-gate.js';
import { KIND_POSTING, KIND_VALUE, POSTINGS_FAMILY } from './postings.js';
import type { SeriesIndex } from './series-index.js';

/** How often a server runs a pass. */
export const CLEANUP_EVERY_MS = 6 * 3_600_000;
/** How long a pass waits for the writes in flight to land. */
const DRAIN_MS = 30_000;
const HOUR_MS = 3_600_000;

export interface IndexCleanupDeps {
  readonly data: Table;
  readonly postings: Table;
  readonly widths: SchemaWidths;
  readonly retention: RetentionConfig;
  readonly index: SeriesIndex;
  readonly uids: Readonly<Record<UidKind, UidTable>>;
  readonly gate: CreationGate;
  /** Drops the writer's entry of a series (TSUID as latin1). */
  readonly dropEntry: (tsuidKey: string) => void;
  /** Resolves true once every write call made before it has ended (false after the timeout). */
  readonly writesEnded: (timeoutMs: number) => Promise<boolean>;
  readonly now: () => number;
  readonly log?: (msg: string) => void;
}

export interface IndexCleanupStats {
  readonly passes: number;
  readonly seriesRemoved: number;
  readonly uidsRemoved: number;
  /** Passes given up because writes in flight did not drain. */
  readonly skipped: number;
  readonly errors: number;
}

export class IndexCleanup {
  private readonly d: IndexCleanupDeps;
  private readonly periodic = new PeriodicPass(() => this.guardedPass(), CLEANUP_EVERY_MS);
  private passes = 0;
  private seriesRemoved = 0;
  private uidsRemoved = 0;
  private skipped = 0;
  private errors = 0;

  constructor(deps: IndexCleanupDeps) {
    this.d = deps;
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  stats(): IndexCleanupStats {
    return { passes: this.passes, seriesRemoved: this.seriesRemoved, uidsRemoved: this.uidsRemoved, skipped: this.skipped, errors: this.errors };
  }

  /** One pass (a pass already running is joined). */
  runOnce(): Promise<void> {
    return this.periodic.runOnce();
  }

  /** A pass whose failure is counted and logged, not thrown. */
  private async guardedPass(): Promise<void> {
    try {
      await this.pass();
    } catch (err) {
      this.errors++;
      this.d.log?.(`index cleanup failed: ${(err as Error).message}`);
    }
  }

  private async pass(): Promise<void> {
    this.passes++;
    const { gate, index } = this.d;
    const candidates = new Map<string, { metric: Uint8Array; firstKept: number; tsuids: Uint8Array[] }>();
    for (const [metric, name] of await this.d.uids.metric.allNames()) {
      const firstKept = this.firstKept(name);
      if (firstKept === undefined) continue;
      const live = await this.liveSeries(metric, firstKept);
      const dead = (await index.ofMetric(metric)).filter((t) => !live.has(latin1(t)));
      if (dead.length > 0) candidates.set(toHex(metric), { metric, firstKept, tsuids: dead });
    }
    if (candidates.size === 0) return;
    for (const c of candidates.values()) {
      for (const t of c.tsuids) {
        const key = latin1(t);
        gate.retiring.add(key);
        this.d.dropEntry(key);
      }
    }
    try {
      if (!(await this.drained())) {
        this.skipped++;
        return;
      }
      await gate.close();
      try {
        const removed: Uint8Array[] = [];
        for (const c of candidates.values()) {
          const still = c.tsuids.filter((t) => gate.retiring.has(latin1(t)));
          if (still.length === 0) continue;
          const live = await this.liveSeries(c.metric, c.firstKept);
          const dead = still.filter((t) => !live.has(latin1(t)));
          if (dead.length === 0) continue;
          await index.remove(c.metric, dead);
          await this.dropEmptyValueRows(dead);
          removed.push(...dead);
        }
        this.seriesRemoved += removed.length;
        if (removed.length > 0) await this.removeUnusedUids(removed);
      } finally {
        gate.reopen();
      }
    } finally {
      gate.retiring.clear();
    }
  }

  /** The first base hour (epoch s) kept of metric `name`; undefined: all of it is kept. */
  private firstKept(name: string): number | undefined {
    const keep = retentionOfName(this.d.retention, name);
    if (keep === undefined) return undefined;
    // A row is expired once its whole hour is (retention-sweep.ts): base + 1 h <= now - keep.
    const first = Math.floor((this.d.now() - keep - HOUR_MS) / HOUR_MS) * 3600 + 3600;
    return first <= 0 ? undefined : first;
  }

  /** TSUIDs (latin1) of the series of `metric` with a data row at or after base hour `firstKept`. */
  private async liveSeries(metric: Uint8Array, firstKept: number): Promise<Set<string>> {
    const { saltWidth, saltBuckets } = this.d.widths;
    const live = new Set<string>();
    const at = saltWidth + metric.length;
    for (let b = 0; b < (saltWidth === 0 ? 1 : saltBuckets); b++) {
      const start = new Uint8Array(at + 4);
      start.set(saltBytes(b, saltWidth));
      start.set(metric, saltWidth);
      writeBaseTimeAt(start, at, firstKept);
      const end = prefixEnd(start.subarray(0, at));
      for await (const rows of this.d.data.scan({ start, end, batchRows: 1024 })) {
        for (const r of rows) {
          const tsuid = new Uint8Array(r.key.length - saltWidth - 4);
          tsuid.set(r.key.subarray(saltWidth, at));
          tsuid.set(r.key.subarray(at + 4), metric.length);
          live.add(latin1(tsuid));
        }
      }
    }
    return live;
  }

  /** Deletes the value rows of the removed series' pairs that no posting is left under. */
  private async dropEmptyValueRows(removed: readonly Uint8Array[]): Promise<void> {
    const w = this.d.widths;
    const pw = w.tagk + w.tagv;
    const seen = new Set<string>();
    const gone: RowMutation[] = [];
    for (const t of removed) {
      for (let at = w.metric; at + pw <= t.length; at += pw) {
        const head = new Uint8Array(w.metric + pw);
        head.set(t.subarray(0, w.metric));
        head.set(t.subarray(at, at + pw), w.metric);
        const k = latin1(head);
        if (seen.has(k)) continue;
        seen.add(k);
        const prefix = Uint8Array.of(KIND_POSTING, ...head);
        let any = false;
        for await (const rows of this.d.postings.scan({ start: prefix, end: prefixEnd(prefix), families: [POSTINGS_FAMILY], limit: 1 })) {
          if (rows.length > 0) any = true;
          break;
        }
        if (!any) gone.push({ key: Uint8Array.of(KIND_VALUE, ...head), mutations: [{ type: 'deleteRow' }] });
      }
    }
    if (gone.length > 0) await this.d.postings.mutate(gone, { durability: 'sync' });
  }

  /** Deletes and retires the UIDs of `removed` series that no series in the index carries. */
  private async removeUnusedUids(removed: readonly Uint8Array[]): Promise<void> {
    const w = this.d.widths;
    const pw = w.tagk + w.tagv;
    const ids = (t: Uint8Array, into: Record<UidKind, Set<string>>): void => {
      into.metric.add(toHex(t.subarray(0, w.metric)));
      for (let at = w.metric; at + pw <= t.length; at += pw) {
        into.tagk.add(toHex(t.subarray(at, at + w.tagk)));
        into.tagv.add(toHex(t.subarray(at + w.tagk, at + pw)));
      }
    };
    const maybe: Record<UidKind, Set<string>> = { metric: new Set(), tagk: new Set(), tagv: new Set() };
    for (const t of removed) ids(t, maybe);
    const used: Record<UidKind, Set<string>> = { metric: new Set(), tagk: new Set(), tagv: new Set() };
    await this.d.index.forEach((t) => ids(t, used));
    for (const kind of ['metric', 'tagk', 'tagv'] as const) {
      const table = this.d.uids[kind];
      const gone: string[] = [];
      for (const hex of maybe[kind]) {
        if (used[kind].has(hex)) continue;
        const id = Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));
        const name = await table.getName(id);
        // Delete by name only while the name still maps to this id (no rename since).
        const now = name === undefined ? undefined : await table.getId(name);
        if (name !== undefined && now !== undefined && compareBytes(now, id) === 0) await table.delete(name);
        gone.push(hex);
      }
      this.d.gate.retire(kind, gone);
      this.uidsRemoved += gone.length;
    }
  }

  /** Waits until every write call made before now has ended; false after DRAIN_MS. */
  private drained(): Promise<boolean> {
    return this.d.writesEnded(DRAIN_MS);
  }
}
