/**
 * Telnet parsing on other threads (horae.ingest.parse_threads): worker threads
 * (parse-worker.ts) frame the received chunks of telnet connections into lines, parse the
 * put lines and look their series up by bytes; the main thread gets compact columns
 * (parsed-chunk.ts) and keeps everything with state: sessions and their replies, UIDs,
 * series creation, write groups and the store.
 *
 * Series numbers: a worker knows a series only once the main thread taught it one
 * (`teach`, after the general path resolved or created the series from a raw line).
 * Numbers index a table of the main thread's entries (`E`: SeriesEntry); the table is
 * bounded, and `clear()` (dropcaches, or the table full) starts a new *generation*: the
 * workers forget every series, and a chunk is resolved against the table of the
 * generation it was parsed in (kept until no worker can still answer in it).
 *
 * Streams: one per connection, pinned to one worker; chunks are answered in the order
 * pushed. The pool copies each chunk (the session keeps its own until it is answered).
 *
 * Crashes: a worker that dies (an uncaught error, out of memory) is replaced by a fresh
 * one for new connections (at most MAX_RESTARTS times; then new connections parse in
 * their own thread), and every stream it served is told `crashed()`: its chunks will not
 * be answered, and the session parses them itself (telnet-session.ts). Either way no line
 * is lost or repeated, and no connection waits on a dead thread.
 */
import { Worker } from 'node:worker_threads';
import { SeriesByteCache } from '../../write/series-byte-cache.js';
import { chunkViews } from './parsed-chunk.js';
import type { ParsedChunk, ParsedChunkWire } from './parsed-chunk.js';
import type { ParseWorkerIn } from './parse-worker.js';

/** Workers started in place of crashed ones, at most, over the pool's life. */
const MAX_RESTARTS = 3;

/** What a stream tells its session (calls arrive on the main thread, in chunk order). */
export interface ParseStreamHandler<E> {
  parsed(c: ParsedChunk<E>): void;
  /** The worker died: chunks pushed and not yet answered never will be. */
  crashed(): void;
}

export interface ParsePoolStats {
  readonly threads: number;
  readonly chunks: number;
  /** Put lines parsed to columns in a worker, and put lines passed on raw. */
  readonly parsedLines: number;
  readonly rawLines: number;
  readonly crashes: number;
  /** Series numbers of the current generation. */
  readonly taught: number;
}

interface Slot<E> {
  readonly index: number;
  worker: Worker;
  alive: boolean;
  readonly streams: Map<number, ParseStreamHandler<E>>;
  /** Chunks posted and not yet answered. */
  inFlight: number;
  /** Generation of its last answer; tables older than every busy worker's are dropped. */
  gen: number;
}

function workerUrl(): URL {
  // From the TypeScript sources (tests, tsx) a bootstrap registers tsx in the worker; the
  // build runs the compiled parse-worker.js beside this file.
  if (import.meta.url.endsWith('.ts')) return new URL('./parse-worker-tsx.mjs', import.meta.url);
  return new URL('./parse-worker.js', import.meta.url);
}

/** One connection's way to its worker. */
export class ParseStream<E> {
  private readonly pool: PutParsePool<E>;
  private readonly slot: Slot<E>;
  /** The worker of the slot when the stream opened (a replacement does not inherit streams). */
  private readonly worker: Worker;
  readonly conn: number;
  private readonly maxLineBytes: number;

  /** @internal */
  constructor(pool: PutParsePool<E>, slot: Slot<E>, conn: number, maxLineBytes: number) {
    this.pool = pool;
    this.slot = slot;
    this.worker = slot.worker;
    this.conn = conn;
    this.maxLineBytes = maxLineBytes;
  }

  /** Sends a copy of `chunk` to be parsed; answered by one `parsed()` unless the worker dies. */
  push(chunk: Uint8Array): void {
    if (!this.live()) return;
    const copy = new Uint8Array(chunk.length);
    copy.set(chunk);
    this.slot.inFlight++;
    this.pool.chunks++;
    this.worker.postMessage({ t: 'data', conn: this.conn, chunk: copy, maxLineBytes: this.maxLineBytes } satisfies ParseWorkerIn, [copy.buffer]);
  }

