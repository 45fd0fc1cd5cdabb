/**
 * Tsdb: the time-series layer over one Store — its tables, UID tables, writer and hour
 * compactor. The store is the caller's: close() stops the layer's background work and
 * leaves the store open.
 *
 * The schema settings that shape keys (UID widths, salt width and buckets) are recorded
 * in the UID table on first open; opening the same store with other settings fails
 * instead of silently writing keys no reader can find (tsdb/SCHEMA.md "Schema record").
 */
import { randomBytes } from 'node:crypto';
import { compareBytes, fromUtf8, latin1, utf8 } from '../core/api/bytes.js';
import { isStoreError } from '../core/api/errors.js';
import type { Store, Table } from '../core/api/store.js';
import { HourCompactor } from './compact/hour-compactor.js';
import type { HourCompaction } from './compact/hour-compactor.js';
import { registerHourTransform } from './compact/hour-transform.js';
import type { HourTransformOptions } from './compact/hour-transform.js';
import { parseRetention, resolveRetention, retentionOfName } from './compact/retention.js';
import type { RetentionConfig, RetentionRules } from './compact/retention.js';
import { RetentionSweeper } from './compact/retention-sweep.js';
import { IndexCleanup } from './meta/index-cleanup.js';
import { CleanupMember } from './meta/cleanup-member.js';
import { CleanupRow } from './meta/cleanup-row.js';
import { StoreCompaction } from './compact/store-compaction.js';
import { DecodePool } from './query/decode-pool.js';
import type { LastValues } from './meta/last-values.js';
import type { NewestHours } from './meta/newest-hours.js';
import { metaTableSpec } from './meta/series-index.js';
import { postingsTableSpec } from './meta/postings.js';
import { FEED_POLL_MS, changesTableSpec } from './meta/change-log.js';
import type { Change } from './meta/change-log.js';
import { Catalog, planBytes } from './catalog/catalog.js';
import type { KeptByMetric } from './catalog/catalog.js';
import { MAX_SERIES_PLANS } from './query/series-plan-types.js';
import type { SeriesPlan } from './query/series-plan-types.js';
import { resolveTsdbConfig } from './config.js';
import type { TsdbConfig } from './config.js';
import { TsdbError } from './errors.js';
import type { SchemaWidths } from './schema/widths.js';
import { validateWidths } from './schema/widths.js';
import { DATA_FAMILY, DATA_TABLE, DATA_TRANSFORM, dataTableSpec, uidTableSpec } from './tables.js';
import { UID_COUNTER_ROW, UID_FAMILY_NAME, UID_TABLE } from './uid/uid-kind.js';
import type { UidKind } from './uid/uid-kind.js';
import type { SeriesIndex } from './meta/series-index.js';
import type { UidTable } from './uid/uid-table.js';
import { Ingestor } from './write/ingest.js';
import type { DirtyMark } from './write/dirty-mark.js';
import type { SeriesEntry } from './write/write-group.js';

export interface OpenTsdbOptions {
  readonly config?: Partial<TsdbConfig>;
  /** Wall clock in ms (tests pass a fake). */
  readonly now?: () => number;
  /** Start the hour compactor's timer (default true). */
  readonly background?: boolean;
  /** Query decode workers to use instead of starting its own (the caller closes them). */
  readonly decodePool?: DecodePool;
}

/** A self-metric in OpenTSDB's /api/stats shape. */
export interface StatPoint {
  readonly metric: string;
  readonly timestamp: number;
  readonly value: number;
  readonly tags: Readonly<Record<string, string>>;
}

const SCHEMA_QUALIFIER = utf8('schema');

