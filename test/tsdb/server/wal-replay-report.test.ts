/**
 * The WAL replay at open is measured and reported (issue 31, "Restarts"): after a stop
 * that left points only in the log (flushOnClose off: what `kill -9` leaves), the next
 * start logs how many records, cells and bytes it replayed and how long it took, and
 * /api/stats has the same figures; after a clean stop it replays nothing.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/index.js';
import { startServer } from '../../../tsdb/server/server.js';
import type { RunningServer } from '../../../tsdb/server/server.js';
import { tempDir } from '../e2e/e2e-helpers.js';

const T0 = 1704067200;
let dir: ReturnType<typeof tempDir> | undefined;
afterEach(() => dir?.remove());

async function start(path: string, flushOnClose: boolean): Promise<{ srv: RunningServer; logs: string[] }> {
  const logs: string[] = [];
  const store = await openEmbeddedStore({ dir: path, flushOnClose, maintenanceIntervalMs: 0 });
  const srv = await startServer({ store, port: 0, bind: '127.0.0.1', config: { compactHours: false }, log: (m) => logs.push(m) });
  return { srv, logs };
}

async function stat(srv: RunningServer, metric: string): Promise<number | undefined> {
  const r = await srv.app.inject({ url: '/api/stats' });
  return (JSON.parse(r.body) as Array<{ metric: string; value: number }>).find((p) => p.metric === metric)?.value;
}

describe('WAL replay report', () => {
  it('logs and counts the records, cells and bytes replayed and the time it took', async () => {
    dir = tempDir('horae-replay-');
    const first = await start(dir.dir, false);
    const points = Array.from({ length: 500 }, (_, i) => ({ metric: 'replay.m', timestamp: T0 + i, value: i, tags: { host: `h${i % 5}` } }));
    for (let i = 0; i < 5; i++) {
      const r = await first.srv.app.inject({ method: 'POST', url: '/api/put', payload: points.slice(i * 100, i * 100 + 100) });
      expect(r.statusCode).toBe(204);
    }
    await first.srv.stop();
    const logBytes = readdirSync(dir.dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + statSync(join(dir!.dir, f)).size, 0);
    expect(logBytes).toBeGreaterThan(0);

    const again = await start(dir.dir, true);
    try {
      const line = again.logs.find((l) => l.startsWith('store: WAL replay at open: '));
      const m = /^store: WAL replay at open: (\d+) records, (\d+) cells, (\d+) bytes in (\d+) log files, ([\d.]+) ms$/.exec(line ?? '');
      expect(m, again.logs.join('\n')).not.toBeNull();
      const [records, cells, bytes, files, ms] = m!.slice(1).map(Number) as [number, number, number, number, number];
      expect(records).toBeGreaterThanOrEqual(5);
      expect(cells).toBeGreaterThanOrEqual(5);
      expect(bytes).toBe(logBytes);
      expect(files).toBeGreaterThanOrEqual(1);
      expect(ms).toBeGreaterThan(0);
      expect(await stat(again.srv, 'horae.store.wal_replay_records')).toBe(records);
      expect(await stat(again.srv, 'horae.store.wal_replay_cells')).toBe(cells);
      expect(await stat(again.srv, 'horae.store.wal_replay_bytes')).toBe(bytes);
      expect(await stat(again.srv, 'horae.store.wal_replay_ms')).toBe(ms);
      const q = await again.srv.app.inject({ url: `/api/query?start=${T0}&end=${T0 + 600}&m=sum:replay.m` });
      expect(Object.keys((JSON.parse(q.body) as Array<{ dps: object }>)[0]!.dps)).toHaveLength(500);
    } finally {
      await again.srv.stop();
    }

    // A clean stop flushed everything: the next open replays no record.
    const third = await start(dir.dir, true);
    try {
      expect(third.logs).toContainEqual(expect.stringMatching(/^store: WAL replay at open: 0 records, 0 cells, /));
      expect(await stat(third.srv, 'horae.store.wal_replay_records')).toBe(0);
    } finally {
      await third.srv.stop();
    }
  });
});
