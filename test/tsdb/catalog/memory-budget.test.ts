/**
 * One byte budget for every per-series structure (tsdb/memory/catalog-memory.ts): with
 * far more series than a small budget holds — written, asked for by name, by last point
 * and by tag-filtered queries, over several hours — each structure stays within its share
 * at every step, so their sum stays within horae.catalog.memory_bytes, and /api/stats
 * reports the same figures. Every structure the catalog keeps is in the accounting.
 */
import { describe, expect, it } from 'vitest';
import { executeQuery } from '../../../tsdb/query/execute.js';
import { lastPoints } from '../../../tsdb/query/last-point.js';
import { parseQueryJson } from '../../../tsdb/query/query-spec.js';
import { CATALOG_SHARES } from '../../../tsdb/memory/catalog-memory.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const BUDGET = 256 * 1024;
/** What a structure may pass its bound by: an entry or two past a rotation's check. */
const SLACK = 2048;
const HOUR = 3_600_000;

describe('the catalog memory budget', () => {
  it('holds every structure within its share with many more series than fit', async () => {
    const T0 = Date.UTC(2026, 0, 1);
    const { tsdb, clock } = await openFixture({ saltBuckets: 4, catalogMemoryBytes: BUDGET }, T0);
    try {
      const mem = tsdb.catalog.memory;
      expect(mem.stats().map((s) => s.name).sort()).toEqual(Object.keys(CATALOG_SHARES).sort());
      const most = new Map<string, number>();
      const check = (): void => {
        for (const s of mem.stats()) {
          expect(s.bytes, s.name).toBeLessThanOrEqual(s.maxBytes + SLACK);
          most.set(s.name, Math.max(most.get(s.name) ?? 0, s.bytes / s.maxBytes));
        }
        expect(mem.usedBytes()).toBeLessThanOrEqual(BUDGET + SLACK * mem.stats().length);
      };
      const metrics = ['cpu.user', 'cpu.sys', 'mem.free', 'disk.io'];
      for (let hour = 0; hour < 3; hour++) {
        for (let batch = 0; batch < 4; batch++) {
          clock.now = T0 + hour * HOUR + batch * 60_000;
          const pts = [];
          // 400 hosts a batch, new ones every batch: 4,800 hosts, 19,200 series in all.
          for (let h = 0; h < 400; h++) {
            const host = `host-${hour * 1600 + batch * 400 + h}`;
            for (const m of metrics) pts.push(pt(m, Math.floor(clock.now / 1000), h, { host, dc: `dc${h % 7}`, rack: `r${h % 31}` }));
          }
          expect((await tsdb.ingest.write(pts)).every((o) => o === undefined)).toBe(true);
          check();
          // Names, plans and last points: a tag-filtered query and /api/query/last of its series.
          const q = parseQueryJson({ start: Math.floor(T0 / 1000), queries: metrics.map((m) => ({ metric: m, aggregator: 'none', tags: { dc: `dc${batch}` } })) }, clock.now);
          const run = await executeQuery(tsdb, q, { maxSeries: 100_000, maxPoints: 10_000_000 });
          expect(run.series.length).toBeGreaterThan(0);
          const tsuids = await tsdb.index.tsuids((await tsdb.metrics.getId('cpu.user'))!, 2000);
          await lastPoints(tsdb, tsuids, 0, clock.now);
          check();
        }
        await tsdb.compactor.runOnce();
        check();
      }
      // Every structure came near its bound at some step (a bound that never binds tests nothing).
      // (Plans: a plan matching more series than the share holds is not kept.)
      for (const [name, f] of most) expect(f, name).toBeGreaterThan(name === 'plans' ? 0 : 0.4);
      const stats = await tsdb.statsPoints();
      const stat = (structure: string, metric: string): number | undefined => stats.find((p) => p.metric === metric && p.tags.structure === structure)?.value;
      for (const s of mem.stats()) expect(stat(s.name, 'horae.catalog.max_bytes')).toBe(s.maxBytes);
      expect(stat('all', 'horae.catalog.max_bytes')).toBe(BUDGET);
    } finally {
      await tsdb.close();
    }
  }, 120_000);
});
