/**
 * One telnet-style connection (OpenTSDB's line protocol, src/tsd/RpcManager.java):
 * framing (line-splitter.ts), commands, batching of `put` lines into TelnetBackend.putBatch
 * calls, reply ordering and backpressure.
 *
 * Ordering: every line that produces a reply gets a slot in a FIFO; slots are written in
 * line order as they complete, so a `version` after some puts answers after those puts'
 * error lines. Consecutive put lines share a batch (and so one slot) until a command or a
 * local error line intervenes or the batch is full; a batch not yet started keeps taking
 * the put lines of later chunks, so a busy connection sends fewer, larger batches.
 *
 * Backpressure: the socket is paused while this connection has `maxInFlightLines` put
 * lines unacknowledged, `maxQueuedReplies` slots queued, or the backend is overloaded;
 * TCP then slows the client. Replies never push back: one is written only while
 * `socket.writableLength` is under `replyBufferBytes`, otherwise it is dropped and counted
 * in `writesBlocked` (as OpenTSDB does) — tcollector and collectd never read replies.
 */
import type { Socket } from 'node:net';
import type { Authenticator, Role } from '../auth.js';
import { LineSplitter, splitWords } from './line-splitter.js';
import type { LineSink } from './line-splitter.js';
import { PutLines } from './telnet-backend.js';
import type { TelnetBackend } from './telnet-backend.js';

export interface TelnetOptions {
  /** Longest line in bytes, terminator excluded. A longer line gets an error reply and the
   * connection is closed. Default 65536 — larger than OpenTSDB's 1024 on purpose (long tag
   * lists from Prometheus-style labels exceed it). */
  readonly maxLineBytes: number;
  /** Most put lines in one putBatch call. Default 10000. */
  readonly maxBatchLines: number;
  /** putBatch calls running at once for one connection. Default 2: one batch can be
   * resolved while the previous one syncs; later lines coalesce into a waiting batch. */
  readonly maxInFlightBatches: number;
  /** Put lines received but not yet acknowledged (waiting or running) at which the socket
   * is paused. One chunk (≤ 64 KiB) may overshoot it. Default 20000. */
  readonly maxInFlightLines: number;
  /** Reply slots queued behind an unfinished one at which the socket is paused. Default 1024. */
  readonly maxQueuedReplies: number;
  /** Replies are written only while `socket.writableLength` stays under this many bytes;
   * the rest are dropped and counted in `writesBlocked`. Default 65536. */
  readonly replyBufferBytes: number;
  /** Close a connection after this many ms without traffic; 0 = never. Default 0. */
  readonly idleTimeoutMs: number;
  /** After ending a connection, destroy it if the client has not closed its side within
   * this many ms. Default 5000. */
  readonly lingerMs: number;
}

export const DEFAULT_TELNET_OPTIONS: TelnetOptions = {
  maxLineBytes: 64 * 1024,
  maxBatchLines: 10_000,
  maxInFlightBatches: 2,
  maxInFlightLines: 20_000,
  maxQueuedReplies: 1024,
  replyBufferBytes: 64 * 1024,
  idleTimeoutMs: 0,
  lingerMs: 5000,
};

export function resolveTelnetOptions(partial: Partial<TelnetOptions> = {}): TelnetOptions {
  const o: TelnetOptions = { ...DEFAULT_TELNET_OPTIONS, ...partial };
  for (const [k, v] of Object.entries(o)) {
    const min = k === 'idleTimeoutMs' || k === 'lingerMs' ? 0 : 1;
    if (!Number.isInteger(v) || v < min) throw new RangeError(`telnet option ${k} must be an integer >= ${min}, got ${String(v)}`);
  }
  return o;
}

/** Counters shared by every session of a listener (mutated in place; copy to snapshot). */
export interface TelnetStats {
  lines: number; putLines: number; putErrors: number; commands: number;
  batches: number; batchFailures: number; replyLines: number; writesBlocked: number;
  linesTooLong: number; partialLinesDropped: number; pauses: number; idleTimeouts: number; socketErrors: number;
}

export function newTelnetStats(): TelnetStats {
  return {
    lines: 0, putLines: 0, putErrors: 0, commands: 0, batches: 0, batchFailures: 0, replyLines: 0, writesBlocked: 0,
    linesTooLong: 0, partialLinesDropped: 0, pauses: 0, idleTimeouts: 0, socketErrors: 0,
  };
}

/** OpenTSDB's `help` reply (its command order; rollup, histogram and diediedie are not served). */
export const HELP_LINE = 'available commands: stats dropcaches version status exit help put';

export function unknownCommandLine(cmd: string): string {
  return `unknown command: ${cmd}.  Try \`help'.`;
}

