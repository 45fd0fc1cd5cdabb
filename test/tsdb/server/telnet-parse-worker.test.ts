/**
 * Telnet parsing on a worker thread (parse-pool.ts, parse-worker.ts, parsed-chunk.ts)
 * against parsing in the session's thread, on the real write path: the same random and
 * mangled streams (commands, duplicates of one series and timestamp, series first seen
 * mid-stream, invalid UTF-8, `dropcaches`, over-long lines, `exit`, a cut last line) fed
 * in the same random chunks to a session of each kind. The bytes each client receives,
 * the session counters and every stored point must be the same; and the worker must
 * really have parsed most lines. Then a worker that dies mid-stream: its connections go
 * on in the main thread without losing or repeating a line.
 */
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { mergeRowCells } from '../../../tsdb/read/row-merge.js';
import type { Authenticator } from '../../../tsdb/server/auth.js';
import { decodeRowKey } from '../../../tsdb/schema/row-key.js';
import { PutChunkParser, OP_RAW_PUT, OP_TEXT, chunkViews } from '../../../tsdb/server/telnet/parsed-chunk.js';
import { LineSplitter } from '../../../tsdb/server/telnet/line-splitter.js';
import { TelnetSession, newTelnetStats, resolveTelnetOptions } from '../../../tsdb/server/telnet/telnet-session.js';
import type { TelnetStats } from '../../../tsdb/server/telnet/telnet-session.js';
import { tsdbTelnetBackend, versionLines } from '../../../tsdb/server/telnet/tsdb-telnet-backend.js';
import type { TsdbTelnetBackend } from '../../../tsdb/server/telnet/tsdb-telnet-backend.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const seed = Number(process.env.TEST_SEED ?? 11);
const T0 = 1767225600; // 2026-01-01T00:00:00Z
const MAX_LINE = 2048;

// -------------------------------------------------------------------------------------
// Streams

/** One line (without terminator) of connection `conn`, line number `i` of `n`. */
function randomLine(r: Random, conn: number, i: number, n: number): string | Buffer {
  // Series appear as the stream goes on: metric k is first used around line k·n/8.
  const metric = `c${conn}.m${r.int(1 + Math.floor((8 * i) / n))}`;
  const ts = r.chance(0.1) ? `${(T0 + r.int(600)) * 1000 + r.int(1000)}` : `${T0 + 10 * r.int(60)}`;
  const value = [String(r.int(100)), (r.next() * 100).toFixed(2), String(r.next()), '-3', '1e3', 'x1', '9223372036854775807', '1.5e400'][r.int(8)]!;
  let line = `put ${metric} ${ts} ${value} host=web${r.int(4)}${r.chance(0.5) ? ' dc=a' : ''}`;
  for (let m = r.chance(0.15) ? 1 + r.int(3) : 0; m > 0; m--) {
    const at = r.int(line.length);
    const c = ' =.0e\t-x'[r.int(8)]!;
    line = r.chance(0.5) ? line.slice(0, at) + line.slice(at + 1) : line.slice(0, at) + c + line.slice(at);
  }
  if (r.chance(0.01)) return Buffer.from([0x70, 0x75, 0x74, 0x20, 0xe9, 0xff, 0x20, 0x31]);
  if (r.chance(0.01)) return Buffer.from([0x78, 0x3d, 0xe9]); // a command that is not UTF-8
  if (r.chance(0.03)) return ['version', 'help', 'status', '', '  put m 1 1 a=b', 'puts x', 'put', 'put m', 'caf\u00e9 x', 'diediedie'][r.int(10)]!;
  if (r.chance(0.0005)) return 'dropcaches'; // the workers forget every series
  return line + (r.chance(0.2) ? '\r' : '');
}

interface Stream { readonly bytes: Buffer; readonly chunks: readonly number[] }

/** `clean`: no `exit` and no over-long line (the connection takes every line). */
function randomStream(r: Random, conn: number, clean = false, n = 200 + r.int(3000)): Stream {
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const l = randomLine(r, conn, i, n);
    parts.push(typeof l === 'string' ? Buffer.from(l, 'utf8') : l, Buffer.from('\n'));
    if (!clean && r.chance(0.002)) parts.push(Buffer.from('exit\n'));
    if (!clean && r.chance(0.001)) parts.push(Buffer.from(`put ${'x'.repeat(MAX_LINE + 10)} 1 1 a=b\n`));
  }
  if (r.chance(0.3)) parts.push(Buffer.from(`put c${conn}.cut ${T0} 1 host=a`)); // no terminator: dropped
  const bytes = Buffer.concat(parts);
  const chunks: number[] = [];
  const max = [8, 400, 5000, 70_000][r.int(4)]!;
  for (let off = 0; off < bytes.length;) {
    const k = 1 + r.int(max);
    chunks.push(k);
    off += k;
  }
  return { bytes, chunks };
}

