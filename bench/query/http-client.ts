/**
 * The query benchmark's HTTP client: node:http on a keep-alive Agent (one per server), a
 * timeout on every request, the time from sending the request to the last byte of the body
 * (client side; the body is not parsed inside the timing), and a closed-loop load of N
 * requests in flight for a fixed time (`loadFor`), as wrk would do with N connections.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface HttpReq {
  readonly method: 'GET' | 'POST';
  /** Path and query string. */
  readonly path: string;
  /** JSON text of a POST body. */
  readonly body?: string;
}

export interface HttpRes {
  readonly status: number;
  readonly body: Buffer;
  /** Request written → last byte of the body received. */
  readonly ms: number;
}

export class HttpClient {
  readonly agent: http.Agent;

  constructor(readonly host: string, readonly port: number, sockets = 16) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  request(req: HttpReq, timeoutMs = 60_000): Promise<HttpRes> {
    return new Promise((resolve, reject) => {
      const body = req.body === undefined ? undefined : Buffer.from(req.body);
      const headers: Record<string, string | number> = { accept: 'application/json' };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = body.length;
      }
      const t0 = performance.now();
      const r = http.request({ host: this.host, port: this.port, method: req.method, path: req.path, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), ms: performance.now() - t0 }));
        res.on('error', reject);
      });
      r.setTimeout(timeoutMs, () => r.destroy(new Error(`${req.method} ${req.path.slice(0, 80)}: no answer within ${timeoutMs / 1000} s`)));
      r.on('error', reject);
      r.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface LoadResult {
  readonly concurrency: number;
  readonly seconds: number;
  readonly requests: number;
  readonly requestsPerSec: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export function percentileOf(sorted: readonly number[] | Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * `concurrency` loops, each sending its next request when the previous answer is complete,
 * for `seconds`; requests started before the deadline are waited for and counted (the
 * elapsed time runs to the last answer). `reqOf(i)` gives the i-th request. A non-200 answer
 * or a failure counts as an error (and ends nothing).
 */
export async function loadFor(client: HttpClient, concurrency: number, seconds: number, reqOf: (i: number) => HttpReq): Promise<LoadResult> {
  const lat: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const i = next++;
      try {
        const r = await client.request(reqOf(i), 30_000);
        if (r.status === 200) lat.push(r.ms);
        else {
          errors++;
          firstError ??= `HTTP ${r.status}: ${r.body.toString('utf8', 0, 200)}`;
        }
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - t0) / 1000;
  const sorted = lat.sort((a, b) => a - b);
  return {
    concurrency,
    seconds: elapsed,
    requests: sorted.length,
    requestsPerSec: sorted.length / elapsed,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    p50Ms: percentileOf(sorted, 0.5),
    p90Ms: percentileOf(sorted, 0.9),
    p99Ms: percentileOf(sorted, 0.99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
  };
}
