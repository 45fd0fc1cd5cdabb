/**
 * The plan of a metric sub-query's series (series-plan.ts), apart from the code that
 * builds it: the composition root (tsdb.ts) keeps plans, and series-plan.ts reads the
 * root, so the type lives here rather than close a cycle.
 */
import type { ResolvedTagFilter, RowKeyFilterPlan } from './row-key-filter.js';

export interface SeriesPlan {
  readonly metricUid: Uint8Array;
  /** Undefined when a literal filter can match nothing (none of its values has a UID). */
  readonly rows: RowKeyFilterPlan | undefined;
  /** The filters with their UIDs (empty when `rows` is undefined). */
  readonly resolved: readonly ResolvedTagFilter[];
  /** The series index's answer to `rows.seriesRegex`, kept by matchingSeries. */
  matched?: { readonly limit: number; readonly tsuids: Uint8Array[] };
  /** everySeriesMatches' answer, kept. */
  every?: boolean;
}

/** Plans kept (Tsdb.seriesPlans), at most; the oldest goes first. */
export const MAX_SERIES_PLANS = 1024;