// -------------------------------------------------------------------------------------
// Harness: sessions on real sockets, fed chosen chunks (the client itself sends nothing)

interface Side {
  readonly tsdb: Tsdb;
  readonly backend: TsdbTelnetBackend;
  readonly stats: TelnetStats;
  readonly server: Server;
  readonly accepted: Array<{ session: TelnetSession; socket: Socket }>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openSide(threads: number, auth?: Authenticator): Promise<Side> {
  const { tsdb } = await openFixture();
  const backend = tsdbTelnetBackend(tsdb, () => 'ok', { parseThreads: threads });
  const stats = newTelnetStats();
  const options = resolveTelnetOptions({ maxLineBytes: MAX_LINE, maxBatchLines: 300 });
  const accepted: Array<{ session: TelnetSession; socket: Socket }> = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => accepted.push({ session: new TelnetSession(socket, backend, options, stats, undefined, auth), socket }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    await new Promise((r) => server.close(r));
    await backend.close();
    await tsdb.close();
  });
  return { tsdb, backend, stats, server, accepted };
}

interface Conn {
  readonly session: TelnetSession;
  /** The server's end: paused while the session pushes back. */
  readonly socket: Socket;
  readonly client: Socket;
  text: Buffer[];
  readonly closed: Promise<void>;
}

