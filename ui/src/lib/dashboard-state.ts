/**
 * The dashboard's whole state: what the URL hash encodes (url-state.ts) and what the page
 * renders. Plain data, no DOM; every field has a default so a partial URL is complete.
 */

/** One tag filter row: `key=value`, grouped by the key when `groupBy`. */
export interface TagFilter {
  readonly key: string;
  /** OpenTSDB filter text: `*`, `web01`, `a|b`, `wildcard(web*)`, `regexp(web.*)`, … */
  readonly value: string;
  readonly groupBy: boolean;
}

export interface Downsample {
  /** `1m`, `30s`, `1h`, `0all`, `1dc` … */
  readonly interval: string;
  /** An aggregator name (`avg`, `max`, …). */
  readonly fn: string;
  /** `none` (default), `nan`, `null`, `zero`. */
  readonly fill: string;
}

export interface RateOptions {
  readonly counter: boolean;
  /** Counter maximum (rollover point); undefined = OpenTSDB's default (2^64-1). */
  readonly counterMax?: number;
  /** Rates above this are reported as 0 (a counter reset); undefined = none. */
  readonly resetValue?: number;
  readonly dropResets: boolean;
}

/** One sub-query of a panel. */
export interface SubQuery {
  readonly aggregator: string;
  readonly metric: string;
  readonly tags: readonly TagFilter[];
  readonly downsample?: Downsample;
  readonly rate?: RateOptions;
  /** Which y axis the query's series are drawn against. */
  readonly axis: 'y' | 'y2';
}

/** `[min:max]` with either end open (OpenTSDB's yrange). */
export interface AxisRange {
  readonly min?: number;
  readonly max?: number;
}

export interface Panel {
  readonly title: string;
  readonly queries: readonly SubQuery[];
  readonly ylog: boolean;
  readonly y2log: boolean;
  readonly yrange?: AxisRange;
  readonly y2range?: AxisRange;
  readonly ylabel?: string;
  readonly y2label?: string;
  /** Hide the legend (OpenTSDB's `nokey`). */
  readonly nokey: boolean;
}

export type ThemeName = 'light' | 'dark';

export interface DashboardState {
  /** A time expression (time-range.ts): `1h-ago`, `now-1h`, epoch s/ms, `2026/01/01-00:00:00`. */
  readonly start: string;
  /** Absent = now. */
  readonly end?: string;
  /** Auto-refresh period in seconds; 0 = off (OpenTSDB's `autoreload`). */
  readonly refreshSec: number;
  /** Absent = follow the browser's preference. */
  readonly theme?: ThemeName;
  readonly panels: readonly Panel[];
}

export const DEFAULT_START = '1h-ago';

export function emptyQuery(metric = ''): SubQuery {
  return { aggregator: 'sum', metric, tags: [], axis: 'y' };
}

export function emptyPanel(title = ''): Panel {
  return { title, queries: [emptyQuery()], ylog: false, y2log: false, nokey: false };
}

export function defaultState(): DashboardState {
  return { start: DEFAULT_START, refreshSec: 0, panels: [emptyPanel()] };
}
