/**
 * Fuzzes /api/put's decoders (the JSON byte parser put-json.ts, msgpack,
 * gzip) in-process through fastify's inject, with seeded input:
 *  - arrays of one good point plus points whose fields were replaced by random JSON
 *    values or nasty tokens, as JSON and as msgpack (?details);
 *  - the same bodies mutated byte by byte (truncations, flips, splices), and random bytes
 *    under random content types and encodings;
 *  - a corpus of classic attacks: __proto__/constructor keys, deep nesting, duplicate keys,
 *    huge numbers, a gzip bomb.
 * Checks: never a 5xx and never a stack trace or file path in a body; every status is
 * one of 200/204/400/413/415; ?details counts add up (success + failed = points sent); the
 * points the server says it stored are exactly the points it wrote (so no rejected point
 * was stored); every good point beside bad ones is stored; Object.prototype is untouched.
 */
import { gzipSync } from 'node:zlib';
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../tsdb/server/server.js';
import { FUZZ_SEED, NASTY, Random, mutate, pick, randomJson, randomText } from './helpers/sec-fuzz.js';
import { NOW_MS, startSecServer } from './helpers/sec-server.js';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1800);
const TS = Math.floor(NOW_MS / 1000) - 2 * 3600;
const FIELDS = ['metric', 'timestamp', 'value', 'tags'] as const;
const OK_STATUS = [200, 204, 400, 413, 415];

interface Sent { status: number; body: string; success: number }

function badPoint(r: Random): unknown {
  if (r.chance(0.15)) return randomJson(r, 3);
  const p: Record<string, unknown> = { metric: 'fz.put', timestamp: TS + r.int(3600), value: r.int(100), tags: { host: 'a' } };
  for (let i = 1 + r.int(3); i > 0; i--) {
    const f = pick(r, FIELDS);
    if (r.chance(0.2)) delete p[f];
    else if (f === 'tags' && r.chance(0.5)) p.tags = { [pick(r, NASTY)]: pick(r, NASTY), ...(r.chance(0.5) ? { host: randomJson(r, 1) } : {}) };
    else p[f] = r.chance(0.5) ? pick(r, NASTY) : randomJson(r, 2);
  }
  return p;
}

