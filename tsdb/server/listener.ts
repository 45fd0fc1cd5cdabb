/**
 * One TCP port for HTTP and the telnet-style line protocol, as OpenTSDB serves both on
 * 4242 (OpenTSDB's PipelineFactory.DetectHttpOrRpc): the first byte of
 * a connection decides. An uppercase ASCII letter ('A'..'Z': GET, POST, PUT, ...) makes it
 * HTTP; anything else (`put`, `version`, ...) makes it a telnet session.
 *
 * HTTP connections are handed to an `http.Server` that is never listen()ed itself: the
 * sniffed chunk is unshifted back and the socket emitted as a 'connection', so Node's own
 * parser (keep-alive, pipelining, large bodies) does the rest.
 *
 * Wiring with fastify (the composition root):
 *
 *   const app = Fastify({ serverFactory: createHttpServerForFastify, ... });
 *   // register routes, then:
 *   await app.ready();                       // never app.listen()
 *   const listener = await listen({ host, port, http: app.server, telnet: backend });
 *   // shutdown:
 *   await listener.close();                  // drains telnet batches, closes HTTP sockets
 *   await app.close();                       // safe: fastify skips server.close() when it never listened
 *
 * `listen()` emits 'listening' on the http.Server once: that is what makes Node start its
 * connection tracking (headersTimeout/requestTimeout checks, closeIdleConnections()).
 */
import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerOptions, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { Socket } from 'node:net';
import type { Authenticator } from './auth.js';
import type { TelnetBackend } from './telnet/telnet-backend.js';
import { TelnetSession, newTelnetStats, resolveTelnetOptions } from './telnet/telnet-session.js';
import type { TelnetOptions, TelnetStats } from './telnet/telnet-session.js';

export interface ListenerOptions {
  readonly host: string;
  /** 0 picks an ephemeral port; read it back from `Listener.port`. */
  readonly port: number;
  /** Fastify's `app.server` (see createHttpServerForFastify), never listen()ed itself. */
  readonly http: HttpServer;
  readonly telnet: TelnetBackend;
  readonly telnetOptions?: Partial<TelnetOptions>;
  /** Telnet sessions must send `auth <token>` first (auth.ts); undefined: no authentication. */
  readonly auth?: Authenticator;
  /** Open connections at most; more are closed on accept and counted. 0 or absent: no limit. */
  readonly maxConnections?: number;
  /** A connection that sends no byte within this many ms is closed. Absent: 10000. */
  readonly firstByteTimeoutMs?: number;
  readonly log?: (msg: string) => void;
}

export interface ListenerStats {
  /** Connections open now, by protocol; `unclassified` have not sent a byte yet. */
  readonly open: { readonly http: number; readonly telnet: number; readonly unclassified: number };
  /** Connections accepted since listen(), by protocol. */
  readonly accepted: { readonly http: number; readonly telnet: number; readonly total: number };
  /** Socket errors (ECONNRESET, EPIPE, ...) seen on any connection. */
  readonly socketErrors: number;
  /** Connections closed on accept because maxConnections were open. */
  readonly refused: number;
  /** Connections closed because they sent nothing within firstByteTimeoutMs. */
  readonly firstByteTimeouts: number;
  /** Counters of all telnet sessions together (lines, batches, writesBlocked, ...). */
  readonly telnet: Readonly<TelnetStats>;
}

export interface Listener {
  readonly port: number;
  readonly address: string;
  /**
   * Stops accepting; ends telnet sessions after their queued batches and replies; closes
   * idle HTTP keep-alive sockets (and busy ones as soon as their response is done);
   * destroys connections that never sent a byte. Resolves when every socket is gone and
   * every telnet batch has settled, or after `timeoutMs` (default 5000), when whatever is
   * left is destroyed. Idempotent.
   */
  close(timeoutMs?: number): Promise<void>;
  stats(): ListenerStats;
}