/** `droppable`: error lines (puts, unknown commands), dropped when the client does not read; answers to commands never are. */
interface Slot { done: boolean; lines: readonly string[]; readonly end: boolean; readonly droppable: boolean }
interface Batch { readonly slot: Slot; readonly lines: PutLines }

export class TelnetSession {
  private readonly socket: Socket;
  private readonly backend: TelnetBackend;
  private readonly opts: TelnetOptions;
  private readonly stats: TelnetStats;
  private readonly log: ((msg: string) => void) | undefined;
  private readonly splitter: LineSplitter;
  /** Where the splitter delivers lines: put lines by offset into the chunk, others as text. */
  private readonly sink: LineSink;
  /** Reply slots in line order; `head` is the oldest unwritten one. */
  private slots: (Slot | undefined)[] = [];
  private head = 0;
  /** The batch still taking put lines (never started, and the last slot). */
  private open: Batch | undefined;
  private readonly waiting: Batch[] = [];
  private running = 0;
  private inFlightLines = 0;
  private paused = false;
  /** Ends the backend's blocked state of this connection (updateBlocked); undefined while not blocked. */
  private unblock: (() => void) | undefined;
  private awaitingBackend = false;
  /** No more input is parsed (exit, line too long, EOF, shutdown); later bytes are discarded. */
  private stopping = false;
  private closed = false;
  private lingerTimer: NodeJS.Timeout | undefined;
  private readonly auth: Authenticator | undefined;
  /** What this connection may do: everything without authentication, nothing until `auth`. */
  private role: Role | undefined;
  private resolveFinished!: () => void;
  /** Resolves once the socket is closed and no batch of this session is waiting or running. */
  readonly finished: Promise<void>;

  constructor(socket: Socket, backend: TelnetBackend, opts: TelnetOptions, stats: TelnetStats, log?: (msg: string) => void,
    auth?: Authenticator) {
    this.auth = auth;
    this.role = auth === undefined ? 'write' : undefined;
    this.socket = socket;
    this.backend = backend;
    this.opts = opts;
    this.stats = stats;
    this.log = log;
    this.splitter = new LineSplitter(opts.maxLineBytes);
    this.sink = {
      put: (buf, start, end) => {
        this.onPutLine(buf, start, end);
        return !this.stopping;
      },
      line: (text) => {
        this.onLine(text);
        return !this.stopping;
      },
    };
    this.finished = new Promise((resolve) => { this.resolveFinished = resolve; });
    socket.on('data', (chunk: Buffer) => this.guard(() => this.onData(chunk)));
    socket.on('end', () => this.guard(() => this.onEnd()));
    socket.on('error', () => { this.stats.socketErrors++; });
    socket.on('drain', () => this.guard(() => this.updateFlow()));
    socket.on('close', () => this.onClose());
    if (opts.idleTimeoutMs > 0) {
      socket.setTimeout(opts.idleTimeoutMs, () => this.guard(() => { this.stats.idleTimeouts++; this.shutdown(); }));
    }
  }

  /** Feeds bytes already read from the socket (the listener's sniffed first chunk). */
  feed(chunk: Buffer): void {
    this.guard(() => this.onData(chunk));
  }

