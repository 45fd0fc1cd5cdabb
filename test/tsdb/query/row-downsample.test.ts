/**
 * Downsampling row by row as the scan reads (ScanRequest.downsample, point-append.ts
 * appendRowBuckets) gives exactly the points that scanning every point and running
 * downsample() afterwards gives: every aggregator, intervals that divide an hour, windows
 * cutting hours, ms timestamps, raw and compressed rows, a rate on top.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { AGGREGATOR_NAMES, getAggregator } from '../../../tsdb/query/aggregators.js';
import { parseDownsample } from '../../../tsdb/query/downsample-spec.js';
import { SeriesPreparer, scanWindow } from '../../../tsdb/query/pipeline.js';
import { bucketsStayInRows } from '../../../tsdb/query/point-append.js';
import { scanSeries } from '../../../tsdb/query/scanner.js';
import type { Points } from '../../../tsdb/query/series.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;

function arrays(p: Points): { ts: number[]; values: number[]; isInt: number[] } {
  return { ts: [...p.ts.subarray(0, p.count)], values: [...p.values.subarray(0, p.count)], isInt: [...p.isInt.subarray(0, p.count)] };
}

describe('row-by-row downsampling', () => {
  it('knows which intervals keep every bucket inside one hour row', () => {
    expect([1, 250, 1000, 7500, 60_000, 300_000, 900_000, 3_600_000].every(bucketsStayInRows)).toBe(true);
    expect([0, -1, 7000, 3_600_001, 7_200_000, 86_400_000, 1.5].some(bucketsStayInRows)).toBe(false);
  });

  it('answers as downsample() over every point, for every aggregator and many windows', async () => {
    const { tsdb, clock } = await openFixture({ saltBuckets: 4 }, (T0 + 2 * 3600) * 1000);
    const rng = new Random(99);
    const pts: IncomingPoint[] = [];
    for (let h = 0; h < 6; h++) {
      let t = T0 * 1000 + rng.int(5000);
      while (t < (T0 + 5 * 3600) * 1000) {
        const v = h % 2 === 0 ? rng.int(1000) - 500 : (rng.int(1 << 30) / (1 << 30)) * 100;
        pts.push(pt('m', h % 3 === 0 ? t : Math.floor(t / 1000), v, { host: `h${h}` }));
        t += 1000 + rng.int(h === 5 ? 600_000 : 40_000);
      }
    }
    await tsdb.ingest.write(pts);
    await tsdb.compactor.runOnce({ force: true }); // hours 0-1 compressed, the rest raw
    clock.now = (T0 + 6 * 3600) * 1000;
    const metricUid = (await tsdb.metrics.getId('m'))!;
    const fns = AGGREGATOR_NAMES.filter((n) => n !== 'none');
    let compared = 0;
    for (let round = 0; round < 60; round++) {
      const fn = fns[rng.int(fns.length)]!;
      const interval = ['1s', '7500ms', '1m', '5m', '15m', '1h', '90s'][rng.int(7)]!;
      const ds = parseDownsample(`${interval}-${fn}`, { aggregators: new Set(AGGREGATOR_NAMES) });
      const startMs = (T0 + rng.int(4 * 3600)) * 1000 + rng.int(1000);
      const endMs = startMs + rng.int(3 * 3600 * 1000);
      const win = scanWindow(startMs, endMs, ds);
      const rateOn = rng.int(3) === 0;
      const preparer = new SeriesPreparer({ startMs, endMs, aggregator: 'sum', downsample: ds, scanStartMs: win.startMs, scanEndMs: win.endMs, ...(rateOn ? { rate: { counter: false } } : {}) } as never);
      const plain = await scanSeries(tsdb, { metricUid, startMs: win.startMs, endMs: win.endMs - 1 });
      const fused = await scanSeries(tsdb, { metricUid, startMs: win.startMs, endMs: win.endMs - 1, downsample: { intervalMs: ds.intervalMs, fn: getAggregator(fn) } });
      expect(fused.length).toBe(plain.length);
      for (let i = 0; i < plain.length; i++) {
        const want = arrays(preparer.prepare(plain[i]!));
        const got = arrays(fused[i]!.downsampled === true ? preparer.prepareDownsampled(fused[i]!) : preparer.prepare(fused[i]!));
        expect(got, `${interval}-${fn} [${startMs}, ${endMs}] rate ${rateOn}`).toEqual(want);
        compared += want.ts.length;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
