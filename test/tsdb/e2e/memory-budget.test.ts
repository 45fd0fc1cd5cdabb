/**
 * The memory budget as users run it: `horae serve` on a worker thread whose heap limit is
 * the budget's share (tsdb/cli/heap-limit.ts, as bin/horae.js does it), spoken to over its
 * port. SIGTERM and SIGHUP to the PID that was started stop the server gracefully; one
 * process, no child left behind. With a small budget, a storm of big queries is answered within
 * the budget's shares (413 past a query's points, 503 past the queries at once) and the
 * server lives on. (The guard's refusals past the heap share: test/tsdb/memory/.)
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './e2e-helpers.js';

const ENTRY = fileURLToPath(new URL('./relaunch-entry.ts', import.meta.url));
const MiB = 1024 * 1024;
let proc: ChildProcess | undefined;
let dir: ReturnType<typeof tempDir> | undefined;

afterEach(() => {
  proc?.kill('SIGKILL');
  proc = undefined;
  dir?.remove();
  dir = undefined;
});

interface Served { proc: ChildProcess; port: number; exited: Promise<number | null>; output: () => string }

function serve(dataDir: string, env: Record<string, string>): Promise<Served> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', ENTRY, 'serve', '--port', '0', '--data-dir', dataDir],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    proc = p;
    let out = '';
    const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) resolve({ proc: p, port: Number(m[1]), exited, output: () => out });
    };
    p.stdout?.on('data', onData);
    p.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${out}`)));
  });
}

async function stats(port: number): Promise<Record<string, number>> {
  const r = await fetch(`http://127.0.0.1:${port}/api/stats`);
  const points = (await r.json()) as { metric: string; value: number }[];
  return Object.fromEntries(points.filter((p) => p.metric.startsWith('horae.memory.')).map((p) => [p.metric, p.value]));
}

function alive(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/api/version`).then((r) => r.ok, () => false);
}

/** Command lines of the node processes whose parent is `pid` (from /proc; tsx's esbuild service left out). */
function nodeChildren(pid: number): string[] {
  const out: string[] = [];
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!cmd.includes('esbuild')) out.push(cmd);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

describe('memory budget (horae serve on a heap-limited thread)', () => {
  it('runs serve under the heap limit of its budget in one process; SIGTERM or SIGHUP to it stops the server gracefully', async () => {
    dir = tempDir('horae-budget-');
    const s = await serve(join(dir.dir, 'data'), { HORAE_MEMORY_BUDGET_BYTES: String(256 * MiB) });
    const m = await stats(s.port);
    expect(m['horae.memory.budget_bytes']).toBe(256 * MiB);
    // The child's V8 limit is at least the share, so the share is the guard's limit.
    expect(m['horae.memory.heap_limit_bytes']).toBe(192 * MiB);
    expect(nodeChildren(s.proc.pid!)).toEqual([]);
    s.proc.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(s.output()).toMatch(/SIGTERM: shutting down/);
    expect(await alive(s.port)).toBe(false);

    const t = await serve(join(dir.dir, 'data'), { HORAE_MEMORY_BUDGET_BYTES: String(256 * MiB) });
    t.proc.kill('SIGHUP');
    expect(await t.exited).toBe(0);
    expect(t.output()).toMatch(/SIGHUP: shutting down/);
    expect(await alive(t.port)).toBe(false);
  }, 60_000);

  it('under a small budget answers a storm of big queries with 200, 413 or 503, never dying of heap exhaustion', async () => {
    dir = tempDir('horae-budget-');
    const s = await serve(join(dir.dir, 'data'), { HORAE_MEMORY_BUDGET_BYTES: String(64 * MiB) });
    const config = (await (await fetch(`http://127.0.0.1:${s.port}/api/config`)).json()) as Record<string, string>;
    // The budget's shares (tsdb/memory/budget.ts): 2 queries at once, 131,072 points each, 1 MiB bodies.
    expect(config).toMatchObject({ 'horae.query.max_concurrent': '2', 'horae.query.max_points': '131072', 'horae.http.max_body_bytes': String(MiB) });
    // 100,000 points: 20 series, an hour apart.
    const T0 = 1000000000 - (1000000000 % 3600);
    let hour = 0;
    for (let b = 0; b < 50; b++) {
      const body = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ metric: 'budget.m', timestamp: T0 + Math.floor(hour++ / 20) * 3600, value: i, tags: { host: `h${i % 20}` } })));
      const r = await fetch(`http://127.0.0.1:${s.port}/api/put`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(204);
    }
    // With Node's default heap share of this budget's queries, 4 of these at once exhausted a 48 MiB heap.
    const url = `http://127.0.0.1:${s.port}/api/query?start=${T0 - 3600}&end=${T0 + 6000 * 3600}&m=none:budget.m{host=*}`;
    const statuses = await Promise.all(Array.from({ length: 16 }, async () => {
      const r = await fetch(url);
      const text = await r.text();
      if (r.status === 413) expect(text).toMatch(/Query exceeded a limit/);
      if (r.status === 503) expect(text).toMatch(/Too many queries|memory over budget/);
      return r.status;
    }));
    expect(statuses.every((x) => x === 200 || x === 413 || x === 503)).toBe(true);
    expect(statuses).toContain(200);
    expect(await alive(s.port)).toBe(true);
    const st = await stats(s.port);
    expect(st['horae.memory.heap_used_bytes']).toBeLessThan(48 * MiB);
    // Where the memory is: the process' RSS holds the server's heap, its external memory the array buffers.
    expect(st['horae.memory.heap_total_bytes']).toBeGreaterThanOrEqual(st['horae.memory.heap_used_bytes']!);
    expect(st['horae.memory.rss_bytes']).toBeGreaterThan(st['horae.memory.heap_total_bytes']! + st['horae.memory.array_buffers_bytes']!);
    expect(st['horae.memory.external_bytes']).toBeGreaterThanOrEqual(st['horae.memory.array_buffers_bytes']!);
    expect(st['horae.memory.array_buffers_bytes']).toBeGreaterThan(0);
    s.proc.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }, 120_000);
});
