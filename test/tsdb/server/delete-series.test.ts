/**
 * /api/admin/tsdb/delete_series (tsdb/write/delete-series.ts): a series match deletes its
 * points at every time, its series-index row and its newest point; a bare metric goes
 * whole, with its name and UID (a new write gets a new UID); bad requests are refused
 * before anything is deleted; only admin tokens may; points deleted while still in memory
 * never come back when new points of the same hour are flushed and compacted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/index.js';
import { startServer } from '../../../tsdb/server/server.js';
import type { RunningServer } from '../../../tsdb/server/server.js';
import { tempDir } from '../e2e/e2e-helpers.js';

const T0 = 1704067200;
const ADMIN = 'admin-token-0123456789';
const WRITE = 'write-token-0123456789';
const READ = 'read-token-01234567890';
let dir: ReturnType<typeof tempDir> | undefined;
let srv: RunningServer | undefined;
afterEach(async () => {
  await srv?.stop();
  srv = undefined;
  dir?.remove();
});

async function start(extra: Record<string, unknown> = {}): Promise<RunningServer> {
  dir = tempDir('horae-delseries-');
  const store = await openEmbeddedStore({ dir: dir.dir, maintenanceIntervalMs: 0 });
  srv = await startServer({
    store, port: 0, bind: '127.0.0.1', now: () => (T0 + 10 * 3600) * 1000,
    config: { compactHours: false, queryAllowDelete: true, authTokens: `${ADMIN} admin, ${WRITE} write, ${READ} read`, ...extra },
  });
  return srv;
}

const auth = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });

async function put(s: RunningServer, metric: string, hosts: string[], hours: number, from = 0): Promise<void> {
  const pts = [];
  for (const host of hosts) for (let h = 0; h < hours; h++) for (let k = 0; k < 6; k++) pts.push({ metric, timestamp: T0 + (from + h) * 3600 + k * 600, value: h * 10 + k, tags: { host } });
  const r = await s.app.inject({ method: 'POST', url: '/api/put', payload: pts, headers: auth(WRITE) });
  expect(r.statusCode).toBe(204);
}

async function hostsOf(s: RunningServer, metric: string): Promise<Record<string, number>> {
  const r = await s.app.inject({ url: `/api/query?start=${T0 - 1}&end=${T0 + 9 * 3600}&m=sum:${metric}{host=*}`, headers: auth(READ) });
  if (r.statusCode !== 200) return { status: r.statusCode };
  const out: Record<string, number> = {};
  for (const x of JSON.parse(r.body) as Array<{ tags: { host: string }; dps: object }>) out[x.tags.host] = Object.keys(x.dps).length;
  return out;
}

const del = (s: RunningServer, query: string, token = ADMIN, method: 'POST' | 'DELETE' = 'POST') =>
  s.app.inject({ method, url: `/api/admin/tsdb/delete_series?${query}`, headers: auth(token) });

describe('delete_series', () => {
  it('deletes a series at every time, with its index row and newest point', async () => {
    const s = await start();
    await put(s, 'm1', ['a', 'b', 'c'], 3);
    await s.tsdb.data.flush();
    await put(s, 'm1', ['a'], 1, 5); // also in the memstore
    expect(JSON.parse((await s.app.inject({ url: '/api/query/last?timeseries=m1{host=a}', headers: auth(READ) })).body)).toHaveLength(1);
    const r = await del(s, `match[]=${encodeURIComponent('m1{host=a}')}`);
    expect(r.statusCode, r.body).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ deleted: [{ match: 'm1{host=a}', metric: 'm1', series: 1, rows: 4, metricDeleted: false }] });
    expect(await hostsOf(s, 'm1')).toEqual({ b: 18, c: 18 });
    const lookup = JSON.parse((await s.app.inject({ url: '/api/search/lookup?m=m1', headers: auth(READ) })).body) as { results: Array<{ tags: { host: string } }> };
    expect(lookup.results.map((x) => x.tags.host).sort()).toEqual(['b', 'c']);
    expect(JSON.parse((await s.app.inject({ url: '/api/query/last?timeseries=m1{host=a}', headers: auth(READ) })).body)).toEqual([]);
    // The same series written again is a live series again, in the index too.
    await put(s, 'm1', ['a'], 1, 7);
    expect(await hostsOf(s, 'm1')).toEqual({ a: 6, b: 18, c: 18 });
    const again = JSON.parse((await s.app.inject({ url: '/api/search/lookup?m=m1', headers: auth(READ) })).body) as { results: unknown[] };
    expect(again.results).toHaveLength(3);
  });

  it('deletes a whole metric with its name and UID; written again it gets a new UID', async () => {
    const s = await start();
    await put(s, 'm1', ['a'], 2);
    await put(s, 'm2', ['a', 'b'], 3);
    await s.tsdb.data.flush();
    const oldUid = JSON.parse((await s.app.inject({ url: '/api/uid/assign?metric=m2', headers: auth(WRITE) })).body);
    const r = await del(s, 'match=m2', ADMIN, 'DELETE');
    expect(r.statusCode, r.body).toBe(200);
    expect(JSON.parse(r.body).deleted).toEqual([{ match: 'm2', metric: 'm2', series: 2, rows: null, metricDeleted: true }]);
    expect((await s.app.inject({ url: `/api/query?start=${T0}&m=sum:m2`, headers: auth(READ) })).statusCode).toBe(404);
    const suggest = JSON.parse((await s.app.inject({ url: '/api/suggest?type=metrics&q=m', headers: auth(READ) })).body);
    expect(suggest).toEqual(['m1']);
    expect(await hostsOf(s, 'm1')).toEqual({ a: 12 });
    await put(s, 'm2', ['z'], 1, 4);
    expect(await hostsOf(s, 'm2')).toEqual({ z: 6 });
    const newUid = JSON.parse((await s.app.inject({ url: '/api/uid/assign?metric=m2', headers: auth(WRITE) })).body);
    expect(JSON.stringify(newUid)).not.toEqual(JSON.stringify(oldUid));
    // Its rows went by range deletes: one tombstone per salt bucket, none per row.
    const stats = await s.tsdb.store.stats();
    expect(stats.files).toBeGreaterThan(0);
  });

  it('refuses bad requests before deleting anything', async () => {
    const s = await start();
    await put(s, 'm1', ['a', 'b'], 1);
    const cases: Array<[string, string, number, RegExp]> = [
      ['', ADMIN, 400, /Missing match/],
      [`match[]=${encodeURIComponent('m1{host')}`, ADMIN, 400, /Missing '}'/],
      [`match[]=m1&match[]=nope`, ADMIN, 404, /No such name for 'metrics': 'nope'/],
      [`match[]=m1`, WRITE, 403, /needs an admin token/],
      [`match[]=m1`, READ, 403, /needs an admin token/],
    ];
    for (const [q, token, status, re] of cases) {
      const r = await del(s, q, token);
      expect(r.statusCode, q).toBe(status);
      expect(JSON.parse(r.body).error.message, q).toMatch(re);
    }
    expect((await s.app.inject({ method: 'POST', url: '/api/admin/tsdb/delete_series?match[]=m1' })).statusCode).toBe(401);
    expect(await hostsOf(s, 'm1')).toEqual({ a: 6, b: 6 });
  });

  it('is off unless deletes are allowed', async () => {
    const s = await start({ queryAllowDelete: false });
    await put(s, 'm1', ['a'], 1);
    const r = await del(s, 'match[]=m1');
    expect(r.statusCode).toBe(400);
    expect(r.body).toContain('tsd.http.query.allow_delete');
    expect(await hostsOf(s, 'm1')).toEqual({ a: 6 });
  });

  it('points deleted while in memory do not come back with new points of their hour', async () => {
    const s = await start();
    await put(s, 'm3', ['x'], 1);
    expect(await del(s, `match[]=${encodeURIComponent('m3{host=*}')}`).then((r) => r.statusCode)).toBe(200);
    const r = await s.app.inject({ method: 'POST', url: '/api/put', payload: [{ metric: 'm3', timestamp: T0 + 5, value: 99, tags: { host: 'x' } }], headers: auth(WRITE) });
    expect(r.statusCode).toBe(204);
    await s.tsdb.data.flush();
    await s.tsdb.data.compact({ major: true });
    const q = JSON.parse((await s.app.inject({ url: `/api/query?start=${T0 - 1}&end=${T0 + 3600}&m=sum:m3{host=*}`, headers: auth(READ) })).body);
    expect(q).toEqual([{ metric: 'm3', tags: { host: 'x' }, aggregateTags: [], dps: { [T0 + 5]: 99 } }]);
  });
});
