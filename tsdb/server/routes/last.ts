/**
 * /api/query/last: the newest point of each series asked for.
 *
 *   GET  ?timeseries=<metric>{k=v,…}  (repeatable)  &tsuids=<hex>[,<hex>]  &resolve  &back_scan=<hours>
 *   POST {"queries":[{"metric":…,"tags":{…}} | {"tsuids":[…]}], "resolveNames":bool, "backScan":int}
 *   → [{"metric"?,"tags"?,"timestamp":<ms>,"value":"<string>","tsuid":"<hex>"}]
 *
 * A metric+tags query matches every series of the metric whose tags include the given ones
 * (the series index lists them); series with no point are left out. Without a back-scan
 * the newest point is found however old it is (query/last-point.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { fromHex } from '../../../core/api/bytes.js';
import { TsdbError } from '../../errors.js';
import { javaDouble } from '../../query/format-json.js';
import { lastPoints } from '../../query/last-point.js';
import { tsuidHex } from '../../query/scanner.js';
import type { Tsdb } from '../../tsdb.js';
import { jsonBody } from '../body-parsers.js';
import { sendError } from '../http-errors.js';
import { parseLookupQuery, seriesNamer } from './lookup.js';
import type { SeriesNamer } from './lookup.js';

interface LastQuery {
  readonly metric?: string;
  readonly tags?: Readonly<Record<string, string>>;
  readonly tsuids?: readonly string[];
}

export function registerLastRoutes(app: FastifyInstance, tsdb: Tsdb): void {
  const handler = async (req: { method: string; query: unknown; body: unknown }, reply: FastifyReply): Promise<unknown> => {
    let queries: LastQuery[] = [];
    let resolve = false;
    let backScan = 0;
    if (req.method === 'POST') {
      const b = jsonBody(req.body) as { queries?: unknown; resolveNames?: unknown; backScan?: unknown } | undefined;
      if (b === undefined || b === null || !Array.isArray(b.queries)) return sendError(reply, 400, 'Missing sub queries');
      queries = b.queries as LastQuery[];
      resolve = b.resolveNames === true;
      backScan = typeof b.backScan === 'number' ? b.backScan : 0;
    } else {
      const q = req.query as { timeseries?: string | string[]; tsuids?: string; resolve?: string; back_scan?: string };
      for (const ts of q.timeseries === undefined ? [] : Array.isArray(q.timeseries) ? q.timeseries : [q.timeseries]) {
        const { metric, tags } = parseLookupQuery(ts);
        queries.push({ metric, tags: Object.fromEntries(tags.map((t) => [t.key, t.value])) });
      }
      if (q.tsuids !== undefined) queries.push({ tsuids: q.tsuids.split(',').filter((s) => s !== '') });
      resolve = q.resolve !== undefined && q.resolve !== 'false';
      backScan = q.back_scan === undefined ? 0 : Number(q.back_scan);
      if (queries.length === 0) return sendError(reply, 400, 'Missing parameter <code>timeseries</code> or <code>tsuids</code>');
    }
    if (!Number.isInteger(backScan) || backScan < 0) return sendError(reply, 400, `Invalid back scan: ${String(backScan)}`);
    const now = tsdb.now();
    const describe = seriesNamer(tsdb);
    const { tsuids, hex } = await seriesOf(tsdb, queries, describe);
    const points = await lastPoints(tsdb, tsuids, backScan, now);
    // The JSON written here, as JSON.stringify would write the objects
    // {timestamp, value, tsuid[, metric, tags]}: a series' tags text is kept with its names.
    let body = '[';
    for (let k = 0; k < tsuids.length; k++) {
      const tsuid = tsuids[k]!;
      const p = points[k];
      if (p === undefined) continue;
      if (body.length > 1) body += ',';
      body += `{"timestamp":${p.ts},"value":${JSON.stringify(p.isInt ? String(p.big ?? p.value) : javaDouble(p.value))},"tsuid":"${hex[k] ?? tsuidHex(tsuid)}"`;
      if (resolve) {
        const named = describe(tsuid);
        const d = named instanceof Promise ? await named : named;
        if (d !== undefined) body += `,"metric":${JSON.stringify(d.metric)},"tags":${tagsJson(d.tags)}`;
      }
      body += '}';
    }
    return reply.type('application/json; charset=utf-8').send(`${body}]`);
  };
  for (const v of ['', '/v1']) app.route({ method: ['GET', 'POST'], url: `/api${v}/query/last`, config: { role: 'read' }, handler });
}

/**
 * TSUIDs of the queries: given directly, or every indexed series of the metric with those
 * tags; with each one's upper-case hex when its names were looked up (undefined otherwise).
 */
async function seriesOf(tsdb: Tsdb, queries: readonly LastQuery[], describe: SeriesNamer): Promise<{ tsuids: Uint8Array[]; hex: Array<string | undefined> }> {
  const out: Uint8Array[] = [];
  const hex: Array<string | undefined> = [];
  for (const q of queries) {
    if (Array.isArray(q.tsuids)) {
      for (const h of q.tsuids) {
        if (!/^([0-9A-Fa-f]{2})+$/.test(h)) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid TSUID: ${h}`);
        out.push(fromHex(h));
        hex.push(undefined);
      }
      continue;
    }
    if (typeof q.metric !== 'string') throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'Missing metric or tsuids');
    const id = await tsdb.metrics.getId(q.metric);
    if (id === undefined) throw new TsdbError('TSDB_NO_SUCH_NAME', `No such name for 'metrics': '${q.metric}'`);
    const want = Object.entries(q.tags ?? {});
    for (const tsuid of await tsdb.seriesOfMetric(id)) {
      const named = describe(tsuid);
      const d = named instanceof Promise ? await named : named;
      // `k=*`: the series has the tag key, with any value (as the lookup API matches).
      if (d !== undefined && want.every(([k, v]) => d.tags[k] !== undefined && (v === '*' || d.tags[k] === v))) {
        out.push(tsuid);
        hex.push(d.tsuid);
      }
    }
  }
  return { tsuids: out, hex };
}

/** JSON text of tag maps, kept while the map is (series-names.ts keeps a series' map across requests). */
const tagsText = new WeakMap<object, string>();

function tagsJson(tags: Readonly<Record<string, string>>): string {
  let t = tagsText.get(tags);
  if (t === undefined) tagsText.set(tags, (t = JSON.stringify(tags)));
  return t;
}
