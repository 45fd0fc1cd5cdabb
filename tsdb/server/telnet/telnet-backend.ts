/**
 * The seam between a telnet session (telnet-session.ts: framing, ordering, backpressure)
 * and the time-series engine (validation, UIDs, storage). The session knows nothing about
 * points; the backend knows nothing about sockets. Tests drive the session with a fake.
 *
 * Wire wording follows OpenTSDB 2.4 (src/tsd/PutDataPointRpc.java, RpcManager.java): one
 * reply line per failed `put`, nothing for a success.
 */

/**
 * The `put` lines of one batch, in line order, as byte ranges of the buffers they arrived
 * in (the socket's chunks), not decoded: line i is `buf(i)[start(i), end(i))`, starting
 * with `put`, terminator removed. Nothing is made per
 * line: the ranges sit in typed columns that grow by doubling, and a chunk is recorded
 * once for its run of lines (`buf(i)` looks it up). Before, three JS arrays (a chunk
 * reference and two numbers, 8 bytes each, regrown by `push`) made ~70 bytes of young
 * garbage a line, most of a telnet server's scavenges. `line(i)` makes a view (the slow
 * path, tests).
 */
export class PutLines {
  count = 0;
  private starts = new Int32Array(INITIAL_LINES);
  private ends = new Int32Array(INITIAL_LINES);
  /** Raw line i is in `chunks[chunkOf[i]]`. */
  private chunkOf = new Int32Array(INITIAL_LINES);
  private readonly chunks: Uint8Array[] = [];

  add(buf: Uint8Array, start: number, end: number): void {
    const chunks = this.chunks;
    let c = chunks.length - 1;
    if (c < 0 || chunks[c] !== buf) {
      chunks.push(buf);
      c++;
    }
    const i = this.count;
    if (i === this.starts.length) this.grow();
    this.starts[i] = start;
    this.ends[i] = end;
    this.chunkOf[i] = c;
    this.count = i + 1;
  }

  /** The buffer line i lies in. */
  buf(i: number): Uint8Array {
    return this.chunks[this.chunkOf[i]!]!;
  }

  /** Where line i starts in buf(i). */
  start(i: number): number {
    return this.starts[i]!;
  }

  /** Where line i ends in buf(i) (exclusive, terminator removed). */
  end(i: number): number {
    return this.ends[i]!;
  }

  /** Line i as a view of its buffer. */
  line(i: number): Uint8Array {
    return this.buf(i).subarray(this.starts[i], this.ends[i]);
  }

  /** Every line as a view (tests, fakes). */
  lines(): Uint8Array[] {
    const out: Uint8Array[] = new Array(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.line(i);
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

export interface TelnetBackend {
  /**
   * Writes a batch of `put` lines (PutLines: byte ranges of the received chunks; not
   * decoded — `putWords(batch.line(i))` in line-splitter.ts gives the words after `put`).
   * A line may have fewer than the
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
}
