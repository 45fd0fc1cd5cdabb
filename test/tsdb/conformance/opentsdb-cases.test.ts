/**
 * Conformance: the cases of test/fixtures/opentsdb-query-cases.json (a copy of
 * ../shared/cases/opentsdb-query-cases.json), taken from OpenTSDB's
 * own test assertions. Each case's series go in through POST /api/put (in write order),
 * its query through POST /api/query, and the output is compared by tags: the points, the
 * values within the case's tolerance, and whether each value is printed as an integer or
 * a double (OpenTSDB keeps long arithmetic for all-integer inputs).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

interface Case {
  name: string;
  series: Array<{ metric: string; tags: Record<string, string>; valueType: 'i' | 'f' | 'd'; points: Array<[number, number | string, string?]> }>;
  query: Record<string, unknown>;
  expected?: Array<{ metric: string; tags: Record<string, string>; aggregateTags: string[]; dps: Record<string, number | string>; valueType: string; integerTimestamps?: string[] }>;
  expectedError?: unknown;
  tolerance: number;
}

const CASES = JSON.parse(readFileSync(new URL('../../fixtures/opentsdb-query-cases.json', import.meta.url), 'utf8')) as Case[];

/** A value as the put body carries it, so it is stored with the case's type. */
function putValue(v: number | string, type: string): number | string {
  if (type === 'i') return typeof v === 'string' ? v : String(Math.trunc(Number(v)));
  const s = String(v);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** The raw value tokens of each output's dps, in output order (to tell 2 from 2.0). */
function rawValueTokens(body: string): string[][] {
  const out: string[][] = [];
  for (const m of body.matchAll(/"dps":\{([^}]*)\}/g)) out.push([...m[1]!.matchAll(/":(-?[^,]+)/g)].map((x) => x[1]!));
  return out;
}

describe('OpenTSDB conformance cases', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const { tsdb } = await openFixture({}, 1357100000000);
      const app = await buildServer({ tsdb });
      try {
        for (const s of c.series) {
          const body = s.points.map(([ts, v, type]) => ({ metric: s.metric, timestamp: ts, value: putValue(v, type ?? s.valueType), tags: s.tags }));
          const r = await app.inject({ method: 'POST', url: '/api/put?details', payload: body });
          expect(r.statusCode, r.body).toBe(200);
        }
        const res = await app.inject({ method: 'POST', url: '/api/query', payload: c.query });
        if (c.expectedError !== undefined) {
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          return;
        }
        expect(res.statusCode, res.body).toBe(200);
        const got = res.json() as Array<{ metric: string; tags: Record<string, string>; aggregateTags: string[]; dps: Record<string, number | string> }>;
        const tokens = rawValueTokens(res.body);
        const want = c.expected ?? [];
        expect(got.length).toBe(want.length);
        for (const w of want) {
          const i = got.findIndex((g) => g.metric === w.metric && JSON.stringify(g.tags) === JSON.stringify(Object.fromEntries(Object.entries(w.tags).sort())));
          expect(i, `no output with tags ${JSON.stringify(w.tags)}`).toBeGreaterThanOrEqual(0);
          const g = got[i]!;
          expect([...g.aggregateTags].sort()).toEqual([...w.aggregateTags].sort());
          expect(Object.keys(g.dps)).toEqual(Object.keys(w.dps));
          for (const [ts, v] of Object.entries(w.dps)) {
            const gv = g.dps[ts]!;
            if (v === 'NaN' || gv === 'NaN') expect(gv, ts).toBe(v);
            else expect(Math.abs(Number(gv) - Number(v)), `${ts}: ${gv} vs ${v}`).toBeLessThanOrEqual(c.tolerance + 1e-9 * Math.abs(Number(v)));
          }
          const raw = tokens[i]!;
          if (w.valueType === 'integer') expect(raw.every((t) => /^-?\d+$/.test(t)), raw.slice(0, 5).join(' ')).toBe(true);
          if (w.valueType === 'double') expect(raw.every((t) => !/^-?\d+$/.test(t)), raw.slice(0, 5).join(' ')).toBe(true);
        }
      } finally {
        await app.close();
      }
    });
  }
});
