/**
 * /api/annotation (alias /api/annotations) and /api/annotation/bulk, as OpenTSDB serves
 * them:
 *
 *   GET    ?start_time=&tsuid=      → the annotation, 404 "Unable to locate annotation in storage"
 *   POST   {annotation}             → merged with the stored one (304 when nothing changed)
 *   PUT    {annotation}             → replaces it
 *   DELETE ?start_time=&tsuid= or a body → 204
 *   POST|PUT /bulk [annotations]    → the stored array
 *   DELETE /bulk {"tsuids":[…],"global":bool,"startTime":…,"endTime":…} → that object + "totalDeleted"
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { TsdbError } from '../../errors.js';
import {
  annotationOf, annotationQualifier, annotationRow, annotationsInCells, deleteAnnotation, readAnnotation, startMsOf, writeAnnotation,
} from '../../meta/annotations.js';
import type { Annotation } from '../../meta/annotations.js';
import { DATA_FAMILY } from '../../tables.js';
import type { Tsdb } from '../../tsdb.js';
import { jsonBody } from '../body-parsers.js';
import { sendError } from '../http-errors.js';

type Req = { method: string; query: unknown; body: unknown };

export function registerAnnotationRoutes(app: FastifyInstance, tsdb: Tsdb): void {
  const single = async (req: Req, reply: FastifyReply): Promise<unknown> => {
    const q = req.query as Record<string, string | undefined>;
    const body = req.body === undefined ? undefined : jsonBody(req.body);
    const source = (body !== undefined && body !== null && typeof body === 'object' ? body : q) as Record<string, unknown>;
    if (req.method === 'GET' || req.method === 'DELETE') {
      const a = annotationOf(source);
      const startMs = startMsOf(a);
      if (req.method === 'GET') {
        const found = await readAnnotation(tsdb, a.tsuid, startMs);
        return found ?? sendError(reply, 404, 'Unable to locate annotation in storage');
      }
      await deleteAnnotation(tsdb, a.tsuid, startMs);
      return reply.code(204).send();
    }
    const incoming = annotationOf(source);
    const stored = await store(tsdb, incoming, req.method === 'POST');
    if (stored === undefined) return reply.code(304).send();
    return stored;
  };

  const bulk = async (req: Req, reply: FastifyReply): Promise<unknown> => {
    const body = jsonBody(req.body);
    if (req.method === 'DELETE') {
      const d = (body ?? {}) as { tsuids?: unknown; global?: unknown; startTime?: unknown; endTime?: unknown };
      const startMs = timeMs(d.startTime, 'startTime');
      const endMs = d.endTime === undefined ? tsdb.now() : timeMs(d.endTime, 'endTime');
      const tsuids = Array.isArray(d.tsuids) ? d.tsuids.map(String) : [];
      let total = 0;
      for (const t of tsuids) total += await deleteRange(tsdb, t, startMs, endMs);
      if (d.global === true) total += await deleteRange(tsdb, undefined, startMs, endMs);
      return { ...d, totalDeleted: total };
    }
    if (!Array.isArray(body)) return sendError(reply, 400, 'Expected an array of annotations');
    const out: Annotation[] = [];
    for (const o of body) {
      const a = annotationOf(o);
      out.push((await store(tsdb, a, req.method === 'POST')) ?? a);
    }
    return out;
  };

  for (const v of ['', '/v1']) {
    for (const name of ['annotation', 'annotations']) {
      app.route({ method: 'GET', url: `/api${v}/${name}`, config: { role: 'read' }, handler: single });
      app.route({ method: ['POST', 'PUT', 'DELETE'], url: `/api${v}/${name}`, config: { role: 'write' }, handler: single });
      app.route({ method: ['POST', 'PUT', 'DELETE'], url: `/api${v}/${name}/bulk`, config: { role: 'write' }, handler: bulk });
    }
  }
}

/** Writes `a` (merged into the stored one when `merge`); undefined when a merge changed nothing. */
async function store(tsdb: Tsdb, a: Annotation, merge: boolean): Promise<Annotation | undefined> {
  let next = a;
  if (merge) {
    const old = await readAnnotation(tsdb, a.tsuid, startMsOf(a));
    if (old !== undefined) {
      next = { ...old, ...a };
      if (JSON.stringify(next) === JSON.stringify(old)) return undefined;
    }
  }
  await writeAnnotation(tsdb, next);
  return next;
}

/** Deletes the annotations of one series (or the global ones) starting in [startMs, endMs]. */
async function deleteRange(tsdb: Tsdb, tsuid: string | undefined, startMs: number, endMs: number): Promise<number> {
  let n = 0;
  for (let h = Math.floor(startMs / 3_600_000) * 3_600_000; h <= endMs; h += 3_600_000) {
    const key = annotationRow(tsdb, tsuid, h);
    const [row] = await tsdb.data.get([key], { families: [DATA_FAMILY] });
    if (row === undefined) continue;
    const found = annotationsInCells(row.cells, startMs, endMs);
    if (found.length === 0) continue;
    await tsdb.data.mutate([{
      key,
      mutations: found.map((a) => ({ type: 'deleteCell' as const, family: DATA_FAMILY, qualifier: annotationQualifier(startMsOf(a)) })),
    }], { durability: 'sync' });
    n += found.length;
  }
  return n;
}

function timeMs(v: unknown, what: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Missing or invalid ${what}`);
  return n > 4_294_967_295 ? n : n * 1000;
}
