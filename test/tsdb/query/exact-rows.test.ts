/**
 * Queries narrowed by the series index to a few rows read them by exact gets
 * (horae.query.exact_max_rows); they must answer byte for byte as the salt-bucket scans do:
 * the OpenTSDB conformance cases and seeded random data (literal filters, TSUID queries,
 * windows across hours, raw and compressed hours, annotations). The series index must
 * find series written after the metric was first queried.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { Random } from '../../../core/util/random.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { CONFORMANCE_CASES, caseBodies, putOk as put, queryRaw as query } from '../helpers/http-cases.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const SCAN: Partial<TsdbConfig> = { queryExactMaxRows: 0, queryDecodeThreads: 0 };
const EXACT: Partial<TsdbConfig> = { queryExactMaxRows: 1_000_000, queryDecodeThreads: 0 };
const open: Array<{ app: FastifyInstance; tsdb: Tsdb }> = [];

afterAll(async () => {
  for (const o of open) {
    await o.app.close();
    await o.tsdb.close();
  }
});

async function server(config: Partial<TsdbConfig>, nowMs: number): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture({ saltBuckets: 8, ...config }, nowMs);
  const o = { app: await buildServer({ tsdb }), tsdb };
  open.push(o);
  return o;
}

/** The statsSummary's saltScanners of a query: 0 when it was answered by exact gets. */
async function saltScanners(app: FastifyInstance, q: object): Promise<number> {
  const r = await app.inject({ method: 'POST', url: '/api/query', payload: { ...q, showSummary: true } });
  expect(r.statusCode, r.body).toBe(200);
  const body = JSON.parse(r.body) as Array<{ statsSummary?: { saltScanners: number } }>;
  return body.find((x) => x.statsSummary !== undefined)!.statsSummary!.saltScanners;
}

