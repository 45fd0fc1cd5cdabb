/**
 * The body of GET /api/horae/overview (documented in tsdb/OPERATOR.md): the
 * store as it runs — per table and region the key range, sizes, files, memstore and the
 * cumulative write/read counters; background work, block cache, WAL; UID counts; ingest
 * and query counters; and the recent rate history kept by the route.
 *
 * Every counter is cumulative (since the server started, or since the region was created
 * by a split), so a client computes rates from two snapshots; `history` has the rates of
 * the last minutes already computed. Key ranges are hex, and data-table boundaries carry a
 * decoded hint (salt bucket, metric, base hour) where the key holds those bytes.
 */
import { toHex } from '../../../core/api/bytes.js';
import type { RegionInfo, StoreStats } from '../../../core/api/store.js';
import { DATA_TABLE } from '../../tables.js';
import type { Tsdb } from '../../tsdb.js';
import { decodeKeyHint } from './key-hint.js';
import type { ServerView } from '../../meta/servers.js';
import type { RateColumns } from './rate-history.js';

export interface KeyHint {
  readonly salt?: number;
  /** The metric UID in hex. */
  readonly metricUid?: string;
  /** The metric's name, when the UID is assigned. */
  readonly metric?: string;
  readonly baseTimeSec?: number;
}

export interface OverviewRegion {
  readonly id: string;
  /** Inclusive start key, hex; '' = start of the table. */
  readonly start: string;
  /** Exclusive end key, hex; '' = end of the table. */
  readonly end: string;
  readonly startHint?: KeyHint;
  readonly endHint?: KeyHint;
  /** Files plus memstore (approximate). */
  readonly sizeBytes: number;
  /** Bytes in files (sizeBytes minus the memstore). */
  readonly fileBytes: number;
  readonly memstoreBytes: number;
  readonly files: number;
  readonly cellsWritten: number;
  readonly writeRequests: number;
  readonly rowsRead: number;
  readonly readRequests: number;
  /** A flush / compaction of this region is running (false where the backend has none). */
  readonly flushing: boolean;
  readonly compacting: boolean;
}

export interface OverviewTable {
  readonly name: string;
  readonly regions: OverviewRegion[];
}

/** Counters of the server (cumulative since it started). */
export interface OverviewCounters {
  readonly pointsWritten: number;
  readonly pointsRejected: number;
  readonly seriesCreated: number;
  readonly queries: number;
  readonly queryErrors: number;
}

export const RATE_NAMES = ['points', 'queries', 'cellsWritten', 'rowsRead'] as const;
export type RateName = (typeof RATE_NAMES)[number];

export interface Overview {
  readonly timeMs: number;
  /** When the server's counters started. */
  readonly startedMs: number;
  readonly backend: string;
  readonly store: Omit<StoreStats, 'backend' | 'tables' | 'regions'>;
  readonly counters: OverviewCounters;
  readonly uids: { readonly metric: number; readonly tagk: number; readonly tagv: number };
  readonly schema: { readonly dataTable: string; readonly saltWidth: number; readonly saltBuckets: number };
  readonly tables: OverviewTable[];
  readonly history: RateColumns<RateName> & { readonly intervalMs: number };
  /** The servers sharing the store, this one included (meta/servers.ts). */
  readonly servers: readonly ServerView[];
}

export interface RegionsByTable {
  readonly name: string;
  readonly regions: RegionInfo[];
}

/** Every table's regions, tables in name order. */
export async function listRegions(tsdb: Tsdb): Promise<RegionsByTable[]> {
  const out: RegionsByTable[] = [];
  for (const name of await tsdb.store.listTables()) {
    out.push({ name, regions: await (await tsdb.store.openTable(name)).regions() });
  }
  return out;
}

export interface SnapshotInput {
  readonly tsdb: Tsdb;
  readonly tables: readonly RegionsByTable[];
  readonly counters: OverviewCounters;
  readonly startedMs: number;
  readonly history: Overview['history'];
  readonly servers: readonly ServerView[];
}

export async function buildOverview(input: SnapshotInput): Promise<Overview> {
  const { tsdb } = input;
  const { backend, tables: _tables, regions: _regions, ...store } = await tsdb.store.stats();
  const names = new Map<string, Promise<string | undefined>>();
  const hint = async (key: Uint8Array): Promise<KeyHint | undefined> => {
    const h = decodeKeyHint(tsdb.widths, key);
    if (h === undefined) return undefined;
    if (h.metricUid === undefined) return { ...(h.salt === undefined ? {} : { salt: h.salt }) };
    const uidHex = toHex(h.metricUid);
    let name = names.get(uidHex);
    if (name === undefined) {
      name = tsdb.metrics.getName(h.metricUid.slice());
      names.set(uidHex, name);
    }
    const metric = await name;
    return {
      ...(h.salt === undefined ? {} : { salt: h.salt }),
      metricUid: uidHex,
      ...(metric === undefined ? {} : { metric }),
      ...(h.baseTimeSec === undefined ? {} : { baseTimeSec: h.baseTimeSec }),
    };
  };
  const tables: OverviewTable[] = [];
  for (const t of input.tables) {
    const isData = t.name === DATA_TABLE;
    const regions: OverviewRegion[] = [];
    for (const r of t.regions) {
      const startHint = isData ? await hint(r.start) : undefined;
      const endHint = isData ? await hint(r.end) : undefined;
      regions.push({
        id: r.id,
        start: toHex(r.start),
        end: toHex(r.end),
        ...(startHint === undefined ? {} : { startHint }),
        ...(endHint === undefined ? {} : { endHint }),
        sizeBytes: r.stats.sizeBytes,
        fileBytes: Math.max(0, r.stats.sizeBytes - r.stats.memstoreBytes),
        memstoreBytes: r.stats.memstoreBytes,
        files: r.stats.files,
        cellsWritten: r.stats.cellsWritten,
        writeRequests: r.stats.writeRequests,
        rowsRead: r.stats.rowsRead,
        readRequests: r.stats.readRequests,
        flushing: r.stats.flushing === true,
        compacting: r.stats.compacting === true,
      });
    }
    tables.push({ name: t.name, regions });
  }
  const [metric, tagk, tagv] = await Promise.all([tsdb.metrics.usedIds(), tsdb.tagks.usedIds(), tsdb.tagvs.usedIds()]);
  return {
    timeMs: tsdb.now(),
    startedMs: input.startedMs,
    backend,
    store,
    counters: input.counters,
    uids: { metric, tagk, tagv },
    schema: { dataTable: DATA_TABLE, saltWidth: tsdb.widths.saltWidth, saltBuckets: tsdb.widths.saltBuckets },
    tables,
    history: input.history,
    servers: input.servers,
  };
}