export class Tsdb {
  readonly store: Store;
  readonly config: TsdbConfig;
  readonly widths: SchemaWidths;
  readonly data: Table;
  readonly uid: Table;
  /** Names, series and every cache of them (catalog/catalog.ts). */
  readonly catalog: Catalog<SeriesEntry>;
  /** The series side of sub-queries, kept by the catalog (query/series-plan.ts). */
  readonly seriesPlans: KeptByMetric<SeriesPlan>;
  /** Every series of a metric as the index lists it, kept by the catalog (seriesOfMetric). */
  private readonly metricSeries: KeptByMetric<readonly Uint8Array[]>;
  /** The catalog's UID tables and series index. */
  readonly metrics: UidTable;
  readonly tagks: UidTable;
  readonly tagvs: UidTable;
  readonly ingest: Ingestor;
  /**
   * Hour compaction: the store's own (its flushes and compactions run the data table's row
   * transform) where it has row transforms, else the read-back compactor.
   */
  readonly compactor: HourCompaction;
  /** True when the store compresses rows on their way to disk (compact/hour-transform.ts). */
  readonly storeCompresses: boolean;
  /** horae.retention and horae.retention.metrics (compact/retention.ts), for reads. */
  readonly retentionConfig: RetentionConfig;
  /**
   * Retention where the store has no row transform to apply it (compact/retention-sweep.ts);
   * undefined when no metric has a retention or the store applies it.
   */
  readonly retentionSweeper: RetentionSweeper | undefined;
  /** Removes expired series from the index, and names only they used (horae.retention.cleanup). */
  readonly indexCleanup: IndexCleanup | undefined;
  /** This server's part in every server's index cleanup, where servers share the store (meta/cleanup-member.ts). */
  readonly cleanupMember: CleanupMember | undefined;
  /** Retention resolved to metric UIDs (compact/retention.ts), for the row transform. */
  private retention: RetentionRules = { byMetric: [] };
  private retentionEpoch = -1;
  private retentionResolving: Promise<void> | undefined;
  readonly index: SeriesIndex;
  /** Newest-hour hints for /api/query/last (meta/newest-hours.ts): where this process is the one writer or hears of the others' writes. */
  readonly newestHours: NewestHours | undefined;
  /** Each series' newest point, for /api/query/last (meta/last-values.ts): kept as the hints are. */
  readonly lastValues: LastValues | undefined;
  readonly now: () => number;
  private closed = false;
  private decodePool: DecodePool | undefined;
  private ownsDecodePool = true;

