/**
 * The series index: one row per series ever written, keyed by its TSUID (metric UID then
 * the tag pairs, tsdb/SCHEMA.md "Series index"), so every series of a metric is one prefix
 * scan away. It serves /api/search/lookup (Grafana's template variables) and metric-scoped
 * suggestions without OpenTSDB's meta-sync step: the writer records each series the first
 * time it sees it (per process), in one mutate per write call.
 */
import { compareBytes, latin1, prefixEnd } from '../../core/api/bytes.js';
import type { RowFilter, RowMutation, Table, TableSpec } from '../../core/api/store.js';

export const META_TABLE = 'tsdb-meta';
export const META_FAMILY = 'name';
/** Qualifier of the first-seen time (8-byte big-endian ms). */
export const META_CREATED = Uint8Array.from([0x63]); // 'c'

export function metaTableSpec(): TableSpec {
  return { name: META_TABLE, families: [{ name: META_FAMILY, maxVersions: 1 }] };
}

/** Most TSUIDs the in-memory copy (SeriesIndexOptions.cache) holds over all metrics. */
const CACHE_MAX_TSUIDS = 1_000_000;

export interface SeriesIndexOptions {
  /**
   * Keep each queried metric's TSUIDs in memory (LRU by metric, at most CACHE_MAX_TSUIDS in
   * all). Series recorded by this process are added to the copy as they are written;
   * another writer's only through addRecorded/forget (the catalog's change feed), so it
   * is correct where this process is the only writer or hears of the others' series.
   */
  readonly cache?: boolean;
}

/** One metric's series, sorted, with each TSUID also as a latin1 string for key patterns. */
interface MetricSeries {
  readonly tsuids: Uint8Array[];
  readonly keys: string[];
  /** The series holding each tag pair (latin1 of its bytes), sorted; built on first use (postingsOf). */
  postings?: Postings;
}

interface Postings {
  /** Bytes of a tag pair (tagk then tagv); the lists hold pairs at these boundaries. */
  readonly pairWidth: number;
  readonly lists: Map<string, Uint8Array[]>;
}

const NONE: readonly Uint8Array[] = [];

export class SeriesIndex {
  private readonly table: Table;
  private readonly cache: Map<string, MetricSeries> | undefined;
  private cached = 0;
  /** The metric last moved to the end of `cache` (the most recently used; undefined: unknown). */
  private newest: string | undefined;
  /** Loads in flight per metric, so concurrent first queries read the index once. */
  private readonly loading = new Map<string, Promise<MetricSeries>>();
  private readonly recordedWhileLoading = new Map<string, Uint8Array[]>();
  /** Counts forget() calls; a load started before the last forget of its metric is not kept. */
  private forgets = 0;
  private readonly forgotAt = new Map<string, number>();
  private forgotAllAt = 0;
  private readonly metricWidth: number;

  constructor(table: Table, metricWidth: number, opts: SeriesIndexOptions = {}) {
    this.table = table;
    this.metricWidth = metricWidth;
    this.cache = opts.cache === true ? new Map() : undefined;
  }

  /**
   * TSUIDs of `metricUid` whose key matches `pattern` (a key regex over the TSUID, read as
   * latin1: `^(?:pattern)$`, flag `s`, as the store evaluates keyRegex), in order, at most
   * `limit`. From the in-memory copy when caching (with `test`, the pattern's byte form,
   * when given: RowKeyFilterPlan.seriesTest), else a filtered scan of the index. `pairs`
   * (RowKeyFilterPlan.requiredPairs, with `test`): tag pairs every match holds, so only
   * the series of the shortest of their lists are tested.
   */
  async matching(metricUid: Uint8Array, pattern: string, limit: number, signal?: AbortSignal, test?: (tsuid: Uint8Array) => boolean,
    pairs: readonly Uint8Array[] = NONE): Promise<Uint8Array[]> {
    if (this.cache === undefined) return this.tsuids(metricUid, limit, signal, { kind: 'keyRegex', pattern });
    const m = await this.metricSeries(metricUid, signal);
    const out: Uint8Array[] = [];
    if (test !== undefined) {
      let candidates: readonly Uint8Array[] = m.tsuids;
      if (pairs.length > 0) {
        const lists = this.postingsOf(m, pairs[0]!.length).lists;
        for (const p of pairs) {
          const list = lists.get(latin1(p)) ?? NONE;
          if (list.length < candidates.length) candidates = list;
        }
      }
      for (let i = 0; i < candidates.length && out.length < limit; i++) if (test(candidates[i]!)) out.push(candidates[i]!);
      return out;
    }
    const re = new RegExp(`^(?:${pattern})$`, 's');
    for (let i = 0; i < m.keys.length && out.length < limit; i++) if (re.test(m.keys[i]!)) out.push(m.tsuids[i]!);
    return out;
  }

