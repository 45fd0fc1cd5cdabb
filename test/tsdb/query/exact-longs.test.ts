/**
 * Integer points beyond ±2^53 print in /api/query (and /api/query/last) as OpenTSDB prints
 * a long: every digit, never the nearest double. Stored values, sums of them (wrapping as Java longs do), on
 * the main thread, and decoded and formatted by decode workers (query/format-parallel.ts
 * for answers of PARALLEL_FORMAT_MIN_POINTS or more).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import { PARALLEL_FORMAT_MIN_POINTS } from '../../../tsdb/query/format-parallel.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture, openedServers } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const BIG_A = 4611686018427387907n; // 2^62 + 3
const BIG_B = -9007199254740993n; // -(2^53 + 1)
const pool = new DecodePool(2);
const opened = openedServers(pool);
afterAll(() => opened.closeAll());

/** Values as the text the server wrote, keyed by timestamp (JSON.parse would round them). */
function dpsText(body: string): string[][] {
  return [...body.matchAll(/"dps":\{([^}]*)\}/g)].map((m) => m[1]!.split(',').filter((x) => x !== '').map((kv) => kv.split(':')[1]!));
}

describe('integers beyond 2^53 in /api/query', () => {
  for (const [name, config] of [['main thread', { queryDecodeThreads: 0 }], ['decode workers', { queryDecodeThreads: 2, queryParallelMinRows: 0, queryExactMaxRows: 0 }]] as const) {
    it(`print exactly, stored and summed (${name})`, async () => {
      const { tsdb } = await openFixture({ ...(config as Partial<TsdbConfig>) }, (T0 + 86400) * 1000, config.queryDecodeThreads === 0 ? {} : { decodePool: pool });
      const app = opened.add(await buildServer({ tsdb }), tsdb);
      // Enough points that the answer is formatted in parallel where workers exist.
      const n = Math.ceil(PARALLEL_FORMAT_MIN_POINTS / 2) + 10;
      const lines: string[] = [];
      for (let i = 0; i < n; i++) {
        lines.push(`put m ${T0 + i} ${BIG_A + BigInt(i)} host=a`);
        lines.push(`put m ${T0 + i} ${BIG_B - BigInt(i)} host=b`);
      }
      // Written as telnet text is parsed: the nearest double and the exact integer.
      await tsdb.ingest.write(lines.map((l) => {
        const [, metric, ts, value, tag] = l.split(' ');
        return { metric: metric!, timestamp: Number(ts), value: Number(value), isInt: true, big: BigInt(value!), tags: [['host', tag!.slice(5)]] as Array<[string, string]> };
      }));
      const none = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + n, queries: [{ metric: 'm', aggregator: 'none' }] } });
      expect(none.statusCode).toBe(200);
      const [a, b] = dpsText(none.body);
      expect(a!.slice(0, 3)).toEqual([String(BIG_A), String(BIG_A + 1n), String(BIG_A + 2n)]);
      expect(b!.slice(0, 3)).toEqual([String(BIG_B), String(BIG_B - 1n), String(BIG_B - 2n)]);
      expect(a).toHaveLength(n);
      const sum = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + 2, queries: [{ metric: 'm', aggregator: 'sum' }] } });
      expect(dpsText(sum.body)).toEqual([[String(BIG_A + BIG_B), String(BIG_A + BIG_B), String(BIG_A + BIG_B)]]);
      // /api/query/last: from the last-value cache the write filled, then read from the store.
      const last = async (): Promise<string[]> => {
        const r = await app.inject({ method: 'GET', url: '/api/query/last?timeseries=m&resolve=true' });
        expect(r.statusCode).toBe(200);
        return (r.json() as Array<{ value: string; tags: { host: string } }>).sort((x, y) => (x.tags.host < y.tags.host ? -1 : 1)).map((p) => p.value);
      };
      expect(tsdb.lastValues).toBeDefined();
      expect(await last()).toEqual([String(BIG_A + BigInt(n - 1)), String(BIG_B - BigInt(n - 1))]); // read, then kept
      // A newer point: the write updates the kept entries, which answer without a read.
      await tsdb.ingest.write([BIG_A + 1000n, BIG_B - 1000n].map((v, i) => ({ metric: 'm', timestamp: T0 + n, value: Number(v), isInt: true, big: v, tags: [['host', i === 0 ? 'a' : 'b']] as Array<[string, string]> })));
      const hits = tsdb.lastValues!.stats().hits;
      const want = [String(BIG_A + 1000n), String(BIG_B - 1000n)];
      expect(await last()).toEqual(want);
      expect(tsdb.lastValues!.stats().hits).toBe(hits + 2);
      tsdb.dropCaches();
      expect(await last()).toEqual(want);
    });
  }
});
