/**
 * tsdb/server/telnet: the pure line splitter, then TelnetSession over real loopback
 * sockets with a fake TelnetBackend — framing (CRLF, runs of spaces, split chunks, UTF-8 /
 * latin1), commands and their exact wording, reply ordering behind held batches,
 * backpressure (a held backend stops the reading; an overloaded one too), a client that
 * never reads, exit, half-close, idle timeout and the line-length limit.
 */
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineSplitter, splitWords } from '../../../tsdb/server/telnet/line-splitter.js';
import type { PutLines, TelnetBackend } from '../../../tsdb/server/telnet/telnet-backend.js';
import { putWords } from '../../../tsdb/server/telnet/line-splitter.js';
import {
  HELP_LINE, TelnetSession, newTelnetStats, resolveTelnetOptions, unknownCommandLine,
} from '../../../tsdb/server/telnet/telnet-session.js';
import type { TelnetOptions, TelnetStats } from '../../../tsdb/server/telnet/telnet-session.js';

// -------------------------------------------------------------------------------------
// Fakes and harness

/** Rejects values that are not numbers and metrics named unknown.*; can hold every batch. */
class FakeBackend implements TelnetBackend {
  readonly batches: string[][][] = [];
  lines = 0;
  hold = false;
  failWith: string | undefined;
  isOverloaded = false;
  private held: (() => void)[] = [];
  private writable: (() => void)[] = [];

  async putBatch(raw: PutLines): Promise<string[]> {
    const batch = raw.lines().map((l) => putWords(l));
    this.batches.push(batch.map((w) => [...w]));
    this.lines += batch.length;
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    if (this.failWith !== undefined) throw new Error(this.failWith);
    const out: string[] = [];
    for (const words of batch) {
      const [metric, , value] = words;
      // OpenTSDB counts the words after "put": `put` alone says "got 0" (its docs say 1).
      if (words.length < 4) out.push(`put: illegal argument: not enough arguments (need least 4, got ${words.length})`);
      else if (metric!.startsWith('unknown.')) out.push(`put: unknown metric: No such name for 'metrics': '${metric!}'`);
      else if (!Number.isFinite(Number(value))) out.push(`put: invalid value: Invalid character '${value!.replace(/[0-9.]/g, '')[0]!}' in ${value!}`);
    }
    return out;
  }
  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }
  overloaded(): boolean { return this.isOverloaded; }
  whenWritable(): Promise<void> {
    return this.isOverloaded ? new Promise((r) => this.writable.push(r)) : Promise.resolve();
  }
  setOverloaded(v: boolean): void {
    this.isOverloaded = v;
    if (!v) for (const r of this.writable.splice(0)) r();
  }
  /** Sessions that reported themselves blocked and have not ended it (writerBlocked). */
  blocked = 0;
  writerBlocked(): () => void {
    this.blocked++;
    let ended = false;
    return () => {
      if (!ended) this.blocked--;
      ended = true;
    };
  }
  versionLines(): string[] { return ['net.opentsdb.tools 2.4.1 built at revision abc (MINT)', 'Built on now by test@host:/x']; }
  async statsLines(): Promise<string[]> { return ['tsd.rpc.received 1700000000 5 type=put host=h']; }
  async dropCaches(): Promise<void> {}
  status(): string { return 'ok'; }
  /** Every entry received, in order. */
  entries(): string[][] { return this.batches.flat(); }
}

interface Harness {
  readonly port: number;
  readonly stats: TelnetStats;
  readonly serverSockets: Socket[];
  readonly sessions: TelnetSession[];
}

const servers: Server[] = [];
const openSockets: Socket[] = [];
const backends: FakeBackend[] = [];

async function start(backend: FakeBackend, opts: Partial<TelnetOptions> = {}): Promise<Harness> {
  backends.push(backend);
  const stats = newTelnetStats();
  const options = resolveTelnetOptions(opts);
  const h: Harness = { port: 0, stats, serverSockets: [], sessions: [] };
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    openSockets.push(socket);
    h.serverSockets.push(socket);
    h.sessions.push(new TelnetSession(socket, backend, options, stats));
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { ...h, port: (server.address() as { port: number }).port };
}