  /**
   * True when the in-memory copy holds at least one series of the metric and `test` accepts
   * every one (a query's tag filters that narrow nothing: a row filter would only cost);
   * false when not caching. Series written after the check are not covered: the caller
   * tests what it reads (execute.ts).
   */
  async everyMatches(metricUid: Uint8Array, test: (tsuid: Uint8Array) => boolean, signal?: AbortSignal): Promise<boolean> {
    if (this.cache === undefined) return false;
    const tsuids = (await this.metricSeries(metricUid, signal)).tsuids;
    for (let i = 0; i < tsuids.length; i++) if (!test(tsuids[i]!)) return false;
    return tsuids.length > 0;
  }

  /** The metric's posting lists (built now if they are not, or were built for other widths). */
  private postingsOf(m: MetricSeries, pairWidth: number): Postings {
    if (m.postings?.pairWidth === pairWidth) return m.postings;
    const lists = new Map<string, Uint8Array[]>();
    for (const t of m.tsuids) {
      for (let o = this.metricWidth; o + pairWidth <= t.length; o += pairWidth) {
        const k = latin1(t.subarray(o, o + pairWidth));
        const list = lists.get(k);
        if (list === undefined) lists.set(k, [t]);
        else if (list.at(-1) !== t) list.push(t); // a pair twice in one TSUID: listed once
      }
    }
    m.postings = { pairWidth, lists };
    return m.postings;
  }

  /** Every series of a metric, sorted (a copy of the in-memory list when caching). */
  async ofMetric(metricUid: Uint8Array, signal?: AbortSignal): Promise<Uint8Array[]> {
    if (this.cache === undefined) return this.tsuids(metricUid, Number.MAX_SAFE_INTEGER, signal);
    return (await this.metricSeries(metricUid, signal)).tsuids.slice();
  }

  /** Every series of a metric (cached when caching): sorted TSUIDs. */
  private async metricSeries(metricUid: Uint8Array, signal?: AbortSignal): Promise<MetricSeries> {
    const id = latin1(metricUid);
    const hit = this.cache!.get(id);
    if (hit !== undefined) {
      // Most recently used last; a dashboard's repeated metric is already there.
      if (id !== this.newest) {
        this.cache!.delete(id);
        this.cache!.set(id, hit);
        this.newest = id;
      }
      return hit;
    }
    let p = this.loading.get(id);
    if (p === undefined) {
      // Series recorded while the scan runs may be missed by it: they are kept aside and
      // added once it is done. (The scan is shared, so it does not take a caller's signal.)
      const recorded: Uint8Array[] = [];
      this.recordedWhileLoading.set(id, recorded);
      const started = this.forgets;
      p = (async () => {
        const tsuids = await this.tsuids(metricUid, Number.MAX_SAFE_INTEGER);
        const m: MetricSeries = { tsuids, keys: tsuids.map(latin1) };
        if (this.forgotAllAt > started || (this.forgotAt.get(id) ?? 0) > started) return m;
        this.remember(id, m);
        this.addToCache(recorded);
        return m;
      })().finally(() => {
        this.loading.delete(id);
        this.recordedWhileLoading.delete(id);
      });
      this.loading.set(id, p);
    }
    signal?.throwIfAborted();
    return p;
  }

  private remember(id: string, m: MetricSeries): void {
    const cache = this.cache!;
    const old = cache.get(id);
    if (old !== undefined) this.cached -= old.tsuids.length;
    cache.set(id, m);
    this.newest = id;
    this.cached += m.tsuids.length;
    for (const [k, v] of cache) {
      if (this.cached <= CACHE_MAX_TSUIDS || k === id) break;
      cache.delete(k);
      this.cached -= v.tsuids.length;
    }
    if (this.cached > CACHE_MAX_TSUIDS) {
      cache.delete(id);
      this.cached -= m.tsuids.length;
    }
  }