/**
 * A fastify `serverFactory`: a plain http.Server with fastify's own timeouts applied (with
 * a serverFactory, fastify leaves keepAliveTimeout, requestTimeout, connectionTimeout and
 * maxRequestsPerSocket to the factory).
 */
export function createHttpServerForFastify(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  fastifyOptions: Record<string, unknown> = {},
  limits: HttpServerLimits = {},
): HttpServer {
  const server = createHttpServer(httpServerOptions(limits, fastifyOptions), handler);
  const num = (k: string): number | undefined => (typeof fastifyOptions[k] === 'number' ? fastifyOptions[k] : undefined);
  const keepAlive = num('keepAliveTimeout');
  if (keepAlive !== undefined) server.keepAliveTimeout = keepAlive;
  const request = num('requestTimeout');
  if (request !== undefined) server.requestTimeout = request;
  const conn = num('connectionTimeout');
  if (conn !== undefined) server.setTimeout(conn);
  const perSocket = num('maxRequestsPerSocket');
  if (perSocket !== undefined && perSocket > 0) server.maxRequestsPerSocket = perSocket;
  return server;
}

/** Limits Node's HTTP parser and connection checker enforce (config: horae.http.*). */
export interface HttpServerLimits {
  /** Request line + headers, bytes; 431 beyond. Node's default is 16 KiB. */
  readonly maxHeaderBytes?: number;
  /** The head must be complete this many ms after the request's first byte; 408 and close beyond. */
  readonly headersTimeoutMs?: number;
}

function httpServerOptions(limits: HttpServerLimits, fastifyOptions: Record<string, unknown>): ServerOptions {
  const request = typeof fastifyOptions.requestTimeout === 'number' ? fastifyOptions.requestTimeout : 0;
  // Node refuses a headersTimeout above a non-zero requestTimeout.
  const headers = limits.headersTimeoutMs === undefined ? undefined
    : request > 0 ? Math.min(limits.headersTimeoutMs, request) : limits.headersTimeoutMs;
  const shortest = Math.min(headers ?? 60_000, request > 0 ? request : 60_000);
  return {
    ...(limits.maxHeaderBytes === undefined ? {} : { maxHeaderSize: limits.maxHeaderBytes }),
    ...(headers === undefined ? {} : { headersTimeout: headers }),
    // How often Node looks for requests past those deadlines (default 30 s: far too coarse
    // for a 10 s head deadline).
    connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(shortest / 4))),
  };
}

/** True for 'A'..'Z': what OpenTSDB's DetectHttpOrRpc takes for an HTTP method. */
export function looksLikeHttp(firstByte: number): boolean {
  return firstByte >= 0x41 && firstByte <= 0x5a;
}

/** http.Servers whose connection tracking has been started (emit 'listening' once). */
const trackedHttpServers = new WeakSet<HttpServer>();
const CLOSE_POLL_MS = 25;

