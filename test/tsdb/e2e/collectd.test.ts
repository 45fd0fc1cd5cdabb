/**
 * A real collectd (Debian package collectd-core, installed by .ci/run) running its
 * write_tsdb plugin against a server started here: its telnet lines (CRLF, double
 * spaces, host tags) must land in the store as points.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import type { RunningServer } from '../../../tsdb/server/server.js';
import { eventually, startOn, tempDir } from './e2e-helpers.js';

const COLLECTD = '/usr/sbin/collectd';
let server: RunningServer | undefined;
let collectd: ChildProcess | undefined;
let dir: ReturnType<typeof tempDir> | undefined;

afterEach(async () => {
  collectd?.kill('SIGKILL');
  collectd = undefined;
  await server?.stop();
  server = undefined;
  dir?.remove();
  dir = undefined;
});

function config(base: string, port: number): string {
  return `Interval 1
FQDNLookup false
Hostname "collectd-test"
BaseDir "${base}"
PIDFile "${base}/collectd.pid"
PluginDir "/usr/lib/collectd"
TypesDB "/usr/share/collectd/types.db"
<LoadPlugin load>
  Interval 1
</LoadPlugin>
LoadPlugin memory
<LoadPlugin write_tsdb>
  FlushInterval 1
</LoadPlugin>
<Plugin write_tsdb>
  <Node "horae">
    Host "127.0.0.1"
    Port "${port}"
    HostTags "env=test"
    StoreRates false
    AlwaysAppendDS false
  </Node>
</Plugin>
`;
}

describe('collectd write_tsdb', () => {
  it('sends points that are found in the store', async () => {
    expect(existsSync(COLLECTD), `${COLLECTD} missing: apt-get install collectd-core (.ci/run does)`).toBe(true);
    dir = tempDir('horae-collectd-');
    server = await startOn(join(dir.dir, 'data'));
    const conf = join(dir.dir, 'collectd.conf');
    writeFileSync(conf, config(dir.dir, server.port));
    let log = '';
    collectd = spawn(COLLECTD, ['-f', '-C', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    collectd.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    collectd.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const tsdb = server.tsdb;
    const tags = { fqdn: 'collectd-test', env: 'test' };
    await eventually(async () => {
      const now = Date.now();
      const pts = await readSeries(tsdb, 'load.load.shortterm', tags, now - 600_000, now + 60_000);
      const memory = await tsdb.metrics.namesWithPrefix('memory.', 10);
      return pts.length >= 2 && memory.length > 0;
    }, 45_000, `collectd points (collectd output: ${log.slice(-2000)})`);
    const now = Date.now();
    const pts = await readSeries(tsdb, 'load.load.shortterm', tags, now - 600_000, now + 60_000);
    for (const p of pts) {
      expect(p.value).toBeGreaterThanOrEqual(0);
      expect(Math.abs(p.ts - now)).toBeLessThan(120_000);
    }
    const metrics = await tsdb.metrics.namesWithPrefix('', 100);
    expect(metrics).toEqual(expect.arrayContaining(['load.load.shortterm', 'load.load.midterm', 'load.load.longterm']));
    expect(metrics.filter((m) => m.startsWith('memory.') && m.endsWith('.memory')).length, metrics.join(' ')).toBeGreaterThan(0);
    expect(tsdb.ingest.stats().pointsRejected).toBe(0);
  });
});
