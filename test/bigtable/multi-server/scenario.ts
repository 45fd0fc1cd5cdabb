/**
 * The multi-server scenario (issue 34): N Horae servers on one store behave as one
 * database. Phases, each followed by checkAll (checks.ts) on every server:
 *
 *   1. concurrent writers over telnet and HTTP: series shared by every server (each point
 *      through one of them), series and metrics written through one server only;
 *   2. duplicate timestamps: the last acknowledged write wins, whichever server took it
 *      (across servers, across value types, within one request, within one connection);
 *   3. series new to one server, queried on the others once their caches are warm; then
 *      recent points of a series whose newest point every server holds in its caches
 *      (/api/query/last's last values and newest-hour hints, warmed by the check), written
 *      and rewritten through the other servers: every server answers them within the bound;
 *   4. renames of a metric and of a tag value on one server; the old names written again
 *      through a server that had them cached become new series;
 *   5. a delete query on one server (the newest points of a series go);
 *   6. `kill -9` of one server in the middle of its writes, restart, its client re-sends
 *      what was not acknowledged;
 *   7. /api/dropcaches on every server;
 *   8. hour compaction ran on every server (it is on everywhere, with no grace), where it
 *      is the read-back compactor;
 *   9. every server lists the servers sharing the store (/api/stats, the operator page's
 *      overview): the live ones, the killed one silent, a cleanly stopped one stopped;
 *  10. servers killed with `kill -9` while they owe hour compaction (one with its rows
 *      pending, one in the middle of compacting them) and not restarted: the others compact
 *      their rows within the ledger's bound (dead-server.ts).
 *
 * With one server (the embedded store) the same phases run on it alone, so the semantics
 * of both stores stay the same.
 */
import { expect } from 'vitest';
import { checkAll } from './checks.js';
import type { Window } from './checks.js';
import { dbl, eventuallyTrue, int, send, sleep, statOf } from './client.js';
import type { Write } from './client.js';
import { telnetPut } from './horae-process.js';
import type { HoraeProcess } from './horae-process.js';
import { Model } from './model.js';
import { runDeadServerPhase } from './dead-server.js';
import type { RawRows } from './raw-rows.js';

export interface Cluster {
  readonly servers: readonly HoraeProcess[];
  /** kill -9 server i, then start it again on the same store. */
  restart(i: number): Promise<void>;
  /**
   * The servers run the read-back hour compactor (stores without row transforms: Bigtable),
   * whose work /api/stats counts; the embedded store compresses hours in its own flushes.
   */
  readonly readBackCompactor: boolean;
  /** Where servers share the store: one more server on it, with `config` over SUITE_CONFIG. */
  readonly spawn?: (name: string, config: Readonly<Record<string, number>>) => Promise<HoraeProcess>;
  /** Where servers share the store: its rows still owed hour compaction, read by the test (raw-rows.ts). */
  readonly rawRows?: (metrics: readonly string[], fromSec: number, toSec: number) => Promise<RawRows>;
}

/** How long a change made through one server may take to reach the others' answers. */
export interface Bounds {
  readonly newSeriesMs: number;
  readonly renameMs: number;
  readonly deleteMs: number;
  /** Points of a series the server knows, written through another. */
  readonly writtenMs: number;
}

/** Config of every server in the suite: hour compaction on, as soon as an hour is closed. */
export const SUITE_CONFIG = {
  'horae.hour_compaction.enable': true,
  'horae.hour_compaction.grace_ms': 0,
  'horae.hour_compaction.idle_ms': 0,
  'horae.hour_compaction.interval_ms': 200,
  'tsd.http.query.allow_delete': true,
} as const;

