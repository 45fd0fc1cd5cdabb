/**
 * The body of GET /api/horae/overview as the operator page reads it (the server's
 * tsdb/server/overview/overview-snapshot.ts; documented in tsdb/OPERATOR.md),
 * and the fetch that gets it. The UI talks to the server over HTTP only, so the shape is
 * restated here rather than imported.
 *
 * Every counter is cumulative: since the server started, or since the region was created
 * (a split starts its children at zero). Rates come from two snapshots (ops-rates.ts) or
 * from `history`, which the server samples every `intervalMs`.
 */

export interface OpsKeyHint {
  readonly salt?: number;
  readonly metricUid?: string;
  readonly metric?: string;
  readonly baseTimeSec?: number;
}

export interface OpsRegion {
  readonly id: string;
  /** Inclusive start key in hex; '' = start of the table. */
  readonly start: string;
  /** Exclusive end key in hex; '' = end of the table. */
  readonly end: string;
  readonly startHint?: OpsKeyHint;
  readonly endHint?: OpsKeyHint;
  readonly sizeBytes: number;
  readonly fileBytes: number;
  readonly memstoreBytes: number;
  readonly files: number;
  readonly cellsWritten: number;
  readonly writeRequests: number;
  readonly rowsRead: number;
  readonly readRequests: number;
  readonly flushing: boolean;
  readonly compacting: boolean;
}

export interface OpsTable {
  readonly name: string;
  readonly regions: readonly OpsRegion[];
}

export interface OpsStore {
  readonly memstoreBytes: number;
  readonly files: number;
  readonly fileBytes: number;
  readonly flushesInProgress: number;
  readonly flushesDone: number;
  readonly compactionsInProgress: number;
  readonly compactionsDone: number;
  readonly splitsDone: number;
  readonly blockCache: { readonly hits: number; readonly misses: number; readonly sizeBytes: number; readonly capacityBytes: number };
  readonly stalledWriters: number;
  readonly walBytes: number;
  readonly recoveryDroppedBytes?: number;
  readonly backgroundErrors?: number;
  readonly lastBackgroundError?: string;
  readonly writeFailure?: string;
}

export type OpsRateName = 'points' | 'queries' | 'cellsWritten' | 'rowsRead';

export interface OpsOverview {
  readonly timeMs: number;
  readonly startedMs: number;
  readonly backend: string;
  readonly store: OpsStore;
  readonly counters: {
    readonly pointsWritten: number;
    readonly pointsRejected: number;
    readonly seriesCreated: number;
    readonly queries: number;
    readonly queryErrors: number;
  };
  readonly uids: { readonly metric: number; readonly tagk: number; readonly tagv: number };
  readonly schema: { readonly dataTable: string; readonly saltWidth: number; readonly saltBuckets: number };
  readonly tables: readonly OpsTable[];
  readonly history: {
    readonly intervalMs: number;
    readonly timesMs: readonly number[];
    readonly rates: Readonly<Record<OpsRateName, readonly (number | null)[]>>;
  };
  /** The servers sharing the store, this one included (absent from older servers). */
  readonly servers?: readonly OpsServer[];
}

/** One server sharing the store, from its last heartbeat (tsdb/meta/servers.ts). */
export interface OpsServer {
  readonly id: string;
  readonly address: string;
  readonly version: string;
  readonly startedMs: number;
  readonly beatMs: number;
  readonly ageMs: number;
  readonly state: 'live' | 'stopped' | 'silent';
  readonly self: boolean;
  readonly counters: Readonly<Record<string, number>>;
}

export const OVERVIEW_PATH = '/api/horae/overview';

/** GETs the overview; rejects with the status and body text when the server refuses. */
export async function fetchOverview(signal?: AbortSignal): Promise<OpsOverview> {
  const res = await fetch(OVERVIEW_PATH, { headers: { accept: 'application/json' }, ...(signal === undefined ? {} : { signal }) });
  if (!res.ok) throw new Error(`${OVERVIEW_PATH}: HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return (await res.json()) as OpsOverview;
}
