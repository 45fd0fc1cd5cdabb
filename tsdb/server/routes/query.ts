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
 * query-answer.ts runs the parsed query and formats the answer; plain POSTs are answered
 * by the fast lane (../query-lane.ts) before they reach fastify, through the same code.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isTsdbError } from '../../errors.js';
import { AGGREGATOR_NAMES } from '../../query/pipeline.js';
import { parseQueryJson, parseQueryString } from '../../query/query-spec.js';
import type { TsQuery } from '../../query/query-spec.js';
import { FILTER_TYPES } from '../../query/filter-types.js';
import type { Tsdb } from '../../tsdb.js';
import { MSGPACK_TYPE, RawJson } from '../body-parsers.js';
import { ensureWriteRole } from '../auth.js';
import { sendError } from '../http-errors.js';
import { answerQuery, connectionSignal } from '../query-answer.js';
import type { AnswerShape } from '../query-answer.js';

/**
 * A signal that fires when the request's client goes away: per connection
 * (query-answer.ts connectionSignal). A request without a real socket (`inject`) gets its
 * own controller, fired by the response's 'close' before the answer was sent.
 */
function clientGone(req: FastifyRequest, reply: FastifyReply): AbortSignal {
  const perConnection = connectionSignal(req.raw.socket);
  if (perConnection !== undefined) return perConnection;
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
    const shape: AnswerShape = String(req.headers.accept ?? '').includes(MSGPACK_TYPE) ? 'msgpack'
      : (req.query as { format?: string }).format === 'columnar' ? 'columnar' : 'json';
    const r = await answerQuery(tsdb, q, shape, clientGone(req, reply));
    reply.code(r.status);
    if (r.type !== undefined) reply.type(r.type);
    return reply.send(r.body);
  };
  for (const v of ['', '/v1']) {
    app.route({ method: ['GET', 'POST', 'DELETE'], url: `/api${v}/query`, handler });
    app.route({ method: ['GET', 'POST'], url: `/api${v}/aggregators`, handler: async () => [...AGGREGATOR_NAMES].sort() });
    app.route({ method: ['GET', 'POST'], url: `/api${v}/config/filters`, handler: async () => FILTER_TYPES });
  }
}

