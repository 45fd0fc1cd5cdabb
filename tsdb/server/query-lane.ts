/**
 * The query fast lane: a plain `POST /api/query` (or `/api/v1/query`) answered on Node's
 * http request, before fastify's routing, hooks, body parser and reply. A small query
 * (one series, an hour by the minute) under load cost 0.235 CPU-ms a request through
 * fastify and 0.2125 here (bench/README.md, "A query fast lane"): a tenth of the CPU that
 * bounds requests/s on one thread.
 *
 * The answer is the route's, byte for byte: the lane parses the body as the route does
 * (query-spec.ts parseQueryJson) and runs query-answer.ts, replies with the same headers,
 * compresses as compress.ts does, takes its slot from the same query admission, and maps
 * errors through http-errors.ts errorReplyOf. It takes only requests whose handling by
 * fastify it reproduces entirely, and leaves every other one to fastify:
 *   - method POST, path exactly /api/query or /api/v1/query (any case), no query string;
 *   - a Content-Length within the body limit (no chunked body), no Content-Encoding,
 *     no msgpack body or Accept;
 *   - authentication and CORS off (the lane is not made when either is configured);
 *   - the server not closing (fastify then answers 503).
 * horae.http.query_lane=false turns it off.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isTsdbError } from '../errors.js';
import { parseQueryJson } from '../query/query-spec.js';
import type { TsQuery } from '../query/query-spec.js';
import type { Tsdb } from '../tsdb.js';
import type { Authenticator } from './auth.js';
import { MSGPACK_TYPE } from './body-parsers.js';
import { gzipBody, wantsGzip } from './compress.js';
import { errorReplyOf } from './http-errors.js';
import { answerQuery, connectionSignal, errorReply } from './query-answer.js';
import type { QueryReply } from './query-answer.js';
import type { QueryAdmission } from './query-admission.js';

export interface QueryLaneOptions {
  readonly tsdb: Tsdb;
  readonly admission: QueryAdmission;
  /** The server's authentication: the lane is not made when there is one. */
  readonly auth: Authenticator | undefined;
  /** fastify's bodyLimit: a longer body is left to fastify (413). */
  readonly bodyLimit: number;
}

export interface QueryLane {
  /** Answers `req` and returns true, or returns false without touching it. */
  take(req: IncomingMessage, res: ServerResponse): boolean;
  /** From now on every request goes to fastify (the server is closing). */
  stop(): void;
  /** Requests answered by the lane. */
  readonly answered: number;
}

/** The lane, or undefined when it is off or cannot reproduce fastify's handling (auth, CORS). */
export function createQueryLane(o: QueryLaneOptions): QueryLane | undefined {
  const c = o.tsdb.config;
  if (!c.httpQueryLane || o.auth !== undefined || c.corsDomains.split(',').some((d) => d.trim() !== '')) return undefined;
  let stopped = false;
  let answered = 0;
  return {
    take(req, res) {
      if (stopped || req.method !== 'POST' || !isQueryUrl(req.url)) return false;
      const h = laneHeaders(req.rawHeaders);
      if (h === undefined || h.length > o.bodyLimit) return false;
      answered++;
      o.admission.admit(req.socket, res, () => readBody(req, res, h.length, (body) => respond(o.tsdb, h, req, res, body)), () => {
        const r = o.admission.refusal();
        send(h, res, errorReply(503, r.message, r.details), RETRY_AFTER);
      });
      return true;
    },
    stop() {
      stopped = true;
    },
    get answered() {
      return answered;
    },
  };
}

/** /api/query or /api/v1/query, any case, nothing after (fastify routes case-insensitively, without trailing slashes). */
function isQueryUrl(url: string | undefined): boolean {
  if (url === undefined || (url.length !== 10 && url.length !== 13)) return false;
  const u = url.toLowerCase();
  return u === '/api/query' || u === '/api/v1/query';
}

/** What the lane reads of a request's headers. */
interface LaneHeaders {
  /** Content-Length. */
  readonly length: number;
  /** Accept-Encoding (repeated ones joined, as Node joins them), or undefined. */
  readonly acceptEncoding: string | undefined;
}

