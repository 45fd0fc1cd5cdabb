/**
 * Real Horae servers for the multi-server suite: `horae serve` in child processes (from
 * sources, as test/bigtable/serve.bigtable.test.ts starts it), each on its own loopback
 * port, all on one store (`--store bigtable://…` or `--data-dir D`), with a config file.
 * Stopped by pid: SIGTERM (a clean stop) or SIGKILL (`kill -9`).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../../tsdb/main.ts', import.meta.url));

export interface HoraeSpec {
  /** `--store URL` or `--data-dir D`. */
  readonly storeArgs: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Config file lines (key = value), written to `configPath`. */
  readonly config: Readonly<Record<string, string | number | boolean>>;
  readonly configPath: string;
}

export class HoraeProcess {
  readonly name: string;
  private readonly spec: HoraeSpec;
  private proc: ChildProcess | undefined;
  private out = '';
  private portNumber = 0;

  constructor(name: string, spec: HoraeSpec) {
    this.name = name;
    this.spec = spec;
    writeFileSync(spec.configPath, Object.entries(spec.config).map(([k, v]) => `${k} = ${String(v)}`).join('\n') + '\n');
  }

  get port(): number {
    return this.portNumber;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Everything the process printed (every start). */
  output(): string {
    return this.out;
  }

  /** Starts the process; resolves once it listens (60 s at most). */
  start(): Promise<void> {
    const args = ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--bind', '127.0.0.1', '--config', this.spec.configPath, ...this.spec.storeArgs];
    const proc = (this.proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.spec.env } }));
    const from = this.out.length;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not listen within 60 s: ${this.out.slice(from)}`)), 60_000);
      const onData = (d: Buffer): void => {
        this.out += d.toString();
        const m = /listening on 127\.0\.0\.1:(\d+)/.exec(this.out.slice(from));
        if (m !== null) {
          clearTimeout(timer);
          this.portNumber = Number(m[1]);
          resolve();
        }
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code ?? signal}) before listening: ${this.out.slice(from)}`));
      });
    });
  }

  /** kill -9: the process gets no chance to finish anything. */
  async kill9(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** A clean stop (SIGTERM; SIGKILL after 15 s). */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await this.signal('SIGTERM');
    clearTimeout(timer);
  }

  private async signal(sig: NodeJS.Signals): Promise<void> {
    const proc = this.proc;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill(sig);
    await exited;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.portNumber}${path}`;
  }

  /** An HTTP request; the body as text. */
  async http(method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    const r = await fetch(this.url(path), init);
    return { status: r.status, body: await r.text() };
  }
}

/**
 * Puts `lines` over one telnet connection, `version` after every `ackEvery` lines: the
 * lines before a `version` answer with no `put:` error before it are acknowledged. Calls
 * `acked(n)` with the count of lines acknowledged so far; resolves with that count when
 * the server closes the connection (after `exit`, or because it died).
 */
export function telnetPut(port: number, lines: readonly string[], ackEvery: number, acked: (n: number) => void = () => {}): Promise<{ acked: number; errors: string }> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.setEncoding('utf8');
    let buf = '';
    let errors = '';
    const marks: number[] = [];
    let text = '';
    for (let i = 0; i < lines.length; i++) {
      text += `${lines[i]}\n`;
      if ((i + 1) % ackEvery === 0 || i === lines.length - 1) {
        text += 'version\n';
        marks.push(i + 1);
      }
    }
    let done = 0;
    sock.on('data', (d: string) => {
      buf += d;
      for (;;) {
        const nl = buf.indexOf('\n');
        if (nl < 0) break;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith('put:')) errors += `${line}\n`;
        else if (line.startsWith('net.opentsdb.tools') && marks.length > 0) {
          done = marks.shift()!;
          if (errors === '') acked(done);
        }
      }
    });
    sock.on('error', () => {});
    sock.on('close', () => resolve({ acked: errors === '' ? done : 0, errors }));
    sock.end(`${text}exit\n`);
  });
}

/** A file name under `dir` for server `i`'s config. */
export function configPathOf(dir: string, i: number): string {
  return join(dir, `horae-${i}.conf`);
}
