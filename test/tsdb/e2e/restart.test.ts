import { afterEach, describe, expect, it } from 'vitest';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import type { RunningServer } from '../../../tsdb/server/server.js';
import { startOn, telnet, tempDir } from './e2e-helpers.js';

const T0 = 1356998400;
let server: RunningServer | undefined;
let dir: ReturnType<typeof tempDir> | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
  dir?.remove();
  dir = undefined;
});

describe('restart', () => {
  it('keeps every point acknowledged over HTTP and telnet across a stop and a restart', async () => {
    dir = tempDir('horae-restart-');
    server = await startOn(dir.dir);
    const http = await fetch(`http://127.0.0.1:${server.port}/api/put`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ metric: 'http.metric', timestamp: T0 + i, value: i, tags: { host: 'h1' } }))),
    });
    expect(http.status).toBe(204);
    const lines = Array.from({ length: 500 }, (_, i) => `put telnet.metric ${T0 + i} ${i / 4} host=h2\r\n`).join('');
    expect(await telnet(server.port, `${lines}put bad\nexit\n`)).toBe('put: illegal argument: not enough arguments (need least 4, got 1)\n');
    await server.stop();

    server = await startOn(dir.dir);
    const a = await readSeries(server.tsdb, 'http.metric', { host: 'h1' }, T0 * 1000, (T0 + 3600) * 1000);
    const b = await readSeries(server.tsdb, 'telnet.metric', { host: 'h2' }, T0 * 1000, (T0 + 3600) * 1000);
    expect(a.map((p) => p.value)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(b.map((p) => p.value)).toEqual(Array.from({ length: 500 }, (_, i) => i / 4));
    // UIDs survive too: new names continue after the old ones
    expect((await server.tsdb.metrics.getId('http.metric'))).toEqual(Uint8Array.of(0, 0, 1));
    expect(await server.tsdb.metrics.usedIds()).toBe(2);
  });

  it('finds each hour in one compressed cell after a restart (written so by the flush at stop) and reads the same points', async () => {
    dir = tempDir('horae-restart-');
    server = await startOn(dir.dir);
    const body = Array.from({ length: 720 }, (_, i) => ({ metric: 'm', timestamp: T0 + i * 10, value: Math.round(i * 3.7) / 100, tags: { host: 'h' } }));
    expect((await fetch(`http://127.0.0.1:${server.port}/api/put`, { method: 'POST', body: JSON.stringify(body) })).status).toBe(204);
    const before = await readSeries(server.tsdb, 'm', { host: 'h' }, T0 * 1000, (T0 + 7200) * 1000);
    await server.stop();
    server = await startOn(dir.dir);
    const qualifiers: number[][] = [];
    for await (const rows of server.tsdb.data.scan({})) for (const r of rows) qualifiers.push(r.cells.map((c) => c.qualifier.length));
    expect(qualifiers).toEqual([[9], [9]]);
    expect(await readSeries(server.tsdb, 'm', { host: 'h' }, T0 * 1000, (T0 + 7200) * 1000)).toEqual(before);
    expect(before).toHaveLength(720);
  });
});
