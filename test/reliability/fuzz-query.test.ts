/**
 * Fuzzes the query side in-process (fastify inject): the `m=` grammar, time expressions
 * (start/end, relative, absolute, epoch s/ms, downsample specs), tag filters of every type
 * and POST /api/query bodies, from seeded random and mutated input. Checks: never a 5xx,
 * never a stack trace; only 200/400/404/413; each query answers within a time bound.
 *
 * Regular-expression DoS: `regexp(...)` patterns that make a backtracking engine take
 * hours (nested quantifiers, overlapping alternation) against a 1000-character tag value
 * answer in well under a second; backreferences, lookaround and over-long patterns get a
 * clear 400. Ordinary OpenTSDB/Java patterns still select the right series.
 *
 * Limits: a query over more series or points than horae.query.max_series/max_points gets
 * 413 naming the limit, not an out-of-memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../tsdb/server/server.js';
import { FUZZ_SEED, NASTY, Random, mutate, pick, randomJson, randomText } from './helpers/sec-fuzz.js';
import { NOW_MS, startSecServer } from './helpers/sec-server.js';

const QUERIES = Number(process.env.FUZZ_QUERIES ?? 2500);
const TS = Math.floor(NOW_MS / 1000) - 3600;
const SERIES = 60;
const LONG_A = 'a'.repeat(1000);
const OK_STATUS = [200, 400, 404, 413];
/** A hang bound, not a speed target (2 cores shared with other tests). */
const QUERY_MS = 3000;

const M_TEMPLATES = [
  'sum:fz.q', 'sum:fz.q{host=*}', 'avg:1m-avg:fz.q{host=web01|web02}', 'sum:rate:fz.q{dc=lga}',
  'max:rate{counter,100,0}:fz.q{host=wildcard(web*)}', 'sum:5m-max-nan:fz.q{host=regexp(web0[0-9])}{dc=literal_or(lga)}',
  'zimsum:1h-count-zero:fz.q{host=iliteral_or(WEB01)}', 'p99:fz.q{host=not_literal_or(web01)}', 'dev:all-sum:fz.q',
  'sum:explicit_tags:fz.q{host=*,dc=*}', 'none:fz.q{host=iwildcard(*EB*)}',
];
const TIMES = ['1h-ago', '2d-ago', '1767265200', '1767265200000', '2026/01/01-11:00:00', '2026/01/01 11:00', 'now', '10m-ago', '1767265200.5'];

function fuzzM(r: Random): string {
  switch (r.int(4)) {
    case 0: return mutate(r, pick(r, M_TEMPLATES));
    case 1: return `${pick(r, ['sum', 'avg', 'x', ''])}:${randomText(r, r.int(30))}`;
    case 2: return `sum:fz.q{host=${pick(r, ['regexp', 'wildcard', 'literal_or', 'iwildcard', 'not_iliteral_or', 'bogus'])}(${pick(r, NASTY)}${randomText(r, r.int(8))})}`;
    default: return randomText(r, r.int(60));
  }
}

function fuzzTime(r: Random): string {
  return r.chance(0.5) ? mutate(r, pick(r, TIMES)) : pick(r, [...TIMES, ...NASTY, randomText(r, 10)]);
}

