/**
 * What a parsed /api/query gets, as status, content type and body: run by the fastify
 * route (routes/query.ts) and by the query fast lane (query-lane.ts), so both answer
 * every query, and fail every one, byte for byte alike.
 *
 *   200  OpenTSDB's JSON (query/format-json.ts; a big answer formatted on the decode
 *        workers too: query/format-parallel.ts), or the columnar shape
 *        (query/format-columnar.ts) as msgpack or JSON
 *   400  a delete query while tsd.http.query.allow_delete is off
 *   404  an unknown metric or tag key (OpenTSDB's "No such name for …")
 *   413  more series or points than the configured limits, or longer than tsd.query.timeout
 *   499  the client went away (empty body)
 * Any other error is thrown, for the caller's error reply (http-errors.ts errorReplyOf).
 */
import { Socket } from 'node:net';
import { pack } from 'msgpackr';
import { isTsdbError } from '../errors.js';
import { executeQuery } from '../query/execute.js';
import { toColumnar } from '../query/format-columnar.js';
import { formatQueryResultsParallel } from '../query/format-parallel.js';
import type { TsQuery } from '../query/query-spec.js';
import type { Tsdb } from '../tsdb.js';
import { MSGPACK_TYPE } from './body-parsers.js';
import { JSON_TYPE, errorBody } from './http-errors.js';


export interface QueryReply {
  readonly status: number;
  /** Content type; absent without a body. */
  readonly type?: string;
  readonly body?: Buffer | string;
}

/** The answer's shape: OpenTSDB's JSON, or the columnar one in msgpack or JSON. */
export type AnswerShape = 'json' | 'msgpack' | 'columnar';

/** An error reply in OpenTSDB's body shape. */
export function errorReply(status: number, message: string, details?: string): QueryReply {
  return { status, type: JSON_TYPE, body: JSON.stringify(errorBody(status, message, details)) };
}

/** Runs `q` and formats its answer in `shape`; `signal` fires when the client goes away. */
export async function answerQuery(tsdb: Tsdb, q: TsQuery, shape: AnswerShape, signal: AbortSignal): Promise<QueryReply> {
  if (q.delete && !tsdb.config.queryAllowDelete) {
    return errorReply(400, 'Deleting data is not enabled (tsd.http.query.allow_delete)');
  }
  try {
    const started = performance.now();
    const run = await executeQuery(tsdb, q, { maxSeries: tsdb.config.queryMaxSeries, maxPoints: tsdb.config.queryMaxPoints, timeoutMs: tsdb.config.queryTimeoutMs }, signal);
    if (shape === 'msgpack') return { status: 200, type: MSGPACK_TYPE, body: pack(toColumnar(run.series, q.msResolution)) };
    if (shape === 'columnar') return { status: 200, type: JSON_TYPE, body: JSON.stringify(toColumnar(run.series, q.msResolution)) };
    const summary = q.showSummary
      ? { datapoints: run.stats.points, rowsScanned: run.stats.rows, saltScanners: run.stats.buckets, hourSummaries: run.stats.summaries, queryTimeMs: performance.now() - started }
      : undefined;
    const body = await formatQueryResultsParallel(run.series, { arrays: q.arrays, msResolution: q.msResolution }, summary, () => tsdb.queryDecodePool());
    return { status: 200, type: JSON_TYPE, body };
  } catch (err) {
    if (isTsdbError(err, 'TSDB_NO_SUCH_NAME')) return errorReply(404, err.message);
    if (isTsdbError(err, 'TSDB_TOO_LARGE')) return errorReply(413, err.message);
    if (signal.aborted) return { status: 499 };
    throw err;
  }
}

/** One abort per connection, fired when it closes (see connectionSignal). */
const connectionAborts = new WeakMap<Socket, AbortController>();

/**
 * A signal that fires when the connection closes: its 'close' ends every request on it,
 * and a kept-alive connection serves many queries with one controller (reading an
 * AbortController's `signal` costs ~7 µs in Node 20, ~2% of a small query's CPU).
 * Undefined for a request without a real socket (fastify's `inject`).
 */
export function connectionSignal(socket: unknown): AbortSignal | undefined {
  if (!(socket instanceof Socket)) return undefined;
  let ac = connectionAborts.get(socket);
  if (ac === undefined) {
    const c = new AbortController();
    connectionAborts.set(socket, (ac = c));
    if (socket.destroyed) c.abort(new Error('client went away'));
    else socket.once('close', () => c.abort(new Error('client went away')));
  }
  return ac.signal;
}
