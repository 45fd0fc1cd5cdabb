/**
 * `npm start` compiles nothing on the way up: the start script runs bin/horae.js, which
 * runs the build `npm install` made (the `prepare` script, scripts/build.mjs) from dist/.
 * On a copy of the repository's sources: build once, start from dist/ with no rebuild
 * (`npm start -- --port P --data-dir D` as outside checks run it), then edit a source and
 * see the start say so (refuse with HORAE_NO_REBUILD=1, else rebuild).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { build, isStale } from '../../../scripts/build.mjs';
import { tempDir } from './e2e-helpers.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string> };
const tmp = tempDir('horae-dist-');
afterAll(() => tmp.remove());

/** A copy of what `npm install` builds from, with the repository's node_modules. */
function copyRepo(): string {
  const root = join(tmp.dir, 'repo');
  mkdirSync(root);
  for (const p of ['core', 'tsdb', 'scripts', 'bin', 'package.json', 'ui/src', 'ui/build.mjs']) cpSync(join(REPO, p), join(root, p), { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  return root;
}

interface Run { code: number | null; out: string; port: number | undefined; treeWhenListening: string[] }

/** The command lines of every live descendant of `root` (from /proc). */
function descendants(root: number): string[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: string[] = [];
  const walk = (pid: number): void => {
    for (const c of children.get(pid) ?? []) {
      try {
        out.push(readFileSync(`/proc/${c}/cmdline`, 'utf8').replace(/\0/g, ' ').trim());
      } catch {
        // exited meanwhile
      }
      walk(c);
    }
  };
  walk(root);
  return out;
}

/** Runs `node bin/horae.js ARGS` (npm start's command); stops it by pid once it listens. */
function start(root: string, dataDir: string, env: Record<string, string> = {}, beforeStop: (port: number) => Promise<unknown> = async () => undefined): Promise<Run> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [join(root, 'bin/horae.js'), '--port', '0', '--data-dir', dataDir],
      { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let port: number | undefined;
    let treeWhenListening: string[] = [];
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null && port === undefined) {
        port = Number(m[1]);
        treeWhenListening = descendants(proc.pid!);
        const p = port;
        void fetch(`http://127.0.0.1:${p}/api/version`).then((r) => r.json()).then(async (v) => {
          out += `\nversion: ${JSON.stringify(v)}\n`;
          await beforeStop(p);
          proc.kill('SIGTERM');
        }, () => proc.kill('SIGTERM'));
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => resolve({ code, out, port, treeWhenListening }));
  });
}

describe('npm start', () => {
  it('runs bin/horae.js, which compiles nothing; npm install builds (prepare) with esbuild, a runtime dependency', () => {
    expect(pkg.scripts.start).toBe('node bin/horae.js');
    expect(pkg.scripts.prepare).toBe('node scripts/build.mjs');
    expect(pkg.dependencies.esbuild).toBeDefined();
    const bin = readFileSync(join(REPO, 'bin/horae.js'), 'utf8');
    expect(bin).not.toMatch(/\btsx\b|\btsc\b|typescript/);
  });

  it('starts the built server from dist/ without rebuilding; a changed source is named and rebuilt', async () => {
    const root = copyRepo();
    expect(isStale(root)).toBe('dist/BUILD.json');
    const built = await build(root);
    expect(built.files).toBeGreaterThan(100);
    expect(isStale(root)).toBeUndefined();
    const stamp = statSync(join(root, 'dist/BUILD.json')).mtimeMs;

    // The threads start from single files (scripts/build.mjs BUNDLED): nothing to resolve
    // and load one by one; paths a bundled source finds from its import.meta.url exist.
    for (const entry of ['tsdb/main.js', 'tsdb/cli/heap-limit.js', 'core/lsm/job-worker.js', 'tsdb/query/decode-worker.js']) {
      const file = join(root, 'dist', entry);
      const text = readFileSync(file, 'utf8');
      expect(text, entry).not.toMatch(/^\s*(import|export)\b[^\n]*\bfrom\s*["']\.{1,2}\//m);
      const urls = [...text.matchAll(/new URL\("(\.{1,2}\/[^"]+\.js)", import\.meta\.url\)/g)].map((m) => m[1]!);
      if (entry === 'tsdb/main.js') expect(urls).toContain('./compact/hour-transform.js');
      for (const u of urls) expect(existsSync(fileURLToPath(new URL(u, pathToFileURL(file)))), `${entry}: ${u}`).toBe(true);
    }

    // A point written before the stop leaves the memstore through the job worker (the flush
    // on close, which applies the data table's transform): the worker and the module it imports load.
    const put = async (port: number): Promise<void> => {
      const r = await fetch(`http://127.0.0.1:${port}/api/put?sync=true`, { method: 'POST', body: JSON.stringify({ metric: 'm', timestamp: 1_767_225_600, value: 1.25, tags: { h: 'a' } }) });
      expect(r.status).toBe(204);
    };
    const first = await start(root, join(tmp.dir, 'data'), { HORAE_NO_REBUILD: '1' }, put);
    const ssts = readdirSync(join(tmp.dir, 'data')).filter((f) => f.endsWith('.sst'));
    expect(ssts.length).toBeGreaterThan(0);
    expect(first.out).not.toMatch(/error|fail/i);
    expect(first.out).toMatch(/listening on/);
    expect(first.out).toMatch(/version: \{"version":"0\.1\.0"/);
    expect(first.out).not.toMatch(/rebuild/);
    expect(first.code).toBe(0);
    expect(statSync(join(root, 'dist/BUILD.json')).mtimeMs).toBe(stamp);

    // A source edited after the build (a dev checkout).
    const later = new Date(stamp + 50);
    utimesSync(join(root, 'tsdb/version.ts'), later, later);
    expect(isStale(root)).toBe('tsdb/version.ts');
    const refused = await start(root, join(tmp.dir, 'data'), { HORAE_NO_REBUILD: '1' });
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/tsdb\/version\.ts changed after the last build; run `npm run build` first/);

    const rebuilt = await start(root, join(tmp.dir, 'data'));
    expect(rebuilt.out).toMatch(/tsdb\/version\.ts changed after the last build: rebuilding \(npm run build\) … done in \d+ ms/);
    expect(rebuilt.out).toMatch(/listening on/);
    expect(rebuilt.code).toBe(0);
    // The rebuild's esbuild service is stopped, and the server runs in bin/horae.js's own
    // process (on a thread): nothing under it.
    expect(rebuilt.treeWhenListening).toEqual([]);
    expect(first.treeWhenListening).toEqual([]);
    expect(isStale(root)).toBeUndefined();
  }, 60_000);
});