export async function listen(opts: ListenerOptions): Promise<Listener> {
  const telnetOptions = resolveTelnetOptions(opts.telnetOptions);
  const telnetStats = newTelnetStats();
  const log = opts.log;
  const unclassified = new Set<Socket>();
  const httpSockets = new Set<Socket>();
  const telnetSockets = new Set<Socket>();
  const sessions = new Set<TelnetSession>();
  const accepted = { http: 0, telnet: 0, total: 0 };
  let socketErrors = 0;
  let refused = 0;
  let firstByteTimeouts = 0;
  let closing: Promise<void> | undefined;
  const maxConnections = opts.maxConnections ?? 0;
  const firstByteTimeoutMs = opts.firstByteTimeoutMs ?? 10_000;
  const open = (): number => unclassified.size + httpSockets.size + telnetSockets.size;

  const server = createNetServer({ allowHalfOpen: true, noDelay: true });

  const classify = (socket: Socket, chunk: Buffer): void => {
    unclassified.delete(socket);
    if (looksLikeHttp(chunk[0]!)) {
      accepted.http++;
      httpSockets.add(socket);
      socket.once('close', () => httpSockets.delete(socket));
      // Paused, the chunk waits in the readable buffer while http attaches its parser;
      // resume() (on the next tick) replays it to the parser before any newer bytes.
      socket.pause();
      socket.unshift(chunk);
      opts.http.emit('connection', socket);
      socket.resume();
      return;
    }
    accepted.telnet++;
    telnetSockets.add(socket);
    socket.once('close', () => telnetSockets.delete(socket));
    const session = new TelnetSession(socket, opts.telnet, telnetOptions, telnetStats, log, opts.auth);
    sessions.add(session);
    void session.finished.then(() => sessions.delete(session));
    session.feed(chunk);
  };

  server.on('connection', (socket: Socket) => {
    socket.on('error', () => { socketErrors++; });
    if (closing !== undefined) {
      socket.destroy();
      return;
    }
    if (maxConnections > 0 && open() >= maxConnections) {
      refused++;
      if (refused === 1 || refused % 1000 === 0) log?.(`listener: ${maxConnections} connections open (horae.network.max_connections); refused ${refused} so far`);
      socket.destroy();
      return;
    }
    accepted.total++;
    unclassified.add(socket);
    // A connection that never speaks must not hold a slot forever.
    socket.setTimeout(firstByteTimeoutMs, () => {
      if (!unclassified.has(socket)) return;
      firstByteTimeouts++;
      socket.destroy();
    });
    const onEarlyEnd = (): void => { if (unclassified.has(socket)) socket.destroy(); };
    socket.once('end', onEarlyEnd);
    socket.once('close', () => unclassified.delete(socket));
    socket.once('data', (chunk: Buffer) => {
      socket.removeListener('end', onEarlyEnd);
      socket.setTimeout(0);
      try {
        classify(socket, chunk);
      } catch (e) {
        log?.(`listener: closing a connection after an internal error: ${(e as Error).stack ?? String(e)}`);
        socket.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host, port: opts.port }, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', (e: Error) => log?.(`listener: ${e.message}`));
  if (!trackedHttpServers.has(opts.http)) {
    trackedHttpServers.add(opts.http);
    opts.http.emit('listening');
  }
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error(`listener: unexpected address ${String(addr)}`);

  const allGone = (): boolean => unclassified.size + httpSockets.size + telnetSockets.size + sessions.size === 0;

  const doClose = async (timeoutMs: number): Promise<void> => {
    server.close();
    for (const s of unclassified) s.destroy();
    for (const s of sessions) s.shutdown();
    // Also stops Node's connection-checking interval; emits 'close' on the http.Server.
    opts.http.close();
    await new Promise<void>((resolve) => {
      const deadline = Date.now() + timeoutMs;
      const tick = (): void => {
        if (allGone()) return resolve();
        if (Date.now() >= deadline) {
          const left = unclassified.size + httpSockets.size + telnetSockets.size;
          log?.(`listener: close timed out after ${timeoutMs} ms; destroying ${left} connections (${sessions.size} telnet sessions unfinished)`);
          for (const set of [unclassified, httpSockets, telnetSockets]) for (const s of set) s.destroy();
          return resolve();
        }
        // A keep-alive socket turns idle when its response ends: close it then.
        opts.http.closeIdleConnections();
        setTimeout(tick, CLOSE_POLL_MS);
      };
      tick();
    });
  };

  return {
    port: addr.port,
    address: addr.address,
    close(timeoutMs = 5000): Promise<void> {
      closing ??= doClose(timeoutMs);
      return closing;
    },
    stats(): ListenerStats {
      return {
        open: { http: httpSockets.size, telnet: telnetSockets.size, unclassified: unclassified.size },
        accepted: { ...accepted },
        socketErrors,
        refused,
        firstByteTimeouts,
        telnet: { ...telnetStats },
      };
    },
  };
}