  /** No more chunks; answers still on their way are dropped, and the worker forgets the connection. */
  close(): void {
    if (!this.live()) return;
    this.slot.streams.delete(this.conn);
    this.worker.postMessage({ t: 'close', conn: this.conn } satisfies ParseWorkerIn);
  }

  private live(): boolean {
    return this.slot.alive && this.slot.worker === this.worker;
  }
}

export class PutParsePool<E> {
  readonly threads: number;
  private readonly capacity: number;
  private readonly log: ((msg: string) => void) | undefined;
  private slots: Slot<E>[] | undefined;
  private nextConn = 1;
  private closed = false;
  private restarts = 0;
  private gen = 0;
  /** Series number → entry, per generation still answerable; `table` is the current one's. */
  private readonly tables = new Map<number, E[]>();
  private table: E[] = [];
  /** Series bytes → number, current generation: what the workers have been taught. */
  private known = new SeriesByteCache<number>(Number.MAX_SAFE_INTEGER);
  // Series taught since the last flushTeach(), to go out in one message.
  private teachBytes: number[] = [];
  private teachEnds: number[] = [];
  private teachMetricLengths: number[] = [];
  private teachRefs: number[] = [];
  /** @internal */
  chunks = 0;
  private parsedLines = 0;
  private rawLines = 0;
  private crashes = 0;

