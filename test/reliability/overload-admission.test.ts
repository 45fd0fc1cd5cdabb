/**
 * tsdb/server/query-admission.ts: at most maxConcurrent queries run, the next ones wait
 * up to queueMs in FIFO order and then get 503 with Retry-After; slots come back when a
 * response finishes or its client goes away; other routes never wait.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installErrorHandlers } from '../../tsdb/server/http-errors.js';
import { installQueryAdmission } from '../../tsdb/server/query-admission.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}

async function appWith(maxConcurrent: number, queueMs: number) {
  const app = Fastify();
  installErrorHandlers(app);
  const stats = installQueryAdmission(app, { maxConcurrent, queueMs });
  const gates: { resolve: () => void }[] = [];
  const order: number[] = [];
  app.get('/api/query', async (req) => {
    const d = deferred();
    gates.push(d);
    order.push(Number((req.query as { n: string }).n));
    await d.promise;
    return { ok: true };
  });
  app.post('/api/put', async () => ({ put: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  return { app, stats, gates, order, base: `http://127.0.0.1:${port}` };
}

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
};

describe('query admission', () => {
  it('runs at most maxConcurrent, queues in order, refuses with 503 + Retry-After past the queue time', async () => {
    const h = await appWith(2, 300);
    try {
      const res = [1, 2, 3, 4].map((n) => fetch(`${h.base}/api/query?n=${n}`));
      await until(() => h.gates.length === 2 && h.stats.queued === 2);
      // Writes never wait for a query slot.
      expect((await fetch(`${h.base}/api/put`, { method: 'POST' })).status).toBe(200);
      h.gates[0]!.resolve(); // query 1 ends: query 3 gets its slot (FIFO)
      await until(() => h.gates.length === 3);
      expect(h.order).toEqual([1, 2, 3]);
      const r4 = await res[3]!;
      expect(r4.status).toBe(503);
      expect(r4.headers.get('retry-after')).toBe('1');
      expect((await r4.json()) as unknown).toEqual({ error: { code: 503, message: 'Too many queries: 2 running and none finished within 300 ms', details: 'Retry later; the limits are horae.query.max_concurrent and horae.query.queue_ms' } });
      for (const g of h.gates) g.resolve();
      expect((await Promise.all(res.slice(0, 3))).map((r) => r.status)).toEqual([200, 200, 200]);
      await until(() => h.stats.running === 0);
      expect(h.stats).toEqual({ running: 0, queued: 0, admitted: 3, rejected: 1 });
    } finally {
      await h.app.close();
    }
  });

  it('gives the slot back when a client goes away mid-query', async () => {
    const h = await appWith(1, 5000);
    try {
      const ac = new AbortController();
      const first = fetch(`${h.base}/api/query?n=1`, { signal: ac.signal }).catch(() => 'aborted');
      await until(() => h.gates.length === 1);
      const second = fetch(`${h.base}/api/query?n=2`);
      await until(() => h.stats.queued === 1);
      ac.abort();
      expect(await first).toBe('aborted');
      await until(() => h.gates.length === 2);
      h.gates[1]!.resolve();
      expect((await second).status).toBe(200);
      h.gates[0]!.resolve();
      await until(() => h.stats.running === 0);
    } finally {
      await h.app.close();
    }
  });
});