  private constructor(store: Store, config: TsdbConfig, data: Table, uid: Table, meta: Table, postings: Table, changes: Table | undefined, now: () => number, storeCompresses: boolean) {
    this.store = store;
    this.config = config;
    this.now = now;
    this.widths = widthsOf(config);
    this.retentionConfig = parseRetention(config.retention, config.retentionMetrics);
    this.data = data;
    this.uid = uid;
    // Where this process is the store's one writer, what it wrote can be kept (capabilities.singleWriter).
    const singleWriter = store.capabilities.singleWriter;
    this.catalog = new Catalog<SeriesEntry>({
      uid, meta, postings, widths: this.widths, config, singleWriter, now, ...(changes === undefined ? {} : { changes }),
      writesInFlight: () => this.ingest.stats().inflightPoints > 0,
    });
    this.catalog.onRemoteChange((c) => this.applyRemoteWrite(c));
    this.metrics = this.catalog.metrics;
    this.tagks = this.catalog.tagks;
    this.tagvs = this.catalog.tagvs;
    this.index = this.catalog.index;
    this.seriesPlans = this.catalog.keepByMetric<SeriesPlan>(MAX_SERIES_PLANS, planBytes);
    this.metricSeries = this.catalog.keepByMetric<readonly Uint8Array[]>(MAX_SERIES_PLANS, seriesListBytes);
    this.storeCompresses = storeCompresses;
    // This server in the claims and the compaction ledger it keeps beside the change log.
    const server = randomBytes(8);
    const readBack = storeCompresses ? undefined : new HourCompactor({
      data, widths: this.widths, config, now, maxDirtyBytes: this.catalog.memory.share('dirtyRows'),
      ...(changes === undefined ? {} : { ledger: { table: changes, server } }),
    });
    if (readBack !== undefined) this.catalog.memory.register('dirtyRows', () => readBack.dirtyBytes(), () => readBack.stats().pendingRows);
    this.compactor = readBack ?? new StoreCompaction(data, () => this.retentionResolved());
    this.retentionSweeper = storeCompresses || !this.hasRetention ? undefined : new RetentionSweeper({
      data, widths: this.widths, retention: this.retentionConfig, now, server,
      metrics: () => this.metrics.allNames(),
      ...(changes === undefined ? {} : { claims: changes }),
    });
    // The index cleanup's row, lease and fences (meta/cleanup-row.ts, cleanup-member.ts): every server on a shared store takes part.
    const row = new CleanupRow(postings, server, now);
    const cleanupSteps = {
      apply: (c: Extract<Change, { kind: 'cleanup' }>) => this.catalog.applyCleanup(c),
      writesEnded: (ms: number) => this.ingest.callsEnded(ms), recordingsSettled: () => this.catalog.gate.settled(), now,
    };
    this.cleanupMember = changes === undefined ? undefined : new CleanupMember({ row, ...cleanupSteps });
    this.indexCleanup = !config.retentionCleanup || !this.hasRetention ? undefined : new IndexCleanup({
      data, postings, widths: this.widths, retention: this.retentionConfig, index: this.index, row, me: server, shared: changes !== undefined,
      uids: { metric: this.catalog.metrics, tagk: this.catalog.tagks, tagv: this.catalog.tagvs },
      announce: (c) => this.catalog.cleanupStep(c), record: (t) => this.catalog.recordSeries(t, now()), ...cleanupSteps,
    });
    // Kept where this process is the one writer, or hears of the others' writes (change log).
    const hints = (this.newestHours = this.catalog.newestHours);
    const lastValues = (this.lastValues = this.catalog.lastValues);
    const { saltWidth, metric: metricWidth } = this.widths;
    const index = this.index;
    const tracked = config.compactHours && readBack !== undefined;
    const markDirty = tracked
      ? (key: Uint8Array, base: number, nowMs: number): DirtyMark => readBack.markDirty(key, base, nowMs)
      : (_key: Uint8Array, _base: number, nowMs: number): DirtyMark => ({ lastWriteMs: nowMs, live: true });
    this.ingest = new Ingestor({
      data,
      catalog: this.catalog,
      widths: this.widths,
      config,
      now,
      // Told of each series' first row of an hour (and again when its mark is no longer live).
      onRowWritten: (key, base, nowMs) => {
        index.written(key, saltWidth, nowMs);
        hints?.writtenRow(key, saltWidth, metricWidth, base);
        return markDirty(key, base, nowMs);
      },
      ...(this.catalog.announcesWrites ? { announceWritten: (series) => this.catalog.announceWritten(series) } : {}),
      ...(tracked ? { rowsListed: () => readBack.listed() } : {}),
      ...(this.cleanupMember === undefined ? {} : { beforeWrite: () => this.cleanupMember!.stale() && this.catalog.dropCaches() }),
      ...(lastValues === undefined ? {} : {
        newestPoints: {
          stored: (e, ms, value, isInt, big) => lastValues.written(e.tsuidKey, ms, value, isInt, big),
          failed: () => lastValues.clear(),
        },
      }),
    });
  }

