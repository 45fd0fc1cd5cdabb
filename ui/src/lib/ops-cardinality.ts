/**
 * The body of GET /api/horae/cardinality as the operator page reads it (the server's
 * tsdb/catalog/cardinality.ts; documented in tsdb/OPERATOR.md "Cardinality"), and the fetch
 * that gets it. Restated here: the UI talks to the server over HTTP only.
 */

export interface OpsCardinalityEntry {
  readonly name: string;
  readonly series: number;
}

export interface OpsCardinality {
  readonly timeMs: number;
  readonly countedMs: number;
  readonly countTookMs: number;
  readonly series: number;
  readonly metricCount: number;
  readonly tagKeyCount: number;
  readonly metrics: readonly OpsCardinalityEntry[];
  readonly tagKeys: readonly OpsCardinalityEntry[];
  readonly newSeries: { readonly lastHour: number; readonly lastDay: number; readonly perMinute: readonly number[] };
  readonly refused: Readonly<Record<string, number>>;
}

export const CARDINALITY_PATH = '/api/horae/cardinality';

/** GETs the `top` largest metrics and tag keys; rejects with the status and body text when refused. */
export async function fetchCardinality(top: number, signal?: AbortSignal): Promise<OpsCardinality> {
  const url = `${CARDINALITY_PATH}?top=${top}`;
  const res = await fetch(url, { headers: { accept: 'application/json' }, ...(signal === undefined ? {} : { signal }) });
  if (!res.ok) throw new Error(`${CARDINALITY_PATH}: HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return (await res.json()) as OpsCardinality;
}
