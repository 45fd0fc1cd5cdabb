/**
 * The seam between a telnet session (telnet-session.ts: framing, ordering, backpressure)
 * and the time-series engine (validation, UIDs, storage). The session knows nothing about
 * points; the backend knows nothing about sockets. Tests drive the session with a fake.
 *
 * Wire wording follows OpenTSDB 2.4 (src/tsd/PutDataPointRpc.java, RpcManager.java): one
 * reply line per failed `put`, nothing for a success; see the reference notes in
 * shared/reference/opentsdb-surface.md section 5.
 */

/**
 * The `put` lines of one batch as byte ranges of the buffers they arrived in (the socket's
 * chunks), in line order: line i is `bufs[i][starts[i], ends[i])`, starting with `put`,
 * terminator removed, not decoded. No object is made per line; `bufs` repeats the same
 * chunk for the lines of one chunk. `line(i)` makes a view (the slow path, tests).
 */
export class PutLines {
  count = 0;
  readonly bufs: Uint8Array[] = [];
  readonly starts: number[] = [];
  readonly ends: number[] = [];

  add(buf: Uint8Array, start: number, end: number): void {
    this.bufs.push(buf);
    this.starts.push(start);
    this.ends.push(end);
    this.count++;
  }

  /** Line i as a view of its buffer. */
  line(i: number): Uint8Array {
    return this.bufs[i]!.subarray(this.starts[i], this.ends[i]);
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
}

export interface TelnetBackend {
  /**
   * Writes a batch of `put` lines (PutLines: byte ranges of the received chunks; not
   * decoded — `putWords(batch.line(i))` in line-splitter.ts gives the words after `put`);
   * the session has already checked that there are at least 4 words after `put`
   * (metric, timestamp, value, one tag). The chunks are never modified by the session,
   * and it keeps no reference to them once the returned promise settles.
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
