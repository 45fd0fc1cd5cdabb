/**
 * Request limits fastify does not enforce by itself (the others live in the http.Server,
 * listener.ts: head size → 431, head and request deadlines → 408, idle keep-alive close):
 * a URL longer than horae.http.max_url_bytes gets 414 before anything else runs.
 */
import type { FastifyInstance } from 'fastify';
import { sendError } from './http-errors.js';

export function installUrlLimit(app: FastifyInstance, maxUrlBytes: number): void {
  // A callback hook, not an async one: every request passes here, and the common case
  // should not cost a promise.
  app.addHook('onRequest', (req, reply, done) => {
    const url = req.raw.url ?? '';
    // The parser hands the URL over byte for byte (latin1), so length is its size in bytes.
    if (url.length <= maxUrlBytes) {
      done();
      return;
    }
    void sendError(reply, 414, `URI too long: ${url.length} bytes, the limit is ${maxUrlBytes} (horae.http.max_url_bytes)`);
  });
}