  /**
   * `threads` workers, started on the first open(); at most `capacity` series numbers per
   * generation (the writer's series cache size).
   */
  constructor(threads: number, capacity: number, log?: (msg: string) => void) {
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`parse threads must be a positive integer, got ${threads}`);
    this.threads = threads;
    this.capacity = capacity;
    this.log = log;
    this.tables.set(0, this.table);
  }

  /** A stream for a new connection, or undefined when no worker can take it (closed, crashed too often). */
  open(maxLineBytes: number, handler: ParseStreamHandler<E>): ParseStream<E> | undefined {
    if (this.closed) return undefined;
    const slots = this.slots ??= this.start();
    let best: Slot<E> | undefined;
    for (const s of slots) if (s.alive && (best === undefined || s.streams.size < best.streams.size)) best = s;
    if (best === undefined) return undefined;
    const conn = this.nextConn++;
    best.streams.set(conn, handler);
    return new ParseStream(this, best, conn, maxLineBytes);
  }

  /**
   * Teaches the workers that the series whose key is buf[ms, me) + ' ' + buf[ts, te) (a
   * put line's metric and tags, as the fast parser delimits them) is `entry`. Goes out
   * with the next flushTeach(). A series taught already in this generation is skipped.
   */
  teach(buf: Uint8Array, ms: number, me: number, ts: number, te: number, entry: E): void {
    if (this.slots === undefined || this.known.get(buf, ms, me, ts, te) !== undefined) return;
    if (this.table.length >= this.capacity) this.clear();
    const ref = this.table.length;
    this.table.push(entry);
    this.known.set(buf, ms, me, ts, te, ref);
    for (let i = ms; i < me; i++) this.teachBytes.push(buf[i]!);
    this.teachBytes.push(0x20);
    for (let i = ts; i < te; i++) this.teachBytes.push(buf[i]!);
    this.teachEnds.push(this.teachBytes.length);
    this.teachMetricLengths.push(me - ms);
    this.teachRefs.push(ref);
  }

  /** Posts the series taught since the last call to every worker. */
  flushTeach(): void {
    this.known.releaseView();
    if (this.teachRefs.length === 0 || this.slots === undefined) return;
    const msg: ParseWorkerIn = {
      t: 'learn',
      gen: this.gen,
      keys: Uint8Array.from(this.teachBytes),
      keyEnds: Int32Array.from(this.teachEnds),
      metricLengths: Int32Array.from(this.teachMetricLengths),
      refs: Int32Array.from(this.teachRefs),
    };
    this.teachBytes = [];
    this.teachEnds = [];
    this.teachMetricLengths = [];
    this.teachRefs = [];
    for (const s of this.slots) if (s.alive) s.worker.postMessage(msg);
  }

  /** Forgets every series (a new generation); lines of chunks parsed before still resolve. */
  clear(): void {
    this.gen++;
    this.table = [];
    this.tables.set(this.gen, this.table);
    this.known = new SeriesByteCache<number>(Number.MAX_SAFE_INTEGER);
    this.teachBytes = [];
    this.teachEnds = [];
    this.teachMetricLengths = [];
    this.teachRefs = [];
    for (const s of this.slots ?? []) if (s.alive) s.worker.postMessage({ t: 'reset', gen: this.gen } satisfies ParseWorkerIn);
    this.dropOldTables();
  }

  stats(): ParsePoolStats {
    return {
      threads: this.slots?.filter((s) => s.alive).length ?? 0,
      chunks: this.chunks,
      parsedLines: this.parsedLines,
      rawLines: this.rawLines,
      crashes: this.crashes,
      taught: this.table.length,
    };
  }

  /** Tests: makes worker `i` throw, as a bug in it would. */
  crashWorkerForTest(i = 0): void {
    this.slots?.[i]?.worker.postMessage({ t: 'crash' } satisfies ParseWorkerIn);
  }

  /** Terminates the workers; streams still open are told `crashed()` and go on in their own thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = this.slots ?? [];
    for (const s of slots) s.alive = false;
    for (const s of slots) this.orphan(s);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private start(): Slot<E>[] {
    const slots: Slot<E>[] = [];
    for (let i = 0; i < this.threads; i++) {
      const slot: Slot<E> = { index: i, worker: undefined as unknown as Worker, alive: true, streams: new Map(), inFlight: 0, gen: this.gen };
      this.spawn(slot);
      slots.push(slot);
    }
    return slots;
  }

  private spawn(slot: Slot<E>): void {
    const w = new Worker(workerUrl());
    w.unref();
    slot.worker = w;
    slot.alive = true;
    slot.inFlight = 0;
    slot.gen = this.gen;
    if (this.gen !== 0) w.postMessage({ t: 'reset', gen: this.gen } satisfies ParseWorkerIn);
    w.on('message', (m: ParsedChunkWire) => this.onParsed(slot, w, m));
    w.on('error', (err) => this.onCrash(slot, w, err.message));
    w.on('exit', (code) => this.onCrash(slot, w, `exited with code ${code}`));
  }

  private onParsed(slot: Slot<E>, w: Worker, m: ParsedChunkWire): void {
    if (slot.worker !== w) return;
    slot.inFlight--;
    if (m.gen !== slot.gen) {
      slot.gen = m.gen;
      this.dropOldTables();
    }
    const h = slot.streams.get(m.conn);
    if (h === undefined) return;
    const table = this.tables.get(m.gen);
    if (table === undefined) throw new Error(`BUG: parse worker answered in generation ${m.gen}, whose table is gone`);
    const v = chunkViews(m);
    const entries = new Array<E>(m.n);
    for (let i = 0; i < m.n; i++) entries[i] = table[v.series[i]!]!;
    this.parsedLines += m.n;
    this.rawLines += m.nRaw;
    h.parsed({
      n: m.n, entries, timestamps: v.timestamps, values: v.values, ints: v.ints, ops: v.ops, raw: v.raw, rawEnds: v.rawEnds,
      texts: m.texts, pending: m.pending, tooLong: m.tooLong,
    });
  }

  private onCrash(slot: Slot<E>, w: Worker, why: string): void {
    if (slot.worker !== w || !slot.alive || this.closed) return;
    slot.alive = false;
    this.crashes++;
    const replace = this.restarts < MAX_RESTARTS;
    this.log?.(`telnet: parse worker ${slot.index} failed (${why}); ${slot.streams.size} connections go on parsing in the main thread${replace ? '; starting a new worker' : '; no more restarts'}`);
    void w.terminate();
    // The new worker knows no series: a new generation, so every series is taught again.
    this.clear();
    if (replace) {
      this.restarts++;
      this.spawn(slot);
    }
    this.orphan(slot);
  }

  /** Tells every stream of `slot` that its chunks will not be answered. */
  private orphan(slot: Slot<E>): void {
    const handlers = [...slot.streams.values()];
    slot.streams.clear();
    for (const h of handlers) h.crashed();
  }

  private dropOldTables(): void {
    let min = this.gen;
    for (const s of this.slots ?? []) if (s.alive && s.inFlight > 0 && s.gen < min) min = s.gen;
    for (const g of this.tables.keys()) if (g < min) this.tables.delete(g);
  }
}
