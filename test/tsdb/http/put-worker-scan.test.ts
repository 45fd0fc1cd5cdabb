/**
 * With horae.ingest.put_worker_scan, big /api/put JSON bodies are scanned on a query decode
 * worker (routes/put.ts scanBody, DecodePool.scanPut): the answer (204, or 400 with every bad datapoint) and every stored
 * point are exactly the main thread's, for bodies with good, bad and slow-path datapoints
 * (escapes, numeric strings, integers beyond 2^53), a body the scan refuses (malformed), and
 * a pool that was closed meanwhile. A body with a buffer of its own is moved to the worker
 * and back, not copied; one that shares its buffer is copied and stays the caller's; a body
 * lost with a closing pool gets 503 and writes nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Random } from '../../../core/util/random.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import type { PutScanResult } from '../../../tsdb/query/decode-pool.js';
import { scanPutJson } from '../../../tsdb/write/put-json.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { WORKER_SCAN_MIN_BYTES } from '../../../tsdb/server/routes/put.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, openedServers } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const pool = new DecodePool(1);
const opened = openedServers(pool);
afterAll(() => opened.closeAll());

async function server(config: Partial<TsdbConfig>, withPool: boolean): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture(config, (T0 + 7200) * 1000, withPool ? { decodePool: pool } : {});
  return { app: opened.add(await buildServer({ tsdb }), tsdb), tsdb };
}

/** A body of n datapoints: mostly good, some bad, some that only the general path takes. */
function body(r: Random, n: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const host = `web${r.int(40)}`;
    const base = { metric: `sys.cpu.${r.int(3)}`, timestamp: T0 + r.int(3600), value: Math.round(r.next() * 1e6) / 100, tags: { host, dc: `dc${r.int(3)}` } };
    switch (r.int(20)) {
      case 0: out.push({ ...base, tags: {} }); break; // bad: no tags
      case 1: out.push({ ...base, value: 'NaN' }); break; // bad value
      case 2: out.push({ ...base, metric: 'bad metric!' }); break; // bad name
      case 3: out.push({ ...base, metric: 'sys.cpu.\u00e9' }); break; // slow path: non-ASCII
      case 4: out.push({ ...base, value: String(r.int(1000)) }); break; // numeric string
      case 5: out.push({ ...base, value: 9007199254740993n.toString() }); break; // beyond 2^53
      case 6: out.push({ ...base, timestamp: (T0 + r.int(3600)) * 1000 + r.int(1000) }); break; // ms
      default: out.push(base);
    }
  }
  return out;
}

async function stored(tsdb: Tsdb): Promise<string> {
  const rows: string[] = [];
  for await (const batch of tsdb.data.scan({})) for (const row of batch) rows.push(Buffer.from(row.key).toString('hex') + ':' + row.cells.map((c) => `${Buffer.from(c.qualifier).toString('hex')}=${Buffer.from(c.value).toString('hex')}`).join(','));
  return rows.join('\n');
}

