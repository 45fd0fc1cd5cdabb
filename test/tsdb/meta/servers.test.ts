/**
 * Server heartbeats (tsdb/meta/servers.ts): every server lists every other from their
 * rows — live while beating, silent once its beat is SILENT_AFTER_MS old, stopped after a
 * clean stop — and on a store with one writer lists itself alone, writing nothing.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import { SILENT_AFTER_MS, ServerRegistry, serversTableSpec } from '../../../tsdb/meta/servers.js';
import type { ServerSelf } from '../../../tsdb/meta/servers.js';

function self(id: string, points: () => number): ServerSelf {
  return { id, version: '0.1.0', startedMs: 1000, address: () => `127.0.0.1:${id}`, counters: () => ({ pointsWritten: points() }) };
}

describe('server heartbeats', () => {
  it('lists every server with its state and counters', async () => {
    const table = await (await openMemoryStore()).createTable(serversTableSpec());
    let now = 10_000;
    let points = 5;
    const a = new ServerRegistry(table, self('aaaa', () => points), () => now);
    const b = new ServerRegistry(table, self('bbbb', () => 7), () => now);
    const c = new ServerRegistry(table, self('cccc', () => 9), () => now);
    await Promise.all([a.start(), b.start(), c.start()]);
    try {
      const list = async (): Promise<string[]> => (await a.list()).map((s) => `${s.id} ${s.state} ${s.counters['pointsWritten']}${s.self ? ' self' : ''}`);
      expect(await list()).toEqual(['aaaa live 5 self', 'bbbb live 7', 'cccc live 9']);
      await c.stop();
      points = 6;
      now += SILENT_AFTER_MS + 1; // b and c beat no more (their timers run on real time)
      expect(await list()).toEqual(['aaaa live 6 self', 'bbbb silent 7', 'cccc stopped 9']);
      expect((await b.list()).find((s) => s.id === 'bbbb')!.state).toBe('live'); // a server always sees itself live
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('writes nothing where the process is the store\'s one writer, and lists itself', async () => {
    const r = new ServerRegistry(undefined, self('dddd', () => 1), () => 5000);
    await r.start();
    expect((await r.list()).map((s) => [s.id, s.state, s.address, s.self])).toEqual([['dddd', 'live', '127.0.0.1:dddd', true]]);
    await r.stop();
    expect(r.stats()).toEqual({ beats: 0, failures: 0 });
  });
});
