/**
 * Query admission (VictoriaMetrics' -search.maxConcurrentRequests + maxQueueDuration): at
 * most `maxConcurrent` requests to /api/query* run at once; the next ones wait in a FIFO
 * queue up to `queueMs`, then get 503 with Retry-After (TSDB_OVERLOADED's shape). A
 * query storm therefore costs the server at most `maxConcurrent` queries' worth of CPU
 * and memory at a time, and writes, which never wait here, keep their share.
 *
 * A slot is taken in onRequest (before the body is read) and given back when the
 * response is finished or the connection closes, whichever comes first.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MemoryGuard } from '../memory/guard.js';
import { sendError } from './http-errors.js';

export interface QueryAdmissionOptions {
  /** Queries running at once, at most; 0 turns admission control off. */
  readonly maxConcurrent: number;
  /** How long a query may wait for a slot before 503. */
  readonly queueMs: number;
  /** While the heap is past the memory budget, queries get 503 at once (memory/guard.ts). */
  readonly memory?: Pick<MemoryGuard, 'check' | 'refuse'>;
}

export interface QueryAdmissionStats {
  running: number;
  queued: number;
  admitted: number;
  rejected: number;
}

const QUERY_PATH = /^\/api\/(v1\/)?query(\/|\?|$)/i;

/** Installs the admission hook; returns its live counters. */
export function installQueryAdmission(app: FastifyInstance, o: QueryAdmissionOptions): QueryAdmissionStats {
  const stats: QueryAdmissionStats = { running: 0, queued: 0, admitted: 0, rejected: 0 };
  const memory = o.memory;
  if (memory !== undefined) {
    app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      if (!QUERY_PATH.test(req.url) || !memory.check()) {
        done();
        return;
      }
      stats.rejected++;
      void sendError(reply, 503, memory.refuse().message);
    });
  }
  if (o.maxConcurrent <= 0) return stats;
  const waiters: (() => void)[] = [];

  const release = (): void => {
    const next = waiters.shift();
    if (next !== undefined) next(); // the slot passes straight to the oldest waiter
    else stats.running--;
  };

  const hold = (req: FastifyRequest, reply: FastifyReply): void => {
    stats.admitted++;
    let held = true;
    const done = (): void => {
      if (!held) return;
      held = false;
      release();
    };
    reply.raw.once('finish', done);
    reply.raw.once('close', done);
    // The client may have gone while the query waited: its close event has passed.
    if (req.raw.socket.destroyed) done();
  };

  // A callback hook: a query that gets a slot at once (the common case) costs no promise.
  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (!QUERY_PATH.test(req.url)) {
      done();
      return;
    }
    if (stats.running < o.maxConcurrent) {
      stats.running++;
      hold(req, reply);
      done();
      return;
    }
    void new Promise<boolean>((resolve) => {
      let waiting = true;
      const grant = (): void => {
        if (!waiting) {
          release(); // timed out meanwhile: pass the slot on
          return;
        }
        waiting = false;
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiting = false;
        const i = waiters.indexOf(grant);
        if (i >= 0) waiters.splice(i, 1);
        resolve(false);
      }, o.queueMs);
      waiters.push(grant);
      stats.queued++;
    }).then((got) => {
      stats.queued--;
      if (!got) {
        stats.rejected++;
        // Replying from a callback hook: done() is not called.
        void sendError(reply, 503, `Too many queries: ${o.maxConcurrent} running and none finished within ${o.queueMs} ms`,
          'Retry later; the limits are horae.query.max_concurrent and horae.query.queue_ms');
        return;
      }
      hold(req, reply);
      done();
    });
  });
  return stats;
}