describe('/api/put bodies scanned on a decode worker', () => {
  it('answers and stores exactly as the main thread, over random bodies', async () => {
    const r = new Random(20261128);
    const a = await server({ queryDecodeThreads: 0 }, false);
    const b = await server({ ingestPutWorkerScan: true }, true);
    const before = pool.putScans;
    const movesBefore = pool.putMoves;
    for (let round = 0; round < 6; round++) {
      const text = JSON.stringify(body(r, 1500 + r.int(1500)));
      expect(text.length).toBeGreaterThanOrEqual(WORKER_SCAN_MIN_BYTES);
      const url = round % 2 === 0 ? '/api/put?details' : '/api/put';
      const [ra, rb] = [await a.app.inject({ method: 'POST', url, payload: text, headers: { 'content-type': 'application/json' } }),
        await b.app.inject({ method: 'POST', url, payload: text, headers: { 'content-type': 'application/json' } })];
      expect(rb.statusCode).toBe(ra.statusCode);
      expect(ra.statusCode).toBe(400);
      expect(rb.body).toBe(ra.body);
    }
    expect(pool.putScans - before).toBe(6);
    // The 400s name bad datapoints from the bytes the worker sent back.
    expect(pool.putMoves - movesBefore).toBe(6);
    expect(await stored(b.tsdb)).toBe(await stored(a.tsdb));
    expect((await stored(a.tsdb)).length).toBeGreaterThan(1000);
  });

  it('is on by default for big bodies; small bodies, and false, scan on the main thread', async () => {
    const put = async (app: FastifyInstance, n: number): Promise<number> => {
      const text = JSON.stringify(Array.from({ length: n }, (_, i) => ({ metric: 'm', timestamp: T0 + i, value: i, tags: { host: 'a' } })));
      expect(text.length >= WORKER_SCAN_MIN_BYTES).toBe(n >= 3000);
      const before = pool.putScans;
      expect((await app.inject({ method: 'POST', url: '/api/put', payload: text, headers: { 'content-type': 'application/json' } })).statusCode).toBe(204);
      return pool.putScans - before;
    };
    const { app } = await server({}, true);
    expect(await put(app, 3000)).toBe(1);
    expect(await put(app, 10)).toBe(0);
    const off = await server({ ingestPutWorkerScan: false }, true);
    expect(await put(off.app, 3000)).toBe(0);
  });

  it('answers a malformed big body as the main thread does, and stores nothing of it', async () => {
    const a = await server({ queryDecodeThreads: 0 }, false);
    const b = await server({ ingestPutWorkerScan: true }, true);
    const text = `${JSON.stringify(body(new Random(7), 3000)).slice(0, -1)},{"metric":}]`;
    const [ra, rb] = [await a.app.inject({ method: 'POST', url: '/api/put', payload: text, headers: { 'content-type': 'application/json' } }),
      await b.app.inject({ method: 'POST', url: '/api/put', payload: text, headers: { 'content-type': 'application/json' } })];
    expect(ra.statusCode).toBe(400);
    expect(rb.statusCode).toBe(400);
    expect(rb.body).toBe(ra.body);
    expect(await stored(b.tsdb)).toBe('');
  });

  it('scans on the main thread when the pool has closed', async () => {
    const closed = new DecodePool(1);
    await closed.close();
    const { tsdb } = await openFixture({ ingestPutWorkerScan: true }, (T0 + 7200) * 1000, { decodePool: closed });
    const app = opened.add(await buildServer({ tsdb }), tsdb);
    const text = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ metric: 'm', timestamp: T0 + i, value: i, tags: { host: 'a' } })));
    expect(text.length).toBeGreaterThanOrEqual(WORKER_SCAN_MIN_BYTES);
    const res = await app.inject({ method: 'POST', url: '/api/put', payload: text, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(204);
    expect((await stored(tsdb)).split('\n')).toHaveLength(1);
  });

  it('moves a body with a buffer of its own to the worker and back, and copies one that shares its buffer', async () => {
    const text = JSON.stringify(body(new Random(11), 3000));
    const want = scanPutJson(Buffer.from(text));
    expect(want.error).toBeUndefined();
    const own = Buffer.from(text);
    expect(own.byteOffset === 0 && own.buffer.byteLength === own.length).toBe(true);
    const moves = pool.putMoves;
    const moving = pool.scanPut(own);
    expect(own.length).toBe(0); // detached while the worker has it
    const moved = await moving;
    expect(pool.putMoves - moves).toBe(1);
    expect(moved.bytes.toString()).toBe(text);
    expect(moved.scan).toEqual(want);

    const big = Buffer.from(`  ${text}  `);
    const shared = big.subarray(2, big.length - 2);
    const copying = pool.scanPut(shared);
    expect(shared.length).toBe(Buffer.byteLength(text));
    const copied: PutScanResult = await copying;
    expect(pool.putMoves - moves).toBe(1);
    expect(copied.bytes).toBe(shared);
    expect(big.toString()).toBe(`  ${text}  `);
    expect(copied.scan).toEqual(want);
  });

  it('answers 503 and writes nothing when the pool closes with a moved body', async () => {
    class ClosingPool extends DecodePool {
      override scanPut(bytes: Buffer): Promise<PutScanResult> {
        const p = super.scanPut(bytes);
        void this.close();
        return p;
      }
    }
    const closing = new ClosingPool(1);
    const { tsdb } = await openFixture({ ingestPutWorkerScan: true }, (T0 + 7200) * 1000, { decodePool: closing });
    const app = opened.add(await buildServer({ tsdb }), tsdb);
    const text = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ metric: 'm', timestamp: T0 + i, value: i, tags: { host: 'a' } })));
    const res = await app.inject({ method: 'POST', url: '/api/put', payload: text, headers: { 'content-type': 'application/json' } });
    expect(closing.putMoves).toBe(1);
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toMatch(/none of its points were written, please retry/);
    expect(res.headers['retry-after']).toBe('1');
    expect(await stored(tsdb)).toBe('');
  });
});
