/**
 * Every HTTP error in OpenTSDB's body shape, in one place:
 *   {"error":{"code":<status>,"message":"…"[,"details":"…"]}}
 * TsdbErrors map through their code's status; fastify's own errors (body too large,
 * unsupported media type, bad JSON) keep their status with OpenTSDB's messages where
 * OpenTSDB has one; anything else is a 500 whose message names the cause.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isStoreError } from '../../core/api/errors.js';
import { isTsdbError } from '../errors.js';

export interface ErrorBody {
  readonly error: { readonly code: number; readonly message: string; readonly details?: string };
}

export function errorBody(code: number, message: string, details?: string): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

/** The content type of every JSON reply. */
export const JSON_TYPE = 'application/json; charset=utf-8';

export function sendError(reply: FastifyReply, code: number, message: string, details?: string): FastifyReply {
  if (code === 503) reply.header('retry-after', '1');
  return reply.code(code).type(JSON_TYPE).send(errorBody(code, message, details));
}

/** `/srv/horae/data/000023.sst` → `000023.sst`: absolute paths (two or more directories deep) cut to their last name. */
export function withoutDirectories(message: string): string {
  return message.replace(/(?<=^|[\s'"(=])(?:\/[^\s/:'"]+){2,}\/([^\s/:'"]+)/g, '$1');
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setNotFoundHandler((_req, reply) => {
    void sendError(reply, 404, 'Endpoint not found');
  });
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const e = errorReplyOf(err);
    return sendError(reply, e.status, e.message, e.details);
  });
}

/** An error thrown by a route (or fastify) → the status, message and details its reply carries. */
export function errorReplyOf(err: unknown): { status: number; message: string; details?: string } {
  if (isTsdbError(err)) return { status: err.status, message: err.message };
  if (isStoreError(err, 'STORE_CORRUPTION')) {
    // Damaged data at rest (store-check.ts): name the file by its base name, not the path.
    return {
      status: 500, message: `Stored data is damaged: ${withoutDirectories(err.message)}`,
      details: 'Other data is still served; /api/status lists damaged files; run horae fsck',
    };
  }
  const e = (typeof err === 'object' && err !== null ? err : {}) as Partial<FastifyError>;
  const message = String(e.message ?? err);
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: 'Request body too large', details: message };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'Missing request content' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'Unsupported content type', details: message };
    default:
      break;
  }
  const status = e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 600 ? e.statusCode : 500;
  // A 500 names the cause, but not the server's directories (file paths from I/O errors).
  return { status, message: status === 500 ? `Internal error: ${withoutDirectories(message)}` : message };
}
