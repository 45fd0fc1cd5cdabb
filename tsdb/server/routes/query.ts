/**
 * GET|POST /api/query (and /api/v1/query), /api/aggregators, /api/config/filters.
 *
 *   GET  ?start=&end=&m=<agg>:[ds:][rate:]metric{…}&tsuid=…&arrays&ms&show_query…
 *   POST {"start":…,"end":…,"queries":[…],"msResolution":…,"showQuery":…}  (?arrays honoured)
 *     → OpenTSDB's JSON (query/format-json.ts; a big answer formatted on the decode workers
 *     too: query/format-parallel.ts); [] when nothing matches. With
 *     `Accept: application/x-msgpack` (msgpack) or `?format=columnar` (JSON): the columnar,
 *     uPlot-aligned shape of query/format-columnar.ts instead.
 *   400 bad query, 404 unknown metric or tag key (OpenTSDB's "No such name for …"),
 *   413 when the query would read more series or points than the configured limits, or
 *   runs longer than tsd.query.timeout.
 * A client that goes away aborts the scans (one abort per connection: clientGone below).
 */
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isTsdbError } from '../../errors.js';
import { executeQuery } from '../../query/execute.js';
import { pack } from 'msgpackr';
import { toColumnar } from '../../query/format-columnar.js';
import { formatQueryResultsParallel } from '../../query/format-parallel.js';
import { AGGREGATOR_NAMES } from '../../query/pipeline.js';
import { parseQueryJson, parseQueryString } from '../../query/query-spec.js';
import type { TsQuery } from '../../query/query-spec.js';
import { FILTER_TYPES } from '../../query/filter-types.js';
import type { Tsdb } from '../../tsdb.js';
import { MSGPACK_TYPE, RawJson } from '../body-parsers.js';
import { ensureWriteRole } from '../auth.js';
import { JSON_TYPE, sendError } from '../http-errors.js';

/** One abort per connection, fired when it closes (see clientGone). */
const connectionAborts = new WeakMap<Socket, AbortController>();

/**
 * A signal that fires when the request's client goes away. Per connection: the socket's
 * 'close' ends every request on it, and a kept-alive connection serves many queries with
 * one controller (reading an AbortController's `signal` costs ~7 µs in Node 20, ~2% of a
 * small query's CPU). A request without a real socket (`inject`) gets its own controller,
 * fired by the response's 'close' before the answer was sent.
 */
function clientGone(req: FastifyRequest, reply: FastifyReply): AbortSignal {
  const socket: unknown = req.raw.socket;
  if (socket instanceof Socket) {
    let ac = connectionAborts.get(socket);
    if (ac === undefined) {
      const c = new AbortController();
      connectionAborts.set(socket, (ac = c));
      if (socket.destroyed) c.abort(new Error('client went away'));
      else socket.once('close', () => c.abort(new Error('client went away')));
    }
    return ac.signal;
  }
  const abort = new AbortController();
  const onClose = (): void => {
    reply.raw.off('close', onClose);
    if (!reply.raw.writableEnded) abort.abort(new Error('client went away'));
  };
  // The response's 'close' (the connection went away, or the answer was sent): since
  // Node 16 a request's own 'close' fires as soon as its body has been read.
  reply.raw.on('close', onClose);
  return abort.signal;
}

export function registerQueryRoutes(app: FastifyInstance, tsdb: Tsdb): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const now = tsdb.now();
    let q: TsQuery;
    try {
      if (req.method === 'POST' || (req.method === 'DELETE' && req.body !== undefined && req.body !== null)) {
        const body = req.body instanceof RawJson ? req.body.bytes : req.body;
        if (body === undefined || body === null) return sendError(reply, 400, 'Missing request content');
        q = parseQueryJson(body, now, { queryString: req.query as Record<string, string> });
      } else {
        q = parseQueryString(req.query as Record<string, string | string[]>, now);
      }
    } catch (err) {
      if (isTsdbError(err)) return sendError(reply, 400, err.message);
      throw err;
    }
    if (req.method === 'DELETE') q = { ...q, delete: true };
    if (q.delete && !ensureWriteRole(req, reply)) return reply;
    if (q.delete && !tsdb.config.queryAllowDelete) {
      return sendError(reply, 400, 'Deleting data is not enabled (tsd.http.query.allow_delete)');
    }
    const signal = clientGone(req, reply);
    try {
      const started = performance.now();
      const run = await executeQuery(tsdb, q, { maxSeries: tsdb.config.queryMaxSeries, maxPoints: tsdb.config.queryMaxPoints, timeoutMs: tsdb.config.queryTimeoutMs }, signal);
      const summary = q.showSummary
        ? { datapoints: run.stats.points, rowsScanned: run.stats.rows, saltScanners: run.stats.buckets, hourSummaries: run.stats.summaries, queryTimeMs: performance.now() - started }
        : undefined;
      const accept = String(req.headers.accept ?? '');
      if (accept.includes(MSGPACK_TYPE)) {
        return reply.type(MSGPACK_TYPE).send(pack(toColumnar(run.series, q.msResolution)));
      }
      if ((req.query as { format?: string }).format === 'columnar') {
        return reply.type(JSON_TYPE).send(JSON.stringify(toColumnar(run.series, q.msResolution)));
      }
      const body = await formatQueryResultsParallel(run.series, { arrays: q.arrays, msResolution: q.msResolution }, summary, () => tsdb.queryDecodePool());
      return reply.type(JSON_TYPE).send(body);
    } catch (err) {
      if (isTsdbError(err, 'TSDB_NO_SUCH_NAME')) return sendError(reply, 404, err.message);
      if (isTsdbError(err, 'TSDB_TOO_LARGE')) return sendError(reply, 413, err.message);
      if (signal.aborted) return reply.code(499).send();
      throw err;
    }
  };
  for (const v of ['', '/v1']) {
    // A query reads; DELETE (and a body's "delete": true, checked by ensureWriteRole) writes.
    app.route({ method: ['GET', 'POST'], url: `/api${v}/query`, config: { role: 'read' }, handler });
    app.route({ method: 'DELETE', url: `/api${v}/query`, config: { role: 'write' }, handler });
    app.route({ method: ['GET', 'POST'], url: `/api${v}/aggregators`, config: { role: 'read' }, handler: async () => [...AGGREGATOR_NAMES].sort() });
    app.route({ method: ['GET', 'POST'], url: `/api${v}/config/filters`, config: { role: 'read' }, handler: async () => FILTER_TYPES });
  }
}

