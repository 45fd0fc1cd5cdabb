/**
 * End to end: `horae serve --store bigtable://…` in a child process on the emulator, and
 * `horae serve --data-dir D` (the embedded store) beside it. The series of every OpenTSDB
 * conformance case (test/fixtures/opentsdb-query-cases.json) go into both, alternately
 * over telnet `put` lines and HTTP /api/put; every case's query must then get the same
 * status and the same response body, byte for byte, from both.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { telnet, tempDir } from '../tsdb/e2e/e2e-helpers.js';
import { freshPrefix, useEmulator } from './setup.js';

const MAIN = fileURLToPath(new URL('../../tsdb/main.ts', import.meta.url));

interface Case {
  name: string;
  series: Array<{ metric: string; tags: Record<string, string>; valueType: string; points: Array<[number, number | string, string?]> }>;
  query: { queries?: Array<{ metric?: string }> } & Record<string, unknown>;
  expected?: unknown[];
  expectedError?: unknown;
}

const CASES = JSON.parse(readFileSync(new URL('../fixtures/opentsdb-query-cases.json', import.meta.url), 'utf8')) as Case[];

const emulator = useEmulator();

interface Served {
  readonly proc: ChildProcess;
  readonly port: number;
  output(): string;
}

function serve(args: string[], env: Record<string, string>): Promise<Served> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--bind', '127.0.0.1', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env },
    });
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) resolve({ proc, port: Number(m[1]), output: () => out });
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${out}`)));
  });
}

async function stop(s: Served | undefined): Promise<void> {
  if (s === undefined || s.proc.exitCode !== null) return;
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGTERM');
  const timer = setTimeout(() => s.proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A value as the put carries it, so it is stored with the case's type (as in the conformance test). */
function putValue(v: number | string, type: string): string {
  if (type === 'i') return typeof v === 'string' ? v : String(Math.trunc(Number(v)));
  const s = String(v);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** Every case gets its own metric names, so all cases share one server. */
const renamed = (i: number, metric: string): string => `case${i}.${metric}`;

async function put(servers: readonly Served[], i: number, j: number, s: Case['series'][number]): Promise<void> {
  const metric = renamed(i, s.metric);
  if (j % 2 === 0) {
    const tags = Object.entries(s.tags).map(([k, v]) => `${k}=${v}`).join(' ');
    const lines = s.points.map(([ts, v, type]) => `put ${metric} ${ts} ${putValue(v, type ?? s.valueType)} ${tags}`).join('\n');
    for (const srv of servers) {
      // `version` answers only after the puts before it are written; `exit` closes.
      const reply = await telnet(srv.port, `${lines}\nversion\nexit\n`);
      expect(reply, reply).toMatch(/^net\.opentsdb\.tools horae/);
    }
  } else {
    const body = JSON.stringify(s.points.map(([ts, v, type]) => ({ metric, timestamp: ts, value: putValue(v, type ?? s.valueType), tags: s.tags })));
    for (const srv of servers) {
      const r = await fetch(`http://127.0.0.1:${srv.port}/api/put?details`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(r.status, await r.text()).toBe(200);
    }
  }
}

async function query(srv: Served, body: unknown): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://127.0.0.1:${srv.port}/api/query`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: r.status, body: await r.text() };
}

describe('horae serve --store bigtable:// (child process, emulator)', () => {
  it('answers every conformance case byte for byte as the embedded store does; data in over telnet and HTTP', async () => {
    const dir = tempDir('horae-bigtable-e2e-');
    let bt: Served | undefined;
    let emb: Served | undefined;
    try {
      [bt, emb] = await Promise.all([
        serve(['--store', `bigtable://horae-e2e/instance?prefix=${freshPrefix()}`], {
          BIGTABLE_EMULATOR_HOST: emulator().host, METADATA_SERVER_DETECTION: 'none',
        }),
        serve(['--data-dir', dir.dir], {}),
      ]);
      expect(bt.output()).toMatch(/data in bigtable:\/\/horae-e2e\/instance/);
      for (const [i, c] of CASES.entries()) {
        for (const [j, s] of c.series.entries()) await put([bt, emb], i, j, s);
      }
      for (const [i, c] of CASES.entries()) {
        const q = { ...c.query, queries: (c.query.queries ?? []).map((x) => ({ ...x, ...(x.metric === undefined ? {} : { metric: renamed(i, x.metric) }) })) };
        const [a, b] = [await query(bt, q), await query(emb, q)];
        expect({ case: c.name, ...a }).toEqual({ case: c.name, ...b });
        if (c.expectedError !== undefined) {
          expect(a.status, c.name).toBeGreaterThanOrEqual(400);
        } else {
          expect(a.status, `${c.name}: ${a.body}`).toBe(200);
          expect((JSON.parse(a.body) as unknown[]).length, c.name).toBe(c.expected?.length ?? 0);
        }
      }
    } finally {
      await Promise.all([stop(bt), stop(emb)]);
      dir.remove();
    }
  }, 120_000);

  it('refuses an unknown store URL with a message, exit status 1', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--store', 'hbase://x/y'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((r) => proc.on('exit', r));
    expect(code).toBe(1);
    expect(err).toMatch(/unknown store URL "hbase:\/\/x\/y": expected bigtable:\/\/PROJECT\/INSTANCE/);
  });
});
