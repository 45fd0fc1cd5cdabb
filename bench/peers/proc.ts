/**
 * Process and file-system helpers of the benchmarks: CPU seconds, RSS and I/O of a process
 * or a whole process tree from /proc (all threads; children reaped count in their parent),
 * disk usage of a directory (file sizes and allocated blocks), HTTP polling, child
 * processes whose trees are killed by PID on exit, and `fork` of a sibling bench script
 * under the same runtime (tsx or compiled JS).
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { closeSync, lstatSync, openSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** user + system CPU seconds of process `pid` so far (all threads, live and exited). */
export function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): utime is field 14, stime field 15.
  return (Number(f[11]) + Number(f[12])) / ticksPerSecond();
}

/** Resident set now and its high-water mark (VmHWM), in bytes. */
export function procRss(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return m === null ? 0 : Number(m[1]) * 1024;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** The parent pid of `pid` (0 once it is gone). */
export function parentPid(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/** The pids of `root` and its live descendants (by the parent pid in /proc/<pid>/stat), root first. */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid)) parent.set(pid, parentPid(pid));
  }
  if (!parent.has(root)) return [];
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

/**
 * CPU seconds of a whole process tree so far: for each live member its own user + system
 * time plus that of its waited-for children (cutime, cstime), so an exited build step or
 * helper counts once, in the parent that reaped it.
 */
export function treeCpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // f[0] is field 3: utime, stime, cutime, cstime are fields 14-17.
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // exited between the listing and the read: its time is in its parent's cutime now
    }
  }
  return ticks / ticksPerSecond();
}

/**
 * Proportional set size of a whole process tree now (sum of each live member's Pss from
 * /proc/<pid>/smaps_rollup), in bytes: pages shared between members (the node binary of
 * `npm` and of the server) count once, not once per process as in treeRss.
 */
export function treePss(root: number): number {
  return sumOverTree(root, (pid) => Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024);
}

/** Resident set of a whole process tree now (sum over its live members), in bytes. */
export function treeRss(root: number): number {
  return sumOverTree(root, (pid) => procRss(pid).rss);
}

/** Sums `of(pid)` over the live members of root's tree (a member gone meanwhile counts 0). */
function sumOverTree(root: number, of: (pid: number) => number): number {
  let sum = 0;
  for (const pid of processTree(root)) {
    try {
      sum += of(pid);
    } catch {
      // gone
    }
  }
  return sum;
}

/** /proc/<pid>/io: bytes this process (and the children it reaped) read and wrote. */
export interface ProcIo {
  readonly rchar: number;
  readonly wchar: number;
  readonly readBytes: number;
  /** Bytes of page cache the process dirtied (written to the block device, unless cancelled). */
  readonly writeBytes: number;
  /** Dirty bytes dropped before write-back (files truncated or deleted in time). */
  readonly cancelledWriteBytes: number;
}

export function procIo(pid: number): ProcIo {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  const v = (name: string): number => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rchar: v('rchar'), wchar: v('wchar'), readBytes: v('read_bytes'), writeBytes: v('write_bytes'), cancelledWriteBytes: v('cancelled_write_bytes') };
}

export interface DiskUsage {
  /** Sum of file sizes (du -sb style, apparent). */
  readonly bytes: number;
  /** Allocated blocks (du -sB1). */
  readonly allocated: number;
  readonly files: number;
  /** Apparent bytes per top-level entry and per file extension. */
  readonly byTop: Record<string, number>;
  readonly byExt: Record<string, number>;
}

