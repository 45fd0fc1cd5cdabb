/**
 * The real command line: `horae serve --port 0 --data-dir D` in a child process (as
 * `npm start -- --port P --data-dir D` runs it, minus the compile step), spoken to only
 * over its port; SIGTERM shuts it down gracefully and every acknowledged point is there
 * after a restart.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { startOn, telnet, tempDir } from './e2e-helpers.js';

const MAIN = fileURLToPath(new URL('../../../tsdb/main.ts', import.meta.url));
const T0 = 1356998400;
let child: ChildProcess | undefined;
let dir: ReturnType<typeof tempDir> | undefined;

afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  dir?.remove();
  dir = undefined;
});

function serve(dataDir: string): Promise<{ proc: ChildProcess; port: number; output: () => string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) resolve({ proc, port: Number(m[1]), output: () => out });
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${out}`)));
  });
}

describe('horae serve (child process)', () => {
  it('serves HTTP and telnet on one port and shuts down gracefully on SIGTERM', async () => {
    dir = tempDir('horae-serve-');
    const s = await serve(dir.dir);
    child = s.proc;
    const version = await telnet(s.port, 'version\nexit\n');
    expect(version).toMatch(/^net\.opentsdb\.tools horae-\S+ built at revision/);
    const put = await fetch(`http://127.0.0.1:${s.port}/api/put?summary`, {
      method: 'POST',
      body: JSON.stringify([{ metric: 'proc.metric', timestamp: T0, value: 1, tags: { host: 'a' } }]),
    });
    expect(await put.json()).toEqual({ success: 1, failed: 0 });
    await telnet(s.port, Array.from({ length: 1000 }, (_, i) => `put proc.metric ${T0 + 1 + i} ${i} host=a`).join('\n') + '\nexit\n');
    const exited = new Promise<number | null>((resolve) => s.proc.on('exit', (code) => resolve(code)));
    s.proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(s.output()).toMatch(/SIGTERM: shutting down/);
    child = undefined;

    const server = await startOn(dir.dir);
    try {
      const pts = await readSeries(server.tsdb, 'proc.metric', { host: 'a' }, T0 * 1000, (T0 + 3600) * 1000);
      expect(pts).toHaveLength(1001);
      expect(pts[1000]).toEqual({ ts: (T0 + 1000) * 1000, value: 999, isInt: true });
    } finally {
      await server.stop();
    }
  });
});
