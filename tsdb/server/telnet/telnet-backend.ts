/**
 * The seam between a telnet session (telnet-session.ts: framing, ordering, backpressure)
 * and the time-series engine (validation, UIDs, storage). The session knows nothing about
 * points; the backend knows nothing about sockets. Tests drive the session with a fake.
 *
 * Wire wording follows OpenTSDB 2.4 (src/tsd/PutDataPointRpc.java, RpcManager.java): one
 * reply line per failed `put`, nothing for a success; see the reference notes in
 * shared/reference/opentsdb-surface.md section 5.
 */
import type { ParsedChunk } from './parsed-chunk.js';
import type { PutParsePool } from './parse-pool.js';

/**
 * The `put` lines of one batch, in line order. Raw lines are byte ranges of the buffers
 * they arrived in (the socket's chunks), not decoded: raw line i is
 * `buf(i)[start(i), end(i))`, starting with `put`, terminator removed. Nothing is made per
 * line: the ranges sit in typed columns that grow by doubling, and a chunk is recorded
 * once for its run of lines (`buf(i)` looks it up). Before, three JS arrays (a chunk
 * reference and two numbers, 8 bytes each, regrown by `push`) made ~70 bytes of young
 * garbage a line, most of a telnet server's scavenges. `line(i)` makes a view (the slow
 * path, tests). With parse workers (parse-pool.ts) most lines come already parsed, as
 * points in `parsed`, each placed among the raw lines by `rawBefore`.
 */
export class PutLines {
  /** Every line of the batch: raw and parsed. */
  count = 0;
  /** Lines a parse worker parsed (undefined: none). */
  parsed: ParsedPuts | undefined;
  private raw = 0;
  private starts = new Int32Array(INITIAL_LINES);
  private ends = new Int32Array(INITIAL_LINES);
  /** Raw line i is in `chunks[chunkOf[i]]`. */
  private chunkOf = new Int32Array(INITIAL_LINES);
  private readonly chunks: Uint8Array[] = [];

  /** Raw lines. */
  get rawCount(): number {
    return this.raw;
  }

  add(buf: Uint8Array, start: number, end: number): void {
    const chunks = this.chunks;
    let c = chunks.length - 1;
    if (c < 0 || chunks[c] !== buf) {
      chunks.push(buf);
      c++;
    }
    const i = this.raw;
    if (i === this.starts.length) this.grow();
    this.starts[i] = start;
    this.ends[i] = end;
    this.chunkOf[i] = c;
    this.raw = i + 1;
    this.count++;
  }

  /** Points k..k+n-1 of a parsed chunk, after the raw lines added so far. */
  addParsed(c: ParsedChunk, k: number, n: number): void {
    (this.parsed ??= new ParsedPuts()).addRun(c, k, n, this.raw);
    this.count += n;
  }

  /** The buffer raw line i lies in. */
  buf(i: number): Uint8Array {
    return this.chunks[this.chunkOf[i]!]!;
  }

  /** Where raw line i starts in buf(i). */
  start(i: number): number {
    return this.starts[i]!;
  }

  /** Where raw line i ends in buf(i) (exclusive, terminator removed). */
  end(i: number): number {
    return this.ends[i]!;
  }

  /** Raw line i as a view of its buffer. */
  line(i: number): Uint8Array {
    return this.buf(i).subarray(this.starts[i], this.ends[i]);
  }

  /** Every raw line as a view (tests, fakes). */
  lines(): Uint8Array[] {
    const out: Uint8Array[] = new Array(this.raw);
    for (let i = 0; i < this.raw; i++) out[i] = this.line(i);
    return out;
  }

  /** A batch of whole buffers, one line each (tests). */
  static of(lines: readonly Uint8Array[]): PutLines {
    const b = new PutLines();
    for (const l of lines) b.add(l, 0, l.length);
    return b;
  }

  private grow(): void {
    const n = this.starts.length * 2;
    const s = new Int32Array(n); s.set(this.starts); this.starts = s;
    const e = new Int32Array(n); e.set(this.ends); this.ends = e;
    const c = new Int32Array(n); c.set(this.chunkOf); this.chunkOf = c;
  }
}

/** Lines a new batch has room for before its columns first grow. */
const INITIAL_LINES = 1024;

/**
 * Put lines parsed by a worker: point i is of series `entries[i]` (opaque here: the
 * backend's SeriesEntry), and comes after `rawBefore[i]` of the batch's raw lines.
 * Columns grow by doubling.
 */