  /** Graceful end: parse no more input, finish queued work, write its replies, close. */
  shutdown(): void {
    if (this.stopping || this.closed) return;
    this.stop([]);
    this.afterInput();
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log?.(`telnet: internal error, closing ${this.socket.remoteAddress ?? '?'}: ${(e as Error).stack ?? String(e)}`);
      this.socket.destroy();
    }
  }

  private onData(chunk: Buffer): void {
    if (this.stopping) return;
    if (this.splitter.pushTo(chunk, this.sink) && !this.stopping) {
      this.stats.linesTooLong++;
      this.log?.(`telnet: line over ${this.opts.maxLineBytes} bytes from ${this.socket.remoteAddress ?? '?'}; closing`);
      this.stop([`error: line too long (over ${this.opts.maxLineBytes} bytes); closing the connection`]);
    }
    this.afterInput();
  }

  private onEnd(): void {
    if (!this.stopping && this.splitter.end() > 0) this.stats.partialLinesDropped++;
    this.shutdown();
  }

  /**
   * A line starting with `put` and a blank: buf[start, end), not decoded. It joins the
   * open batch even when it lacks arguments: the backend answers it in its place (one
   * scan of the line fewer for every good one).
   */
  private onPutLine(buf: Buffer, start: number, end: number): void {
    this.stats.lines++;
    if (this.role !== 'write' && this.role !== 'admin' && !this.mayRun(undefined)) return;
    this.addPut(buf, start, end);
  }

  private onLine(line: string): void {
    this.stats.lines++;
    if (this.role !== 'write' && this.role !== 'admin' && !this.mayRun(line)) return;
    const words = splitWords(line);
    if (words.length === 0) return;
    const cmd = words[0]!;
    if (cmd === 'put') {
      // OpenTSDB counts the words after "put": `put` alone says "got 0" (its docs say 1).
      if (words.length < 5) {
        this.stats.putErrors++;
        this.newSlot(true, false, [`put: illegal argument: not enough arguments (need least 4, got ${words.length - 1})`], true);
        return;
      }
      // A put line with leading blanks (rare): normalized to the raw form the put path takes.
      const raw = Buffer.from(words.join(' '));
      this.addPut(raw, 0, raw.length);
      return;
    }
    this.stats.commands++;
    if (cmd === 'auth') return this.authenticate(words);
    try {
      this.command(cmd);
    } catch (e) {
      this.reply([`${cmd}: error: ${(e as Error).message}`]);
    }
  }

  /**
   * Authentication (auth.ts, docs/SECURITY.md): before `auth <token>` only auth, help,
   * version and exit run; a read token may not put or dropcaches. A refused line gets one
   * error line and the connection stays open; an unknown token closes it.
   */
  private mayRun(line: string | undefined): boolean {
    const words = line !== undefined ? splitWords(line) : ['put'];
    const cmd = words[0];
    if (cmd === undefined || cmd === 'help' || cmd === 'version' || cmd === 'exit') return true;
    if (cmd === 'auth') {
      this.stats.commands++;
      this.authenticate(words);
      return false;
    }
    const needsWrite = cmd === 'put' || cmd === 'dropcaches';
    if (this.role === 'read' && !needsWrite) return true;
    if (cmd === 'put') this.stats.putErrors++;
    this.reply([this.role === undefined
      ? `${cmd}: authentication required: send 'auth <token>' first`
      : `${cmd}: permission denied: read-only token`]);
    return false;
  }

  private authenticate(words: readonly string[]): void {
    if (this.auth === undefined) return this.reply(['auth: ok (authentication is off)']);
    if (words.length !== 2) return this.reply(['auth: usage: auth <token>']);
    const role = this.auth.authenticate(words[1]!);
    if (role === undefined) {
      this.log?.(`telnet: invalid token from ${this.socket.remoteAddress ?? '?'}; closing`);
      return this.stop(['auth: invalid token; closing the connection']);
    }
    this.role = role;
    this.reply([`auth: ok (${role})`]);
  }

  private command(cmd: string): void {
    switch (cmd) {
      case 'version': return this.reply(this.backend.versionLines());
      case 'help': return this.reply([HELP_LINE]);
      case 'status': return this.reply([this.backend.status()]);
      case 'stats': return this.replyLater(cmd, () => this.backend.statsLines());
      case 'dropcaches': return this.replyLater(cmd, async () => { await this.backend.dropCaches(); return ['Caches dropped.']; });
      case 'exit': return this.stop([]);
      case 'diediedie': return this.reply(['diediedie: disabled; stop the server with SIGTERM']);
      default: return void this.newSlot(true, false, [unknownCommandLine(cmd)], true);
    }
  }

  private addPut(buf: Buffer, start: number, end: number): void {
    this.stats.putLines++;
    this.inFlightLines++;
    let b = this.open;
    if (b === undefined || b.lines.count >= this.opts.maxBatchLines) {
      b = { slot: this.newSlot(false, false, [], true), lines: new PutLines() };
      this.waiting.push(b);
      this.open = b;
    }
    b.lines.add(buf, start, end);
  }

  private newSlot(done: boolean, end: boolean, lines: readonly string[], droppable = false): Slot {
    const s: Slot = { done, end, lines, droppable };
    this.slots.push(s);
    this.open = undefined;
    return s;
  }

  private reply(lines: readonly string[]): void {
    this.newSlot(true, false, lines);
  }

  private replyLater(cmd: string, fn: () => Promise<string[]>): void {
    const slot = this.newSlot(false, false, []);
    const settle = (lines: readonly string[]): void => {
      slot.lines = lines;
      slot.done = true;
      this.guard(() => this.afterProgress());
    };
    let p: Promise<string[]>;
    try {
      p = fn();
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(settle, (e: unknown) => settle([`${cmd}: error: ${(e as Error).message}`]));
  }

  /** Queues the final slot: its lines are written after every earlier reply, then the socket ends. */
  private stop(lines: readonly string[]): void {
    this.stopping = true;
    this.newSlot(true, true, lines);
  }

  private afterInput(): void {
    this.pump();
    this.drain();
    this.updateFlow();
  }

  private afterProgress(): void {
    this.pump();
    this.drain();
    this.updateFlow();
    this.checkFinished();
  }

  /** Starts waiting batches, oldest first, while fewer than maxInFlightBatches run. */
  private pump(): void {
    while (this.running < this.opts.maxInFlightBatches && this.waiting.length > 0) {
      const b = this.waiting.shift()!;
      if (b === this.open) this.open = undefined;
      this.running++;
      this.stats.batches++;
      let p: Promise<string[]>;
      try {
        p = this.backend.putBatch(b.lines);
      } catch (e) {
        p = Promise.reject(e);
      }
      p.then(
        (replies) => this.batchDone(b, replies),
        (e: unknown) => {
          this.stats.batchFailures++;
          this.log?.(`telnet: putBatch failed: ${(e as Error).message}`);
          const line = `put: HBase error: ${(e as Error).message}`;
          this.batchDone(b, new Array<string>(b.lines.count).fill(line));
        },
      );
    }
  }

  private batchDone(b: Batch, replies: readonly string[]): void {
    this.running--;
    this.inFlightLines -= b.lines.count;
    this.stats.putErrors += replies.length;
    b.slot.lines = replies;
    b.slot.done = true;
    this.guard(() => this.afterProgress());
  }

  /** Writes every finished slot at the head of the queue. */
  private drain(): void {
    const out: Slot[] = [];
    let end = false;
    while (this.head < this.slots.length && this.slots[this.head]!.done) {
      const s = this.slots[this.head]!;
      this.slots[this.head++] = undefined;
      if (s.lines.length > 0) out.push(s);
      if (s.end) { end = true; break; }
    }
    if (this.head === this.slots.length) { this.slots = []; this.head = 0; }
    if (out.length > 0) this.write(out);
    if (end) this.endSocket();
  }

  /**
   * Put error lines past the reply budget are dropped (OpenTSDB: tcollector never reads);
   * command replies (`version`, `stats`, …) are always written, so a `version` after puts
   * is a barrier the client can count on. A client that does not read them is paused
   * instead (updateFlow), so its replies cannot pile up.
   */
  private write(slots: readonly Slot[]): void {
    if (this.closed || !this.socket.writable) {
      for (const s of slots) this.stats.writesBlocked += s.lines.length;
      return;
    }
    let budget = this.opts.replyBufferBytes - this.socket.writableLength;
    let text = '';
    for (const s of slots) {
      for (const line of s.lines) {
        const n = Buffer.byteLength(line) + 1;
        if (s.droppable && n > budget) { this.stats.writesBlocked++; continue; }
        text += `${line}\n`;
        budget -= n;
        this.stats.replyLines++;
      }
    }
    if (text.length > 0) this.socket.write(text);
  }

  private endSocket(): void {
    if (this.closed) return;
    this.socket.end();
    // Keep reading (and discarding) so the client's FIN is seen; destroy a client that lingers.
    this.lingerTimer = setTimeout(() => this.socket.destroy(), this.opts.lingerMs);
    this.lingerTimer.unref();
  }

  /**
   * Tells the backend while this connection can send no more points until some of its
   * batches are acknowledged (at maxInFlightLines, or a batch waiting for a free slot of
   * maxInFlightBatches), so that it does not hold them back waiting for more.
   */
  private updateBlocked(): void {
    const blocked = !this.closed && (this.inFlightLines >= this.opts.maxInFlightLines
      || (this.waiting.length > 0 && this.running >= this.opts.maxInFlightBatches));
    if (blocked && this.unblock === undefined) {
      this.unblock = this.backend.writerBlocked?.() ?? ((): void => {});
    } else if (!blocked && this.unblock !== undefined) {
      this.unblock();
      this.unblock = undefined;
    }
  }

  private updateFlow(): void {
    this.updateBlocked();
    if (this.closed) return;
    if (!this.stopping && !this.awaitingBackend && this.backend.overloaded()) {
      this.awaitingBackend = true;
      const wake = (): void => { this.awaitingBackend = false; this.guard(() => this.updateFlow()); };
      this.backend.whenWritable().then(wake, wake);
    }
    const pause = !this.stopping && (this.awaitingBackend
      || this.socket.writableLength >= this.opts.replyBufferBytes
      || this.inFlightLines >= this.opts.maxInFlightLines
      || this.slots.length - this.head >= this.opts.maxQueuedReplies);
    if (pause && !this.paused) {
      this.paused = true;
      this.stats.pauses++;
      this.socket.pause();
    } else if (!pause && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private onClose(): void {
    this.closed = true;
    this.stopping = true;
    if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
    // Batches already received still go to the backend; only their replies are lost.
    this.guard(() => this.afterProgress());
  }

  private checkFinished(): void {
    if (this.closed && this.running === 0 && this.waiting.length === 0) this.resolveFinished();
  }
}