describe('exact row gets', () => {
  it('answer every OpenTSDB conformance case as the bucket scans do', async () => {
    for (const c of CONFORMANCE_CASES) {
      const a = await server(SCAN, 1357100000000);
      const b = await server(EXACT, 1357100000000);
      for (const body of caseBodies(c)) {
        await put(a.app, body);
        await put(b.app, body);
      }
      expect(await query(b.app, c.query), c.name).toEqual(await query(a.app, c.query));
    }
  });

  it('answer random data under literal filters and TSUIDs as the bucket scans do', async () => {
    const T0 = Date.UTC(2026, 0, 1) / 1000;
    const now = (T0 + 30 * 3600) * 1000;
    const a = await server(SCAN, now);
    const b = await server(EXACT, now);
    const rng = new Random(20261126);
    const points: unknown[] = [];
    for (let h = 0; h < 12; h++) {
      const kind = h % 3; // 0 floats, 1 ints, 2 sparse floats with ms timestamps
      for (let t = 0; t < 6 * 3600; t += 60 + (kind === 2 ? rng.int(900) : 0)) {
        const value = kind === 1 ? rng.int(1000) : (rng.int(1 << 30) / (1 << 30)) * 100 - 50;
        points.push({ metric: 'm', timestamp: (T0 + t) * 1000 + (kind === 2 ? rng.int(1000) : 0), value, tags: { host: `h${h}`, dc: `d${h % 3}`, ...(h % 4 === 0 ? { rack: `r${h}` } : {}) } });
      }
    }
    points.push({ metric: 'other', timestamp: T0 + 10, value: 1, tags: { host: 'h1', dc: 'd1' } });
    // Hours 0-2 written and compressed into hour cells on both stores; the rest stay raw.
    const tsOf = (p: unknown): number => { const t = (p as { timestamp: number }).timestamp; return t < 1e12 ? t * 1000 : t; };
    const early = points.filter((p) => tsOf(p) < (T0 + 3 * 3600) * 1000);
    const late = points.filter((p) => tsOf(p) >= (T0 + 3 * 3600) * 1000);
    for (const batch of [early, late]) {
      for (let i = 0; i < batch.length; i += 5000) {
        await put(a.app, batch.slice(i, i + 5000));
        await put(b.app, batch.slice(i, i + 5000));
      }
      if (batch === early) for (const o of [a, b]) await o.tsdb.compactor.runOnce({ force: true, sweep: true });
    }
    const tsuidOf = async (o: { tsdb: Tsdb }, host: string): Promise<string> => {
      const id = (await o.tsdb.metrics.getId('m'))!;
      const hostK = toHex((await o.tsdb.tagks.getId('host'))!);
      const hostV = toHex((await o.tsdb.tagvs.getId(host))!);
      const all = await o.tsdb.index.tsuids(id, 1000);
      return toHex(all.find((t) => toHex(t).includes(hostK + hostV))!).toUpperCase();
    };
    const h1 = await tsuidOf(b, 'h1');
    expect(await tsuidOf(a, 'h1')).toBe(h1);
    const note = { startTime: T0 + 100, description: 'deploy', tsuid: h1 };
    for (const o of [a, b]) expect((await o.app.inject({ method: 'POST', url: '/api/annotation', payload: note })).statusCode).toBe(200);
    const shapes: object[] = [
      { aggregator: 'max', downsample: '1m-max', tags: { host: 'h1' } },
      { aggregator: 'sum', downsample: '5m-avg', tags: { host: 'h2|h5|h11' } },
      { aggregator: 'none', tags: { host: 'h3' } },
      { aggregator: 'avg', downsample: '10m-sum-zero', filters: [{ type: 'literal_or', tagk: 'dc', filter: 'd1', groupBy: true }] },
      { aggregator: 'sum', filters: [{ type: 'literal_or', tagk: 'host', filter: 'h4|h8', groupBy: true }, { type: 'wildcard', tagk: 'rack', filter: '*', groupBy: false }] },
      { aggregator: 'sum', rate: true, rateOptions: { counter: true, counterMax: 1000 }, tags: { host: 'h7' } },
      { aggregator: 'count', downsample: '1h-count-null', filters: [{ type: 'literal_or', tagk: 'host', filter: 'h6|h9', groupBy: false }, { type: 'not_literal_or', tagk: 'dc', filter: 'd0', groupBy: false }] },
      { aggregator: 'sum', tags: { host: 'h1', dc: 'd1' }, explicitTags: true },
      { aggregator: 'sum', tags: { host: 'nope' } },
      { aggregator: 'p95', downsample: '15m-avg', tsuids: [h1] },
      { aggregator: 'none', tsuids: [h1, await tsuidOf(b, 'h10')] },
      // Buckets that cross an hour: a lone series reads up to the end of the query's last bucket.
      { aggregator: 'max', downsample: '7m-avg', tags: { host: 'h1' } },
      { aggregator: 'sum', rate: true, downsample: '90m-sum', tsuids: [h1] },
      { aggregator: 'none', downsample: '7m-min-zero', tags: { host: 'h3|h4' } },
    ];
    const windows: Array<[number, number]> = [
      [(T0 + 1800) * 1000, (T0 + 5 * 3600) * 1000],
      [(T0 + 3600) * 1000, (T0 + 7200) * 1000 - 1],
      [(T0 + 2 * 3600 + 123) * 1000, (T0 + 2 * 3600 + 200) * 1000],
      [T0 * 1000, now],
      // Ends inside a 7 m bucket that runs into the next hour (2:55:00-3:02:00).
      [(T0 + 1000) * 1000, (T0 + 10780) * 1000],
    ];
    for (const shape of shapes) {
      for (const [start, end] of windows) {
        const q = { start, end, msResolution: true, showQuery: true, showTSUIDs: true, queries: [{ metric: 'm', ...shape }] };
        const [sa, sb] = [await query(a.app, q), await query(b.app, q)];
        expect(sa.status, sa.body).toBe(200);
        expect(sb, JSON.stringify(shape)).toEqual(sa);
      }
    }
    // The narrow shapes really took the exact path, and the wide ones the scans.
    const narrow = { start: T0 * 1000, end: now, queries: [{ metric: 'm', aggregator: 'sum', tags: { host: 'h1' } }] };
    expect(await saltScanners(b.app, narrow)).toBe(0);
    expect(await saltScanners(a.app, narrow)).toBe(8);
    expect(await saltScanners(b.app, { ...narrow, queries: [{ metric: 'm', aggregator: 'sum' }] })).toBe(8);
  });

  it('read the hour after the query for a series interpolated from its next point, and skip it for a lone series', async () => {
    const T0 = Date.UTC(2026, 0, 1) / 1000;
    const now = (T0 + 3 * 3600) * 1000;
    const a = await server(SCAN, now);
    const b = await server(EXACT, now);
    // b's only point after 0:59:30 is in the next hour: the sum at 0:59:30 interpolates it.
    const points = [
      { metric: 'm', timestamp: T0 + 3570, value: 10, tags: { host: 'a' } },
      { metric: 'm', timestamp: T0 + 3510, value: 100, tags: { host: 'b' } },
      { metric: 'm', timestamp: T0 + 3660, value: 250, tags: { host: 'b' } },
    ];
    for (const o of [a, b]) await put(o.app, points);
    const window = { start: T0 * 1000, end: (T0 + 3600) * 1000 - 1 };
    const sum = { ...window, queries: [{ metric: 'm', aggregator: 'sum', filters: [{ type: 'literal_or', tagk: 'host', filter: 'a|b', groupBy: false }] }] };
    const both = await query(b.app, sum);
    expect(JSON.parse(both.body)[0].dps).toEqual({ [T0 + 3510]: 100, [T0 + 3570]: 10 + 160 });
    expect(both).toEqual(await query(a.app, sum));
    const summary = async (o: { app: FastifyInstance }, host: string): Promise<{ datapoints: number; saltScanners: number }> => {
      const r = await o.app.inject({ method: 'POST', url: '/api/query', payload: { ...window, showSummary: true, queries: [{ metric: 'm', aggregator: 'sum', tags: { host } }] } });
      return (JSON.parse(r.body) as Array<{ statsSummary?: { datapoints: number; saltScanners: number } }>).find((x) => x.statsSummary !== undefined)!.statsSummary!;
    };
    // Alone, b's answer ends with the query: the exact gets do not read its next hour.
    expect(await summary(b, 'b')).toMatchObject({ datapoints: 1, saltScanners: 0 });
    expect(await summary(a, 'b')).toMatchObject({ datapoints: 2 });
    const lone = { ...window, queries: [{ metric: 'm', aggregator: 'sum', tags: { host: 'b' } }] };
    expect(await query(b.app, lone)).toEqual(await query(a.app, lone));
  });

  it('reads the rows of a series created after the metric was queried', async () => {
    const T0 = Date.UTC(2026, 0, 1);
    const { tsdb } = await openFixture({ saltBuckets: 4, queryExactMaxRows: 256 }, T0 + 3_600_000);
    const app = await buildServer({ tsdb });
    open.push({ app, tsdb });
    await tsdb.ingest.write([pt('m', T0, 1, { host: 'a' }), pt('m', T0, 2, { host: 'b' })]);
    const q = (host: string): object => ({ start: T0, end: T0 + 3_600_000, queries: [{ metric: 'm', aggregator: 'sum', tags: { host } }] });
    const first = JSON.parse((await query(app, q('a'))).body) as Array<{ dps: Record<string, number> }>;
    expect(first[0]!.dps).toEqual({ [String(T0 / 1000)]: 1 });
    // 'c' is a new series of a metric queried before; 'd' and 'e' are recorded while the index is read.
    await tsdb.ingest.write([pt('m', T0 + 1000, 3, { host: 'c' })]);
    const id = (await tsdb.metrics.getId('m'))!;
    const fresh = await openFixture({ saltBuckets: 4 }, T0);
    open.push({ app: await buildServer({ tsdb: fresh.tsdb }), tsdb: fresh.tsdb });
    await fresh.tsdb.ingest.write([pt('m', T0, 1, { host: 'a' })]);
    const fid = (await fresh.tsdb.metrics.getId('m'))!;
    const [during] = await Promise.all([
      fresh.tsdb.index.matching(fid, [], 100),
      fresh.tsdb.ingest.write([pt('m', T0, 4, { host: 'd' }), pt('m', T0, 5, { host: 'e' })]),
    ]);
    expect(during.length).toBeGreaterThanOrEqual(1);
    expect((await fresh.tsdb.index.matching(fid, [], 100)).length).toBe(3);
    const third = JSON.parse((await query(app, q('c'))).body) as Array<{ dps: Record<string, number> }>;
    expect(third[0]!.dps).toEqual({ [String((T0 + 1000) / 1000)]: 3 });
    expect((await tsdb.index.matching(id, [], 100)).length).toBe(3);
  });
});