export class ParsedPuts {
  count = 0;
  entries: unknown[] = [];
  timestamps = new Float64Array(4096);
  values = new Float64Array(4096);
  ints = new Uint8Array(4096);
  rawBefore = new Int32Array(4096);

  addRun(c: ParsedChunk, k: number, n: number, rawBefore: number): void {
    const at = this.count;
    const end = at + n;
    if (end > this.timestamps.length) this.grow(end);
    this.timestamps.set(c.timestamps.subarray(k, k + n), at);
    this.values.set(c.values.subarray(k, k + n), at);
    this.ints.set(c.ints.subarray(k, k + n), at);
    this.rawBefore.fill(rawBefore, at, end);
    const e = this.entries;
    for (let i = 0; i < n; i++) e.push(c.entries[k + i]);
    this.count = end;
  }

  private grow(min: number): void {
    let m = this.timestamps.length * 2;
    while (m < min) m *= 2;
    const ts = new Float64Array(m); ts.set(this.timestamps); this.timestamps = ts;
    const vs = new Float64Array(m); vs.set(this.values); this.values = vs;
    const is = new Uint8Array(m); is.set(this.ints); this.ints = is;
    const rb = new Int32Array(m); rb.set(this.rawBefore); this.rawBefore = rb;
  }
}

export interface TelnetBackend {
  /**
   * Writes a batch of `put` lines (PutLines: byte ranges of the received chunks; not
   * decoded — `putWords(batch.line(i))` in line-splitter.ts gives the words after `put`
   * — and, with `parsePool`, points its workers parsed). A line may have fewer than the
   * 4 words after `put` a point needs (metric, timestamp, value, one tag): the backend
   * answers it `put: illegal argument: not enough arguments (need least 4, got N)`. The
   * chunks are never modified by the session, and it keeps no reference to them once the
   * returned promise settles.
   *
   * Resolves with one reply line per failed entry, in input order, without a trailing
   * newline — e.g. `put: illegal argument: ...`, `put: invalid value: ...`,
   * `put: unknown metric: No such name for 'metrics': 'x'`. Entries that succeeded
   * produce nothing. Resolution means every accepted point is durable, so the session
   * only lets a bounded number of batches wait on it.
   *
   * Rejects only on a fatal storage error; the session then replies
   * `put: HBase error: <message>` (OpenTSDB's wording) once per entry of the batch.
   *
   * Calls arrive in line order per connection and may overlap (at most
   * `TelnetOptions.maxInFlightBatches` per connection); the backend must apply
   * overlapping batches in call order if it promises last-write-wins.
   * The batch belongs to the backend once passed (the session does not reuse it).
   */
  putBatch(batch: PutLines): Promise<string[]>;

  /**
   * True while the write pipeline is overloaded. Sessions stop reading their sockets
   * (TCP backpressure reaches the client) until `whenWritable()` resolves.
   */
  overloaded(): boolean;

  /** Resolves when `overloaded()` has become false (immediately if it already is). */
  whenWritable(): Promise<void>;

  /**
   * The session can send no more points until some of its batches are acknowledged (it
   * holds `maxInFlightLines` unacknowledged lines, or a batch waits for a free slot of
   * `maxInFlightBatches`): the backend should not hold its points back to gather more.
   * Returns the call that ends the state. Optional.
   */
  writerBlocked?(): () => void;

  /**
   * Reply to `version`: OpenTSDB sends two lines, `net.opentsdb.tools <ver> built at
   * revision <short> (<MINT|MODIFIED>)` and `Built on <date> by <user>@<host>:<path>`.
   * Must be non-empty: tcollector's liveness probe needs some reply within 15 s.
   */
  versionLines(): string[];

  /** Reply to `stats`: the /api/stats content as put-format lines without `put`. */
  statsLines(): Promise<string[]>;

  /** `dropcaches`: empties the UID and other caches; the session replies `Caches dropped.` */
  dropCaches(): Promise<void>;

  /** Reply to `status` (OpenTSDB 2.5): `startup`, `ok`, `partial`, `error` or `shutting-down`. */
  status(): string;

  /**
   * Parse workers (horae.ingest.parse_threads): sessions hand their chunks to it and get
   * lines back parsed, the known series as points in `PutLines.parsed` (whose entries
   * the backend taught the pool). Undefined: sessions parse in the main thread.
   */
  readonly parsePool?: PutParsePool<unknown>;
}
