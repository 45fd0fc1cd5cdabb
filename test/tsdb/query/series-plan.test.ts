/**
 * Series plans (tsdb/query/series-plan.ts) are reused while the catalog stays the same:
 * a repeated sub-query must not resolve or match again, and every change that can alter
 * its series — a new UID, a new series of known UIDs, a rename, dropCaches — must show in
 * the next answer. Plans must never be shared by sub-queries that differ in what selects
 * or groups their series.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildServer } from '../../../tsdb/server/build-server.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1_356_998_400;
let opened: { app: FastifyInstance; tsdb: Tsdb } | undefined;

afterEach(async () => {
  await opened?.app.close();
  await opened?.tsdb.close();
  opened = undefined;
});

async function open(): Promise<{ app: FastifyInstance; tsdb: Tsdb }> {
  const { tsdb } = await openFixture({}, (T0 + 7200) * 1000);
  await tsdb.ingest.write([pt('m', T0, 1, { host: 'a', dc: 'x' }), pt('m', T0 + 10, 2, { host: 'b', dc: 'x' }), pt('m', T0 + 20, 4, { host: 'Web', dc: 'y' })]);
  opened = { app: await buildServer({ tsdb }), tsdb };
  return opened;
}

type Out = Array<{ tags: Record<string, string>; aggregateTags: string[]; dps: Record<string, number> }>;

async function query(app: FastifyInstance, sub: object, start = T0): Promise<Out> {
  const r = await app.inject({ method: 'POST', url: '/api/query', payload: { start, end: T0 + 3599, queries: [{ metric: 'm', aggregator: 'sum', ...sub }] } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as Out;
}

const hosts = (out: Out): string[] => out.map((s) => s.tags.host ?? `*${s.aggregateTags.join(',')}`).sort();

describe('series plans', () => {
  it('are reused by a repeated sub-query, whatever its times', async () => {
    const { app, tsdb } = await open();
    const matching = vi.spyOn(tsdb.index, 'matching');
    const tagvIds = vi.spyOn(tsdb.tagvs, 'getId');
    const sub = { tags: { host: 'a' } };
    expect(hosts(await query(app, sub))).toEqual(['a']);
    expect(matching).toHaveBeenCalledTimes(1);
    expect(tagvIds).toHaveBeenCalledTimes(1);
    expect(hosts(await query(app, sub, T0 + 5))).toEqual(['a']);
    expect(hosts(await query(app, sub, T0 + 1))).toEqual(['a']);
    expect(matching).toHaveBeenCalledTimes(1);
    expect(tagvIds).toHaveBeenCalledTimes(1);
    // Another filter is another plan.
    expect(hosts(await query(app, { tags: { host: 'b' } }))).toEqual(['b']);
    expect(matching).toHaveBeenCalledTimes(2);
  });

  it('see a new tag value, a new series of known values, a rename and dropCaches', async () => {
    const { app, tsdb } = await open();
    // An unknown value: nothing matches, and the plan says so until the catalog moves.
    expect(await query(app, { tags: { host: 'c' } })).toEqual([]);
    await tsdb.ingest.write([pt('m', T0 + 30, 8, { host: 'c', dc: 'x' })]);
    expect(hosts(await query(app, { tags: { host: 'c' } }))).toEqual(['c']);
    // A new series of values that all have UIDs: only the series index moves.
    expect(hosts(await query(app, { tags: { host: '*', dc: 'y' } }))).toEqual(['Web']);
    const assigned = tsdb.tagvs.stats().assigned;
    await tsdb.ingest.write([pt('m', T0 + 40, 16, { host: 'a', dc: 'y' })]);
    expect(tsdb.tagvs.stats().assigned).toBe(assigned);
    expect(hosts(await query(app, { tags: { host: '*', dc: 'y' } }))).toEqual(['Web', 'a']);
    // A rename: the old name matches nothing, the new one the series.
    expect(hosts(await query(app, { tags: { host: 'b' } }))).toEqual(['b']);
    await tsdb.tagvs.rename('b', 'bee');
    expect(await query(app, { tags: { host: 'b' } })).toEqual([]);
    expect(hosts(await query(app, { tags: { host: 'bee' } }))).toEqual(['bee']);
    // dropCaches: the plan is built again.
    const matching = vi.spyOn(tsdb.index, 'matching');
    expect(hosts(await query(app, { tags: { host: 'bee' } }))).toEqual(['bee']);
    expect(matching).toHaveBeenCalledTimes(0);
    tsdb.dropCaches();
    expect(hosts(await query(app, { tags: { host: 'bee' } }))).toEqual(['bee']);
    expect(matching).toHaveBeenCalledTimes(1);
  });

  it('of one metric outlive new series of another', async () => {
    const { app, tsdb } = await open();
    const matching = vi.spyOn(tsdb.index, 'matching');
    expect(hosts(await query(app, { tags: { host: '*' } }))).toEqual(['Web', 'a', 'b']);
    expect(matching).toHaveBeenCalledTimes(1);
    // New series of other metrics, new tag values included: m's plan holds.
    await tsdb.ingest.write([pt('other', T0, 1, { host: 'a', dc: 'x' }), pt('other', T0, 1, { host: 'z', dc: 'q' })]);
    expect(hosts(await query(app, { tags: { host: '*' } }))).toEqual(['Web', 'a', 'b']);
    expect(matching).toHaveBeenCalledTimes(1);
    // A new series of m: built again, and it shows.
    await tsdb.ingest.write([pt('m', T0 + 50, 1, { host: 'z', dc: 'q' })]);
    expect(hosts(await query(app, { tags: { host: '*' } }))).toEqual(['Web', 'a', 'b', 'z']);
    expect(matching).toHaveBeenCalledTimes(2);
  });

  it('are never shared by sub-queries that select or group differently', async () => {
    const { app } = await open();
    const literal = { filters: [{ type: 'literal_or', tagk: 'dc', filter: 'x', groupBy: false }] };
    const grouped = { filters: [{ type: 'literal_or', tagk: 'dc', filter: 'x', groupBy: true }] };
    const one = await query(app, literal);
    expect(one).toHaveLength(1);
    expect(one[0]!.aggregateTags).toEqual(['host']);
    expect(one[0]!.dps).toEqual({ [T0]: 1, [T0 + 10]: 2 }); // no interpolation past a series' ends
    const byDc = await query(app, grouped);
    expect(byDc.map((s) => s.tags.dc)).toEqual(['x']);
    // Case: the legacy map's `web*` ignores case, the wildcard filter does not.
    expect(hosts(await query(app, { tags: { host: 'web*' } }))).toEqual(['Web']);
    expect(await query(app, { filters: [{ type: 'wildcard', tagk: 'host', filter: 'web*', groupBy: true }] })).toEqual([]);
    // explicitTags: only series with exactly these tag keys.
    expect(hosts(await query(app, { tags: { host: 'a' } }))).toEqual(['a']);
    expect(await query(app, { tags: { host: 'a' }, explicitTags: true })).toEqual([]);
    expect(hosts(await query(app, { tags: { host: 'a', dc: 'x' }, explicitTags: true }))).toEqual(['a']);
    // Unknown tag keys and metrics stay errors, every time.
    for (let i = 0; i < 2; i++) {
      const r = await app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, queries: [{ metric: 'm', aggregator: 'sum', tags: { nokey: 'a' } }] } });
      expect(r.statusCode).toBe(404);
    }
  });

  it('reuse a cut list of matches only for limits up to its own', async () => {
    // queryExactMaxRows 6: a long window allows fewer series (a smaller limit) than a short one.
    const { tsdb } = await openFixture({ queryExactMaxRows: 6 }, (T0 + 7200) * 1000);
    await tsdb.ingest.write(['h0', 'h1', 'h2', 'h3', 'h4'].map((h, i) => pt('m', T0 + i, i, { host: h })));
    opened = { app: await buildServer({ tsdb }), tsdb };
    const matching = vi.spyOn(tsdb.index, 'matching');
    const all = ['h0', 'h1', 'h2', 'h3', 'h4'];
    const groups = async (end: number): Promise<string[]> => {
      const r = await opened!.app.inject({ method: 'POST', url: '/api/query', payload: { start: T0, end, queries: [{ metric: 'm', aggregator: 'sum', tags: { host: '*' } }] } });
      expect(r.statusCode, r.body).toBe(200);
      return hosts(r.json() as Out);
    };
    expect(await groups(T0 + 3 * 3600 - 1)).toEqual(all);
    expect(matching).toHaveBeenCalledTimes(1);
    expect(matching.mock.calls[0]![2]).toBeLessThan(all.length); // the list it kept is cut
    expect(await groups(T0 + 599)).toEqual(all);
    expect(matching).toHaveBeenCalledTimes(2);
    expect(await groups(T0 + 3 * 3600 - 1)).toEqual(all);
    expect(matching).toHaveBeenCalledTimes(2); // a smaller limit: the kept list serves
  });

  it('are not kept where series sets are not (another process may write the store and no change feed tells of it)', async () => {
    const { app, tsdb } = await open();
    Object.defineProperty(tsdb.catalog, 'keepsSeries', { value: false });
    const matching = vi.spyOn(tsdb.index, 'matching');
    for (let i = 0; i < 3; i++) expect(hosts(await query(app, { tags: { host: 'a' } }))).toEqual(['a']);
    expect(matching).toHaveBeenCalledTimes(3);
  });
});