  /** Adds recorded series to the cached metrics they belong to (sorted insert, no duplicates). */
  private addToCache(tsuids: readonly Uint8Array[]): void {
    for (const t of tsuids) {
      const id = latin1(t.subarray(0, this.metricWidth));
      const m = this.cache!.get(id);
      if (m === undefined) {
        this.recordedWhileLoading.get(id)?.push(t.slice());
        continue;
      }
      const key = latin1(t);
      let lo = 0;
      let hi = m.keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (m.keys[mid]! < key) lo = mid + 1;
        else hi = mid;
      }
      if (m.keys[lo] === key) continue;
      const own = t.slice();
      m.keys.splice(lo, 0, key);
      m.tsuids.splice(lo, 0, own);
      this.cached++;
      if (m.postings !== undefined) addPosting(m.postings, own, this.metricWidth);
    }
  }

  /**
   * Series another process recorded (catalog/catalog.ts applyRemote): added to the
   * in-memory copy of their metrics where it is kept, as if recorded here.
   */
  addRecorded(tsuids: readonly Uint8Array[]): void {
    if (this.cache !== undefined) this.addToCache(tsuids);
  }

  /** Drops the in-memory copy of a metric's series (read again on its next use), and any load in flight. */
  forget(metricUid: Uint8Array): void {
    if (this.cache === undefined) return;
    const id = latin1(metricUid);
    this.forgotAt.set(id, ++this.forgets);
    const old = this.cache.get(id);
    if (old === undefined) return;
    this.cache.delete(id);
    this.cached -= old.tsuids.length;
    if (this.newest === id) this.newest = undefined;
  }

  /** Drops the in-memory copy of every metric. */
  forgetAll(): void {
    if (this.cache === undefined) return;
    this.forgotAllAt = ++this.forgets;
    this.forgotAt.clear();
    this.cache.clear();
    this.cached = 0;
    this.newest = undefined;
  }

  /**
   * For each TSUID, whether the index holds it: from the in-memory copy when its metric's
   * is loaded, else by one read of the rows (no write).
   */
  async known(tsuids: readonly Uint8Array[]): Promise<boolean[]> {
    const out: boolean[] = new Array<boolean>(tsuids.length).fill(false);
    const ask: number[] = [];
    for (let i = 0; i < tsuids.length; i++) {
      const t = tsuids[i]!;
      const m = this.cache?.get(latin1(t.subarray(0, this.metricWidth)));
      if (m === undefined) ask.push(i);
      else out[i] = indexOfKey(m.keys, latin1(t)) >= 0;
    }
    if (ask.length > 0) {
      const rows = await this.table.get(ask.map((i) => tsuids[i]!), { families: [META_FAMILY] });
      for (let j = 0; j < ask.length; j++) out[ask[j]!] = rows[j] !== undefined;
    }
    return out;
  }

  /** Records series (TSUIDs) as seen at `nowMs`; idempotent. Durable before it resolves. */
  async record(tsuids: readonly Uint8Array[], nowMs: number): Promise<void> {
    if (tsuids.length === 0) return;
    const value = new Uint8Array(8);
    new DataView(value.buffer).setBigUint64(0, BigInt(Math.max(0, Math.floor(nowMs))));
    const rows: RowMutation[] = tsuids.map((key) => ({ key, mutations: [{ type: 'put', family: META_FAMILY, qualifier: META_CREATED, value }] }));
    await this.table.mutate(rows, { durability: 'sync' });
    if (this.cache !== undefined) this.addToCache(tsuids);
  }

  /**
   * Removes series from the index (a series delete: tsdb/write/delete-series.ts): every
   * series of `metricUid` when `tsuids` is undefined (one range delete), else those rows.
   * The metric's in-memory copy is dropped (read again on next use; the caller also drops
   * the catalog's caches). Durable before it resolves.
   */
  async remove(metricUid: Uint8Array, tsuids?: readonly Uint8Array[]): Promise<void> {
    if (tsuids === undefined) await this.table.deleteRange({ start: metricUid, end: prefixEnd(metricUid) });
    else if (tsuids.length > 0) await this.table.mutate(tsuids.map((key) => ({ key, mutations: [{ type: 'deleteRow' as const }] })), { durability: 'sync' });
    const id = latin1(metricUid);
    const m = this.cache?.get(id);
    if (m !== undefined) {
      this.cache!.delete(id);
      this.cached -= m.tsuids.length;
      if (this.newest === id) this.newest = undefined;
    }
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

/** Index of `key` in the sorted `keys`, or -1. */
function indexOfKey(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return keys[lo] === key ? lo : -1;
}

/** Adds a new series to the lists of its pairs, in order. */
function addPosting(p: Postings, tsuid: Uint8Array, metricWidth: number): void {
  for (let o = metricWidth; o + p.pairWidth <= tsuid.length; o += p.pairWidth) {
    const k = latin1(tsuid.subarray(o, o + p.pairWidth));
    const list = p.lists.get(k);
    if (list === undefined) {
      p.lists.set(k, [tsuid]);
      continue;
    }
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(list[mid]!, tsuid) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (list[lo] !== tsuid) list.splice(lo, 0, tsuid);
  }
}
