/**
 * Corruption at rest, end to end (tsdb/server/store-check.ts, core/tools/verify.ts,
 * docs/SECURITY.md): a real server on a data directory writes four metrics over several
 * hours, each flushed into its own SST files, and stops. Then, with the server stopped:
 *  - one byte of one SST's last data block flipped: the server starts without reading
 *    the file (status `ok`, nothing logged: a start reads no SST as a whole); the metrics
 *    in the other files are served exactly; the damaged metric gets a 500 that names the
 *    file (not its path); from then on the server logs the damaged file and offset,
 *    /api/status says `partial` and lists it, /api/stats counts it; `horae fsck` prints
 *    the same file and offset and exits 1;
 *  - one byte of the WAL flipped (a store closed without flushing): the WAL file and
 *    offset are named by recovery as the store opens (nothing reads the WAL before), the
 *    data in SSTs is served, fsck agrees;
 *  - one byte of the MANIFEST flipped: `horae serve` (a real process) refuses to start
 *    with a message naming the MANIFEST and offset, and fsck reports the same.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/index.js';
import { NodeFileSystem } from '../../core/fs/node-fs.js';
import { SstReader } from '../../core/sst/sst-reader.js';
import { compare } from '../../core/lsm/sst-options.js';
import type { EmbeddedOptions } from '../../core/index.js';
import { runCli } from '../../tsdb/cli/run-cli.js';
import { startServer } from '../../tsdb/server/server.js';
import type { RunningServer } from '../../tsdb/server/server.js';
import { checkBeforeOpen, walProblems } from '../../tsdb/server/store-check.js';

const NOW = Date.UTC(2026, 0, 2);
const TS = NOW / 1000 - 6 * 3600;
const METRICS = ['rest.a', 'rest.b', 'rest.c', 'rest.d'];
// Small blocks: each SST has several, and a start reads at most the first of a file.
const STORE_OPTS: Partial<EmbeddedOptions> = { compactionMinFiles: 1000, maintenanceIntervalMs: 0, blockSizeBytes: 64 };
const MAIN = resolve('tsdb/main.ts');

interface Started { srv: RunningServer; logs: string[] }

async function start(dir: string, extra: Partial<EmbeddedOptions> = {}): Promise<Started> {
  const logs: string[] = [];
  const before = await checkBeforeOpen(dir);
  if (before.fatal !== undefined) throw new Error(before.fatal);
  const store = await openEmbeddedStore({ dir, ...STORE_OPTS, ...extra });
  const srv = await startServer({
    store, port: 0, bind: '127.0.0.1', config: { compactHours: false }, now: () => NOW,
    log: (m) => logs.push(m), damagedFiles: [...before.problems, ...(await walProblems(store))],
  });
  return { srv, logs };
}

function points(metric: string): Array<{ metric: string; timestamp: number; value: number; tags: Record<string, string> }> {
  const out = [];
  for (let h = 0; h < 3; h++) for (let k = 0; k < 40; k++) out.push({ metric, timestamp: TS + h * 3600 + k * 60, value: k + h, tags: { host: `h${k % 4}` } });
  return out;
}

async function query(srv: RunningServer, metric: string): Promise<{ status: number; body: string }> {
  const r = await srv.app.inject({ method: 'GET', url: `/api/query?start=${TS - 1}&m=sum:${metric}{host=*}` });
  return { status: r.statusCode, body: r.body };
}

/** Every point of `metric` as the query returns it, sorted. */
function pointsOf(body: string): string[] {
  return (JSON.parse(body) as Array<{ tags: { host: string }; dps: Record<string, number> }>)
    .flatMap((s) => Object.entries(s.dps).map(([t, v]) => `${s.tags.host}@${t}=${v}`)).sort();
}
const expected = (metric: string): string[] => points(metric).map((p) => `${p.tags.host}@${p.timestamp}=${p.value}`).sort();

async function fsck(dir: string): Promise<{ code: number | undefined; out: string }> {
  let out = '';
  const w = { write: (s: string) => { out += s; return true; } };
  const code = await runCli(['fsck', '--data-dir', dir], {}, { stdout: w, stderr: w } as never);
  return { code, out };
}

const ssts = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.sst')).sort();

function flip(path: string, offset: number): void {
  const b = readFileSync(path);
  b[offset] = b[offset]! ^ 0x5a;
  writeFileSync(path, b);
}

