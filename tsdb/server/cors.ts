/**
 * CORS, off unless configured (tsd.http.request.cors_domains), as OpenTSDB does it: a
 * request whose Origin is allowed (`*` allows any) gets Access-Control-Allow-Origin set to
 * that origin plus the allowed methods and headers; a preflight OPTIONS gets 200 with an
 * empty body; a request from another origin gets 400 in OpenTSDB's error shape.
 */
import type { FastifyInstance } from 'fastify';
import type { TsdbConfig } from '../config.js';
import { sendError } from './http-errors.js';

export function installCors(app: FastifyInstance, config: TsdbConfig): void {
  const domains = config.corsDomains.split(',').map((d) => d.trim()).filter((d) => d !== '');
  if (domains.length === 0) return;
  const any = domains.includes('*');
  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    if (!any && !domains.includes(origin)) return sendError(reply, 400, `CORS domain not allowed: ${origin}`);
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-methods', 'GET, POST, PUT, DELETE');
    reply.header('access-control-allow-headers', config.corsHeaders);
    if (req.method === 'OPTIONS') return reply.code(200).send('');
    return undefined;
  });
  app.options('/*', { config: { role: 'open' } }, async (_req, reply) => reply.code(200).send(''));
}
