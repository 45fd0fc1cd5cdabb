/**
 * The catalog's one dropCaches and its rename rule, over the real protocols (HTTP and
 * telnet on one port): after /api/uid/rename of a metric, a put to the old name creates a
 * new metric (OpenTSDB resolves the name again) whichever protocol sent the series
 * before; and dropcaches from either protocol empties every cache of series, the other
 * protocol's byte cache included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import { startServer } from '../../../tsdb/server/server.js';
import type { RunningServer } from '../../../tsdb/server/server.js';
import { telnet } from '../e2e/e2e-helpers.js';

const T0 = 1_700_000_000;
let running: RunningServer | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function start(): Promise<RunningServer> {
  running = await startServer({ store: await openMemoryStore(), ownsStore: true, port: 0, bind: '127.0.0.1' });
  return running;
}

async function http(s: RunningServer, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const r = await fetch(`http://127.0.0.1:${s.port}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await r.text();
  return { status: r.status, json: text === '' ? undefined : JSON.parse(text) };
}

async function httpPut(s: RunningServer, metric: string, ts: number, value: number, host: string): Promise<void> {
  const r = await http(s, 'POST', '/api/put?details', [{ metric, timestamp: ts, value, tags: { host } }]);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
}

/** Points of `metric` per host, as {host: {ts: value}}. */
async function points(s: RunningServer, metric: string): Promise<Record<string, Record<string, number>>> {
  const r = await http(s, 'GET', `/api/query?start=${T0 - 10}&end=${T0 + 100}&m=sum:${metric}{host=*}`);
  if (r.status === 400 || r.status === 404) return {};
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const out: Record<string, Record<string, number>> = {};
  for (const series of r.json as Array<{ tags: { host: string }; dps: Record<string, number> }>) out[series.tags.host] = series.dps;
  return out;
}

describe('rename, then put', () => {
  it('puts to the old name make a new metric, over HTTP and telnet alike', async () => {
    const s = await start();
    // Both protocols learn the series (the second put of each takes its byte cache).
    await httpPut(s, 'ren.old', T0, 1, 'h');
    await httpPut(s, 'ren.old', T0 + 1, 2, 'h');
    expect(await telnet(s.port, `put ren.old ${T0} 10 host=t\nput ren.old ${T0 + 1} 20 host=t\n`)).toBe('');
    const oldUid = await s.tsdb.metrics.getId('ren.old');

    const r = await http(s, 'GET', '/api/uid/rename?metric=ren.old&name=ren.new');
    expect(r.status, JSON.stringify(r.json)).toBe(200);

    await httpPut(s, 'ren.old', T0 + 2, 3, 'h');
    expect(await telnet(s.port, `put ren.old ${T0 + 2} 30 host=t\n`)).toBe('');
    const newUid = await s.tsdb.metrics.getId('ren.old');
    expect(newUid).toBeDefined();
    expect(newUid).not.toEqual(oldUid);
    expect(await s.tsdb.metrics.getId('ren.new')).toEqual(oldUid);
    expect(await points(s, 'ren.new')).toEqual({ h: { [T0]: 1, [T0 + 1]: 2 }, t: { [T0]: 10, [T0 + 1]: 20 } });
    expect(await points(s, 'ren.old')).toEqual({ h: { [T0 + 2]: 3 }, t: { [T0 + 2]: 30 } });
  });

  it('a tag value renamed: puts naming the old value get a new one', async () => {
    const s = await start();
    await httpPut(s, 'm', T0, 1, 'old');
    await httpPut(s, 'm', T0 + 1, 2, 'old');
    expect((await http(s, 'GET', '/api/uid/rename?tagv=old&name=new')).status).toBe(200);
    await httpPut(s, 'm', T0 + 2, 3, 'old');
    expect(await points(s, 'm')).toEqual({ new: { [T0]: 1, [T0 + 1]: 2 }, old: { [T0 + 2]: 3 } });
  });
});

describe('dropcaches', () => {
  for (const via of ['http', 'telnet'] as const) {
    it(`over ${via} empties the series caches of both protocols`, async () => {
      const s = await start();
      await httpPut(s, 'm', T0, 1, 'h');
      await httpPut(s, 'm', T0 + 1, 2, 'h');
      expect(await telnet(s.port, `put m ${T0} 10 host=t\nput m ${T0 + 1} 20 host=t\n`)).toBe('');
      const series = s.tsdb.catalog.series;
      expect(series.size).toBe(2);
      expect(series.bytes('json').size).toBe(1);
      expect(series.bytes('telnet').size).toBe(1);
      if (via === 'http') expect((await http(s, 'GET', '/api/dropcaches')).status).toBe(200);
      else expect(await telnet(s.port, 'dropcaches\n')).toBe('Caches dropped.\n');
      expect(series.size).toBe(0);
      expect(series.bytes('json').size).toBe(0);
      expect(series.bytes('telnet').size).toBe(0);
      // And writing goes on as before.
      await httpPut(s, 'm', T0 + 2, 3, 'h');
      expect(await telnet(s.port, `put m ${T0 + 2} 30 host=t\n`)).toBe('');
      expect(await points(s, 'm')).toEqual({ h: { [T0]: 1, [T0 + 1]: 2, [T0 + 2]: 3 }, t: { [T0]: 10, [T0 + 1]: 20, [T0 + 2]: 30 } });
    });
  }
});
