/**
 * The series index: one row per series ever written, keyed by its TSUID (metric UID then
 * the tag pairs, tsdb/SCHEMA.md "Series index"), so every series of a metric is one prefix
 * scan away. It serves /api/search/lookup (Grafana's template variables) and metric-scoped
 * suggestions without OpenTSDB's meta-sync step: the writer records each series the first
 * time it sees it (per process), in one mutate per write call, after the series' postings
 * (postings.ts), through which tag-filtered queries find their series.
 */
import { latin1, prefixEnd, startsWith } from '../../core/api/bytes.js';
import type { RowFilter, RowMutation, Table, TableSpec } from '../../core/api/store.js';
import type { SchemaWidths } from '../schema/widths.js';
import { ActiveSeries } from './active-series.js';
import type { ActiveSeriesStats } from './active-series.js';
import { Postings } from './postings.js';
import type { PostingClause } from './postings.js';

export const META_TABLE = 'tsdb-meta';
export const META_FAMILY = 'name';
/** Qualifier of the first-seen time (8-byte big-endian ms). */
export const META_CREATED = Uint8Array.from([0x63]); // 'c'
/** Qualifier of the index cleanup's mark: the pass removing the series (8-byte big-endian; meta/index-cleanup.ts). */
export const META_MARK = Uint8Array.from([0x78]); // 'x'
/** Conditional writes of marked rows in flight at once. */
const MARK_CONCURRENCY = 16;
const SYNC = { durability: 'sync' } as const;

/** The value of a mark: the pass number. */
export function markValue(pass: bigint): Uint8Array {
  const v = new Uint8Array(8);
  new DataView(v.buffer).setBigUint64(0, pass);
  return v;
}

export function metaTableSpec(): TableSpec {
  return { name: META_TABLE, families: [{ name: META_FAMILY, maxVersions: 1 }] };
}

export interface SeriesIndexOptions {
  /**
   * Keep the in-memory copy (active-series.ts): the series known to be in the index that
   * were written or asked about lately, so a series' next write needs no read of the
   * index. Only where every series recorded in the store is recorded through here or
   * heard of (the catalog's keepsSeries): a series deleted by another server would still
   * be taken for known.
   */
  readonly keep?: boolean;
  /** Most bytes of the in-memory copy (its share of horae.catalog.memory_bytes). */
  readonly memoryBytes?: number;
  /** A series neither written nor asked about for this long leaves the copy (horae.index.idle_ms). */
  readonly idleMs?: number;
  /** Wall clock in ms (default Date.now). */
  readonly now?: () => number;
}

/** Defaults of SeriesIndexOptions. */
export const INDEX_MEMORY_BYTES = 64 * 1024 * 1024;
export const INDEX_IDLE_MS = 7_200_000;

export class SeriesIndex {
  private readonly table: Table;
  /** The postings (meta/postings.ts), written with every series recorded. */
  readonly postings: Postings;
  /** The in-memory copy (undefined when not kept). */
  private readonly active: ActiveSeries | undefined;
  private readonly metricWidth: number;
  private readonly now: () => number;

  constructor(table: Table, postings: Table, widths: Pick<SchemaWidths, 'metric' | 'tagk' | 'tagv'>, opts: SeriesIndexOptions = {}) {
    this.table = table;
    this.metricWidth = widths.metric;
    this.postings = new Postings(postings, widths);
    this.now = opts.now ?? Date.now;
    this.active = opts.keep === true ? new ActiveSeries({ maxBytes: opts.memoryBytes ?? INDEX_MEMORY_BYTES, idleMs: opts.idleMs ?? INDEX_IDLE_MS }) : undefined;
  }