/** Runs every phase; `hour0` is the first (closed) hour the data goes in, in seconds. */
export async function runScenario(cluster: Cluster, bounds: Bounds, hour0: number): Promise<void> {
  const model = new Model();
  const n = cluster.servers.length;
  const srv = (i: number): HoraeProcess => cluster.servers[i % n]!;
  const win: Window = { start: hour0, end: hour0 + 5 * 3600 };
  const problems: string[] = [];
  const check = async (phase: string): Promise<void> => {
    const found = await checkAll(model, cluster.servers, win, phase);
    problems.push(...found.slice(0, 6), ...(found.length > 6 ? [`${phase}: … and ${found.length - 6} more`] : []));
  };

  // 1. Concurrent writers: shared series (each point through one server), own series.
  const perServer: Write[][] = cluster.servers.map(() => []);
  for (let h = 0; h < 4; h++) {
    for (let k = 0; k < 120; k++) {
      const ts = hour0 + k * 60 + h; // two hours, one point a minute
      const p = h < 2 ? int(ts, k * 7 + h) : dbl(ts, k + 0.25 * h);
      perServer[k % n]!.push({ metric: 'ms.shared', tags: { host: `s${h}`, dc: 'x' }, p });
    }
  }
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 60; k++) {
      perServer[i]!.push({ metric: 'ms.distinct', tags: { host: `d${i}` }, p: int(hour0 + k * 90, 1000 * i + k) });
      perServer[i]!.push({ metric: `ms.only${i}`, tags: { host: `o${i}` }, p: dbl(hour0 + 3600 + k * 30, k + 0.5) });
    }
  }
  await Promise.all(perServer.map(async (ws, i) => expect(await send(model, srv(i), ws)).toEqual([])));
  await check('concurrent writers');

  // 2. Duplicate timestamps: the last acknowledged write wins.
  const dup = { host: 'dup' };
  for (let k = 0; k < 6; k++) {
    const ts = hour0 + 600 + k * 60;
    expect(await send(model, srv(k), [{ metric: 'ms.dup', tags: dup, p: int(ts, k) }])).toEqual([]);
    // over telnet through the next server, a double this time
    expect(await send(model, srv(k + 1), [{ metric: 'ms.dup', tags: dup, p: dbl(ts, k + 0.75) }])).toEqual([]);
  }
  const t = hour0 + 1200;
  const r = await srv(0).http('POST', '/api/put', [{ metric: 'ms.dup', timestamp: t, value: 1, tags: dup }, { metric: 'ms.dup', timestamp: t, value: 2, tags: dup }]);
  expect(r.status, r.body).toBe(204);
  model.put('ms.dup', dup, int(t, 2));
  const tl = await telnetPut(srv(1).port, [`put ms.dup ${t + 60} 3.5 host=dup`, `put ms.dup ${t + 60} 4.5 host=dup`], 10);
  expect(tl).toEqual({ acked: 2, errors: '' });
  model.put('ms.dup', dup, dbl(t + 60, 4.5));
  await check('duplicate timestamps');

  // 3. Series new to one server, queried on the others (their caches warm from the check).
  const fresh: Write[] = [
    { metric: 'ms.shared', tags: { host: 's9', dc: 'x' }, p: int(hour0 + 5, 99) },
    { metric: 'ms.shared', tags: { host: 's0', dc: 'y' }, p: int(hour0 + 65, 98) },
    { metric: 'ms.fresh', tags: { host: 's0' }, p: dbl(hour0 + 125, 1.25) },
  ];
  for (const [i, w] of fresh.entries()) expect(await send(model, srv(i), [w])).toEqual([]);
  await sleep(bounds.newSeriesMs);
  await check('series new to one server');

  // 3b. Recent points through the other servers: every server's caches hold the series'
  // newest point (the check warmed them), then newer points go in through the others.
  const nowSec = Math.floor(Date.now() / 1000);
  const recent = { host: 'r' };
  expect(await send(model, srv(0), [{ metric: 'ms.recent', tags: recent, p: int(nowSec - 40, 1) }])).toEqual([]);
  await sleep(bounds.newSeriesMs);
  await check('a recent series');
  expect(await send(model, srv(1), [{ metric: 'ms.recent', tags: recent, p: int(nowSec - 30, 2) }])).toEqual([]);
  expect(await send(model, srv(2), [{ metric: 'ms.recent', tags: recent, p: dbl(nowSec - 30, 2.5) }])).toEqual([]);
  await sleep(bounds.writtenMs);
  await check('recent points through the other servers');

  // 4. Renames, then the old names written again through a server that had them cached.
  await rename(srv(1), 'metric', 'ms.only0', 'ms.only0.renamed');
  model.rename('metric', 'ms.only0', 'ms.only0.renamed');
  await rename(srv(2), 'tagv', 's1', 's1r');
  model.rename('tagv', 's1', 's1r');
  await sleep(bounds.renameMs);
  await check('renames');
  const again: Write[] = [
    { metric: 'ms.only0', tags: { host: 'o0' }, p: dbl(hour0 + 3600 + 15, 7.5) },
    { metric: 'ms.shared', tags: { host: 's1', dc: 'x' }, p: int(hour0 + 3600 + 15, 77) },
  ];
  expect(await send(model, srv(0), again)).toEqual([]);
  await sleep(bounds.newSeriesMs);
  await check('old names written again');

  // 5. A delete query through one server: host s3's second hour (its newest points) goes.
  const del = { start: hour0 + 3600, end: hour0 + 7199, queries: [{ aggregator: 'none', metric: 'ms.shared', tags: { host: 's3', dc: 'x' } }] };
  const d = await srv(n - 1).http('DELETE', '/api/query', del);
  expect(d.status, d.body).toBe(200);
  model.deleteHours('ms.shared', { host: 's3', dc: 'x' }, del.start, del.end);
  await sleep(bounds.deleteMs);
  await check('delete');

  // 6. kill -9 of one server while every server writes; its client re-sends the rest.
  const victim = n > 1 ? 1 : 0;
  const live: Write[][] = cluster.servers.map((_, i) => {
    const out: Write[] = [];
    for (let k = 0; k < 400; k++) {
      out.push({ metric: 'ms.live', tags: { host: `l${i}` }, p: int(hour0 + 2 * 3600 + k * 5, k) });
      if (k % 4 === 0) out.push({ metric: 'ms.shared', tags: { host: `s${k % 3}`, dc: 'x' }, p: dbl(hour0 + 2 * 3600 + k * 5 + i, k + 0.5) });
    }
    return out;
  });
  let killing: Promise<void> | undefined;
  const unacked = await Promise.all(live.map((ws, i) => send(model, srv(i), ws, i !== victim ? undefined : (acked) => {
    if (acked >= 100 && killing === undefined) killing = srv(victim).kill9();
  })));
  expect(killing, 'the victim was killed mid-way').toBeDefined();
  await killing;
  for (const [i, u] of unacked.entries()) if (i !== victim) expect(u).toEqual([]);
  expect(unacked[victim]!.length, 'the victim died before acknowledging everything').toBeGreaterThan(0);
  await cluster.restart(victim);
  expect(await send(model, srv(victim), unacked[victim]!)).toEqual([]);
  await sleep(bounds.newSeriesMs);
  await check('kill -9 and restart');

  // 7. Every cache dropped on every server.
  for (const s of cluster.servers) {
    const dc = await s.http('POST', '/api/dropcaches');
    expect(dc.status, dc.body).toBe(200);
  }
  await check('dropcaches');

  // 8. Hour compaction ran on every server and changed no answer.
  for (const s of cluster.readBackCompactor ? cluster.servers : []) {
    await eventuallyTrue(async () => (await statOf(s, 'tsd.compaction.count', { type: 'hours' })) > 0, 20_000, `${s.name} compacts hours`);
  }
  await check('after hour compaction');
  expect(problems).toEqual([]);

  // 9. Every server lists the servers sharing the store: all live, the killed incarnation
  // silent (where heartbeats are stored: several servers); a clean stop shows as stopped.
  const shared = n > 1;
  for (const s of cluster.servers) {
    await eventuallyTrue(async () => {
      const c = await clusterCounts(s);
      return c.live === n && c.silent === (shared ? 1 : 0) && c.stopped === 0;
    }, 30_000, `${s.name} lists ${n} live servers${shared ? ' and the killed one silent' : ''}`);
    const o = JSON.parse((await s.http('GET', '/api/horae/overview')).body) as { servers: Array<{ address: string; state: string; self: boolean }> };
    expect(o.servers.filter((x) => x.state === 'live').map((x) => x.address).sort()).toEqual(cluster.servers.map((x) => `127.0.0.1:${x.port}`).sort());
    expect(o.servers.filter((x) => x.self).map((x) => x.address)).toEqual([`127.0.0.1:${s.port}`]);
  }
  if (shared) {
    await srv(n - 1).stop();
    expect(await clusterCounts(srv(0))).toEqual({ live: n - 1, silent: 1, stopped: 1 });
  }

  // 10. Servers killed while they owe hour compaction; the others compact their rows.
  const running = shared ? cluster.servers.slice(0, n - 1) : cluster.servers;
  expect(await runDeadServerPhase({
    model, live: running, win, hour0, intervalMs: SUITE_CONFIG['horae.hour_compaction.interval_ms'],
    ...(cluster.spawn === undefined ? {} : { spawn: cluster.spawn }),
    ...(cluster.rawRows === undefined ? {} : { rawRows: cluster.rawRows }),
    restartOnly: () => cluster.restart(0),
  })).toEqual([]);
}

/** horae.cluster.servers by state, from a server's /api/stats. */
async function clusterCounts(s: HoraeProcess): Promise<{ live: number; silent: number; stopped: number }> {
  const stats = JSON.parse((await s.http('GET', '/api/stats')).body) as Array<{ metric: string; value: number; tags: Record<string, string> }>;
  const of = (state: string): number => stats.find((p) => p.metric === 'horae.cluster.servers' && p.tags.state === state)?.value ?? -1;
  return { live: of('live'), silent: of('silent'), stopped: of('stopped') };
}

async function rename(s: HoraeProcess, kind: 'metric' | 'tagv', from: string, to: string): Promise<void> {
  const r = await s.http('POST', '/api/uid/rename', { [kind]: from, name: to });
  expect(r.status, r.body).toBe(200);
}