describe(`/api/put fuzz (seed ${FUZZ_SEED})`, () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ maxBodyBytes: 256 * 1024 });
  });
  afterAll(async () => srv.stop());

  const send = async (payload: string | Buffer, contentType: string, extra: Record<string, string> = {}): Promise<Sent> => {
    const res = await srv.app.inject({ method: 'POST', url: '/api/put?details', payload, headers: { 'content-type': contentType, ...extra } });
    expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
    expect(OK_STATUS, `${res.statusCode} ${res.body.slice(0, 200)}`).toContain(res.statusCode);
    expect(res.body).not.toMatch(/\bat .*\.(ts|js):\d+|\/work\/|node_modules/);
    let success = 0;
    if (res.statusCode === 200 || (res.statusCode === 400 && res.body.includes('"success"'))) {
      const d = JSON.parse(res.body) as { success: number; failed: number; errors: unknown[] };
      expect(d.errors.length).toBe(d.failed);
      success = d.success;
    }
    return { status: res.statusCode, body: res.body, success };
  };

  it(`${REQUESTS} structured and mutated bodies (JSON and msgpack): counts add up, good points stored`, async () => {
    const r = new Random(FUZZ_SEED);
    const written0 = srv.tsdb.ingest.stats().pointsWritten;
    const good: number[] = [];
    let claimed = 0;
    const statuses = new Map<number, number>();
    for (let i = 0; i < REQUESTS; i++) {
      const ts = TS + good.length;
      const points = [{ metric: 'fz.good', timestamp: ts, value: good.length, tags: { host: 'g' } }];
      for (let k = r.int(6); k > 0; k--) points.push(badPoint(r) as (typeof points)[number]);
      const asMsgpack = r.chance(0.3);
      const raw = asMsgpack ? pack(points) : Buffer.from(JSON.stringify(points));
      const type = asMsgpack ? 'application/x-msgpack' : pick(r, ['application/json', 'application/json; charset=utf-8', 'text/plain', '']);
      let sent: Sent;
      if (r.chance(0.6)) {
        // Intact structure: the good point must be stored and the counts must add up.
        sent = await send(raw, type || 'application/json');
        const d = JSON.parse(sent.body) as { success: number; failed: number };
        expect(d.success + d.failed, sent.body.slice(0, 300)).toBe(points.length);
        expect(d.success).toBeGreaterThanOrEqual(1);
        good.push(ts);
      } else if (r.chance(0.8)) {
        const mutated = asMsgpack ? Buffer.from(mutate(r, raw.toString('latin1')), 'latin1') : Buffer.from(mutate(r, raw.toString('utf8')));
        sent = await send(mutated, type || 'application/json');
      } else {
        const bytes = Buffer.from(r.bytes(r.int(400)));
        const enc = pick<Record<string, string>>(r, [{}, { 'content-encoding': 'gzip' }, { 'content-encoding': 'deflate' }, { 'content-encoding': 'br' }]);
        sent = await send(r.chance(0.5) ? bytes : Buffer.from(randomText(r, 200)), pick(r, ['application/json', 'application/x-msgpack', 'text/plain', 'image/png']), enc);
      }
      claimed += sent.success;
      statuses.set(sent.status, (statuses.get(sent.status) ?? 0) + 1);
    }
    expect(srv.tsdb.ingest.stats().pointsWritten - written0).toBe(claimed);
    const res = await srv.app.inject({ method: 'GET', url: `/api/query?start=${TS - 1}&end=${TS + REQUESTS + 1}&m=sum:fz.good` });
    expect(res.statusCode).toBe(200);
    const dps = (JSON.parse(res.body) as Array<{ dps: Record<string, number> }>)[0]!.dps;
    const storedTs = Object.keys(dps).map(Number);
    for (const ts of good) expect(storedTs).toContain(ts);
    expect(statuses.get(400)).toBeGreaterThan(REQUESTS / 4);
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  }, 60_000);

  it('classic attacks: prototype keys, deep nesting, duplicate keys, big numbers, a gzip bomb', async () => {
    const good = (ts: number): string => `{"metric":"fz.corpus","timestamp":${ts},"value":1,"tags":{"host":"c"}}`;
    const cases: Array<[string, string | Buffer, string, Record<string, string>?]> = [
      ['__proto__ in a point', `[${good(TS)},{"__proto__":{"polluted":1},"metric":"x","timestamp":${TS},"value":1,"tags":{"a":"b"}}]`, 'application/json'],
      ['__proto__ in tags', `[${good(TS + 1)},{"metric":"x","timestamp":${TS},"value":1,"tags":{"__proto__":{"polluted":1}}}]`, 'application/json'],
      ['constructor.prototype', `[{"metric":"x","timestamp":${TS},"value":1,"tags":{"constructor":{"prototype":{"polluted":1}}}}]`, 'application/json'],
      ['deep nesting', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'application/json'],
      ['duplicate keys', `[{"metric":"x","metric":"fz.dup","timestamp":${TS},"value":1,"value":"NaN","tags":{"host":"d"}}]`, 'application/json'],
      ['int beyond 2^63', `[{"metric":"fz.big","timestamp":${TS},"value":9223372036854775808,"tags":{"host":"d"}}]`, 'application/json'],
      ['5000-byte tag value', `[{"metric":"fz.long","timestamp":${TS},"value":1,"tags":{"host":"${'x'.repeat(5000)}"}}]`, 'application/json'],
      ['timestamp 14 digits', `[{"metric":"fz.big","timestamp":17040672001234,"value":1,"tags":{"host":"d"}}]`, 'application/json'],
      ['scalar', '42', 'application/json'],
      ['empty array', '[]', 'application/json'],
      ['gzip bomb', gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)), 'application/json', { 'content-encoding': 'gzip' }],
      ['msgpack bomb header', Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]), 'application/x-msgpack'],
    ];
    const rss0 = process.memoryUsage().rss;
    for (const [name, payload, type, headers] of cases) {
      const started = Date.now();
      const s = await send(payload, type, headers ?? {});
      expect(Date.now() - started, name).toBeLessThan(5000);
      if (name === 'gzip bomb') expect(s.status).toBe(413);
      if (name === '5000-byte tag value') expect(s.body).toContain('longer than 1024 bytes');
      if (name === 'deep nesting') expect(s.body).toContain('Datapoint must be an object');
      if (name.startsWith('timestamp 14')) expect(s.status, name).toBe(400);
    }
    expect(process.memoryUsage().rss - rss0).toBeLessThan(300 * 1024 * 1024);
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const res = await srv.app.inject({ method: 'GET', url: `/api/query?start=${TS - 1}&m=sum:fz.corpus` });
    expect(Object.keys((JSON.parse(res.body) as Array<{ dps: object }>)[0]!.dps)).toHaveLength(2);
  }, 30_000);
});
