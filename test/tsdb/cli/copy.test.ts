/**
 * `horae copy` between two data directories under a configured retention: the data rows
 * whose whole hour is past their metric's retention (tsdb/compact/retention.ts: the
 * default, a prefix rule, an exact `forever`) are left out; every other point arrives,
 * and the copy answers a query with that retention exactly as the source does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { StoredPoint } from './cli-helpers.js';
import { horae, readAll, tempDir, withTsdb } from './cli-helpers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RETENTION = { retention: '3d', retentionMetrics: 'short.*=1d, audit.log=forever' };

/** The retention (ms) of a metric under RETENTION, undefined: forever. */
function keepOf(metric: string): number | undefined {
  if (metric === 'audit.log') return undefined;
  return metric.startsWith('short.') ? DAY : 3 * DAY;
}

describe('horae copy', () => {
  let t: { dir: string; cleanup: () => void };
  beforeEach(() => {
    t = tempDir();
  });
  afterEach(() => t.cleanup());

  it('leaves out the rows expired under the configured retention, and nothing else', async () => {
    const src = join(t.dir, 'src');
    const dst = join(t.dir, 'dst');
    const now = Date.now();
    const hourOf = (ms: number): number => ms - (ms % HOUR);
    // Points 10 d, 4 d, 2 d, 1 d + 2 h and 2 h back, and at the very edge of each retention.
    const ages = [10 * DAY, 4 * DAY, 3 * DAY + 2 * HOUR, 3 * DAY - 2 * HOUR, 2 * DAY, DAY + 2 * HOUR, DAY - 2 * HOUR, 2 * HOUR];
    await withTsdb(src, async (tsdb) => {
      const pts = [];
      for (const metric of ['app.req', 'short.lat', 'audit.log']) {
        for (const host of ['a', 'b']) for (const age of ages) pts.push({ metric, timestamp: now - age, value: age / HOUR, isInt: true, tags: [['host', host]] as Array<[string, string]> });
      }
      await tsdb.ingest.write(pts);
    });
    const config = join(t.dir, 'horae.conf');
    writeFileSync(config, `horae.retention = ${RETENTION.retention}\nhorae.retention.metrics = ${RETENTION.retentionMetrics}\n`);

    const r = await horae(['copy', '--data-dir', src, '--to', dst, '--config', config]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const all = (await readAll(src)).points;
    const expired = (p: StoredPoint): boolean => {
      const keep = keepOf(p.series.slice(0, p.series.indexOf('{')));
      return keep !== undefined && hourOf(p.ts) + HOUR <= Date.now() - keep;
    };
    const kept = all.filter((p) => !expired(p));
    expect(all.length - kept.length).toBeGreaterThanOrEqual(16); // some of every metric but audit.log
    expect(kept.length).toBeLessThan(all.length);
    expect((await readAll(dst)).points).toEqual(kept);
    expect(r.out).toContain(`; ${all.length - kept.length} rows of expired data left out`);

    // The copy answers a query under the retention as the source does.
    const query = async (dir: string): Promise<unknown> => withTsdb(dir, async (tsdb) => {
      const app = await buildServer({ tsdb });
      try {
        const res = await app.inject({ method: 'POST', url: '/api/query', payload: { start: now - 11 * DAY, end: now, queries: ['app.req', 'short.lat', 'audit.log'].map((metric) => ({ metric, aggregator: 'sum' })) } });
        expect(res.statusCode).toBe(200);
        return res.json();
      } finally {
        await app.close();
      }
    }, RETENTION);
    expect(await query(dst)).toEqual(await query(src));
  });
});
