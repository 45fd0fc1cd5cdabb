/**
 * GET /api/horae/cardinality?top=<n>: series per metric and per tag key (the `n` largest,
 * default 20, at most 1000) and new series per minute, for the operator page
 * (catalog/cardinality.ts has the shape and says where the figures come from; documented in
 * tsdb/OPERATOR.md). Role: read.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Cardinality } from '../../catalog/cardinality.js';
import { META_TABLE } from '../../meta/series-index.js';
import type { Tsdb } from '../../tsdb.js';
import { sendError } from '../http-errors.js';

const DEFAULT_TOP = 20;
const MAX_TOP = 1000;

export function registerCardinalityRoutes(app: FastifyInstance, tsdb: Tsdb, opts: { readonly refreshMs?: number } = {}): Cardinality {
  const c = tsdb.catalog;
  const cardinality = new Cardinality({
    index: () => tsdb.store.openTable(META_TABLE),
    widths: tsdb.widths,
    metrics: c.metrics,
    tagks: c.tagks,
    limiter: c.limiter,
    stamp: () => c.stamp(),
    now: tsdb.now,
    ...(opts.refreshMs === undefined ? {} : { refreshMs: opts.refreshMs }),
  });
  const handler = async (req: { query: unknown }, reply: FastifyReply): Promise<unknown> => {
    const q = req.query as { top?: string };
    const top = q.top === undefined ? DEFAULT_TOP : Number(q.top);
    if (!Number.isInteger(top) || top < 1 || top > MAX_TOP) return sendError(reply, 400, `Invalid top: ${String(q.top)} (an integer from 1 to ${MAX_TOP})`);
    return cardinality.report(top);
  };
  for (const v of ['', '/v1']) app.route({ method: 'GET', url: `/api${v}/horae/cardinality`, config: { role: 'read' }, handler });
  return cardinality;
}
