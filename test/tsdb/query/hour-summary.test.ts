/**
 * Hour buckets read from the hour cell's summary (tsdb/SCHEMA.md "Hour summary",
 * point-append.ts appendHourSummary) are exactly the buckets that decoding the cell and
 * downsampling its points gives: for random cells of every shape (NaN payloads,
 * infinities, big integers, mixed kinds), for every function the summary serves, and
 * through the scan, where only whole compressed hours in the window take the shortcut.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { decodeHourBlock, encodeHourBlock, hourBlockSummary, hourBlockSummaryChecked } from '../../../tsdb/codec/hour-codec.js';
import { SUMMARY_MIN_POINTS } from '../../../tsdb/codec/hour-format.js';
import { AGGREGATOR_NAMES, getAggregator } from '../../../tsdb/query/aggregators.js';
import { DecodePool } from '../../../tsdb/query/decode-pool.js';
import { parseDownsample } from '../../../tsdb/query/downsample-spec.js';
import { SeriesPreparer, scanWindow } from '../../../tsdb/query/pipeline.js';
import { appendHourSummary, appendRowBuckets, summaryUseOf } from '../../../tsdb/query/point-append.js';
import { scanSeries } from '../../../tsdb/query/scanner.js';
import type { ScanStats } from '../../../tsdb/query/scanner.js';
import type { Points } from '../../../tsdb/query/series.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import { randomBlock } from '../codec/codec-data.js';
import { openFixture, openedServers, pt } from '../helpers/tsdb-fixture.js';

const HOUR = 3_600_000;
const T0 = 1356998400;
/** The functions whose hour bucket a summary gives, and what it gives. */
const SERVED = { sum: 'sum', zimsum: 'sum', pfsum: 'sum', avg: 'avg', count: 'count' } as const;

function emptyPoints(): Points {
  return { count: 0, ts: new Float64Array(0), values: new Float64Array(0), isInt: new Uint8Array(0) };
}

/** The points' (ts, value bits) pairs: NaN payloads and -0 compared exactly. */
function bits(p: Points): string[] {
  const f = new Float64Array(1);
  const u = new BigUint64Array(f.buffer);
  return Array.from({ length: p.count }, (_, i) => {
    f[0] = p.values[i]!;
    return `${p.ts[i]}:${u[0]!.toString(16)}:${p.isInt[i]}`;
  });
}

describe('hour summary', () => {
  it('serves sum, zimsum, pfsum, avg and count of hour buckets, nothing else', () => {
    const ds = (fn: string, intervalMs = HOUR) => ({ intervalMs, fn: getAggregator(fn) });
    for (const name of AGGREGATOR_NAMES) {
      if (name === 'none') continue;
      expect(summaryUseOf(ds(name)), name).toBe(SERVED[name as keyof typeof SERVED]);
      expect(summaryUseOf(ds(name, 900_000)), `${name} 15m`).toBeUndefined();
    }
    expect(summaryUseOf(undefined)).toBeUndefined();
  });

  it('gives the bucket that decoding and downsampling the cell gives, bit for bit', () => {
    const rng = new Random(20261127);
    let summarized = 0;
    for (let round = 0; round < 400; round++) {
      const b = randomBlock(rng);
      const cell = encodeHourBlock(b);
      const sm = hourBlockSummary(cell);
      if (b.count < SUMMARY_MIN_POINTS) {
        expect(sm).toBeUndefined();
        continue;
      }
      expect(sm).toBeDefined();
      summarized++;
      const decoded = decodeHourBlock(cell);
      const baseMs = (T0 + 3600 * rng.int(1000)) * 1000;
      for (const name of Object.keys(SERVED)) {
        const want = emptyPoints();
        const read = appendRowBuckets(want, decoded, baseMs, baseMs, baseMs + HOUR - 1, HOUR, getAggregator(name));
        const got = emptyPoints();
        const use = summaryUseOf({ intervalMs: HOUR, fn: getAggregator(name) })!;
        expect(appendHourSummary(got, sm!, baseMs, baseMs, baseMs + HOUR - 1, use)).toBe(read);
        expect(bits(got), `${name} round ${round}`).toEqual(bits(want));
      }
    }
    expect(summarized).toBeGreaterThan(40);
  });

  it('reads the summary in place exactly as the checked reader does, damaged cells included', () => {
    const rng = new Random(31);
    const outcome = (f: () => unknown): string => {
      try {
        return JSON.stringify(f(), (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)) ?? 'undefined';
      } catch (err) {
        return `throws ${(err as Error).name}`;
      }
    };
    let compared = 0;
    for (let round = 0; round < 300; round++) {
      const cell = encodeHourBlock(randomBlock(rng));
      const variants = [cell, cell.subarray(0, rng.int(Math.min(cell.length, 16) + 1))];
      for (let k = 0; k < 4; k++) {
        const bad = cell.slice(0, Math.min(cell.length, 16));
        bad[rng.int(bad.length)] = rng.int(256);
        variants.push(bad);
      }
      // Long varints: a count of 2^21 points or more (one over the limit), a NaN count of 128 or more.
      variants.push(Uint8Array.of(0x11, 0x80, 0x80, 0x80, 0x01, 0x00, 0x40, 0x40, 0, 0, 0, 0, 0, 0, 0));
      variants.push(Uint8Array.of(0x11, 0x81, 0xdd, 0xdb, 0x01, 0x00, 0x40, 0x40, 0, 0, 0, 0, 0, 0, 0));
      variants.push(Uint8Array.of(0x11, 0x81, 0x02, 0x80, 0x01, 0x40, 0x40, 0, 0, 0, 0, 0, 0, 0, 0));
      for (const v of variants) {
        expect(outcome(() => hourBlockSummary(v)), Buffer.from(v).toString('hex')).toBe(outcome(() => hourBlockSummaryChecked(v)));
        compared++;
      }
    }
    expect(compared).toBe(300 * 9);
  });

  it('cells just below the threshold carry none, and at it one', () => {
    const rng = new Random(5);
    for (const n of [SUMMARY_MIN_POINTS - 1, SUMMARY_MIN_POINTS]) {
      const b = randomBlock(rng);
      b.count = Math.min(b.count, n);
      if (b.count < n) continue;
      expect(hourBlockSummary(encodeHourBlock(b)) !== undefined, String(n)).toBe(n >= SUMMARY_MIN_POINTS);
    }
  });
});

