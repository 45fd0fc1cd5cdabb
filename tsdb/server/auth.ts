/**
 * Optional bearer-token authentication for HTTP and telnet (docs/SECURITY.md).
 *
 * Tokens come from a file (horae.auth.tokens_file: one `token role` per line, `#`
 * comments; read by tsdb/cli/auth-file.ts) and/or inline entries (horae.auth.tokens or the environment variable
 * HORAE_AUTH_TOKENS: `token role` entries separated by commas or newlines). No token at
 * all: authentication is off and every client has the write role, as in OpenTSDB.
 * Roles: `read` (queries, lookups, stats), `write` (also /api/put, annotations, UID
 * assign/rename, dropcaches, `DELETE /api/query`, telnet `put`) and `admin` (also
 * /api/admin/tsdb/delete_series, which deletes whole series and metrics). A token is at least 16 characters
 * without blanks or commas; a bad entry stops the server from starting, naming the line.
 *
 * HTTP: `Authorization: Bearer <token>`, or Basic with the token as the password (any
 * user name), for Grafana and collectors that only speak Basic. Missing or unknown token:
 * 401 with WWW-Authenticate; a read token on a write route: 403. Checked in onRequest,
 * before any body byte is parsed, against the role each route declares (RouteRole; a
 * route without one stops the start). Open: /api/version, /api/status (health checks),
 * CORS preflights (OPTIONS carries no credentials) and the UI's static files (`/`,
 * `/operator`, `/ui/*`: they hold no data; the API calls they make need a token).
 *
 * Tokens are compared as SHA-256 digests with timingSafeEqual against every entry, so the
 * time taken does not depend on how much of a token matched or which entry it is.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TsdbConfig } from '../config.js';
import { sendError } from './http-errors.js';

export type Role = 'read' | 'write' | 'admin';

/** What telnet sessions and the HTTP hook ask. */
export interface Authenticator {
  /** The role of `token`, or undefined for an unknown token. Constant time in the token. */
  authenticate(token: string): Role | undefined;
}

/** A bad tokens file or entry; the message names the source and line. */
export class AuthConfigError extends Error {
  override readonly name = 'AuthConfigError';
}

export const MIN_TOKEN_LENGTH = 16;

interface Entry { readonly digest: Buffer; readonly role: Role }

const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export class TokenAuth implements Authenticator {
  private readonly entries: readonly Entry[];

  private constructor(entries: readonly Entry[]) {
    this.entries = entries;
  }

  /** Parses `token role` entries from each source; throws AuthConfigError naming source:line. */
  static fromSources(sources: ReadonlyArray<{ readonly name: string; readonly text: string; readonly separator: RegExp }>): TokenAuth {
    const roles = new Map<string, Role>();
    for (const src of sources) {
      const parts = src.text.split(src.separator);
      parts.forEach((raw, i) => {
        const line = raw.trim();
        if (line === '' || line.startsWith('#')) return;
        const where = `${src.name}:${i + 1}`;
        const words = line.split(/\s+/);
        if (words.length !== 2) throw new AuthConfigError(`${where}: expected 'token role', got ${words.length} words`);
        const [token, role] = words as [string, string];
        if (role !== 'read' && role !== 'write' && role !== 'admin') throw new AuthConfigError(`${where}: role must be read, write or admin, got '${role}'`);
        if (token.length < MIN_TOKEN_LENGTH) throw new AuthConfigError(`${where}: token shorter than ${MIN_TOKEN_LENGTH} characters`);
        if (token.includes(',')) throw new AuthConfigError(`${where}: a token cannot contain a comma`);
        const before = roles.get(token);
        if (before !== undefined && before !== role) throw new AuthConfigError(`${where}: token listed as both ${before} and ${role}`);
        roles.set(token, role);
      });
    }
    return new TokenAuth([...roles].map(([t, role]) => ({ digest: digestOf(t), role })));
  }

  get size(): number {
    return this.entries.length;
  }

  authenticate(token: string): Role | undefined {
    const d = digestOf(token);
    let found: Role | undefined;
    for (const e of this.entries) if (timingSafeEqual(d, e.digest)) found = e.role;
    return found;
  }
}

/** A tokens file's content, read by the caller (tsdb/cli/auth-file.ts: only tsdb/cli touches files). */
export interface TokensFile {
  readonly path: string;
  readonly text: string;
}

/**
 * The authenticator the config asks for, or undefined when authentication is off.
 * `file` is the content of horae.auth.tokens_file when one is configured; throws
 * AuthConfigError when it is configured but not given.
 */
export function tokenAuthOf(config: Pick<TsdbConfig, 'authTokensFile' | 'authTokens'>, file?: TokensFile): TokenAuth | undefined {
  const sources: Array<{ name: string; text: string; separator: RegExp }> = [];
  if (config.authTokensFile !== '') {
    if (file === undefined || file.path !== config.authTokensFile) {
      throw new AuthConfigError(`tokens file ${config.authTokensFile} was not loaded (start the server through tsdb/main.ts or pass it)`);
    }
    sources.push({ name: file.path, text: file.text, separator: /\r?\n/ });
  }
  if (config.authTokens !== '') sources.push({ name: 'horae.auth.tokens (HORAE_AUTH_TOKENS) entry', text: config.authTokens, separator: /[,\n]/ });
  if (sources.length === 0) return undefined;
  const auth = TokenAuth.fromSources(sources);
  if (auth.size === 0) throw new AuthConfigError('authentication is configured but no token was given');
  return auth;
}

