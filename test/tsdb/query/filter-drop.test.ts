/**
 * A tag filter that every series of the metric matches (a `*` wildcard on a tag all of them
 * carry) is not pushed to the store as a key regex: the series index shows it narrows
 * nothing, and the planner tests each scanned series instead of every row. A series the
 * index does not know yet (written by another writer, or after the check) must still be
 * dropped when it does not match.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import type { ScanSpec } from '../../../core/api/store.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { openFixture, openedServers, pt } from '../helpers/tsdb-fixture.js';

const T0 = Date.UTC(2026, 0, 1);
const CONFIG: Partial<TsdbConfig> = { queryExactMaxRows: 0, queryDecodeThreads: 0, saltBuckets: 4 };
const opened = openedServers();
afterAll(() => opened.closeAll());

/** Records the row filter of every scan of the data table. */
function spyScans(tsdb: Tsdb): Array<ScanSpec['filter']> {
  const seen: Array<ScanSpec['filter']> = [];
  const data = tsdb.data;
  const scan = data.scan.bind(data);
  data.scan = (opts?: ScanSpec) => {
    seen.push(opts?.filter);
    return scan(opts);
  };
  return seen;
}

async function query(app: FastifyInstance, filters: object[]): Promise<Array<{ tags: Record<string, string>; dps: Record<string, number> }>> {
  const r = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end: T0 + 3_600_000, queries: [{ metric: 'm', aggregator: 'sum', filters }] } });
  expect(r.statusCode, r.body).toBe(200);
  return JSON.parse(r.body) as Array<{ tags: Record<string, string>; dps: Record<string, number> }>;
}

const ALL_HOSTS = [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: true }];

describe('row filters the series index shows to narrow nothing', () => {
  it('are not sent to the store, and the answer is the same', async () => {
    const { tsdb } = await openFixture(CONFIG, T0 + 3_600_000);
    const app = opened.add(await buildServer({ tsdb }), tsdb);
    await tsdb.ingest.write([pt('m', T0, 1, { host: 'a' }), pt('m', T0, 2, { host: 'b', dc: 'x' }), pt('m', T0 + 1000, 3, { host: 'a' })]);
    const scans = spyScans(tsdb);
    const all = await query(app, ALL_HOSTS);
    expect(all.map((s) => [s.tags, s.dps])).toEqual([
      [{ host: 'a' }, { [T0 / 1000]: 1, [T0 / 1000 + 1]: 3 }],
      [{ host: 'b', dc: 'x' }, { [T0 / 1000]: 2 }],
    ]);
    expect(scans.length).toBe(4);
    expect(scans.every((f) => f === undefined)).toBe(true);
    // A filter that narrows (only b has dc) is still pushed down.
    scans.length = 0;
    const dc = await query(app, [{ type: 'wildcard', tagk: 'dc', filter: '*', groupBy: true }]);
    expect(dc.map((s) => s.tags)).toEqual([{ host: 'b', dc: 'x' }]);
    expect(scans.length).toBe(4);
    expect(scans.every((f) => f?.kind === 'keyRegex')).toBe(true);
  });

  it('still drop the series the index did not know when they do not match', async () => {
    const { tsdb } = await openFixture(CONFIG, T0 + 3_600_000);
    const app = opened.add(await buildServer({ tsdb }), tsdb);
    await tsdb.ingest.write([pt('m', T0, 1, { host: 'a' }), pt('m', T0, 2, { host: 'b' })]);
    expect((await query(app, ALL_HOSTS)).length).toBe(2); // the index's copy is loaded now
    // A second writer on the same store adds series this process's index copy never sees.
    const other = await Tsdb.open(tsdb.store, { config: CONFIG, now: () => T0 + 3_600_000, background: false });
    await other.ingest.write([pt('m', T0, 5, { dc: 'y' }), pt('m', T0, 7, { host: 'c' })]);
    await other.close();
    const scans = spyScans(tsdb);
    const all = await query(app, ALL_HOSTS);
    expect(scans.every((f) => f === undefined)).toBe(true);
    expect(all.map((s) => [s.tags, s.dps])).toEqual([
      [{ host: 'a' }, { [T0 / 1000]: 1 }],
      [{ host: 'b' }, { [T0 / 1000]: 2 }],
      [{ host: 'c' }, { [T0 / 1000]: 7 }],
    ]);
    // Not grouped by host, the series without one would be summed in (5).
    const sum = await query(app, [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: false }]);
    expect(sum.map((s) => s.dps)).toEqual([{ [T0 / 1000]: 10 }]);
  });
});
