/**
 * Starts a Bigtable emulator on a free loopback port for one test file, and stops it.
 *
 * Which emulator (HORAE_BIGTABLE_EMULATOR):
 * - `auto` (default): Google's cbtemulator when the machine has it (PATH, the gcloud SDK's
 *   platform/bigtable-emulator, /usr/lib/google-cloud-sdk), else the fallback;
 * - `gcloud`: cbtemulator or fail;
 * - `debian`: the fallback, built offline by scripts/build-bigtable-emulator.sh from
 *   golang-go and golang-google-cloud-dev (cached under .cache/, ~1 min the first time).
 * When no emulator can be had the setup FAILS: the Bigtable tests are never skipped.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Emulator {
  /** host:port, for BIGTABLE_EMULATOR_HOST. */
  readonly host: string;
  /** 'gcloud' (cbtemulator) or 'debian' (bttest built here). */
  readonly kind: 'gcloud' | 'debian';
  /** The emulator's process id (benchmarks read its CPU time). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** cbtemulator's path, or undefined. */
export function findCbtemulator(): string | undefined {
  const candidates: string[] = [];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir !== '') candidates.push(join(dir, 'cbtemulator'));
  try {
    const gcloud = execFileSync('sh', ['-c', 'command -v gcloud'], { encoding: 'utf8' }).trim();
    if (gcloud !== '') {
      const sdk = resolve(dirname(gcloud), '..');
      candidates.push(join(sdk, 'platform/bigtable-emulator/cbtemulator'));
    }
  } catch {
    // no gcloud on PATH
  }
  candidates.push('/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator');
  return candidates.find((p) => existsSync(p));
}

/** Builds (or finds cached) the fallback emulator; returns its path. */
export function buildFallbackEmulator(): string {
  const out = execFileSync(join(ROOT, 'scripts/build-bigtable-emulator.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').pop()!;
}

function choose(want: string): { bin: string; kind: 'gcloud' | 'debian' } {
  if (want !== 'auto' && want !== 'gcloud' && want !== 'debian') {
    throw new Error(`HORAE_BIGTABLE_EMULATOR=${want}: expected auto, gcloud or debian`);
  }
  if (want !== 'debian') {
    const cbt = findCbtemulator();
    if (cbt !== undefined) return { bin: cbt, kind: 'gcloud' };
    if (want === 'gcloud') throw new Error('HORAE_BIGTABLE_EMULATOR=gcloud but no cbtemulator was found');
  }
  return { bin: buildFallbackEmulator(), kind: 'debian' };
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      res(true);
    });
    s.once('error', () => res(false));
  });
}

/** Starts an emulator on 127.0.0.1 and waits until it accepts connections (10 s at most). */
export async function startEmulator(want = process.env.HORAE_BIGTABLE_EMULATOR ?? 'auto'): Promise<Emulator> {
  const { bin, kind } = choose(want);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(bin, ['-host', '127.0.0.1', '-port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    const deadline = Date.now() + 10_000;
    while (!exited && Date.now() < deadline && !(await canConnect(port))) await new Promise((r) => setTimeout(r, 20));
    if (!exited && (await canConnect(port))) {
      return {
        host: `127.0.0.1:${port}`,
        kind,
        pid: child.pid!,
        stop: () => new Promise<void>((res) => {
          if (exited) {
            res();
            return;
          }
          child.once('exit', () => res());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 3000).unref();
        }),
      };
    }
    child.kill('SIGKILL');
    if (attempt >= 3) throw new Error(`the Bigtable emulator ${bin} did not start on port ${port}: ${stderr.trim()}`);
  }
}