/**
 * The headers the lane needs, read from the raw list (Node builds `req.headers`, an object
 * of every header, only when asked: ~2% of a small query's CPU); undefined when one of them
 * leaves the request to fastify: no Content-Length (a chunked body), a Content-Encoding,
 * a msgpack body or Accept.
 */
function laneHeaders(raw: readonly string[]): LaneHeaders | undefined {
  let length: number | undefined;
  let acceptEncoding: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // Only the names the lane looks at (by length first): 6, 12, 14, 15, 16 and 17 characters.
    switch (name.length) {
      case 6: // accept
        if (name.toLowerCase() === 'accept' && raw[i + 1]!.includes(MSGPACK_TYPE)) return undefined;
        break;
      case 12: // content-type
        if (name.toLowerCase() === 'content-type' && raw[i + 1]!.includes(MSGPACK_TYPE)) return undefined;
        break;
      case 14: // content-length (Node refuses a request with two that differ)
        if (name.toLowerCase() === 'content-length') {
          const v = raw[i + 1]!;
          if (!/^\d{1,15}$/.test(v)) return undefined;
          length = Number(v);
        }
        break;
      case 15: { // accept-encoding
        if (name.toLowerCase() === 'accept-encoding') acceptEncoding = acceptEncoding === undefined ? raw[i + 1]! : `${acceptEncoding}, ${raw[i + 1]!}`;
        break;
      }
      case 16: // content-encoding
        if (name.toLowerCase() === 'content-encoding') return undefined;
        break;
      case 17: // transfer-encoding
        if (name.toLowerCase() === 'transfer-encoding') return undefined;
        break;
      default:
        break;
    }
  }
  return length === undefined ? undefined : { length, acceptEncoding };
}

/** Collects the body (Node's parser delivers exactly Content-Length bytes, or the request aborts). */
function readBody(req: IncomingMessage, res: ServerResponse, length: number, then: (body: Buffer) => void): void {
  if (length === 0) {
    req.resume();
    req.once('end', () => then(Buffer.alloc(0)));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.once('end', () => then(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  req.once('error', () => res.destroy());
}

function respond(tsdb: Tsdb, h: LaneHeaders, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  if (body.length === 0) {
    send(h, res, errorReply(400, 'Missing request content'));
    return;
  }
  let q: TsQuery;
  try {
    q = parseQueryJson(body, tsdb.now(), { queryString: {} });
  } catch (err) {
    send(h, res, isTsdbError(err) ? errorReply(400, err.message) : failure(err));
    return;
  }
  // A request on a real socket always has its per-connection signal.
  answerQuery(tsdb, q, 'json', connectionSignal(req.socket)!).then(
    (r) => send(h, res, r),
    (err: unknown) => send(h, res, failure(err)),
  );
}

function failure(err: unknown): QueryReply {
  const e = errorReplyOf(err);
  return errorReply(e.status, e.message, e.details);
}

const RETRY_AFTER: readonly string[] = ['retry-after', '1'];
const NO_HEADERS: readonly string[] = [];

/**
 * Writes the reply as fastify would: content-type and content-length (plus `extra`),
 * gzip-encoded when the client asks and it pays. Headers go as one flat list to writeHead:
 * no header object to fill and check name by name.
 */
function send(h: LaneHeaders, res: ServerResponse, r: QueryReply, extra: readonly string[] = NO_HEADERS): void {
  if (res.headersSent || res.destroyed) return;
  const body = r.body;
  if (body === undefined) {
    res.writeHead(r.status, [...extra, 'content-length', '0']);
    res.end();
    return;
  }
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (!wantsGzip(h.acceptEncoding, size)) {
    res.writeHead(r.status, [...extra, 'content-type', r.type!, 'content-length', String(size)]);
    res.end(body);
    return;
  }
  gzipBody(body, (err, zipped) => {
    if (err !== null) {
      send(h, res, failure(err));
      return;
    }
    res.writeHead(r.status, [...extra, 'content-type', r.type!, 'content-encoding', 'gzip', 'vary', 'Accept-Encoding', 'content-length', String(zipped.length)]);
    res.end(zipped);
  });
}
