/**
 * The index cleanup (`horae.retention.cleanup`, tsdb/SCHEMA.md "Index cleanup"): once every
 * data row of a series has expired under its metric's retention, its series-index row and
 * postings go; then each name (metric, tag key, tag value) that only such series carried
 * goes too, both mappings. The id counter is never touched, so no UID is handed out twice:
 * a name written again gets a new one. Safe with any number of servers writing the store.
 *
 * A pass, under the lease of the cleanup row (cleanup-row.ts: one pass at a time over all
 * servers), first finishes what a pass that stopped left (repair()), then:
 *  1. Candidates: for each metric with a retention, the series of the index with no data
 *     row in the hours kept (one scan of those rows per salt bucket). Series with a row kept
 *     that the index lacks are recorded again (all their names still mapping).
 *  2. Per chunk of candidates: their index rows are marked with the pass's number; step 1
 *     is applied here and logged for the other servers (change log), and the pass waits
 *     until every server fenced it (cleanup-member.ts): no server writes them from an old
 *     entry any more, and every write of one from now on revives it (SeriesIndex.revive:
 *     postings again, then the mark taken off with a check-and-put). The hours kept are
 *     read again; the series with a row now lose the mark. For the others, the intent is
 *     written, their postings removed, then each row deleted with a check-and-put on the
 *     mark (SeriesIndex.removeMarked), so a series revived meanwhile stays, postings and all.
 *  3. The UIDs of removed series that no series of the index carries: step 2 makes every
 *     server refuse series carrying them (retryable) once its recordings in flight have
 *     left; the index is read again, those still unused go in the intent and are deleted,
 *     forward row first (UidTable.deleteMapping), then their value rows; step 3 ends it.
 * A chunk whose fence does not come within DRAIN_MS is left (marks taken off) for the next
 * pass.
 */
import { latin1, prefixEnd, toHex } from '../../core/api/bytes.js';
import type { RowMutation, Table } from '../../core/api/store.js';
import type { RetentionConfig } from '../compact/retention.js';
import { retentionOfName } from '../compact/retention.js';
import { PeriodicPass } from '../periodic-pass.js';
import { writeBaseTimeAt } from '../schema/row-key.js';
import { saltBytes } from '../schema/salt.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { UidKind } from '../uid/uid-kind.js';
import type { UidTable } from '../uid/uid-table.js';
import type { Change } from './change-log.js';
import { DRAIN_MS, GONE_MS } from './cleanup-member.js';
import type { CleanupRow } from './cleanup-row.js';
import { PENDING_MS, hex } from './creation-gate.js';
import { KIND_VALUE, valueKey } from './postings.js';
import type { SeriesIndex } from './series-index.js';

/** How often a server runs a pass. */
export const CLEANUP_EVERY_MS = 6 * 3_600_000;
/** How long a lease lasts without renewal. */
export const LEASE_MS = 120_000;
/** Series removed per chunk (one change-log entry and fence each). */
const CHUNK = 4096;
const HOUR_MS = 3_600_000;
const KINDS = ['metric', 'tagk', 'tagv'] as const;
/** Names deleted at once (each its own two check-and-puts, in order). */
const NAMES_IN_FLIGHT = 16;

type Step = Extract<Change, { kind: 'cleanup' }>;
type ByKind<T> = Record<UidKind, T>;

export interface IndexCleanupDeps {
  readonly data: Table;
  readonly postings: Table;
  readonly widths: SchemaWidths;
  readonly retention: RetentionConfig;
  readonly index: SeriesIndex;
  readonly uids: Readonly<ByKind<UidTable>>;
  readonly row: CleanupRow;
  /** Applies a step here and logs it for the other servers (Catalog.cleanupStep). */
  readonly announce: (c: Step) => Promise<void>;
  /** Records series in the index (Catalog.recordSeries): 'new' for each recorded now. */
  readonly record: (tsuids: readonly Uint8Array[]) => Promise<ReadonlyArray<unknown>>;
  /** Applies a step here again (Catalog.applyCleanup). */
  readonly apply: (c: Step) => void;
  /** Resolves true once every write call made before has ended (false after the timeout). */
  readonly writesEnded: (timeoutMs: number) => Promise<boolean>;
  /** Resolves once every series recording in flight before has left. */
  readonly recordingsSettled: () => Promise<void>;
  /** Other servers may write the store: their fences are waited for (cleanup-member.ts). */
  readonly shared: boolean;
  /** This server's id in the cleanup row. */
  readonly me: Uint8Array;
  readonly now: () => number;
  readonly log?: (msg: string) => void;
}