  static async open(store: Store, opts: OpenTsdbOptions = {}): Promise<Tsdb> {
    const config = resolveTsdbConfig(opts.config);
    const widths = validateWidths(widthsOf(config));
    const uid = await store.createTable(uidTableSpec(), { ifNotExists: true });
    await checkSchemaRecord(uid, widths);
    let data = await store.createTable(dataTableSpec(widths), { ifNotExists: true });
    const meta = await store.createTable(metaTableSpec(), { ifNotExists: true });
    const postings = await store.createTable(postingsTableSpec(), { ifNotExists: true });
    const storeCompresses = store.capabilities.rowTransforms === true;
    if (storeCompresses && !data.spec.families.some((f) => f.name === DATA_FAMILY && f.transform === DATA_TRANSFORM)) {
      // A data table created before row transforms (tsdb/SCHEMA.md "Suffixed hour cells"):
      // from now on the store compresses it, and compactions fold the cells already on disk.
      data = await store.setFamilyTransform(DATA_TABLE, DATA_FAMILY, DATA_TRANSFORM);
    }
    // Where other servers may write too, changes are logged for them (meta/change-log.ts).
    const changes = store.capabilities.singleWriter ? undefined : await store.createTable(changesTableSpec(), { ifNotExists: true });
    const tsdb = new Tsdb(store, config, data, uid, meta, postings, changes, opts.now ?? Date.now, storeCompresses);
    // A store from before postings gets them now, before anything is written or queried.
    await tsdb.index.buildPostings();
    await tsdb.catalog.startFeed(opts.background === false ? undefined : FEED_POLL_MS);
    // Beats before the first write: a cleanup pass starting from now waits for this server's fences.
    await tsdb.cleanupMember?.start();
    if (opts.decodePool !== undefined) {
      tsdb.decodePool = opts.decodePool;
      tsdb.ownsDecodePool = false;
    }
    if (storeCompresses) {
      await tsdb.resolveRetention();
      registerHourTransform(() => tsdb.transformOptions());
    } else {
      const readBack = tsdb.compactor as HourCompactor;
      await readBack.opened(await isEmpty(data));
      if (config.compactHours && opts.background !== false) readBack.start();
      if (opts.background !== false) tsdb.retentionSweeper?.start();
    }
    if (opts.background !== false) tsdb.indexCleanup?.start();
    return tsdb;
  }

  /**
   * The row transform's options, read at each flush and compaction. While the per-metric
   * rules are not yet resolved for metrics created since (resolution is started here), a
   * metric the rules do not list is kept: nothing expires early by a rule not yet applied.
   */
  private transformOptions(): HourTransformOptions {
    let retention = this.retention;
    // NB: only per-metric rules depend on which metrics exist (a rename is seen at the next open).
    if (this.config.retentionMetrics !== '' && this.metrics.stats().assigned !== this.retentionEpoch) {
      void this.retentionResolved();
      const { defaultMs: _unlisted, ...listed } = retention;
      retention = listed;
    }
    return { saltWidth: this.widths.saltWidth, metricWidth: this.widths.metric, retention, compress: this.config.compactHours };
  }

  /** Resolves the retention rules again when metrics were created since the last time. */
  retentionResolved(): Promise<void> {
    if (this.config.retentionMetrics === '' || this.metrics.stats().assigned === this.retentionEpoch || this.closed) return Promise.resolve();
    this.retentionResolving ??= this.resolveRetention().catch(() => undefined).finally(() => {
      this.retentionResolving = undefined;
    });
    return this.retentionResolving;
  }

  /** Resolves the retention rules (compact/retention.ts) against the metrics that exist now. */
  private async resolveRetention(): Promise<void> {
    const epoch = this.metrics.stats().assigned;
    this.retention = await resolveRetention(this.retentionConfig, (n) => this.metrics.getId(n), (p) => this.metrics.namesWithPrefix(p, 1_000_000));
    this.retentionEpoch = epoch;
  }

  /**
   * The time (ms) before which reads return no point of `metric`: its retention back from
   * now (tsdb/SCHEMA.md "Retention"); 0 when it is kept forever. Every read of points
   * starts there, whether or not the store has dropped the rows yet.
   */
  retainedFrom(metric: string): number {
    const keep = retentionOfName(this.retentionConfig, metric);
    return keep === undefined ? 0 : Math.max(0, this.now() - keep);
  }

