/**
 * A panel's sub-queries → the POST /api/query body. One request per panel: the server
 * answers with every series of every sub-query on one shared time axis (the columnar
 * form), which is uPlot's AlignedData as it stands. Pure.
 *
 * Tag values become OpenTSDB filters: `*` → wildcard(*), `type(expr)` → that filter
 * type, anything else (`web01`, `a|b`) → literal_or.
 */
import type { SubQuery, TagFilter } from './dashboard-state.js';

export interface ApiFilter {
  readonly type: string;
  readonly tagk: string;
  readonly filter: string;
  readonly groupBy: boolean;
}

export interface ApiSubQuery {
  readonly aggregator: string;
  readonly metric: string;
  readonly filters: readonly ApiFilter[];
  readonly downsample?: string;
  readonly rate?: boolean;
  readonly rateOptions?: { counter: boolean; counterMax?: number; resetValue?: number; dropResets?: boolean };
}

export interface ApiQueryBody {
  readonly start: number;
  readonly end: number;
  readonly msResolution: true;
  readonly showQuery: true;
  readonly queries: readonly ApiSubQuery[];
}

export function toApiFilter(t: TagFilter): ApiFilter {
  const v = t.value.trim();
  const typed = /^([a-z_]+)\((.*)\)$/s.exec(v);
  if (v === '' || v === '*') return { type: 'wildcard', tagk: t.key, filter: '*', groupBy: t.groupBy };
  if (typed !== null) return { type: typed[1]!, tagk: t.key, filter: typed[2]!, groupBy: t.groupBy };
  return { type: 'literal_or', tagk: t.key, filter: v, groupBy: t.groupBy };
}

export function toApiSubQuery(q: SubQuery): ApiSubQuery {
  const out: { -readonly [K in keyof ApiSubQuery]: ApiSubQuery[K] } = {
    aggregator: q.aggregator,
    metric: q.metric.trim(),
    filters: q.tags.filter((t) => t.key.trim() !== '').map(toApiFilter),
  };
  if (q.downsample !== undefined) {
    const d = q.downsample;
    out.downsample = `${d.interval}-${d.fn}${d.fill === 'none' || d.fill === '' ? '' : `-${d.fill}`}`;
  }
  if (q.rate !== undefined) {
    out.rate = true;
    const r = q.rate;
    out.rateOptions = {
      counter: r.counter,
      ...(r.counterMax === undefined ? {} : { counterMax: r.counterMax }),
      ...(r.resetValue === undefined ? {} : { resetValue: r.resetValue }),
      ...(r.dropResets ? { dropResets: true } : {}),
    };
  }
  return out;
}

/** The request body for a panel, or undefined when no sub-query names a metric yet. */
export function buildQueryBody(queries: readonly SubQuery[], startMs: number, endMs: number): ApiQueryBody | undefined {
  const qs = queries.filter((q) => q.metric.trim() !== '').map(toApiSubQuery);
  if (qs.length === 0) return undefined;
  return { start: startMs, end: endMs, msResolution: true, showQuery: true, queries: qs };
}

/** The sub-queries buildQueryBody sent, by position in the request: index i → queries[result[i]]. */
export function sentQueryIndexes(queries: readonly SubQuery[]): number[] {
  const out: number[] = [];
  queries.forEach((q, i) => {
    if (q.metric.trim() !== '') out.push(i);
  });
  return out;
}
