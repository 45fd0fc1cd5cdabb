/**
 * /api/uid/assign, /api/uid/uidmeta (read) and /api/uid/rename, as OpenTSDB answers them.
 *
 *   assign  GET ?metric=a,b&tagk=..&tagv=..  or POST {"metric":[..],"tagk":[..],"tagv":[..]}
 *           → {"metric":{"a":"000001"},"metric_errors":{"b":"Name already exists with UID: 000002"},…}
 *             200 when every name was assigned, 400 when any failed.
 *   uidmeta GET ?uid=<hex>&type=metric|tagk|tagv → {uid,type,name,description,notes,created,custom,displayName}
 *   rename  GET|POST metric=old&name=new (or tagk/tagv) → {"result":"true"} or 400 {"result":"false","error":…}
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { fromHex } from '../../../core/api/bytes.js';
import { isTsdbError } from '../../errors.js';
import type { Tsdb } from '../../tsdb.js';
import { UID_KINDS } from '../../uid/uid-kind.js';
import type { UidKind } from '../../uid/uid-kind.js';
import { idKey } from '../../uid/uid-table.js';
import { checkName } from '../../write/data-point.js';
import { jsonBody } from '../body-parsers.js';
import { sendError } from '../http-errors.js';

type Params = Record<string, unknown>;

export function registerUidRoutes(app: FastifyInstance, tsdb: Tsdb): void {
  const params = (req: { method: string; query: unknown; body: unknown }): Params =>
    (req.method === 'GET' ? req.query : jsonBody(req.body) ?? {}) as Params;

  const assign = async (req: { method: string; query: unknown; body: unknown }, reply: FastifyReply): Promise<unknown> => {
    const p = params(req);
    const out: Record<string, Record<string, string>> = {};
    let failed = false;
    let any = false;
    for (const kind of UID_KINDS) {
      const raw = p[kind];
      if (raw === undefined) continue;
      const names = Array.isArray(raw) ? raw.map(String) : String(raw).split(',').filter((s) => s !== '');
      const ok: Record<string, string> = {};
      const errors: Record<string, string> = {};
      for (const name of names) {
        any = true;
        try {
          checkName(kind === 'metric' ? 'metric name' : kind === 'tagk' ? 'tag name' : 'tag value', name, tsdb.config.allowSpecialChars);
          const existing = await tsdb.uidTable(kind).getId(name);
          if (existing !== undefined) {
            errors[name] = `Name already exists with UID: ${idKey(existing)}`;
            continue;
          }
          ok[name] = idKey(await tsdb.uidTable(kind).getOrCreateId(name));
        } catch (err) {
          if (!isTsdbError(err)) throw err;
          errors[name] = err.message;
        }
      }
      out[kind] = ok;
      if (Object.keys(errors).length > 0) {
        out[`${kind}_errors`] = errors;
        failed = true;
      }
    }
    if (!any) return sendError(reply, 400, 'Missing values to assign UIDs');
    return reply.code(failed ? 400 : 200).send(out);
  };

  const uidmeta = async (req: { method: string; query: unknown; body: unknown }, reply: FastifyReply): Promise<unknown> => {
    const p = params(req);
    const kind = parseKind(p.type);
    if (kind === undefined) return sendError(reply, 400, 'Missing or invalid parameter <code>type</code>');
    if (typeof p.uid !== 'string' || !/^[0-9A-Fa-f]+$/.test(p.uid) || p.uid.length !== tsdb.uidTable(kind).width * 2) {
      return sendError(reply, 400, 'Missing or invalid parameter <code>uid</code>');
    }
    const name = await tsdb.uidTable(kind).getName(fromHex(p.uid));
    if (name === undefined) return sendError(reply, 404, `Could not find the requested UID: ${p.uid.toUpperCase()}`);
    return { uid: p.uid.toUpperCase(), type: kind === 'metric' ? 'METRIC' : kind.toUpperCase(), name, description: '', notes: '', created: 0, custom: null, displayName: '' };
  };

  const rename = async (req: { method: string; query: unknown; body: unknown }, reply: FastifyReply): Promise<unknown> => {
    const p = params(req);
    const kind = UID_KINDS.find((k) => typeof p[k] === 'string');
    const to = p.name;
    if (kind === undefined || typeof to !== 'string' || to === '') {
      return reply.code(400).send({ result: 'false', error: 'Missing parameter: metric, tagk or tagv, and name' });
    }
    try {
      checkName('name', to, tsdb.config.allowSpecialChars);
      await tsdb.renameUid(kind, String(p[kind]), to);
      return { result: 'true' };
    } catch (err) {
      if (!isTsdbError(err)) throw err;
      return reply.code(400).send({ result: 'false', error: err.message });
    }
  };

  for (const v of ['', '/v1']) {
    app.route({ method: ['GET', 'POST'], url: `/api${v}/uid/assign`, config: { role: 'write' }, handler: assign });
    app.route({ method: ['GET'], url: `/api${v}/uid/uidmeta`, config: { role: 'read' }, handler: uidmeta });
    app.route({ method: ['GET', 'POST'], url: `/api${v}/uid/rename`, config: { role: 'write' }, handler: rename });
  }
}

function parseKind(v: unknown): UidKind | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.toLowerCase();
  return s === 'metric' || s === 'metrics' ? 'metric' : s === 'tagk' || s === 'tagv' ? s : undefined;
}