  /** retainedFrom for a metric given by UID (0 for a UID without a name). */
  async retainedFromUid(metricUid: Uint8Array): Promise<number> {
    if (!this.hasRetention) return 0;
    const name = await this.metrics.getName(metricUid);
    return name === undefined ? 0 : this.retainedFrom(name);
  }

  /** True when some metric's points expire (horae.retention or a per-metric rule). */
  get hasRetention(): boolean {
    return this.retentionConfig.defaultMs !== undefined || this.retentionConfig.rules.some((r) => r.ms > 0);
  }

  uidTable(kind: UidKind): UidTable {
    return this.catalog.uidTable(kind);
  }

  /**
   * Rows of these series (TSUIDs) were deleted from the data table (DELETE /api/query): the
   * newest points kept for /api/query/last may be gone, here and on the other servers
   * (change log). Whatever deletes data rows must call this.
   */
  async rowsDeleted(tsuids: readonly Uint8Array[]): Promise<void> {
    this.forgetNewestPoints();
    await this.catalog.rowsDeleted(tsuids);
  }

  /** Renames a UID, keeping its id (catalog.rename: every server hears of it). */
  renameUid(kind: UidKind, from: string, to: string): Promise<void> {
    return this.catalog.rename(kind, from, to);
  }

  /** Another server's change (change log): what it wrote or deleted leaves the newest-point caches. */
  private applyRemoteWrite(c: Change): void {
    switch (c.kind) {
      case 'written': {
        const keys = c.series.map(([tsuid]) => latin1(tsuid));
        this.lastValues?.forget(keys);
        const hints = this.newestHours;
        if (hints !== undefined) for (let i = 0; i < keys.length; i++) hints.written(keys[i]!, c.series[i]![1]);
        break;
      }
      case 'writtenMetrics': {
        const metrics = new Map(c.metrics.map(([m, hour]) => [latin1(m), hour] as const));
        for (const m of metrics.keys()) this.lastValues?.forgetMetric(m);
        this.newestHours?.distrustMetrics(metrics, this.widths.metric);
        break;
      }
      case 'delete':
      case 'unknown':
        this.forgetNewestPoints();
        break;
      case 'cleanup':
        this.cleanupMember?.onStep(c);
        break;
      default:
        break;
    }
  }

  /**
   * Every series of a metric in the series index, sorted (SeriesIndex.ofMetric), kept while
   * the catalog holds it (a new series of the metric, here or on another server, a rename
   * or dropCaches makes it read again) and dropped at every delete: /api/query/last asks for
   * it at every request, one read of the index each on a remote store. Read only.
   */
  async seriesOfMetric(metricUid: Uint8Array, signal?: AbortSignal): Promise<readonly Uint8Array[]> {
    const key = latin1(metricUid);
    const hit = this.metricSeries.get(key);
    if (hit !== undefined) return hit;
    const at = this.catalog.stamp();
    const list = await this.index.ofMetric(metricUid, signal);
    this.metricSeries.set(key, list, metricUid, at);
    return list;
  }

  private forgetNewestPoints(): void {
    this.metricSeries.clear();
    this.lastValues?.clear();
    this.newestHours?.distrustAll();
  }

  /** Every cache of the layer emptied (HTTP /api/dropcaches, telnet dropcaches, fsck): the catalog's. */
  dropCaches(): void {
    this.catalog.dropCaches();
  }