async function openConn(side: Side): Promise<Conn> {
  const port = (side.server.address() as { port: number }).port;
  const n = side.accepted.length;
  const client = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  client.on('error', () => {});
  const conn: Conn = { session: undefined as unknown as TelnetSession, socket: undefined as unknown as Socket, client, text: [], closed: once(client, 'close').then(() => undefined) };
  client.on('data', (d: Buffer) => conn.text.push(d));
  await once(client, 'connect');
  await vi.waitFor(() => expect(side.accepted.length).toBe(n + 1));
  Object.assign(conn, side.accepted[n]!);
  return conn;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Feeds `s` to the session in its chunks, as a socket would: not while the session has
 * paused it, and yielding now and then; ends the client, waits for the close.
 */
async function play(c: Conn, s: Stream, r: Random, atChunk?: (k: number) => void): Promise<string> {
  let off = 0;
  for (let k = 0; k < s.chunks.length; k++) {
    while (c.socket.isPaused() && !c.socket.destroyed) await tick();
    atChunk?.(k);
    c.session.feed(Buffer.from(s.bytes.subarray(off, off + s.chunks[k]!)));
    off += s.chunks[k]!;
    if (r.chance(0.3)) await tick();
  }
  c.client.end();
  await c.closed;
  await c.session.finished;
  return Buffer.concat(c.text).toString('latin1');
}

/** Every stored point by names, as a reader sees it. */
async function points(tsdb: Tsdb): Promise<string[]> {
  const out: string[] = [];
  for await (const rows of tsdb.data.scan({})) {
    for (const row of rows) {
      const k = decodeRowKey(tsdb.widths, row.key);
      // Tags by name: in the key they are in UID order, and UIDs are given in the order names come.
      const tags: string[] = [];
      for (const [tk, tv] of k.tags) tags.push(`${(await tsdb.tagks.getName(tk))!}=${(await tsdb.tagvs.getName(tv))!}`);
      const series = [(await tsdb.metrics.getName(k.metric))!, ...tags.sort()].join(' ');
      const b = mergeRowCells(row.cells);
      for (let i = 0; i < b.count; i++) out.push(`${series} ${k.baseTimeSec * 1000 + b.offsetsMs[i]!} ${b.values[i]!} ${b.isInt[i]!}`);
    }
  }
  return out.sort();
}

function counters(s: TelnetStats): Partial<TelnetStats> {
  const { lines, putLines, putErrors, commands, replyLines, writesBlocked, linesTooLong, partialLinesDropped } = s;
  return { lines, putLines, putErrors, commands, replyLines, writesBlocked, linesTooLong, partialLinesDropped };
}

// -------------------------------------------------------------------------------------

describe('PutChunkParser', () => {
  it('frames as the in-thread splitter does, and parses only the series it was taught', () => {
    const r = new Random(seed);
    const p = new PutChunkParser();
    const { bytes } = randomStream(r, 0, true, 3000);
    const s: Stream = { bytes, chunks: Array.from({ length: Math.ceil(bytes.length / 100) }, () => 1 + r.int(400)) };
    const ref = new LineSplitter(MAX_LINE);
    const want: string[] = [];
    const got: string[] = [];
    let off = 0;
    let taught = false;
    for (let k = 0; k < s.chunks.length; k++) {
      const chunk = s.bytes.subarray(off, off + s.chunks[k]!);
      off += s.chunks[k]!;
      const tooLong = ref.pushTo(chunk, {
        put: (b, a, e) => { want.push(`P ${b.toString('latin1', a, e)}`); return true; },
        line: (t) => { want.push(`T ${t}`); return true; },
      });
      const w = p.parse(7, Uint8Array.from(chunk), MAX_LINE);
      const v = chunkViews(w);
      let i = 0;
      let raw = 0;
      let t = 0;
      for (const op of v.ops) {
        if (op > 0) {
          for (let j = 0; j < op; j++, i++) got.push(`S ${v.series[i]} ${v.timestamps[i]} ${v.values[i]} ${v.ints[i]}`);
        } else if (op === OP_RAW_PUT) {
          got.push(`P ${v.raw.toString('latin1', raw === 0 ? 0 : v.rawEnds[raw - 1], v.rawEnds[raw])}`);
          raw++;
        } else if (op === OP_TEXT) {
          got.push(`T ${w.texts[t++]!}`);
        }
      }
      expect(w.tooLong).toBe(tooLong);
      expect(w.pending).toBe(ref.pendingBytes);
      if (tooLong) break;
      if (!taught && k >= Math.min(3, s.chunks.length / 3)) {
        // Teach one series: from now on its lines come back as points.
        const key = Buffer.from('c0.m0 host=web1');
        p.learn(0, key, Int32Array.of(key.length), Int32Array.of(5), Int32Array.of(42));
        taught = true;
      }
    }
    // The same lines, but those of the taught series (valid ones) as points of series 42.
    const parsed = got.filter((g) => g.startsWith('S '));
    expect(parsed.length).toBeGreaterThan(0);
    expect(parsed.every((g) => g.startsWith('S 42 '))).toBe(true);
    expect(got.length).toBe(want.length);
    for (let i = 0; i < got.length; i++) {
      if (got[i]!.startsWith('S ')) expect(want[i]!).toMatch(/^P put[ \t]+c0\.m0[ \t]+\d+[ \t]+\S+[ \t]+host=web1[ \t\r]*$/);
      else expect(got[i]).toBe(want[i]);
    }
    // A reset forgets it; a lesson of an older generation is ignored.
    p.reset(1);
    p.learn(0, Buffer.from('c0.m0 host=web1'), Int32Array.of(15), Int32Array.of(5), Int32Array.of(1));
    const w = p.parse(8, Buffer.from(`put c0.m0 ${T0} 1 host=web1\n`), MAX_LINE);
    expect([w.n, w.nRaw, w.gen]).toEqual([0, 1, 1]);
  });
});

describe('telnet parsing on a worker thread', () => {
  it('answers, counts and stores exactly as parsing in the session, at any chunking', async () => {
    const here = await openSide(0);
    const there = await openSide(1);
    const r = new Random(seed + 1);
    let puts = 0;
    for (let round = 0; round < 6; round++) {
      // Two connections at once per side (disjoint series: which of two connections' points
      // of one series and timestamp wins is a race), the same streams and chunks on both
      // sides. Later rounds reuse the series of earlier ones, which the worker knows by then.
      const streams = [randomStream(r, 0), randomStream(r, 1)];
      const rs = r.int(1 << 30);
      const run = async (side: Side): Promise<string[]> => {
        const conns = [await openConn(side), await openConn(side)];
        return Promise.all(conns.map((c, i) => play(c, streams[i]!, new Random(rs + i))));
      };
      const [a, b] = await Promise.all([run(here), run(there)]);
      expect(b, `round ${round} (seed ${seed})`).toEqual(a);
      expect(counters(there.stats), `round ${round} (seed ${seed})`).toEqual(counters(here.stats));
      puts = there.stats.putLines;
    }
    const want = await points(here.tsdb);
    expect(want.length).toBeGreaterThan(1000);
    expect(await points(there.tsdb)).toEqual(want);
    // Many put lines were parsed by the worker, not passed on raw: not all, since 3 in 8
    // values and the mangled lines need the general path, and `dropcaches` makes the
    // worker learn every series again.
    const ps = there.backend.parsePool!.stats();
    expect(ps.parsedLines).toBeGreaterThan(puts / 4);
    expect(ps.crashes).toBe(0);
  }, 60_000);

  it('keeps the last of duplicate points in line order across worker-parsed and raw lines', async () => {
    const side = await openSide(1);
    // One line first, so the worker has been taught the series when the rest comes.
    await play(await openConn(side), { bytes: Buffer.from(`put dup ${T0} -1 host=a\n`), chunks: [100] }, new Random(1));
    const c = await openConn(side);
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) lines.push(`put dup ${T0 + (i % 7)} ${i} host=a`);
    // The same series with other spacing: bytes the worker was never taught, so raw lines.
    lines.push(`put dup ${T0 + 3} 5000 host=a `, `put dup  ${T0 + 4} 5001 host=a`, `put dup ${T0 + 4} 5002 host=a`);
    await play(c, { bytes: Buffer.from(`${lines.join('\n')}\n`), chunks: [30, 70, 200, 5000, 100_000] }, new Random(1));
    const got = await points(side.tsdb);
    expect(got).toEqual([
      `dup host=a ${T0 * 1000} 1995 1`, `dup host=a ${(T0 + 1) * 1000} 1996 1`, `dup host=a ${(T0 + 2) * 1000} 1997 1`,
      `dup host=a ${(T0 + 3) * 1000} 5000 1`, `dup host=a ${(T0 + 4) * 1000} 5002 1`, `dup host=a ${(T0 + 5) * 1000} 1993 1`,
      `dup host=a ${(T0 + 6) * 1000} 1994 1`,
    ]);
    expect(side.backend.parsePool!.stats().parsedLines).toBeGreaterThan(0);
  });

  it('a worker that dies mid-stream loses and repeats no line; later connections get a new worker', async () => {
    const here = await openSide(0);
    const there = await openSide(1);
    const r = new Random(seed + 2);
    const streams = [randomStream(r, 0, true), randomStream(r, 1, true)];
    const rs = r.int(1 << 30);
    const run = async (side: Side, crash: boolean): Promise<string[]> => {
      const conns = [await openConn(side), await openConn(side)];
      return Promise.all(conns.map((c, i) => play(c, streams[i]!, new Random(rs + i), (k) => {
        if (crash && i === 0 && k === Math.floor(streams[0]!.chunks.length / 2)) side.backend.parsePool!.crashWorkerForTest();
      })));
    };
    const [a, b] = await Promise.all([run(here, false), run(there, true)]);
    expect(b).toEqual(a);
    expect(counters(there.stats)).toEqual(counters(here.stats));
    expect(await points(there.tsdb)).toEqual(await points(here.tsdb));
    const pool = there.backend.parsePool!;
    await vi.waitFor(() => expect(pool.stats().crashes).toBe(1));
    // The replacement is taught the series again and parses the lines of a new connection.
    const before = pool.stats().parsedLines;
    await play(await openConn(there), { bytes: Buffer.from(`put c0.m0 ${T0} -1 host=web1\n`), chunks: [100] }, new Random(1));
    const c = await openConn(there);
    const lines = Array.from({ length: 400 }, (_, i) => `put c0.m0 ${T0 + i} ${i} host=web1`);
    await play(c, { bytes: Buffer.from(`${lines.join('\n')}\nversion\n`), chunks: [4000, 4000, 4000, 4000, 100_000] }, new Random(2));
    expect(pool.stats().threads).toBe(1);
    expect(pool.stats().parsedLines).toBeGreaterThan(before);
  }, 60_000);

  it('lines the worker parsed are refused before `auth` and by a read token, in line order', async () => {
    const tokens: Record<string, 'read' | 'write'> = { 'w-token-0123456789': 'write', 'r-token-0123456789': 'read' };
    const side = await openSide(1, { authenticate: (t) => tokens[t] });
    const line = (i: number): string => `put authed ${T0 + i} ${i} host=a`;
    await play(await openConn(side), { bytes: Buffer.from(`auth w-token-0123456789\n${line(0)}\n`), chunks: [1000] }, new Random(1));
    const before = side.backend.parsePool!.stats().parsedLines;
    const c = await openConn(side);
    const body = [line(1), 'version', 'auth r-token-0123456789', line(2), 'auth w-token-0123456789', line(3), 'version'];
    const text = await play(c, { bytes: Buffer.from(`${body.join('\n')}\n`), chunks: [2000] }, new Random(2));
    expect(side.backend.parsePool!.stats().parsedLines - before).toBe(3);
    const [v1, v2] = versionLines();
    expect(text).toBe(`${[
      "put: authentication required: send 'auth <token>' first", v1, v2,
      'auth: ok (read)', 'put: permission denied: read-only token', 'auth: ok (write)', v1, v2,
    ].join('\n')}\n`);
    expect((await points(side.tsdb)).map((p) => p.split(' ').slice(2).join(' '))).toEqual([`${T0 * 1000} 0 1`, `${(T0 + 3) * 1000} 3 1`]);
  });

  it('a closed pool sends its connections back to their own thread', async () => {
    const side = await openSide(1);
    const c = await openConn(side);
    const lines = Array.from({ length: 3000 }, (_, i) => `put closing ${T0 + i} ${i} host=a`);
    const bytes = Buffer.from(`${lines.join('\n')}\nversion\n`);
    const text = await play(c, { bytes, chunks: Array.from({ length: 40 }, () => 4096) }, new Random(3), (k) => {
      if (k === 20) void side.backend.parsePool!.close();
    });
    expect(text).toMatch(/^net\.opentsdb\.tools /);
    expect((await points(side.tsdb)).length).toBe(3000);
  });
});