class Client {
  readonly socket: Socket;
  text = '';
  closed = false;
  ended = false;

  private constructor(socket: Socket, read: boolean) {
    this.socket = socket;
    openSockets.push(socket);
    socket.on('error', () => {});
    socket.on('close', () => { this.closed = true; });
    if (read) {
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => { this.text += d; });
      socket.on('end', () => { this.ended = true; });
    } else {
      socket.pause();
    }
  }

  static async open(port: number, read = true): Promise<Client> {
    const s = connect({ host: '127.0.0.1', port });
    const c = new Client(s, read);
    await once(s, 'connect');
    return c;
  }

  get lines(): string[] {
    const parts = this.text.split('\n');
    parts.pop();
    return parts;
  }

  async waitLines(n: number): Promise<string[]> {
    await vi.waitFor(() => expect(this.lines.length).toBeGreaterThanOrEqual(n), { timeout: 5000, interval: 5 });
    return this.lines;
  }

  async waitClosed(): Promise<void> {
    await vi.waitFor(() => expect(this.closed).toBe(true), { timeout: 5000, interval: 5 });
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

afterEach(async () => {
  const done = backends.splice(0);
  for (const b of done) { b.release(); b.setOverloaded(false); }
  for (const s of openSockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

// -------------------------------------------------------------------------------------

describe('LineSplitter and splitWords', () => {
  it('splits on LF, strips one CR, keeps a partial line for the next chunk', () => {
    const s = new LineSplitter(100);
    expect(s.push(Buffer.from('a b\r\nc'))).toEqual({ lines: ['a b'], tooLong: false });
    expect(s.pendingBytes).toBe(1);
    expect(s.push(Buffer.from('d\r'))).toEqual({ lines: [], tooLong: false });
    expect(s.push(Buffer.from('\n\n'))).toEqual({ lines: ['cd', ''], tooLong: false });
    expect(s.end()).toBe(0);
  });

  it('decodes UTF-8, and a line that is not valid UTF-8 as latin1', () => {
    const s = new LineSplitter(100);
    const bytes = Buffer.concat([Buffer.from('x=caf\u00e9\n', 'utf8'), Buffer.from([0x79, 0x3d, 0xe9, 0x0a])]);
    expect(s.push(bytes).lines).toEqual(['x=café', 'y=é']);
    // The same split across a pending boundary.
    const t = new LineSplitter(100);
    t.push(Buffer.from([0x79, 0x3d]));
    expect(t.push(Buffer.from([0xe9, 0x0a])).lines).toEqual(['y=é']);
  });

  it('returns the lines before an over-long one, then nothing; never holds more than the limit', () => {
    const s = new LineSplitter(5);
    expect(s.push(Buffer.from('12345\r\nabcdef\nok\n'))).toEqual({ lines: ['12345'], tooLong: true });
    expect(s.push(Buffer.from('ok\n'))).toEqual({ lines: [], tooLong: true });
    const t = new LineSplitter(5);
    expect(t.push(Buffer.from('12345\r')).tooLong).toBe(false);
    expect(t.push(Buffer.from('6')).tooLong).toBe(true);
    expect(t.pendingBytes).toBe(0);
  });

  it('splitWords drops runs of spaces, tabs and CRs', () => {
    expect(splitWords('put  m 1\t2 host=a  env=b ')).toEqual(['put', 'm', '1', '2', 'host=a', 'env=b']);
    expect(splitWords('   ')).toEqual([]);
    expect(splitWords('')).toEqual([]);
  });
});

describe('TelnetSession', () => {

  it('passes put words to the backend: CRLF, double and trailing spaces, tabs, chunk splits', async () => {
    const b = new FakeBackend();
    const h = await start(b);
    const c = await Client.open(h.port);
    c.send('put load.load.shortterm 1795257422 2.50244140625 fqdn=collectd-test  env=test\r\n');
    c.send('put\tm 2 3 a=b \r\n');
    const tail = 'put m 3 4 host=x\n';
    for (const ch of tail) { c.send(ch); await sleep(1); }
    await vi.waitFor(() => expect(b.lines).toBe(3));
    expect(b.entries()).toEqual([
      ['load.load.shortterm', '1795257422', '2.50244140625', 'fqdn=collectd-test', 'env=test'],
      ['m', '2', '3', 'a=b'],
      ['m', '3', '4', 'host=x'],
    ]);
    await sleep(20);
    expect(c.text).toBe(''); // success is silent
  });

  it('answers every command with OpenTSDB wording', async () => {
    const b = new FakeBackend();
    const h = await start(b);
    const c = await Client.open(h.port);
    c.send('version\nhelp\nstatus\nstats\ndropcaches\ndiediedie\nfoo bar\n\n   \nput\nput m 1 2\nPut m 1 2 a=b\n');
    const lines = await c.waitLines(11);
    expect(lines).toEqual([
      ...b.versionLines(),
      HELP_LINE,
      'ok',
      'tsd.rpc.received 1700000000 5 type=put host=h',
      'Caches dropped.',
      'diediedie: disabled; stop the server with SIGTERM',
      "unknown command: foo.  Try `help'.",
      'put: illegal argument: not enough arguments (need least 4, got 0)',
      'put: illegal argument: not enough arguments (need least 4, got 3)',
      "unknown command: Put.  Try `help'.",
    ]);
    expect(unknownCommandLine('x')).toBe("unknown command: x.  Try `help'.");
    expect(HELP_LINE).toMatch(/^available commands: /);
    expect(b.lines).toBe(2); // the short put lines, answered by the backend
    expect(h.stats.commands).toBe(8);
  });

  it('keeps replies in line order behind a held batch, and batches consecutive puts', async () => {
    const b = new FakeBackend();
    b.hold = true;
    const h = await start(b);
    const c = await Client.open(h.port);
    c.send('put m 1 bad1 a=b\nput m 2 2 a=b\nversion\nput unknown.m 3 3 a=b\nput m 4 bad2 a=b\nput m\nstatus\n');
    await vi.waitFor(() => expect(b.batches.length).toBe(2));
    await sleep(50);
    expect(c.text).toBe(''); // nothing may overtake the first batch's errors
    expect(b.batches.map((x) => x.length)).toEqual([2, 3]);
    b.release();
    const lines = await c.waitLines(7);
    expect(lines).toEqual([
      "put: invalid value: Invalid character 'b' in bad1",
      ...b.versionLines(),
      "put: unknown metric: No such name for 'metrics': 'unknown.m'",
      "put: invalid value: Invalid character 'b' in bad2",
      'put: illegal argument: not enough arguments (need least 4, got 1)',
      'ok',
    ]);
    expect(h.stats.putErrors).toBe(4);
  });

  it('coalesces the put lines of later chunks into one waiting batch while batches run', async () => {
    const b = new FakeBackend();
    b.hold = true;
    const h = await start(b, { maxInFlightBatches: 1 });
    const c = await Client.open(h.port);
    c.send('put m 1 1 a=b\n');
    await vi.waitFor(() => expect(b.batches.length).toBe(1));
    for (let i = 2; i <= 4; i++) { c.send(`put m ${i} 1 a=b\n`); await sleep(10); }
    await vi.waitFor(() => expect(h.stats.putLines).toBe(4));
    expect(b.batches.length).toBe(1);
    b.release();
    await vi.waitFor(() => expect(b.lines).toBe(4));
    expect(b.batches.map((x) => x.map((w) => w[1]))).toEqual([['1'], ['2', '3', '4']]);
  });

  it('reports itself blocked while a batch waits for a slot or at maxInFlightLines, until acknowledged or closed', async () => {
    const b = new FakeBackend();
    b.hold = true;
    const h = await start(b, { maxInFlightBatches: 1, maxInFlightLines: 5 });
    const c = await Client.open(h.port);
    c.send('put m 1 1 a=b\n');
    await vi.waitFor(() => expect(b.batches.length).toBe(1));
    await sleep(20);
    expect(b.blocked).toBe(0); // one batch running, a free line budget: more may come
    c.send('put m 2 1 a=b\n');
    await vi.waitFor(() => expect(h.stats.putLines).toBe(2));
    expect(b.blocked).toBe(1); // a batch waits behind the running one
    b.release();
    await vi.waitFor(() => expect(b.lines).toBe(2));
    await vi.waitFor(() => expect(b.blocked).toBe(0));
    // At the line bound: five lines in one batch, none waiting.
    b.hold = true;
    c.send('put m 3 1 a=b\nput m 4 1 a=b\nput m 5 1 a=b\nput m 6 1 a=b\nput m 7 1 a=b\n');
    await vi.waitFor(() => expect(b.lines).toBe(7));
    expect(b.batches.length).toBe(3);
    expect(b.blocked).toBe(1);
    // Closed while blocked (a paused socket sees no FIN, so the server side is destroyed,
    // as on a socket error): the state ends with the connection.
    h.serverSockets[0]!.destroy();
    await vi.waitFor(() => expect(b.blocked).toBe(0));
    b.release();
  });

  it('a fatal backend error answers "put: HBase error" once per line', async () => {
    const b = new FakeBackend();
    b.failWith = 'disk on fire';
    const h = await start(b);
    const c = await Client.open(h.port);
    c.send('put m 1 1 a=b\nput m 2 2 a=b\nversion\n');
    expect(await c.waitLines(4)).toEqual(['put: HBase error: disk on fire', 'put: HBase error: disk on fire', ...b.versionLines()]);
    expect(h.stats.batchFailures).toBe(1);
  });

  it('exit closes after the replies of earlier lines; nothing after it is read', async () => {
    const b = new FakeBackend();
    b.hold = true;
    const h = await start(b);
    const c = await Client.open(h.port);
    c.send('put m 1 bad a=b\nversion\nexit\nversion\nput m 2 2 a=b\n');
    await vi.waitFor(() => expect(b.lines).toBe(1));
    await sleep(50);
    expect(c.closed).toBe(false);
    b.release();
    await c.waitClosed();
    expect(c.ended).toBe(true);
    expect(c.lines).toEqual(["put: invalid value: Invalid character 'b' in bad", ...b.versionLines()]);
    expect(b.lines).toBe(1);
    await h.sessions[0]!.finished;
  });

  it('a half-closed client still gets its replies, then the server ends; an unterminated last line is dropped', async () => {
    const b = new FakeBackend();
    const h = await start(b);
    const c = await Client.open(h.port);
    c.send('put m 1 1 a=b\nversion\nput m 2 2');
    c.socket.end();
    await c.waitClosed();
    expect(c.lines).toEqual(b.versionLines());
    expect(b.entries()).toEqual([['m', '1', '1', 'a=b']]);
    expect(h.stats.partialLinesDropped).toBe(1);
  });

  it('a line over maxLineBytes gets an error line and the connection is closed', async () => {
    const b = new FakeBackend();
    const h = await start(b, { maxLineBytes: 100 });
    const c = await Client.open(h.port);
    c.send(`version\nput m 1 1 a=${'x'.repeat(200)}\nversion\n`);
    await c.waitClosed();
    expect(c.lines).toEqual([...b.versionLines(), 'error: line too long (over 100 bytes); closing the connection']);
    expect(h.stats.linesTooLong).toBe(1);
    // Without a newline at all: closed as soon as the limit is passed, not buffered.
    const d = await Client.open(h.port);
    d.send('p'.repeat(150));
    await d.waitClosed();
    expect(d.lines).toEqual(['error: line too long (over 100 bytes); closing the connection']);
    expect(b.lines).toBe(0);
  });

  it('backpressure: a held backend stops the reading; released, every line arrives in order', async () => {
    const b = new FakeBackend();
    b.hold = true;
    const opts = { maxInFlightLines: 1000, maxBatchLines: 250, maxInFlightBatches: 2 };
    const h = await start(b, opts);
    const c = await Client.open(h.port);
    const n = 600_000;
    const parts: string[] = [];
    for (let i = 1; i <= n; i++) parts.push(`put m ${i} 1 host=a\n`);
    const payload = Buffer.from(parts.join(''));
    expect(payload.length).toBeGreaterThan(12 * 1024 * 1024);
    let written = false;
    c.socket.write(payload, () => { written = true; });
    await vi.waitFor(() => expect(h.stats.pauses).toBeGreaterThan(0));
    // Until the count settles: what was in flight when the session paused (at the parse
    // worker too, which a loaded machine may take a while to hear back from) arrives.
    let seen = -1;
    await vi.waitFor(() => {
      const now = h.stats.putLines;
      if (now !== seen) {
        seen = now;
        throw new Error(`put lines still moving: ${now}`);
      }
    }, { timeout: 20_000, interval: 300 });
    // One 64 KiB chunk of ~20-byte lines may overshoot the limit.
    const bound = opts.maxInFlightLines + 65536 / 16;
    expect(seen).toBeLessThanOrEqual(bound);
    expect(b.lines).toBeLessThanOrEqual(opts.maxBatchLines * opts.maxInFlightBatches);
    await sleep(200);
    expect(h.stats.putLines).toBe(seen);
    b.release();
    await vi.waitFor(() => expect(b.lines).toBe(n), { timeout: 30_000, interval: 20 });
    const ts = b.entries().map((w) => Number(w[1]));
    expect(ts.every((t, i) => t === i + 1)).toBe(true);
    expect(Math.max(...b.batches.map((x) => x.length))).toBeLessThanOrEqual(opts.maxBatchLines);
    expect(written).toBe(true);
  }, 60_000);

  it('an overloaded backend pauses reading until whenWritable() resolves', async () => {
    const b = new FakeBackend();
    b.setOverloaded(true);
    const h = await start(b);
    const c = await Client.open(h.port);
    const n = 300_000;
    const parts: string[] = [];
    for (let i = 1; i <= n; i++) parts.push(`put m ${i} 1 host=a\n`);
    c.send(parts.join(''));
    await vi.waitFor(() => expect(h.stats.pauses).toBeGreaterThan(0));
    await sleep(200);
    expect(h.stats.putLines).toBeLessThanOrEqual(65536 / 16);
    b.setOverloaded(false);
    await vi.waitFor(() => expect(b.lines).toBe(n), { timeout: 30_000, interval: 20 });
  }, 60_000);

  it('a client that never reads cannot stall the server: replies are dropped past the cap', async () => {
    const b = new FakeBackend();
    const h = await start(b, { replyBufferBytes: 64 * 1024 });
    const silent = await Client.open(h.port, false);
    const pad = 'x'.repeat(150);
    const bad = `put m 1 ${pad} host=a\n`.repeat(100_000) + `nosuchcommand-${pad}\n`.repeat(100_000);
    let written = false;
    silent.socket.write(bad, () => { written = true; });
    // Another connection is served meanwhile.
    const other = await Client.open(h.port);
    other.send('version\n');
    expect(await other.waitLines(2)).toEqual(b.versionLines());
    // Every line is read and answered (written or dropped) although the client reads nothing.
    await vi.waitFor(() => expect(h.stats.replyLines + h.stats.writesBlocked).toBe(200_000 + 2), { timeout: 30_000, interval: 20 });
    await vi.waitFor(() => expect(written).toBe(true));
    expect(b.lines).toBe(100_000);
    expect(h.stats.writesBlocked).toBeGreaterThan(0);
    const serverSide = h.serverSockets[0]!;
    expect(serverSide.writableLength).toBeLessThanOrEqual(64 * 1024);
    other.send('status\n');
    expect((await other.waitLines(3))[2]).toBe('ok');
  }, 60_000);

  it('an idle connection is closed after idleTimeoutMs', async () => {
    const b = new FakeBackend();
    const h = await start(b, { idleTimeoutMs: 100 });
    const c = await Client.open(h.port);
    c.send('version\n');
    await c.waitLines(2);
    const t0 = Date.now();
    await c.waitClosed();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(h.stats.idleTimeouts).toBe(1);
  });

  it('rejects invalid options', () => {
    expect(() => resolveTelnetOptions({ maxLineBytes: 0 })).toThrow(RangeError);
    expect(() => resolveTelnetOptions({ maxInFlightBatches: 1.5 })).toThrow(RangeError);
    expect(resolveTelnetOptions({ idleTimeoutMs: 0 }).maxLineBytes).toBe(65536);
  });
});
