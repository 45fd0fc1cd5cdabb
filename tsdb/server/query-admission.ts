/**
 * Query admission (VictoriaMetrics' -search.maxConcurrentRequests + maxQueueDuration): at
 * most `maxConcurrent` requests to /api/query* run at once; the next ones wait in a FIFO
 * queue up to `queueMs`, then get 503 with Retry-After (TSDB_OVERLOADED's shape). A
 * query storm therefore costs the server at most `maxConcurrent` queries' worth of CPU
 * and memory at a time, and writes, which never wait here, keep their share.
 *
 * A slot is taken in onRequest (before the body is read), or by the query fast lane
 * (query-lane.ts) on the same slots, and given back when the response is finished or the
 * connection closes, whichever comes first.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './http-errors.js';

export interface QueryAdmissionOptions {
  /** Queries running at once, at most; 0 turns admission control off. */
  readonly maxConcurrent: number;
  /** How long a query may wait for a slot before 503. */
  readonly queueMs: number;
}

export interface QueryAdmissionStats {
  running: number;
  queued: number;
  admitted: number;
  rejected: number;
}

const QUERY_PATH = /^\/api\/(v1\/)?query(\/|\?|$)/i;

/**
 * The slots and the FIFO queue. The fastify hook (installQueryAdmission) and the query
 * fast lane (query-lane.ts) take their slots here, so both count against one limit.
 */
export class QueryAdmission {
  readonly stats: QueryAdmissionStats = { running: 0, queued: 0, admitted: 0, rejected: 0 };
  readonly options: QueryAdmissionOptions;
  private readonly waiters: (() => void)[] = [];

  constructor(options: QueryAdmissionOptions) {
    this.options = options;
  }

  /**
   * Takes a slot for the request answered by `res` on `socket`: calls `go` at once when
   * one is free, else once one is passed on within queueMs, else `refuse` (reply 503 with
   * refusal()). The slot comes back when `res` finishes or closes, whichever comes first.
   * With admission off (maxConcurrent 0), `go` runs at once and nothing is counted.
   */
  admit(socket: { readonly destroyed: boolean }, res: ServerResponse, go: () => void, refuse: () => void): void {
    const o = this.options;
    if (o.maxConcurrent <= 0) {
      go();
      return;
    }
    if (this.stats.running < o.maxConcurrent) {
      this.stats.running++;
      this.hold(socket, res);
      go();
      return;
    }
    let waiting = true;
    const grant = (): void => {
      if (!waiting) {
        this.release(); // timed out meanwhile: pass the slot on
        return;
      }
      waiting = false;
      clearTimeout(timer);
      this.stats.queued--;
      this.hold(socket, res);
      go();
    };
    const timer = setTimeout(() => {
      waiting = false;
      const i = this.waiters.indexOf(grant);
      if (i >= 0) this.waiters.splice(i, 1);
      this.stats.queued--;
      this.stats.rejected++;
      refuse();
    }, o.queueMs);
    this.waiters.push(grant);
    this.stats.queued++;
  }

  /** The 503's message and details. */
  refusal(): { message: string; details: string } {
    const o = this.options;
    return {
      message: `Too many queries: ${o.maxConcurrent} running and none finished within ${o.queueMs} ms`,
      details: 'Retry later; the limits are horae.query.max_concurrent and horae.query.queue_ms',
    };
  }

  private release(): void {
    const next = this.waiters.shift();
    if (next !== undefined) next(); // the slot passes straight to the oldest waiter
    else this.stats.running--;
  }

  private hold(socket: { readonly destroyed: boolean }, res: ServerResponse): void {
    this.stats.admitted++;
    let held = true;
    const done = (): void => {
      if (!held) return;
      held = false;
      this.release();
    };
    res.once('finish', done);
    res.once('close', done);
    // The client may have gone while the query waited: its close event has passed.
    if (socket.destroyed) done();
  }
}

/** Installs the admission hook (on `admission`'s slots, or new ones); returns its live counters. */
export function installQueryAdmission(app: FastifyInstance, o: QueryAdmissionOptions | QueryAdmission): QueryAdmissionStats {
  const admission = o instanceof QueryAdmission ? o : new QueryAdmission(o);
  if (admission.options.maxConcurrent <= 0) return admission.stats;
  // A callback hook: a query that gets a slot at once (the common case) costs no promise.
  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (!QUERY_PATH.test(req.url)) {
      done();
      return;
    }
    admission.admit(req.raw.socket, reply.raw, () => done(), () => {
      // Replying from a callback hook: done() is not called.
      const r = admission.refusal();
      void sendError(reply, 503, r.message, r.details);
    });
  });
  return admission.stats;
}