/** The token of an Authorization header: `Bearer <token>` or `Basic base64(user:token)`. */
export function tokenOfAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*(bearer|basic)\s+(\S+)\s*$/i.exec(header);
  if (m === null) return undefined;
  if (m[1]!.toLowerCase() === 'bearer') return m[2];
  const decoded = Buffer.from(m[2]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/**
 * Who may call a route, declared by the route itself: `config: { role }` in its fastify
 * definition. 'open': anyone, no token (health checks, the UI's static files, CORS
 * preflights); 'read': any token; 'write': a write or admin token; 'admin': an admin
 * token (deleting whole series). A route that
 * changes data or state is 'write'; a route whose methods differ (annotations: GET reads,
 * POST/PUT/DELETE write) is registered once per role.
 */
export type RouteRole = 'open' | Role;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (tsdb/server/auth.ts); every route declares it. */
    role?: RouteRole;
  }
}

const ROUTE_ROLES: readonly RouteRole[] = ['open', 'read', 'write', 'admin'];

/** The routes of each app and their roles, as registered (HEAD routes included). */
const declared = new WeakMap<FastifyInstance, Array<{ readonly method: string; readonly url: string; readonly role: RouteRole }>>();

/**
 * Makes every route of `app` registered after this call declare its role: a route without
 * one (or with an unknown one) throws at registration, so the server does not start.
 */
export function requireRouteRoles(app: FastifyInstance): void {
  const list: Array<{ method: string; url: string; role: RouteRole }> = [];
  declared.set(app, list);
  app.addHook('onRoute', (r) => {
    const role = r.config?.role;
    const methods = ([] as string[]).concat(r.method);
    if (role === undefined || !ROUTE_ROLES.includes(role)) {
      throw new Error(`route ${methods.join(',')} ${r.url} declares no role: give it config: { role: 'open' | 'read' | 'write' | 'admin' } (tsdb/server/auth.ts)`);
    }
    for (const method of methods) list.push({ method, url: r.url, role });
  });
}

/** The routes registered on `app` since requireRouteRoles, with their roles. */
export function routeRoles(app: FastifyInstance): ReadonlyArray<{ readonly method: string; readonly url: string; readonly role: RouteRole }> {
  return declared.get(app) ?? [];
}

/**
 * What a request needs: its route's role; a request no route matched (404) needs 'read',
 * but a preflight (OPTIONS carries no credentials) is open.
 */
function neededRole(req: FastifyRequest): RouteRole {
  if (req.routeOptions.url === undefined) return req.method === 'OPTIONS' ? 'open' : 'read';
  // Unreachable with requireRouteRoles; a route that somehow has no role is treated as writing.
  return req.routeOptions.config.role ?? 'write';
}

/** The role of each request that passed the check (none: authentication is off, or an open route). */
const roles = new WeakMap<IncomingMessage, Role>();

const CHALLENGE = ['Bearer realm="horae"', 'Basic realm="horae", charset="UTF-8"'];

function unauthorized(reply: FastifyReply, message: string): FastifyReply {
  reply.header('www-authenticate', CHALLENGE);
  return sendError(reply, 401, message);
}

function forbidden(reply: FastifyReply, needs: Role = 'write'): FastifyReply {
  return sendError(reply, 403, needs === 'admin'
    ? 'Permission denied: the request needs an admin token'
    : 'Permission denied: this token is read-only; the request needs a write token');
}

/** Installs the onRequest check on `app` (a no-op when `auth` is undefined). */
export function installAuth(app: FastifyInstance, auth: Authenticator | undefined): void {
  if (auth === undefined) return;
  app.addHook('onRequest', async (req, reply) => {
    const needs = neededRole(req);
    if (needs === 'open') return undefined;
    const header = req.headers.authorization;
    if (header === undefined) return unauthorized(reply, 'Authentication required: send Authorization: Bearer <token>');
    const token = tokenOfAuthorization(header);
    const role = token === undefined ? undefined : auth.authenticate(token);
    if (role === undefined) return unauthorized(reply, 'Invalid credentials: unknown token or malformed Authorization header');
    roles.set(req.raw, role);
    if (needs === 'write' && role === 'read') return forbidden(reply);
    if (needs === 'admin' && role !== 'admin') return forbidden(reply, 'admin');
    return undefined;
  });
}

/**
 * For handlers that learn from the body that a request writes (a query with
 * `"delete": true`): true when it may go on; otherwise 403 has been sent. Only routes that
 * are not open may call it (with authentication on, their requests always carry a role).
 */
export function ensureWriteRole(req: FastifyRequest, reply: FastifyReply): boolean {
  const role = roles.get(req.raw);
  if (role === undefined || role !== 'read') return true;
  void forbidden(reply);
  return false;
}