describe('corruption at rest', () => {
  const root = mkdtempSync(join(tmpdir(), 'horae-rest-'));
  const dir = join(root, 'data');
  /** SST files written by each metric's flush. */
  const filesOf = new Map<string, string[]>();

  beforeAll(async () => {
    const { srv } = await start(dir);
    try {
      for (const m of METRICS) {
        const before = new Set(ssts(dir));
        const r = await srv.app.inject({ method: 'POST', url: '/api/put', payload: points(m) });
        expect(r.statusCode).toBe(204);
        await srv.tsdb.data.flush();
        filesOf.set(m, ssts(dir).filter((f) => !before.has(f)));
      }
    } finally {
      await srv.stop();
    }
    for (const m of METRICS) expect(filesOf.get(m)!.length, m).toBeGreaterThan(0);
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a flipped byte in an SST: reported with file and offset, everything else served, fsck agrees', async () => {
    const d = join(root, 'sst');
    cpSync(dir, d, { recursive: true });
    // The largest SST of rest.b; the byte flipped lies in its last data block.
    const victim = filesOf.get('rest.b')!.map((f) => [f, statSync(join(d, f)).size] as const).sort((a, b) => b[1] - a[1])[0]![0];
    const lastBlock = await lastDataBlock(join(d, victim));
    expect(lastBlock.blocks).toBeGreaterThan(1);
    flip(join(d, victim), lastBlock.offset + 3);
    const { srv, logs } = await start(d);
    try {
      // Nothing has read the damaged block yet: a start checks no SST.
      await new Promise((r) => setTimeout(r, 300));
      expect(JSON.parse((await srv.app.inject({ url: '/api/status' })).body)).toEqual({ status: 'ok' });
      for (const m of ['rest.a', 'rest.c', 'rest.d']) {
        const r = await query(srv, m);
        expect(r.status, m).toBe(200);
        expect(pointsOf(r.body), m).toEqual(expected(m));
      }
      expect(logs.filter((l) => l.startsWith('store: damaged file '))).toEqual([]);
      const bad = await query(srv, 'rest.b');
      expect(bad.status).toBe(500);
      expect(bad.body, bad.body).toMatch(new RegExp(`"Stored data is damaged: sst ${victim}: block @${lastBlock.offset}: checksum mismatch`));
      expect(bad.body).not.toContain(root);
      // From then on the damaged file is known: status, stats and the log name it.
      const status = JSON.parse((await srv.app.inject({ url: '/api/status' })).body);
      expect(status).toMatchObject({ status: 'partial', damagedFiles: [{ file: victim, offset: lastBlock.offset }] });
      expect(status.damagedFiles[0].message).not.toContain(root);
      const stats = JSON.parse((await srv.app.inject({ url: '/api/stats' })).body) as Array<{ metric: string; value: number }>;
      expect(stats.find((p) => p.metric === 'horae.store.damaged_files')?.value).toBe(1);
      const line = logs.find((l) => l.startsWith('store: damaged file '));
      expect(line, logs.join('\n')).toMatch(new RegExp(`^store: damaged file ${victim} at offset ${lastBlock.offset}: `));
    } finally {
      await srv.stop();
    }
    const f = await fsck(d);
    expect(f.code).toBe(1);
    expect(f.out, f.out).toContain(`ERROR store.damaged_file: ${line(logs)}`);
  }, 60_000);

  it('a flipped byte in the WAL: named by recovery as the store opens (the WAL read once), the SST data served, fsck agrees', async () => {
    const d = join(root, 'wal');
    cpSync(dir, d, { recursive: true });
    // More points, left in the WAL only: the store closes without flushing.
    const { srv } = await start(d, { flushOnClose: false });
    const extra = points('rest.wal');
    expect((await srv.app.inject({ method: 'POST', url: '/api/put', payload: extra })).statusCode).toBe(204);
    await srv.stop();
    const wal = readdirSync(d).filter((f) => f.endsWith('.log') || f.endsWith('.wal')).sort().pop();
    expect(wal, readdirSync(d).join(' ')).toBeDefined();
    const size = statSync(join(d, wal!)).size;
    flip(join(d, wal!), Math.floor(size / 2));
    const forFsck = join(root, 'wal-fsck');
    cpSync(d, forFsck, { recursive: true });

    // Nothing reads the WAL before the store opens: recovery reads it, once, and names the damage.
    expect((await checkBeforeOpen(d)).problems).toEqual([]);
    const { srv: again, logs } = await start(d);
    try {
      const line = logs.find((l) => l.startsWith(`store: damaged file ${wal} at offset `));
      expect(line, logs.join('\n')).toBeDefined();
      const status = JSON.parse((await again.app.inject({ url: '/api/status' })).body);
      expect(status.status).toBe('partial');
      expect(status.damagedFiles[0].file).toBe(wal);
      for (const m of METRICS) {
        const r = await query(again, m);
        expect(r.status, m).toBe(200);
        expect(pointsOf(r.body), m).toEqual(expected(m));
      }
    } finally {
      await again.stop();
    }
    const f = await fsck(forFsck);
    expect(f.code).toBe(1);
    expect(f.out, f.out).toContain(`ERROR store.damaged_file: ${line(logs)}`);
  }, 60_000);

  it('a flipped byte in the MANIFEST: horae serve refuses to start, naming it; fsck agrees', async () => {
    const d = join(root, 'manifest');
    cpSync(dir, d, { recursive: true });
    flip(join(d, 'MANIFEST'), 30);
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--data-dir', d], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    clearTimeout(timer);
    expect(stdout).not.toContain('listening');
    expect(code).toBe(1);
    expect(stderr).toMatch(/refusing to open the store: its MANIFEST is damaged \(MANIFEST at offset \d+: /);
    const named = /\((MANIFEST at offset \d+: [^\n]*?)\)\. The files are left untouched/.exec(stderr)![1]!;
    const f = await fsck(d);
    expect(f.code).toBe(1);
    expect(f.out).toContain(`ERROR store.damaged_file: ${named}`);
    expect(readFileSync(join(d, 'MANIFEST'))[30]).toBe(readFileSync(join(dir, 'MANIFEST'))[30]! ^ 0x5a);
  }, 60_000);
});

/** The `<file> at offset <n>: <message>` part of the first damaged-file log line. */
function line(logs: readonly string[]): string {
  const l = logs.find((x) => x.startsWith('store: damaged file '));
  if (l === undefined) throw new Error(`no damaged-file line in ${logs.join('\n')}`);
  return l.slice('store: damaged file '.length);
}

/** The offset of an SST's last data block, and how many it has. */
async function lastDataBlock(path: string): Promise<{ offset: number; blocks: number }> {
  const r = SstReader.open(await new NodeFileSystem().openRead(path), { compare, cacheId: 1 });
  try {
    return { offset: r.blockHandle(r.dataBlocks - 1).offset, blocks: r.dataBlocks };
  } finally {
    await r.close();
  }
}