describe(`query fuzz (seed ${FUZZ_SEED})`, () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer();
    const points = [];
    for (let s = 0; s < SERIES; s++) {
      for (let k = 0; k < 5; k++) points.push({ metric: 'fz.q', timestamp: TS + k * 60, value: s + k, tags: { host: `web${String(s).padStart(2, '0')}`, dc: s % 2 === 0 ? 'lga' : 'sjc' } });
    }
    points.push({ metric: 'fz.q', timestamp: TS, value: 1, tags: { host: LONG_A, dc: 'lga' } });
    const res = await srv.app.inject({ method: 'POST', url: '/api/put', payload: points });
    expect(res.statusCode).toBe(204);
    // Warm up (the first query may start decode workers).
    expect((await srv.app.inject({ method: 'GET', url: `/api/query?start=1y-ago&m=sum:fz.q` })).statusCode).toBe(200);
  });
  afterAll(async () => srv.stop());

  const check = async (method: 'GET' | 'POST', url: string, payload?: unknown): Promise<{ status: number; body: string; ms: number }> => {
    const started = performance.now();
    const res = await srv.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as string }) });
    const ms = performance.now() - started;
    const what = `${method} ${url.slice(0, 200)} ${payload === undefined ? '' : JSON.stringify(payload).slice(0, 200)}`;
    expect(OK_STATUS, `${res.statusCode} ${res.body.slice(0, 200)} for ${what}`).toContain(res.statusCode);
    expect(res.body, what).not.toMatch(/\bat .*\.(ts|js):\d+|\/work\/|node_modules/);
    expect(ms, what).toBeLessThan(QUERY_MS);
    return { status: res.statusCode, body: res.body, ms };
  };

  it(`${QUERIES} random and mutated m=, times, filters and JSON bodies: only 200/400/404/413, each fast`, async () => {
    const r = new Random(FUZZ_SEED);
    const statuses = new Map<number, number>();
    for (let i = 0; i < QUERIES; i++) {
      let res;
      if (r.chance(0.7)) {
        const qs = new URLSearchParams({ start: fuzzTime(r), m: fuzzM(r) });
        if (r.chance(0.3)) qs.set('end', fuzzTime(r));
        if (r.chance(0.2)) qs.set(pick(r, ['tsuid', 'ms', 'arrays', 'show_query', 'timezone', 'tz', 'format']), randomText(r, r.int(10)));
        res = await check('GET', `/api/query?${qs.toString()}`);
      } else {
        const body = r.chance(0.5)
          ? { start: fuzzTime(r), queries: [{ aggregator: pick(r, ['sum', 'avg', 'bogus', '']), metric: pick(r, ['fz.q', randomText(r, 8)]), downsample: r.chance(0.5) ? mutate(r, '1m-avg') : undefined, filters: [{ type: pick(r, ['regexp', 'wildcard', 'literal_or', 'iwildcard', 'x']), tagk: pick(r, ['host', 'dc', '', randomText(r, 4)]), filter: r.chance(0.5) ? pick(r, NASTY) : randomText(r, 12), groupBy: r.chance(0.5) }] }] }
          : randomJson(r, 4);
        res = await check('POST', '/api/query', r.chance(0.8) ? JSON.stringify(body) : mutate(r, JSON.stringify(body)));
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    expect(statuses.get(400)).toBeGreaterThan(QUERIES / 4);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(5);
  }, 90_000);

  it('catastrophic regexes against a 1000-character value answer fast; unsupported ones get a clear 400', async () => {
    // POST bodies: `m=` cannot carry `=`, `{` or `}` inside a filter.
    const q = (pattern: string): Promise<{ status: number; body: string; ms: number }> => check('POST', '/api/query',
      JSON.stringify({ start: TS - 1, queries: [{ aggregator: 'sum', metric: 'fz.q', filters: [{ type: 'regexp', tagk: 'host', filter: pattern, groupBy: true }] }] }));
    for (const p of ['(a*)*b', '(a|aa)*c', '(.*a){20}', '(?i)(A*)*B', '(a+)+$', `${'(a?)'.repeat(30)}${'a'.repeat(30)}`, '(x+x+)+y', '^(([a-z])+.)+[A-Z]([a-z])+$']) {
      const r = await q(p);
      expect(r.status, p).not.toBe(500);
      expect(r.ms, p).toBeLessThan(1000);
    }
    const hit = await q('^(a|aa)+$');
    expect(hit.status).toBe(200);
    expect(JSON.parse(hit.body)[0].tags.host).toBe(LONG_A);
    for (const [p, msg] of [['(a)\\1', 'backreferences'], ['web(?=0)', 'lookaround'], ['(?<!x)web', 'lookaround'], ['a*+', 'possessive'],
      ['x'.repeat(5000), 'pattern too long']] as const) {
      const r = await q(p);
      expect(r.status, p).toBe(400);
      expect(JSON.parse(r.body).error.message, p).toContain(msg);
    }
    const wild = await check('GET', `/api/query?start=${TS - 1}&m=${encodeURIComponent(`sum:fz.q{host=wildcard(${'*a'.repeat(500)}*)}`)}`);
    expect(wild.ms).toBeLessThan(1000);
  });

  it('ordinary Java-style patterns still select the right series', async () => {
    const hosts = async (pattern: string): Promise<string[]> => {
      const r = await check('POST', '/api/query', JSON.stringify({ start: TS - 1,
        queries: [{ aggregator: 'sum', metric: 'fz.q', filters: [{ type: 'regexp', tagk: 'host', filter: pattern, groupBy: true }] }] }));
      return r.status === 200 ? (JSON.parse(r.body) as Array<{ tags: { host: string } }>).map((x) => x.tags.host).sort() : [];
    };
    expect(await hosts('^web0[1-3]$')).toEqual(['web01', 'web02', 'web03']);
    expect(await hosts('(?i)^WEB1\\d$')).toHaveLength(10);
    expect(await hosts('web5[5-9]|web0\\b')).toEqual(['web55', 'web56', 'web57', 'web58', 'web59']);
    expect(await hosts('^\\p{L}{1000}$')).toEqual([LONG_A]);
    expect(await hosts('^web(?:4|5)9$')).toEqual(['web49', 'web59']);
  });
});

describe('query limits', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ queryMaxSeries: 40, queryMaxPoints: 60 });
    const points = [];
    for (let s = 0; s < 100; s++) for (let k = 0; k < 3; k++) points.push({ metric: 'lim.m', timestamp: TS + k * 60, value: k, tags: { host: `h${s}` } });
    expect((await srv.app.inject({ method: 'POST', url: '/api/put', payload: points })).statusCode).toBe(204);
  });
  afterAll(async () => srv.stop());

  it('more series or points than allowed: 413 naming the limit; within them: 200', async () => {
    const series = await srv.app.inject({ method: 'GET', url: `/api/query?start=${TS - 1}&m=sum:lim.m` });
    expect(series.statusCode).toBe(413);
    expect(series.body).toMatch(/Query exceeded a limit: more than 40 series|more than 60 data points/);
    // 30 series of 3 points (literals go into the key filter): within the series limit, over the points limit.
    const thirty = Array.from({ length: 30 }, (_, i) => `h${i}`).join('|');
    const points = await srv.app.inject({ method: 'GET', url: `/api/query?start=${TS - 1}&m=${encodeURIComponent(`sum:lim.m{host=${thirty}}`)}` });
    expect(points.statusCode).toBe(413);
    expect(points.body).toContain('more than 60 data points');
    const ok = await srv.app.inject({ method: 'GET', url: `/api/query?start=${TS - 1}&m=${encodeURIComponent('sum:lim.m{host=h1|h2|h3}')}` });
    expect(ok.statusCode).toBe(200);
  });

  it('a fill policy over decades is refused with 413 at once, not allocated (found by the fuzz above)', async () => {
    const started = Date.now();
    const r = await srv.app.inject({ method: 'GET', url: `/api/query?start=176726520&m=${encodeURIComponent('sum:5m-max-nan:lim.m{host=h1}')}` });
    expect(r.statusCode).toBe(413);
    expect(r.body).toContain('buckets per series');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