  /** Self-metrics as OpenTSDB reports them (tsd.* names), plus horae.* ones. */
  async statsPoints(extra: Readonly<Record<string, number>> = {}): Promise<StatPoint[]> {
    const ts = Math.floor(this.now() / 1000);
    const host = { host: 'horae' };
    const out: StatPoint[] = [];
    const add = (metric: string, value: number, tags: Record<string, string> = {}): void => {
      out.push({ metric, timestamp: ts, value, tags: { ...host, ...tags } });
    };
    const ing = this.ingest.stats();
    add('tsd.rpc.received', ing.pointsWritten + ing.pointsRejected, { type: 'put' });
    add('tsd.rpc.errors', ing.pointsRejected, { type: 'invalid_values' });
    add('tsd.rpc.errors', ing.overloadRejections, { type: 'throttled' });
    add('horae.ingest.inflight_points', ing.inflightPoints);
    add('horae.ingest.series_created', ing.seriesCreated);
    add('horae.ingest.series_readmitted', ing.seriesReadmitted);
    const lim = this.catalog.limiter.stats();
    const ix = this.index.stats();
    add('horae.index.series', ix.series);
    add('horae.index.bytes', ix.bytes);
    add('horae.index.left', ix.aged, { why: 'idle' });
    add('horae.index.left', ix.evicted, { why: 'bytes' });
    // Each per-series structure's bytes against its share of horae.catalog.memory_bytes (memory/catalog-memory.ts).
    const mem = this.catalog.memory;
    for (const m of mem.stats()) {
      add('horae.catalog.bytes', m.bytes, { structure: m.name });
      add('horae.catalog.max_bytes', m.maxBytes, { structure: m.name });
      add('horae.catalog.entries', m.entries, { structure: m.name });
    }
    add('horae.catalog.bytes', mem.usedBytes(), { structure: 'all' });
    add('horae.catalog.max_bytes', mem.totalBytes, { structure: 'all' });
    add('horae.series.new', lim.newLastHour, { window: '1h' });
    add('horae.series.new', lim.newLastDay, { window: '24h' });
    for (const [limit, n] of Object.entries(lim.refused)) add('horae.limits.refused', n, { limit });
    add('horae.ingest.groups', ing.groupsWritten);
    add('horae.ingest.cells', ing.cellsWritten);
    for (const t of [this.metrics, this.tagks, this.tagvs]) {
      const s = t.stats();
      const kind = t.kind === 'metric' ? 'metrics' : t.kind;
      add('tsd.uid.cache-hit', s.cacheHits, { kind });
      add('tsd.uid.cache-miss', s.cacheMisses, { kind });
      add('tsd.uid.ids-used', await t.usedIds(), { kind });
      add('tsd.uid.ids-available', t.maxId - (await t.usedIds()), { kind });
    }
    if (this.lastValues !== undefined) {
      const lv = this.lastValues.stats();
      add('horae.query.last_cache.series', lv.series);
      add('horae.query.last_cache.hits', lv.hits);
      add('horae.query.last_cache.misses', lv.misses);
    }
    const c = this.compactor.stats();
    add('tsd.compaction.count', c.rowsCompacted, { type: 'hours' });
    add('horae.compaction.pending_rows', c.pendingRows);
    if (c.ledgerPairs !== undefined) {
      add('horae.compaction.ledger_pairs', c.ledgerPairs);
      add('horae.compaction.takeovers', c.takeovers ?? 0);
      add('horae.compaction.ranges', c.rangesCompacted ?? 0);
    }
    if (this.retentionSweeper !== undefined) {
      const r = this.retentionSweeper.stats();
      add('horae.retention.buckets_swept', r.bucketsSwept);
      add('horae.retention.ranges_deleted', r.rangesDeleted);
      add('horae.retention.errors', r.errors);
    }
    if (this.indexCleanup !== undefined) {
      const r = this.indexCleanup.stats();
      add('horae.retention.series_removed', r.seriesRemoved);
      add('horae.retention.uids_removed', r.uidsRemoved);
      add('horae.retention.cleanup_skipped', r.skipped);
      add('horae.retention.cleanup_repaired', r.repaired);
      add('horae.retention.cleanup_reindexed', r.reindexed);
      add('horae.retention.cleanup_errors', r.errors);
    }
    if (this.cleanupMember !== undefined) add('horae.retention.cleanup_beat_failures', this.cleanupMember.beatFailures);
    const st = await this.store.stats();
    add('horae.store.memstore_bytes', st.memstoreBytes);
    add('horae.store.file_bytes', st.fileBytes);
    add('horae.store.files', st.files);
    add('horae.store.wal_bytes', st.walBytes);
    if (st.walReplay !== undefined) {
      // What the last open replayed from the log (after kill -9: what was not flushed).
      add('horae.store.wal_replay_ms', st.walReplay.ms);
      add('horae.store.wal_replay_bytes', st.walReplay.bytes);
      add('horae.store.wal_replay_records', st.walReplay.records);
      add('horae.store.wal_replay_cells', st.walReplay.entries);
    }
    add('horae.store.stalled_writers', st.stalledWriters);
    if (st.transformBacklog !== undefined) {
      // Files of a store made before row transforms still to be rewritten (0 once migrated).
      add('horae.store.transform_backlog_files', st.transformBacklog.files);
      add('horae.store.transform_backlog_bytes', st.transformBacklog.bytes);
    }
    for (const [k, v] of Object.entries(extra)) add(k, v);
    return out;
  }

