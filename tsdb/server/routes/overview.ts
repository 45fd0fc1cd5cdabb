/**
 * GET /api/horae/overview: what the operator page (ui/src/pages/operator) draws — the store
 * as it runs, per table and region, plus the server's counters and their recent rates
 * (overview/overview-snapshot.ts has the shape; tsdb/OPERATOR.md documents it).
 *
 * Besides the route this installs, on the root app:
 * - a query counter: an onResponse hook counting /api/query, /api/query/last (and their
 *   /api/v1 forms) and those answered with a status >= 400;
 * - the rate history: every `sampleIntervalMs` (default 5 s) the cumulative counters are
 *   sampled into a ring of `historySamples` rates (default 180: the last 15 minutes); the
 *   store-wide cells written and rows read are summed across splits (region-totals.ts). A
 *   request that finds the last sample older than the interval samples first, so the
 *   history does not depend on timer punctuality (and tests drive it with a fake clock).
 *   The timer is unref'd and stopped when the app closes.
 */
import type { FastifyInstance } from 'fastify';
import type { Tsdb } from '../../tsdb.js';
import type { ServerRegistry } from '../../meta/servers.js';
import { RATE_NAMES, buildOverview, listRegions } from '../overview/overview-snapshot.js';
import type { OverviewCounters, RateName } from '../overview/overview-snapshot.js';
import { RateHistory } from '../overview/rate-history.js';
import { RegionTotals } from '../overview/region-totals.js';

export interface OverviewRouteOptions {
  /** Sampling period of the rate history in ms (default 5000). */
  readonly sampleIntervalMs?: number;
  /** Samples kept (default 180: 15 minutes at 5 s). */
  readonly historySamples?: number;
  /** The servers sharing the store (meta/servers.ts); absent: none listed. */
  readonly servers?: ServerRegistry;
}

const QUERY_ROUTE = /^\/api(\/v1)?\/query(\/last)?$/i;

export function registerOverviewRoutes(app: FastifyInstance, tsdb: Tsdb, opts: OverviewRouteOptions = {}): void {
  const intervalMs = opts.sampleIntervalMs ?? 5000;
  const history = new RateHistory<RateName>(RATE_NAMES, opts.historySamples ?? 180);
  const regionTotals = new RegionTotals();
  const startedMs = tsdb.now();
  let queries = 0;
  let queryErrors = 0;

  // NB: a callback hook, not an async one: it runs for every request (/api/put included)
  // and should cost no promise.
  app.addHook('onResponse', (req, reply, done) => {
    const url = req.routeOptions.url;
    if (url !== undefined && QUERY_ROUTE.test(url)) {
      queries++;
      if (reply.statusCode >= 400) queryErrors++;
    }
    done();
  });

  const counters = (): OverviewCounters => {
    const ing = tsdb.ingest.stats();
    return { pointsWritten: ing.pointsWritten, pointsRejected: ing.pointsRejected, seriesCreated: ing.seriesCreated, queries, queryErrors };
  };

  let sampling: Promise<void> | undefined;
  /** Samples when the last sample is at least one interval old; concurrent callers share one. */
  const sampleIfDue = (): Promise<void> => {
    const last = history.lastRecordMs;
    if (last !== undefined && tsdb.now() - last < intervalMs) return Promise.resolve();
    sampling ??= (async () => {
      const timeMs = tsdb.now();
      const totals = regionTotals.update(await listRegions(tsdb));
      const c = counters();
      history.record(timeMs, { points: c.pointsWritten, queries: c.queries, cellsWritten: totals.cellsWritten, rowsRead: totals.rowsRead });
    })().finally(() => {
      sampling = undefined;
    });
    return sampling;
  };

  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await sampleIfDue();
    // NB: a failed background sample is dropped on purpose: the next one (or the next
    // request, which reports the error) tries again, and the server must not die of it.
    timer = setInterval(() => void sampleIfDue().catch(() => undefined), intervalMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    if (timer !== undefined) clearInterval(timer);
  });

  const handler = async (): Promise<unknown> => {
    await sampleIfDue();
    return buildOverview({
      tsdb,
      tables: await listRegions(tsdb),
      counters: counters(),
      startedMs,
      history: { intervalMs, ...history.columns() },
      servers: opts.servers === undefined ? [] : await opts.servers.list(),
    });
  };
  for (const v of ['', '/v1']) app.route({ method: 'GET', url: `/api${v}/horae/overview`, config: { role: 'read' }, handler });
}
