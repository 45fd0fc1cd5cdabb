/**
 * The HTTP calls the dashboard makes, all cancellable. A failed call throws ApiError with
 * the server's own message (OpenTSDB's `{"error":{"code","message","details"}}` body), so
 * a panel can show exactly what the server said.
 */
import type { ApiQueryBody } from './query-request.js';
import { isColumnarResult } from './to-aligned.js';
import type { ColumnarResult } from './to-aligned.js';

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** The message of an error response: `error.message` (+ details), else the raw text. */
export function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; details?: unknown } };
    const m = body.error?.message;
    if (typeof m === 'string' && m !== '') {
      const d = body.error?.details;
      return typeof d === 'string' && d !== '' && d !== m ? `${m}: ${d}` : m;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const t = text.trim();
  return t === '' ? `HTTP ${status}` : `HTTP ${status}: ${t.slice(0, 500)}`;
}

async function getJson(url: string, init: RequestInit): Promise<unknown> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, errorMessage(res.status, text));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(res.status, `The server sent something that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** POST /api/query?format=columnar: every series of the panel on one time axis. */
export async function fetchColumnar(body: ApiQueryBody, signal: AbortSignal): Promise<ColumnarResult> {
  const r = await getJson('/api/query?format=columnar', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (!isColumnarResult(r)) throw new ApiError(200, 'The server answered /api/query without the columnar form');
  return r;
}

export type SuggestType = 'metrics' | 'tagk' | 'tagv';

/** /api/suggest; `metric` limits tag keys and values to that metric's series. */
export async function suggest(type: SuggestType, prefix: string, signal: AbortSignal, metric?: string, max = 25): Promise<string[]> {
  const p = new URLSearchParams({ type, q: prefix, max: String(max) });
  if (metric !== undefined && metric !== '') p.set('metric', metric);
  const r = await getJson(`/api/suggest?${p}`, { signal });
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : [];
}

/** Values of one tag key among a metric's series (/api/search/lookup), starting with `prefix`. */
export async function tagValues(metric: string, key: string, prefix: string, signal: AbortSignal, max = 25): Promise<string[]> {
  const p = new URLSearchParams({ m: `${metric}{${key}=*}`, limit: '10000' });
  const r = (await getJson(`/api/search/lookup?${p}`, { signal })) as { results?: { tags?: Record<string, string> }[] };
  const out = new Set<string>();
  for (const row of r.results ?? []) {
    const v = row.tags?.[key];
    if (v !== undefined && v.startsWith(prefix)) out.add(v);
  }
  return [...out].sort().slice(0, max);
}

/** /api/aggregators, sorted. */
export async function aggregators(signal?: AbortSignal): Promise<string[]> {
  const r = await getJson('/api/aggregators', signal === undefined ? {} : { signal });
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string').sort() : [];
}