  /**
   * The query decode workers (horae.query.decode_threads; started on first use), or
   * undefined when there are none.
   */
  queryDecodePool(): DecodePool | undefined {
    if (this.closed || this.config.queryDecodeThreads === 0) return undefined;
    if (!this.ownsDecodePool) return this.decodePool;
    this.decodePool ??= new DecodePool(this.config.queryDecodeThreads);
    return this.decodePool;
  }

  /** Stops background work (an hour compaction in progress finishes first). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.catalog.stopFeed();
    await this.compactor.stop();
    await this.retentionSweeper?.stop();
    await this.indexCleanup?.stop();
    await this.cleanupMember?.stop();
    if (this.ownsDecodePool) await this.decodePool?.close();
  }
}

function widthsOf(c: TsdbConfig): SchemaWidths {
  return { metric: c.uidWidthMetric, tagk: c.uidWidthTagk, tagv: c.uidWidthTagv, saltWidth: c.saltWidth, saltBuckets: c.saltBuckets };
}

/** Writes the schema record on first open; refuses settings that differ from it. */
async function checkSchemaRecord(uid: Table, w: SchemaWidths): Promise<void> {
  const want = JSON.stringify({ metric: w.metric, tagk: w.tagk, tagv: w.tagv, saltWidth: w.saltWidth, saltBuckets: w.saltBuckets });
  const ref = { family: UID_FAMILY_NAME, qualifier: SCHEMA_QUALIFIER };
  try {
    if (await uid.checkAndPut(UID_COUNTER_ROW, ref, undefined, [{ type: 'put', ...ref, value: utf8(want) }], { durability: 'sync' })) return;
  } catch (err) {
    if (!isStoreError(err)) throw err;
    throw new TsdbError('TSDB_STORAGE', `cannot record the schema: ${err.message}`, { cause: err });
  }
  const [row] = await uid.get([UID_COUNTER_ROW], { families: [UID_FAMILY_NAME] });
  const cell = row?.cells.find((c) => compareBytes(c.qualifier, SCHEMA_QUALIFIER) === 0);
  const have = cell === undefined ? '' : fromUtf8(cell.value);
  if (have !== want) {
    throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `the data in ${DATA_TABLE}/${UID_TABLE} was written with schema ${have}; this server is configured with ${want}: start it with the recorded settings`);
  }
}

/** True when the table holds no row (a new store: nothing was written before this process). */
async function isEmpty(t: Table): Promise<boolean> {
  for await (const rows of t.scan({ limit: 1 })) if (rows.length > 0) return false;
  return true;
}

/** Heap bytes of a kept series list, by estimate: the array and each TSUID (object and bytes). */
function seriesListBytes(list: readonly Uint8Array[]): number {
  let n = 64 + 8 * list.length;
  for (const t of list) n += 96 + t.length;
  return n;
}
