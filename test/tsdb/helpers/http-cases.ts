/**
 * Shared by the tests that load the OpenTSDB conformance cases through /api/put and compare
 * /api/query answers between two configurations (parallel-decode, exact-rows).
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

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
