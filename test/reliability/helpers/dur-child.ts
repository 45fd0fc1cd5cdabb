/**
 * A Horae server in a child process for the durability and overload tests: the real
 * command line (`tsdb/main.ts serve`, through tsx), a config file in the test's temp
 * directory, and the test-only file-system layers chosen by environment
 * (core/fs/test-fs.ts). Spoken to only over its port.
 *
 * Every child started here is registered and killed by killAllChildren() (call it in
 * afterEach), so a failing test never leaves a server behind.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../../tsdb/main.ts', import.meta.url));

const live = new Set<ChildProcess>();

export interface ChildOptions {
  readonly dataDir: string;
  /** Config file lines (`key = value`). */
  readonly config: readonly string[];
  /** Extra environment (HORAE_TEST_FS, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra node flags (e.g. --max-old-space-size). */
  readonly nodeArgs?: readonly string[];
  /** ms to wait for "listening". Default 30000. */
  readonly startTimeoutMs?: number;
}

export interface Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly base: string;
  /** Everything the child printed so far. */
  output(): string;
  /** SIGKILL, and waits for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM, and waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // Retries: a killed child may still be closing files in the directory for a moment.
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) };
}

/** Starts `horae serve --port 0` on `dataDir` and resolves once it listens. */
export function startChild(o: ChildOptions): Promise<Child> {
  const configPath = join(o.dataDir, '..', `horae-${Date.now()}-${Math.floor(Math.random() * 1e9)}.conf`);
  writeFileSync(configPath, o.config.join('\n') + '\n');
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [...(o.nodeArgs ?? []), '--import', 'tsx', MAIN, 'serve', '--port', '0', '--data-dir', o.dataDir, '--config', configPath],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env } },
    );
    live.add(proc);
    let out = '';
    let listening = false;
    const exited = new Promise<number | null>((res) => proc.on('exit', (code) => {
      live.delete(proc);
      res(code);
    }));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not listen within ${o.startTimeoutMs ?? 30000} ms: ${out}`));
    }, o.startTimeoutMs ?? 30_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.length > 1 << 20) out = out.slice(-(1 << 19));
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null && !listening) {
        listening = true;
        clearTimeout(timer);
        const port = Number(m[1]);
        resolve({
          proc,
          pid: proc.pid!,
          port,
          base: `http://127.0.0.1:${port}`,
          output: () => out,
          exited,
          async kill9() {
            proc.kill('SIGKILL');
            await exited;
          },
          async stop() {
            proc.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    void exited.then((code) => {
      if (!listening) {
        clearTimeout(timer);
        reject(new Error(`server exited (${code}) before listening: ${out}`));
      }
    });
  });
}

/** SIGKILLs every child still running (afterEach). */
export async function killAllChildren(): Promise<void> {
  const waits: Promise<void>[] = [];
  for (const p of live) {
    waits.push(new Promise((r) => {
      p.once('exit', () => r());
      p.kill('SIGKILL');
    }));
  }
  await Promise.all(waits);
}

/** Resident set size of a process in bytes (VmRSS), or undefined once it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}

export interface StoreStatsView {
  readonly regions: number;
  readonly flushesDone: number;
  readonly compactionsDone: number;
  readonly splitsDone: number;
  readonly memstoreBytes: number;
  readonly backgroundErrors?: number;
  readonly lastBackgroundError?: string;
  readonly writeFailure?: string;
}

export async function storeStats(base: string): Promise<StoreStatsView> {
  const r = await fetch(`${base}/api/stats/store`, { signal: AbortSignal.timeout(10_000) });
  if (r.status !== 200) throw new Error(`/api/stats/store: ${r.status} ${await r.text()}`);
  return (await r.json()) as StoreStatsView;
}

/** Seeded PRNG (mulberry32): the tests' only source of randomness. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