describe('hour summary in the scan', () => {
  const pool = new DecodePool(2);
  const opened = openedServers(pool);
  afterAll(() => opened.closeAll());

  /** A store with 5 hours of 10 s points for 3 hosts, hours 0-2 compressed; decoded here or by workers. */
  async function loaded(config: Partial<TsdbConfig>): Promise<FastifyInstance> {
    const { tsdb, clock } = await openFixture({ saltBuckets: 4, ...config }, (T0 + 3 * 3600) * 1000, config.queryDecodeThreads === 0 ? {} : { decodePool: pool });
    const app = opened.add(await buildServer({ tsdb }), tsdb);
    const rng = new Random(9);
    const pts: IncomingPoint[] = [];
    for (let h = 0; h < 3; h++) {
      for (let t = T0; t < T0 + 5 * 3600; t += 10) pts.push(pt('m', t, h === 1 ? rng.int(100) : Math.round(rng.next() * 1e4) / 100, { host: `h${h}` }));
    }
    await tsdb.ingest.write(pts);
    await tsdb.compactor.runOnce({ force: true });
    clock.now = (T0 + 6 * 3600) * 1000;
    return app;
  }

  it('queries that summaries answer stay on the main thread; the others go to the workers and answer alike', async () => {
    const serial = await loaded({ queryDecodeThreads: 0 });
    const parallel = await loaded({ queryDecodeThreads: 2, queryParallelMinRows: 0 });
    for (const q of [
      { aggregator: 'sum', downsample: '1h-avg' },
      { aggregator: 'none', downsample: '1h-sum' },
      { aggregator: 'max', downsample: '1h-count', filters: [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: true }] },
      { aggregator: 'sum', downsample: '1h-max' },
      { aggregator: 'sum', downsample: '30m-avg' },
    ]) {
      const sent = pool.rowsSent;
      const body = { start: T0, end: T0 + 5 * 3600, showSummary: true, queries: [{ metric: 'm', ...q }] };
      const [a, b] = await Promise.all([serial, parallel].map((app) => app.inject({ method: 'POST', url: '/api/query', payload: body })));
      expect(a!.statusCode, a!.body).toBe(200);
      const parse = (text: string): { series: unknown[]; hourSummaries: number } => {
        const all = JSON.parse(text) as Array<{ statsSummary?: { hourSummaries: number } }>;
        return { series: all.filter((x) => x.statsSummary === undefined), hourSummaries: all.find((x) => x.statsSummary !== undefined)!.statsSummary!.hourSummaries };
      };
      const [sa, sb] = [parse(a!.body), parse(b!.body)];
      expect(sb.series, JSON.stringify(q)).toEqual(sa.series);
      // Hours 0-2 of 3 series are whole compressed hours; a max or a 30 m bucket has no summary.
      const served = q.downsample.startsWith('1h-') && q.downsample !== '1h-max';
      expect(sa.hourSummaries, JSON.stringify(q)).toBe(served ? 9 : 0);
      expect(sb.hourSummaries, JSON.stringify(q)).toBe(sa.hourSummaries);
      // Reading a summary costs less than packing the row for a worker.
      if (served) expect(pool.rowsSent, JSON.stringify(q)).toBe(sent);
      else expect(pool.rowsSent, JSON.stringify(q)).toBeGreaterThan(sent);
    }
  });

  it('answers as downsampling every point does, taking the summary only for whole compressed hours', async () => {
    const { tsdb, clock } = await openFixture({ saltBuckets: 4, queryDecodeThreads: 0 }, (T0 + 3 * 3600) * 1000);
    const app = opened.add(await buildServer({ tsdb }), tsdb);
    const rng = new Random(77);
    const pts: IncomingPoint[] = [];
    for (let h = 0; h < 5; h++) {
      // 10 s series with gaps (about 250-360 points an hour: summaries), and one every 60 s (none).
      const step = h === 4 ? 60_000 : 10_000;
      for (let t = T0 * 1000; t < (T0 + 6 * 3600) * 1000; t += step) {
        if (h !== 4 && rng.chance(0.2)) continue;
        const v = h % 2 === 0 ? rng.int(1000) - 500 : Math.round(rng.next() * 10_000) / 100;
        pts.push(pt('m', h === 1 ? t + rng.int(1000) : Math.floor(t / 1000), v, { host: `h${h}` }));
      }
    }
    await tsdb.ingest.write(pts);
    await tsdb.compactor.runOnce({ force: true }); // hours 0-2 compressed, the rest raw
    clock.now = (T0 + 7 * 3600) * 1000;
    // A late point in hour 1 of h0: that row has a raw cell beside its hour cell, so it is decoded.
    await tsdb.ingest.write([pt('m', T0 + 3600 + 5, 12345, { host: 'h0' })]);
    const metricUid = (await tsdb.metrics.getId('m'))!;
    // [start, end, summaries]: the whole compressed hours (0-2) of the four dense series
    // in the scan window (hour-aligned; for an end on an hour boundary it takes the next
    // hour too), less h0's hour 1, which also holds a raw cell.
    // The last one is a scan window that cuts hours 0 and 2: only hour 1 is whole.
    const windows: Array<[number, number, number, boolean?]> = [
      [T0 * 1000, (T0 + 6 * 3600) * 1000, 11],
      [(T0 + 1800) * 1000, (T0 + 4 * 3600) * 1000 + 17, 11],
      [(T0 + 3600) * 1000, (T0 + 2 * 3600) * 1000 - 1, 7],
      [(T0 + 2 * 3600 + 5) * 1000, (T0 + 2 * 3600 + 600) * 1000, 4],
      [T0 * 1000 + 1234, (T0 + 3 * 3600) * 1000 - 77, 3, true],
    ];
    let summaries = 0;
    for (const fn of AGGREGATOR_NAMES.filter((n) => n !== 'none')) {
      for (const [startMs, endMs, whole, direct] of windows) {
        const ds = parseDownsample(`1h-${fn}`, { aggregators: new Set(AGGREGATOR_NAMES) });
        const win = direct === true ? { startMs, endMs: endMs + 1 } : scanWindow(startMs, endMs, ds);
        const preparer = new SeriesPreparer({ startMs, endMs, aggregator: 'sum', downsample: ds, scanStartMs: win.startMs, scanEndMs: win.endMs } as never);
        const stats: ScanStats = { rows: 0, cells: 0, points: 0, buckets: 0, summaries: 0 };
        const range = { metricUid, startMs: win.startMs, endMs: win.endMs - 1 };
        const agg = getAggregator(fn);
        const fused = await scanSeries(tsdb, { ...range, downsample: { intervalMs: ds.intervalMs, fn: agg } }, stats);
        // The same function under another identity: no summary, every row decoded.
        const decodedFn = { ...agg, runDouble: (v: Float64Array, a: number, b: number) => agg.runDouble(v, a, b) };
        const decoded = await scanSeries(tsdb, { ...range, downsample: { intervalMs: ds.intervalMs, fn: decodedFn } });
        const plain = await scanSeries(tsdb, range);
        expect(fused.length).toBe(plain.length);
        expect(decoded.length).toBe(plain.length);
        for (let i = 0; i < plain.length; i++) {
          const got = bits(preparer.prepareDownsampled(fused[i]!));
          expect(got, `1h-${fn} [${startMs}, ${endMs}] ${i}`).toEqual(bits(preparer.prepareDownsampled(decoded[i]!)));
          // downsample() over every point, for a scan window as queries make them.
          if (direct !== true) expect(got, `1h-${fn} [${startMs}, ${endMs}] ${i}`).toEqual(bits(preparer.prepare(plain[i]!)));
        }
        expect(stats.summaries, `1h-${fn} [${startMs}, ${endMs}]`).toBe(fn in SERVED ? whole : 0);
        summaries += stats.summaries;
      }
    }
    expect(summaries).toBeGreaterThan(0);
    // The query API says how many hour rows it answered from summaries.
    const r = await app.inject({
      method: 'POST', url: '/api/query',
      payload: { start: T0, end: T0 + 6 * 3600, showSummary: true, queries: [{ metric: 'm', aggregator: 'sum', downsample: '1h-avg' }] },
    });
    expect(r.statusCode, r.body).toBe(200);
    const body = JSON.parse(r.body) as Array<{ statsSummary?: { hourSummaries: number } }>;
    expect(body.find((x) => x.statsSummary !== undefined)!.statsSummary!.hourSummaries).toBe(11);
  });
});