export interface IndexCleanupStats {
  readonly passes: number;
  readonly seriesRemoved: number;
  readonly uidsRemoved: number;
  /** Passes or chunks given up: the lease held by another server, or a fence that did not come. */
  readonly skipped: number;
  /** Intents of stopped passes finished. */
  readonly repaired: number;
  /** Series with data kept that the index lacked, recorded again. */
  readonly reindexed: number;
  readonly errors: number;
}

const EMPTY: ByKind<Uint8Array[]> = { metric: [], tagk: [], tagv: [] };

export class IndexCleanup {
  private readonly d: IndexCleanupDeps;
  private readonly periodic = new PeriodicPass(() => this.guardedPass(), CLEANUP_EVERY_MS);
  private passes = 0;
  private seriesRemoved = 0;
  private uidsRemoved = 0;
  private skipped = 0;
  private repaired = 0;
  private reindexed = 0;
  private errors = 0;

  constructor(deps: IndexCleanupDeps) {
    this.d = deps;
  }

  /** Starts the timer; a pass that stopped in the middle (an intent) is finished at once, or after its lease. */
  start(): void {
    this.periodic.start();
    void (async () => {
      if ((await this.d.row.readIntent()) === undefined) return;
      await this.runOnce();
      if ((await this.d.row.readIntent()) !== undefined) setTimeout(() => void this.runOnce().catch(() => undefined), LEASE_MS).unref();
    })().catch(() => undefined);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  stats(): IndexCleanupStats {
    return { passes: this.passes, seriesRemoved: this.seriesRemoved, uidsRemoved: this.uidsRemoved, skipped: this.skipped, repaired: this.repaired, reindexed: this.reindexed, errors: this.errors };
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
    const { row } = this.d;
    const pass = await row.takeLease(LEASE_MS, !this.d.shared);
    if (pass === undefined) {
      this.skipped++;
      return;
    }
    try {
      await this.repair();
      const items = await this.candidates();
      const removed: Uint8Array[] = [];
      for (let at = 0; at < items.length; at += CHUNK) {
        if (!(await row.renew(LEASE_MS))) throw new Error('the index cleanup lost its lease');
        const r = await this.removeSeries(pass, items.slice(at, at + CHUNK));
        if (r === undefined) {
          this.skipped++;
          break;
        }
        removed.push(...r);
      }
      this.seriesRemoved += removed.length;
      if (!(await row.renew(LEASE_MS))) throw new Error('the index cleanup lost its lease');
      await this.removeNames(pass, removed);
    } finally {
      await row.release();
    }
  }

  /**
   * Finishes what a pass that stopped in the middle left (its intent): series whose row is
   * still there get their postings again; names are deleted (forward row first) where no
   * series of the index carries their id, else both mappings are put back.
   */
  private async repair(): Promise<void> {
    const intent = await this.d.row.readIntent();
    if (intent === undefined) return;
    const { index } = this.d;
    const present = await index.present(intent.tsuids);
    const back = intent.tsuids.filter((_, i) => present[i]);
    if (back.length > 0) await index.postings.write(back, 'sync');
    if (intent.names.length > 0) {
      const used = await this.usedIds();
      for (const n of intent.names) {
        const table = this.d.uids[n.kind];
        if (used[n.kind].has(hex(n.id))) await table.restoreMapping(n.name, n.id);
        else await table.deleteMapping(n.name, n.id);
      }
    }
    await this.d.row.clearIntent();
    this.repaired++;
  }

  /**
   * Series of metrics with a retention without a data row in the hours kept, with their
   * metric and first hour kept. On the way, series with a row kept that the index lacks
   * (written by a server paused past every fence, or by a tool) are recorded again where
   * every name of theirs still maps (the caller's `record`).
   */
  private async candidates(): Promise<Array<{ metric: Uint8Array; firstKept: number; tsuid: Uint8Array }>> {
    const out: Array<{ metric: Uint8Array; firstKept: number; tsuid: Uint8Array }> = [];
    for (const [metric, name] of await this.d.uids.metric.allNames()) {
      const firstKept = this.firstKept(name);
      if (firstKept === undefined) continue;
      const live = await this.liveSeries(metric, firstKept);
      const indexed = new Set<string>();
      for (const t of await this.d.index.ofMetric(metric)) {
        indexed.add(latin1(t));
        if (!live.has(latin1(t))) out.push({ metric, firstKept, tsuid: t });
      }
      const lost: Uint8Array[] = [];
      for (const k of live) if (!indexed.has(k) && (await this.named(Buffer.from(k, 'latin1')))) lost.push(Buffer.from(k, 'latin1'));
      if (lost.length > 0) this.reindexed += (await this.d.record(lost)).filter((v) => v === 'new').length;
    }
    return out;
  }

  /** True when every UID of the TSUID has its name. */
  private async named(t: Uint8Array): Promise<boolean> {
    let ok = true;
    const ids: Array<[UidKind, Uint8Array]> = [];
    this.idsOf(t, (kind, id) => ids.push([kind, id]));
    for (const [kind, id] of ids) if ((await this.d.uids[kind].getName(id)) === undefined) ok = false;
    return ok;
  }

  /** Steps 1 and 2 of one chunk: the series removed, or undefined when the fence did not come. */
  private async removeSeries(pass: bigint, items: ReadonlyArray<{ metric: Uint8Array; firstKept: number; tsuid: Uint8Array }>): Promise<Uint8Array[] | undefined> {
    const { index, row } = this.d;
    const tsuids = items.map((x) => x.tsuid);
    await index.mark(tsuids, pass);
    const step: Step = { kind: 'cleanup', step: 1, pass, tsuids, uids: EMPTY };
    if (!(await this.fenced(step))) {
      await index.unmark(tsuids, pass);
      return undefined;
    }
    const byMetric = new Map<string, { metric: Uint8Array; firstKept: number; tsuids: Uint8Array[] }>();
    for (const x of items) {
      const k = latin1(x.metric);
      const g = byMetric.get(k) ?? { metric: x.metric, firstKept: x.firstKept, tsuids: [] };
      g.tsuids.push(x.tsuid);
      byMetric.set(k, g);
    }
    const dead: Uint8Array[] = [];
    const alive: Uint8Array[] = [];
    for (const g of byMetric.values()) {
      const live = await this.liveSeries(g.metric, g.firstKept);
      for (const t of g.tsuids) (live.has(latin1(t)) ? alive : dead).push(t);
    }
    await index.unmark(alive, pass);
    if (dead.length === 0) return [];
    const kept = new Set(alive.map(latin1));
    if (!(await row.writeIntent({ pass, tsuids: dead, names: [] }))) throw new Error('the index cleanup lost its lease');
    for (const g of byMetric.values()) {
      const gone = g.tsuids.filter((t) => !kept.has(latin1(t)));
      if (gone.length > 0) await index.postings.remove(g.metric, gone);
    }
    const removed = await index.removeMarked(dead, pass);
    await row.clearIntent();
    return removed;
  }

  /** Step 3's UIDs: those of removed series no series of the index carries, once every server refuses them. */
  private async removeNames(pass: bigint, removed: readonly Uint8Array[]): Promise<void> {
    if (removed.length === 0) return;
    const maybe: ByKind<Map<string, Uint8Array>> = { metric: new Map(), tagk: new Map(), tagv: new Map() };
    for (const t of removed) this.idsOf(t, (kind, id) => maybe[kind].set(hex(id), id));
    const dropUsed = async (): Promise<void> => {
      const used = await this.usedIds();
      for (const kind of KINDS) for (const h of used[kind]) maybe[kind].delete(h);
    };
    await dropUsed();
    const deleted: ByKind<Uint8Array[]> = { metric: [], tagk: [], tagv: [] };
    if (KINDS.every((k) => maybe[k].size === 0)) {
      await this.d.announce({ kind: 'cleanup', step: 3, pass, tsuids: removed, uids: deleted });
      return;
    }
    const step: Step = { kind: 'cleanup', step: 2, pass, tsuids: [], uids: { metric: [...maybe.metric.values()], tagk: [...maybe.tagk.values()], tagv: [...maybe.tagv.values()] } };
    const since = this.d.now();
    try {
      if (!(await this.fenced(step))) {
        this.skipped++;
        return;
      }
      // Series recorded with one of them before every server refused it keep it.
      await dropUsed();
      const names: Array<{ kind: UidKind; id: Uint8Array; name: string }> = [];
      for (const kind of KINDS) {
        const ids = [...maybe[kind].values()];
        for (let at = 0; at < ids.length; at += NAMES_IN_FLIGHT) {
          const batch = ids.slice(at, at + NAMES_IN_FLIGHT);
          const got = await Promise.all(batch.map((id) => this.d.uids[kind].getName(id)));
          batch.forEach((id, i) => {
            if (got[i] !== undefined) names.push({ kind, id, name: got[i] });
            deleted[kind].push(id);
          });
        }
      }
      if (this.d.now() - since > PENDING_MS / 2) throw new Error('the index cleanup took too long to delete names');
      if (!(await this.d.row.writeIntent({ pass, tsuids: [], names }))) throw new Error('the index cleanup lost its lease');
      for (let at = 0; at < names.length; at += NAMES_IN_FLIGHT) {
        await Promise.all(names.slice(at, at + NAMES_IN_FLIGHT).map((n) => this.d.uids[n.kind].deleteMapping(n.name, n.id)));
      }
      await this.dropValueRows(removed, deleted);
      await this.d.row.clearIntent();
      this.uidsRemoved += deleted.metric.length + deleted.tagk.length + deleted.tagv.length;
    } finally {
      await this.d.announce({ kind: 'cleanup', step: 3, pass, tsuids: removed, uids: deleted });
    }
  }

  /**
   * Waits until every writer fenced a step: here (the write calls and recordings made
   * before ended, then the step applied again), then each other server that beat within
   * GONE_MS when the step was logged. False when that takes over DRAIN_MS.
   */
  private async fenced(step: Step): Promise<boolean> {
    const until = Date.now() + DRAIN_MS;
    const others = this.d.shared ? (await this.d.row.members()).filter((m) => toHex(m.id) !== toHex(this.d.me)) : [];
    await this.d.announce(step);
    if (!(await this.d.writesEnded(DRAIN_MS))) return false;
    await this.d.recordingsSettled();
    this.d.apply(step);
    let waiting = others.filter((m) => this.d.now() - m.beatMs <= GONE_MS).map((m) => toHex(m.id));
    while (waiting.length > 0) {
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 50));
      const now = this.d.now();
      const cells = new Map((await this.d.row.members()).map((m) => [toHex(m.id), m]));
      waiting = waiting.filter((id) => {
        const m = cells.get(id);
        if (m === undefined || now - m.beatMs > GONE_MS) return false; // stopped, or gone: it writes nothing from old caches
        return m.pass < step.pass || (m.pass === step.pass && m.step < step.step);
      });
    }
    return true;
  }

  /** Every UID (hex, by kind) a series of the index carries. */
  private async usedIds(): Promise<ByKind<Set<string>>> {
    const used: ByKind<Set<string>> = { metric: new Set(), tagk: new Set(), tagv: new Set() };
    await this.d.index.forEach((t) => this.idsOf(t, (kind, id) => used[kind].add(hex(id))));
    return used;
  }

  private idsOf(t: Uint8Array, fn: (kind: UidKind, id: Uint8Array) => void): void {
    const w = this.d.widths;
    const pw = w.tagk + w.tagv;
    fn('metric', t.subarray(0, w.metric));
    for (let at = w.metric; at + pw <= t.length; at += pw) {
      fn('tagk', t.subarray(at, at + w.tagk));
      fn('tagv', t.subarray(at + w.tagk, at + pw));
    }
  }

  /** Deletes the value rows of the removed series' pairs that carry a deleted UID (no series can post under them again). */
  private async dropValueRows(removed: readonly Uint8Array[], deleted: ByKind<readonly Uint8Array[]>): Promise<void> {
    const gone: ByKind<Set<string>> = { metric: new Set(deleted.metric.map((id) => hex(id))), tagk: new Set(deleted.tagk.map((id) => hex(id))), tagv: new Set(deleted.tagv.map((id) => hex(id))) };
    const w = this.d.widths;
    const pw = w.tagk + w.tagv;
    const rows = new Map<string, RowMutation>();
    for (const t of removed) {
      const m = gone.metric.has(hex(t, 0, w.metric));
      for (let at = w.metric; at + pw <= t.length; at += pw) {
        if (!m && !gone.tagk.has(hex(t, at, at + w.tagk)) && !gone.tagv.has(hex(t, at + w.tagk, at + pw))) continue;
        const key = valueKey(w, t, at);
        if (key[0] === KIND_VALUE) rows.set(latin1(key), { key, mutations: [{ type: 'deleteRow' }] });
      }
    }
    if (rows.size > 0) await this.d.postings.mutate([...rows.values()], { durability: 'sync' });
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
}