export function diskUsage(dir: string): DiskUsage {
  let bytes = 0;
  let files = 0;
  const byTop: Record<string, number> = {};
  const byExt: Record<string, number> = {};
  const walk = (d: string, top: string | undefined): void => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      // A running server deletes files (compacted SSTs, rolled WAL) between readdir and lstat.
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isDirectory()) walk(p, top ?? name);
      else if (st.isFile()) {
        bytes += st.size;
        files++;
        const t = top ?? name;
        byTop[t] = (byTop[t] ?? 0) + st.size;
        const ext = path.extname(name) || name.replace(/[0-9]+/g, 'N');
        byExt[ext] = (byExt[ext] ?? 0) + st.size;
      }
    }
  };
  walk(dir, undefined);
  let allocated = NaN;
  try {
    allocated = Number(execFileSync('du', ['-sB1', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(/\s/)[0]);
  } catch (err) {
    // du exits 1 when a file vanished under it (a running server's compaction); its total still stands.
    const out = (err as { stdout?: string }).stdout;
    if (typeof out === 'string' && out.length > 0) allocated = Number(out.split(/\s/)[0]);
  }
  return { bytes, allocated, files, byTop, byExt };
}

/** Polls `probe` every `everyMs` until it returns a value other than undefined; throws after `timeoutMs`. */
export async function pollUntil<T>(what: string, timeoutMs: number, everyMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${lastErr === undefined ? '' : `: ${(lastErr as Error).message}`}`);
    }
    await sleep(everyMs);
  }
}

/** GET/POST with a timeout; returns status and body text. */
export async function http(url: string, init: { method?: string; body?: string; timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    ...(init.body === undefined ? {} : { body: init.body }),
    ...(init.headers === undefined ? {} : { headers: init.headers }),
    signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
  });
  return { status: res.status, body: await res.text() };
}

/** Resolves once a TCP connection to host:port succeeds. */
export async function waitPort(host: string, port: number, timeoutMs: number): Promise<void> {
  await pollUntil(`${host}:${port} to accept connections`, timeoutMs, 100, () => new Promise<true | undefined>((resolve) => {
    const s = net.connect(port, host);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(undefined));
  }));
}

// ---------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const killAll = (): void => {
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null && c.pid !== undefined) {
        // the whole tree, leaves first (`npm start` leaves its server behind otherwise)
        for (const pid of processTree(c.pid).reverse()) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    }
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

function track(c: ChildProcess): ChildProcess {
  hookExit();
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

/** Spawns `cmd` with stdout and stderr appended to `logFile`; its tree is killed by PID if this process exits. */
export function spawnLogged(cmd: string, args: readonly string[], logFile: string, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  const fd = openSync(logFile, 'a');
  const c = spawn(cmd, args, { stdio: ['ignore', fd, fd], ...opts });
  closeSync(fd);
  return track(c);
}

/** The path of a sibling bench script: `.ts` under tsx, `.js` when compiled. */
export function benchScript(fromUrl: string, relative: string): string {
  const ext = fromUrl.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(relative.replace(/\.js$/, ext), fromUrl));
}

/**
 * Forks a bench script with an IPC channel, under the runtime of this process (tsx's
 * loader flags are in execArgv; --cpu-prof and --heap-prof flags are dropped).
 */
export function forkScript(script: string, args: readonly string[]): ChildProcess {
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--cpu-prof') && !a.startsWith('--heap-prof'));
  return track(fork(script, [...args], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
}

/** A load client as the child end of the IPC protocol of forkScript and IpcChannel. */
export interface ForkedClient {
  /** Sends the load; `send` reports progress to the parent. */
  run(send: (m: Record<string, unknown>) => void): Promise<object>;
  close(): void;
}

/**
 * Runs `make(argv[2] as JSON)` when `moduleUrl` is the script node was started with: sends
 * {type:'ready'}, on {cmd:'go'} runs the client and sends {type:'done', …} (or
 * {type:'failed', error}), and exits on {cmd:'exit'} or when the parent goes away.
 */
export function serveForked(moduleUrl: string, make: (spec: unknown) => Promise<ForkedClient>): void {
  if (process.argv[1] === undefined || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  const fail = (err: unknown): void => void process.send?.({ type: 'failed', error: (err as Error).stack ?? String(err) });
  make(JSON.parse(process.argv[2] ?? '')).then((client) => {
    process.on('message', (m: { cmd?: string }) => {
      if (m.cmd === 'go') {
        client.run((p) => process.send?.(p)).then((done) => process.send?.({ type: 'done', ...done }), fail);
      } else if (m.cmd === 'exit') {
        client.close();
        process.exit(0);
      }
    });
    process.on('disconnect', () => process.exit(0));
    process.send?.({ type: 'ready' });
  }, (err: unknown) => {
    fail(err);
    console.error(err);
    process.exit(1);
  });
}

/** Sends SIGTERM (or `signal`), then SIGKILL after `timeoutMs`; resolves when the process has exited. */
export async function stopProcess(c: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null || c.pid === undefined) return;
  const exited = new Promise<void>((r) => c.once('exit', () => r()));
  process.kill(c.pid, signal);
  const t = setTimeout(() => {
    if (c.exitCode === null && c.signalCode === null && c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
  }, timeoutMs);
  await exited;
  clearTimeout(t);
}

/**
 * The parent's end of a forked child's IPC: `next(type)` waits for the child's next message
 * of that type, `send` tells it something.
 */
export class IpcChannel {
  private readonly listeners: Array<(m: Record<string, unknown>) => void> = [];
  exitInfo: string | undefined;

  constructor(readonly child: ChildProcess, readonly name: string) {
    child.on('message', (m: Record<string, unknown>) => {
      for (const l of [...this.listeners]) l(m);
    });
    child.once('exit', (code, signal) => {
      this.exitInfo = `exited with ${signal ?? `code ${code}`}`;
      for (const l of [...this.listeners]) l({ type: 'exit', code, signal });
    });
  }

  /**
   * The next message of `type` (e.g. 'ready'); rejects if the child exits
   * first, or sends {type:'failed', error} instead.
   */
  next(type: string, timeoutMs = 120_000): Promise<Record<string, unknown>> {
    if (this.exitInfo !== undefined) return Promise.reject(new Error(`${this.name} ${this.exitInfo} before '${type}'`));
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        off();
        reject(new Error(`${this.name}: no '${type}' within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const l = (m: Record<string, unknown>): void => {
        if (m['type'] === type) {
          off();
          resolve(m);
        } else if (m['type'] === 'failed') {
          off();
          reject(new Error(`${this.name} failed: ${String(m['error'])}`));
        } else if (m['type'] === 'exit') {
          off();
          reject(new Error(`${this.name} ${this.exitInfo ?? 'exited'} before '${type}'`));
        }
      };
      const off = (): void => {
        clearTimeout(t);
        const i = this.listeners.indexOf(l);
        if (i >= 0) this.listeners.splice(i, 1);
      };
      this.listeners.push(l);
    });
  }

  send(msg: Record<string, unknown>): void {
    if (this.exitInfo === undefined && this.child.connected) this.child.send(msg);
  }
}

/**
 * A fingerprint of the code being measured: sha1 over the paths and contents of the
 * `.ts` (under tsx) or `.js` (compiled) files of core/ and tsdb/ next to the running bench,
 * with their count and newest mtime. Others may edit the tree between runs: this says
 * which code a result file belongs to.
 */
export function codeFingerprint(benchUrl: string): { sha1: string; files: number; newest: string } {
  const root = fileURLToPath(new URL('../', benchUrl));
  const ext = benchUrl.endsWith('.ts') ? '.ts' : '.js';
  const h = createHash('sha1');
  let files = 0;
  let newest = 0;
  const walk = (rel: string): void => {
    let names: string[];
    try {
      names = readdirSync(path.join(root, rel)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const r = path.join(rel, name);
      const st = lstatSync(path.join(root, r));
      if (st.isDirectory()) walk(r);
      else if (st.isFile() && name.endsWith(ext) && !name.endsWith('.d.ts')) {
        h.update(r + '\0');
        h.update(readFileSync(path.join(root, r)));
        files++;
        newest = Math.max(newest, st.mtimeMs);
      }
    }
  };
  walk('core');
  walk('tsdb');
  return { sha1: h.digest('hex').slice(0, 12), files, newest: new Date(newest).toISOString() };
}
