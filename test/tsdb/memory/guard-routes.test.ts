/**
 * The memory guard's refusals as clients see them: past the heap share, /api/put and
 * /api/query get 503 with the guard's message and nothing is written; telnet put lines
 * get `put: Please throttle writes: memory over budget …`; below it again, all is served.
 */
import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { MemoryGuard } from '../../../tsdb/memory/guard.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { tsdbTelnetBackend } from '../../../tsdb/server/telnet/tsdb-telnet-backend.js';
import { PutLines } from '../../../tsdb/server/telnet/telnet-backend.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const MiB = 1024 * 1024;
const T0 = 1767225600;

describe('memory guard on the routes', () => {
  it('answers writes and queries with 503 while over, and serves them once under', async () => {
    const { tsdb } = await openFixture({}, T0 * 1000);
    let used = 10 * MiB;
    let dropped = 0;
    const memory = new MemoryGuard({ budgetBytes: 128 * MiB, heapUsed: () => used, v8Limit: 4096 * MiB, timer: false, collect: () => undefined });
    memory.onPressure(() => dropped++);
    const app = await buildServer({ tsdb, memory });
    const point = { metric: 'g.m', timestamp: T0, value: 1, tags: { host: 'a' } };
    try {
      used = 90 * MiB;
      const put = await app.inject({ method: 'POST', url: '/api/put', payload: point });
      expect(put.statusCode).toBe(503);
      expect(put.headers['retry-after']).toBe('1');
      expect(put.json().error.message).toMatch(/^Please throttle writes: memory over budget: heap 90 MiB in use, the limit is 86 MiB/);
      expect(dropped).toBe(1);
      const q = await app.inject({ method: 'GET', url: `/api/query?start=${T0 - 60}&m=sum:g.m` });
      expect(q.statusCode).toBe(503);
      expect(q.json().error.message).toMatch(/^memory over budget/);
      const telnet = tsdbTelnetBackend(tsdb, () => 'ok', memory);
      expect(telnet.overloaded()).toBe(true);
      const lines = new PutLines();
      const line = Buffer.from(`put g.m ${T0} 1 host=t\n`);
      lines.add(line, 0, line.length - 1);
      const replies = await telnet.putBatch(lines);
      expect(replies).toHaveLength(1);
      expect(replies[0]).toMatch(/^put: Please throttle writes: memory over budget: heap 90 MiB/);
      expect(await readSeries(tsdb, 'g.m', { host: 't' }, (T0 - 60) * 1000, (T0 + 60) * 1000)).toHaveLength(0);
      let writable = false;
      const w = telnet.whenWritable().then(() => (writable = true));
      used = 20 * MiB;
      memory.check();
      await w;
      expect(writable).toBe(true);
      expect((await app.inject({ method: 'POST', url: '/api/put', payload: point })).statusCode).toBe(204);
      expect(memory.stats().refusals).toBe(3);
    } finally {
      await app.close();
      memory.close();
    }
  });
});
