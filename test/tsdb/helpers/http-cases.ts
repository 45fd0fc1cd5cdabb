/**
 * Shared by the tests that load the OpenTSDB conformance cases (or seeded random series)
 * through /api/put and compare /api/query answers between two configurations
 * (parallel-decode, parallel-ranges, exact-rows).
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { Random } from '../../../core/util/random.js';

export interface ConformanceCase {
  name: string;
  series: Array<{ metric: string; tags: Record<string, string>; valueType: string; points: Array<[number, number | string, string?]> }>;
  query: object;
}

export const CONFORMANCE_CASES = JSON.parse(readFileSync(new URL('../../fixtures/opentsdb-query-cases.json', import.meta.url), 'utf8')) as ConformanceCase[];

/** POST /api/put?details; the call must store every point. */
export async function putOk(app: FastifyInstance, body: unknown[]): Promise<void> {
  const r = await app.inject({ method: 'POST', url: '/api/put?details', payload: body });
  expect(r.statusCode, r.body).toBe(200);
}

/** POST /api/query: status and body as sent. */
export async function queryRaw(app: FastifyInstance, q: object): Promise<{ status: number; body: string }> {
  const r = await app.inject({ method: 'POST', url: '/api/query', payload: q });
  return { status: r.statusCode, body: r.body };
}

/** A case's series as /api/put bodies (integers where the case types them so). */
export function caseBodies(c: ConformanceCase): unknown[][] {
  return c.series.map((s) => s.points.map(([ts, v, type]) => ({
    metric: s.metric, timestamp: ts, value: (type ?? s.valueType) === 'i' ? Math.trunc(Number(v)) : Number(v), tags: s.tags,
  })));
}

/**
 * 16 series of metric `m` (host h0..h15, dc d0..d2) over 6 h from `t0` (s), a point a
 * minute, as /api/put points: floats, integers, integers beyond 2^53 (numeric strings) and
 * sparse floats, by host; millisecond timestamps on two hosts in three.
 */
export function mixedPoints(rng: Random, t0: number): unknown[] {
  const points: unknown[] = [];
  for (let h = 0; h < 16; h++) {
    const kind = h % 4; // 0 floats, 1 ints, 2 huge ints, 3 sparse floats
    for (let t = 0; t < 6 * 3600; t += 60 + (kind === 3 ? rng.int(600) : 0)) {
      const value = kind === 0 ? (rng.int(1 << 30) / (1 << 30)) * 100 - 50 : kind === 1 ? rng.int(1000) : kind === 2 ? `${9007199254740000 + rng.int(5000)}` : (rng.int(1 << 30) / (1 << 30));
      points.push({ metric: 'm', timestamp: (t0 + t) * 1000 + (h % 3) * rng.int(1000), value, tags: { host: `h${h}`, dc: `d${h % 3}` } });
    }
  }
  return points;
}

/** Sub-query shapes over mixedPoints' series: downsampling with fills, rates, aggregators, filters. */
export const MIXED_SHAPES: readonly object[] = [
  { aggregator: 'sum', downsample: '5m-avg' },
  { aggregator: 'none', downsample: '10m-max-nan' },
  { aggregator: 'avg', downsample: '7m-sum-zero', filters: [{ type: 'wildcard', tagk: 'dc', filter: '*', groupBy: true }] },
  { aggregator: 'zimsum', rate: true, rateOptions: { counter: true, counterMax: 1000, resetValue: 5 } },
  { aggregator: 'p95', downsample: '1h-count-null' },
  { aggregator: 'dev', downsample: '0all-sum' },
  { aggregator: 'max', rate: true, downsample: '15m-last' },
  { aggregator: 'none', tags: { host: 'h2|h6' } },
  { aggregator: 'sum', filters: [{ type: 'regexp', tagk: 'host', filter: 'h1.*', groupBy: false }] },
];
