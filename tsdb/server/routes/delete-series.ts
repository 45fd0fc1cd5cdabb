/**
 * POST (or DELETE) /api/admin/tsdb/delete_series?match[]=M&match[]=… (also under
 * /api/v1/): deletes every point of the series each match names, their series-index rows
 * and, for a bare metric, the metric's name and UID (tsdb/write/delete-series.ts). The
 * shape of VictoriaMetrics' and Prometheus' admin delete, with OpenTSDB's
 * `metric{tag=filter,…}` matches; `match` works too, and a JSON body
 * `{"match": ["…"]}`. Admin role (auth.ts); off unless tsd.http.query.allow_delete, as
 * every delete. Every match is checked (syntax, known metric) before anything is deleted.
 * 200 with what each match deleted; errors: tsdb/ERRORS.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isTsdbError } from '../../errors.js';
import { checkMatch, deleteSeries } from '../../write/delete-series.js';
import type { SeriesDeleted } from '../../write/delete-series.js';
import { parseMetricWithFilters } from '../../query/query-string.js';
import type { Tsdb } from '../../tsdb.js';
import { RawJson } from '../body-parsers.js';
import { sendError } from '../http-errors.js';

/** The matches of a request: match[] / match in the query string, or a JSON body's "match". */
function matchesOf(req: FastifyRequest): string[] {
  const q = req.query as Record<string, string | string[] | undefined>;
  const out: string[] = [];
  for (const name of ['match[]', 'match']) {
    const v = q[name];
    if (v !== undefined) out.push(...(Array.isArray(v) ? v : [v]));
  }
  let body: unknown = req.body instanceof RawJson ? JSON.parse(Buffer.from(req.body.bytes).toString('utf8')) : req.body;
  if (typeof body === 'string' && body.trim() !== '') body = JSON.parse(body);
  if (body !== undefined && body !== null && typeof body === 'object') {
    const m = (body as { match?: unknown }).match;
    if (typeof m === 'string') out.push(m);
    else if (Array.isArray(m) && m.every((x) => typeof x === 'string')) out.push(...(m as string[]));
    else if (m !== undefined) throw new SyntaxError('"match" must be a string or an array of strings');
  }
  return out;
}

export function registerDeleteSeriesRoutes(app: FastifyInstance, tsdb: Tsdb): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    if (!tsdb.config.queryAllowDelete) return sendError(reply, 400, 'Deleting data is not enabled (tsd.http.query.allow_delete)');
    let matches: string[];
    try {
      matches = matchesOf(req);
    } catch (err) {
      return sendError(reply, 400, `Unable to parse the request body: ${(err as Error).message}`);
    }
    if (matches.length === 0) return sendError(reply, 400, 'Missing match: give match[]=metric or match[]=metric{tag=filter,...}');
    try {
      for (const m of matches) checkMatch(m);
      // Every metric must exist before anything goes: a typo deletes nothing.
      for (const m of matches) await tsdb.metrics.requireId(parseMetricWithFilters(m.trim()).metric);
    } catch (err) {
      if (isTsdbError(err, 'TSDB_NO_SUCH_NAME')) return sendError(reply, 404, err.message);
      if (isTsdbError(err)) return sendError(reply, 400, err.message);
      throw err;
    }
    const deleted: SeriesDeleted[] = [];
    for (const m of matches) {
      try {
        deleted.push(await deleteSeries(tsdb, m));
      } catch (err) {
        // An earlier match of the same request deleted the metric: nothing left to delete.
        if (isTsdbError(err, 'TSDB_NO_SUCH_NAME') && deleted.some((d) => d.metricDeleted)) continue;
        throw err;
      }
    }
    return { deleted };
  };
  for (const v of ['', '/v1']) {
    app.route({ method: ['POST', 'DELETE'], url: `/api${v}/admin/tsdb/delete_series`, config: { role: 'admin' }, handler });
  }
}