  /**
   * TSUIDs of `metricUid` holding a pair of every clause's tag key with one of its values
   * (Postings.search) that `test` accepts, sorted, at most `limit` (a cut answer holds
   * `limit` matches, not necessarily the first). Without clauses, the metric's series rows
   * are read and tested.
   */
  async matching(metricUid: Uint8Array, clauses: readonly PostingClause[], limit: number, signal?: AbortSignal,
    test?: (tsuid: Uint8Array) => boolean): Promise<Uint8Array[]> {
    if (clauses.length > 0) return this.postings.search(metricUid, clauses, limit, test, signal);
    const out: Uint8Array[] = [];
    for await (const rows of this.table.scan({ start: metricUid, end: prefixEnd(metricUid), families: [META_FAMILY], ...(signal === undefined ? {} : { signal }) })) {
      for (const r of rows) {
        if (test !== undefined && !test(r.key)) continue;
        out.push(r.key);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  /** The tag values of `tagk` the series of `metricUid` carried (Postings.tagValues). */
  tagValues(metricUid: Uint8Array, tagk: Uint8Array, signal?: AbortSignal): Promise<Uint8Array[]> {
    return this.postings.tagValues(metricUid, tagk, signal);
  }

  /**
   * True when the metric has at least one series and at most `upTo`, and `test` accepts
   * every one (a query's tag filters that narrow nothing: a row filter would only cost);
   * false otherwise, and when the copy is not kept. Series written after the check are not
   * covered: the caller tests what it reads (execute.ts).
   */
  async everyMatches(metricUid: Uint8Array, test: (tsuid: Uint8Array) => boolean, upTo: number, signal?: AbortSignal): Promise<boolean> {
    if (this.active === undefined) return false;
    const tsuids = await this.tsuids(metricUid, upTo + 1, signal);
    if (tsuids.length === 0 || tsuids.length > upTo) return false;
    for (let i = 0; i < tsuids.length; i++) if (!test(tsuids[i]!)) return false;
    return true;
  }

  /** Every series of a metric, sorted (read from the index). */
  ofMetric(metricUid: Uint8Array, signal?: AbortSignal): Promise<Uint8Array[]> {
    return this.tsuids(metricUid, Number.MAX_SAFE_INTEGER, signal);
  }

  /** The series of a data row key was written at `nowMs` (kept in, or put back into, the in-memory copy). */
  written(rowKey: Uint8Array, saltWidth: number, nowMs: number): void {
    this.active?.written(rowKey, saltWidth, this.metricWidth, nowMs);
  }

  /** Drops the in-memory copy (read again from the index as series are written or asked about). */
  forgetAll(): void {
    this.active?.clear();
  }

  /** The in-memory copy's size and byte accounting (zeros when not kept). */
  stats(): ActiveSeriesStats {
    return this.active?.stats() ?? { series: 0, bytes: 0, aged: 0, evicted: 0, sweeps: 0 };
  }

  /**
   * For each TSUID, whether the index holds it: from the in-memory copy, else by one read
   * of the rows (no write); the series found are put in the copy. A row the index cleanup
   * marked is answered with the mark's value (the caller revives it: revive()) and is not
   * put in the copy.
   */
  async known(tsuids: readonly Uint8Array[]): Promise<Array<boolean | Uint8Array>> {
    const out: Array<boolean | Uint8Array> = new Array<boolean | Uint8Array>(tsuids.length).fill(false);
    const ask: number[] = [];
    const now = this.now();
    for (let i = 0; i < tsuids.length; i++) {
      if (this.active?.has(tsuids[i]!, now) === true) out[i] = true;
      else ask.push(i);
    }
    if (ask.length > 0) {
      const rows = await this.table.get(ask.map((i) => tsuids[i]!), { families: [META_FAMILY] });
      for (let j = 0; j < ask.length; j++) {
        const row = rows[j];
        if (row === undefined) continue;
        const mark = row.cells.find((c) => c.qualifier.length === 1 && c.qualifier[0] === META_MARK[0]);
        if (mark !== undefined) {
          out[ask[j]!] = mark.value;
          continue;
        }
        out[ask[j]!] = true;
        this.active?.add(tsuids[ask[j]!]!, now);
      }
    }
    return out;
  }

  /** Marks the rows of series the index cleanup's pass `pass` is removing (META_MARK). */
  async mark(tsuids: readonly Uint8Array[], pass: bigint): Promise<void> {
    if (tsuids.length === 0) return;
    const value = markValue(pass);
    await this.table.mutate(tsuids.map((key) => ({ key, mutations: [{ type: 'put' as const, family: META_FAMILY, qualifier: META_MARK, value }] })), SYNC);
  }

  /** Takes the mark of `pass` off these rows where it still is (the series live on). */
  async unmark(tsuids: readonly Uint8Array[], pass: bigint): Promise<void> {
    const value = markValue(pass);
    await eachLimited(tsuids, (key) => this.table.checkAndPut(key, { family: META_FAMILY, qualifier: META_MARK }, value, [{ type: 'deleteCell', family: META_FAMILY, qualifier: META_MARK }], SYNC));
  }

  /**
   * Deletes the rows of these series that still carry the mark of `pass` (each with one
   * check-and-put, so a series a writer revived meanwhile stays) and returns those deleted.
   * The caller removed their postings before; the series revived get theirs again here.
   */
  async removeMarked(tsuids: readonly Uint8Array[], pass: bigint): Promise<Uint8Array[]> {
    const value = markValue(pass);
    const gone = await eachLimited(tsuids, (key) => this.table.checkAndPut(key, { family: META_FAMILY, qualifier: META_MARK }, value, [{ type: 'deleteRow' }], SYNC));
    const removed = tsuids.filter((_, i) => gone[i]);
    const kept = tsuids.filter((_, i) => !gone[i]);
    if (kept.length > 0) await this.postings.write(kept, 'sync');
    if (removed.length > 0) {
      const ids = new Set(removed.map(latin1));
      this.active?.removeIf((t) => ids.has(latin1(t)));
    }
    return removed;
  }

  /**
   * A write of a series whose row carries the index cleanup's mark `mark`: its postings
   * again (the pass may have removed them), then the mark taken off with a check-and-put.
   * True when the row is there now; false when the pass removed it first (the caller then
   * records the series as new).
   */
  async revive(tsuid: Uint8Array, mark: Uint8Array, nowMs: number): Promise<boolean> {
    await this.postings.write([tsuid], 'buffered');
    const created = new Uint8Array(8);
    new DataView(created.buffer).setBigUint64(0, BigInt(Math.max(0, Math.floor(nowMs))));
    const ok = await this.table.checkAndPut(tsuid, { family: META_FAMILY, qualifier: META_MARK }, mark, [
      { type: 'deleteCell', family: META_FAMILY, qualifier: META_MARK },
      { type: 'put', family: META_FAMILY, qualifier: META_CREATED, value: created },
    ], SYNC);
    if (!ok) {
      const [row] = await this.table.get([tsuid], { families: [META_FAMILY] });
      if (row === undefined) return false;
      const again = row.cells.find((c) => c.qualifier.length === 1 && c.qualifier[0] === META_MARK[0]);
      if (again !== undefined) return this.revive(tsuid, again.value, nowMs);
    }
    this.active?.add(tsuid, this.now());
    return true;
  }

  /** Drops these series from the in-memory copy (their next write reads the index). */
  forget(tsuids: readonly Uint8Array[]): void {
    if (this.active === undefined || tsuids.length === 0) return;
    const ids = new Set(tsuids.map(latin1));
    this.active.removeIf((t) => ids.has(latin1(t)));
  }

  /**
   * Records series (TSUIDs) as seen at `nowMs`; idempotent. Their postings first, then
   * their index rows (a series in the index has its postings): the postings buffered, the
   * index rows synced, which makes both durable before it resolves (the store keeps
   * writes durable in order: core/api/store.ts WriteOptions).
   */
  async record(tsuids: readonly Uint8Array[], nowMs: number): Promise<void> {
    if (tsuids.length === 0) return;
    await this.postings.write(tsuids, 'buffered');
    const value = new Uint8Array(8);
    new DataView(value.buffer).setBigUint64(0, BigInt(Math.max(0, Math.floor(nowMs))));
    const rows: RowMutation[] = tsuids.map((key) => ({ key, mutations: [{ type: 'put', family: META_FAMILY, qualifier: META_CREATED, value }] }));
    await this.table.mutate(rows, { durability: 'sync' });
    const now = this.now();
    if (this.active !== undefined) for (const t of tsuids) this.active.add(t, now);
  }

  /**
   * Writes the postings of the series recorded before there were postings (a store
   * created by an older version), once (Postings.build); the number of series covered.
   */
  buildPostings(): Promise<number> {
    return this.postings.build(this.table, META_FAMILY);
  }

  /**
   * Removes series from the index and their postings (a series delete:
   * tsdb/write/delete-series.ts): every series of `metricUid` when `tsuids` is undefined
   * (range deletes), else those rows. Durable before it resolves.
   */
  async remove(metricUid: Uint8Array, tsuids?: readonly Uint8Array[]): Promise<void> {
    if (tsuids === undefined) await this.table.deleteRange({ start: metricUid, end: prefixEnd(metricUid) });
    else if (tsuids.length > 0) await this.table.mutate(tsuids.map((key) => ({ key, mutations: [{ type: 'deleteRow' as const }] })), { durability: 'sync' });
    await this.postings.remove(metricUid, tsuids);
    if (tsuids === undefined) this.active?.removeIf((t) => startsWith(t, metricUid));
    else if (tsuids.length > 0) {
      const gone = new Set(tsuids.map(latin1));
      this.active?.removeIf((t) => gone.has(latin1(t)));
    }
  }

  /** The rows of these series that are in the index (present or not, in order). */
  async present(tsuids: readonly Uint8Array[]): Promise<boolean[]> {
    if (tsuids.length === 0) return [];
    return (await this.table.get(tsuids, { families: [META_FAMILY] })).map((r) => r !== undefined);
  }

  /** Calls `fn` with every TSUID of the index, in order, none kept (the index cleanup's walk). */
  async forEach(fn: (tsuid: Uint8Array) => void): Promise<void> {
    for await (const rows of this.table.scan({ families: [META_FAMILY], batchRows: 1024 })) for (const r of rows) fn(r.key);
  }

  /**
   * TSUIDs starting with `prefix` (a metric UID, or empty for all), in order, at most
   * `limit`; with `filter`, only those it matches (evaluated by the store).
   */
  async tsuids(prefix: Uint8Array, limit: number, signal?: AbortSignal, filter?: RowFilter): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    const spec = prefix.length === 0 ? {} : { start: prefix, end: prefixEnd(prefix) };
    const batchRows = Math.max(1, Math.min(1024, limit));
    for await (const rows of this.table.scan({ ...spec, families: [META_FAMILY], batchRows, ...(signal === undefined ? {} : { signal }), ...(filter === undefined ? {} : { filter }) })) {
      for (const r of rows) {
        out.push(r.key);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }
}

/** `fn` over every item, MARK_CONCURRENCY at a time; the answers in order. */
async function eachLimited<T>(items: readonly Uint8Array[], fn: (item: Uint8Array) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(MARK_CONCURRENCY, items.length) }, worker));
  return out;
}
