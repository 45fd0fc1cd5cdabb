/**
 * What a telnet parse worker (parse-worker.ts) makes of one received chunk, and the
 * worker's half of the work: framing (line-splitter.ts), the byte-level put parser
 * (write/put-line-fast.ts) and the series lookup by bytes (write/series-byte-cache.ts),
 * here mapping to a series *number* the main thread gave it (parse-pool.ts keeps the
 * number → SeriesEntry table; the worker has no entries, UIDs or store).
 *
 * One chunk in, one ParsedChunk out, in the order the lines came:
 *   - a put line whose series the worker knows and that the fast parser took becomes a
 *     point in the columns (series number, timestamp, value, is-integer);
 *   - any other put line is copied as raw bytes for the main thread's general path
 *     (which resolves or creates its series and then teaches the worker its number);
 *   - a line other than a put is decoded exactly as the in-thread splitter does (the
 *     same LineSplitter runs on the same chunks) and passed as text;
 *   - a line over the limit ends the chunk (`tooLong`); nothing after it is parsed.
 * `ops` says the order: n > 0 is a run of n column points, OP_RAW_PUT one raw put line,
 * OP_TEXT one text line. `pending` is how many bytes of an unterminated line the splitter
 * holds after the chunk: the main thread keeps those bytes too, so it can take over in
 * place of a crashed worker without losing or repeating a line.
 *
 * Wire layout: every column and the raw bytes in one transferred ArrayBuffer (no copy on
 * the way, one allocation per chunk), 8-byte columns first for alignment:
 *   timestamps f64[n] | values f64[n] | series i32[n] | ops i32[nOps] | rawEnds i32[nRaw]
 *   | ints u8[n] | raw bytes
 */
import { newFastPut, parsePutFast } from '../../write/put-line-fast.js';
import { SeriesByteCache } from '../../write/series-byte-cache.js';
import { LineSplitter } from './line-splitter.js';
import type { LineSink } from './line-splitter.js';

export const OP_RAW_PUT = -1;
export const OP_TEXT = -2;

/** A parsed chunk as posted (worker → main). */
export interface ParsedChunkWire {
  readonly conn: number;
  /** The generation of series numbers used (parse-pool.ts: numbers of an older one may be gone). */
  readonly gen: number;
  readonly buf: ArrayBuffer;
  readonly n: number;
  readonly nOps: number;
  readonly nRaw: number;
  readonly rawBytes: number;
  readonly texts: string[];
  readonly pending: number;
  readonly tooLong: boolean;
}

/** A parsed chunk as the session reads it: views of the wire buffer. */
export interface ParsedChunk<E = unknown> {
  readonly n: number;
  /** The series of point i (resolved from its number by the pool). */
  readonly entries: E[];
  readonly timestamps: Float64Array;
  readonly values: Float64Array;
  readonly ints: Uint8Array;
  readonly ops: Int32Array;
  /** Raw put line k is raw[rawEnds[k-1] (0 for k = 0), rawEnds[k]). */
  readonly raw: Buffer;
  readonly rawEnds: Int32Array;
  readonly texts: readonly string[];
  readonly pending: number;
  readonly tooLong: boolean;
}

/** Views of a wire chunk's columns; `series` still holds numbers. */
export function chunkViews(w: ParsedChunkWire): { timestamps: Float64Array; values: Float64Array; series: Int32Array; ops: Int32Array; rawEnds: Int32Array; ints: Uint8Array; raw: Buffer } {
  const { buf, n, nOps, nRaw } = w;
  let at = 0;
  const timestamps = new Float64Array(buf, at, n); at += 8 * n;
  const values = new Float64Array(buf, at, n); at += 8 * n;
  const series = new Int32Array(buf, at, n); at += 4 * n;
  const ops = new Int32Array(buf, at, nOps); at += 4 * nOps;
  const rawEnds = new Int32Array(buf, at, nRaw); at += 4 * nRaw;
  const ints = new Uint8Array(buf, at, n); at += n;
  const raw = Buffer.from(buf, at, w.rawBytes);
  return { timestamps, values, series, ops, rawEnds, ints, raw };
}

/**
 * The worker's state: one LineSplitter per connection and the series it was taught.
 * Pure (no thread, no port): parse-worker.ts drives it from messages, tests directly.
 */
export class PutChunkParser implements LineSink {
  /** Series bytes (metric, one space, tags) → series number, of generation `gen`. */
  private series = new SeriesByteCache<number>(Number.MAX_SAFE_INTEGER);
  private gen = 0;
  private readonly conns = new Map<number, LineSplitter>();
  private readonly fast = newFastPut();
  // Scratch columns of the chunk being parsed, grown by doubling, reused.
  private ts = new Float64Array(1024);
  private vals = new Float64Array(1024);
  private refs = new Int32Array(1024);
  private ints = new Uint8Array(1024);
  private n = 0;
  private ops = new Int32Array(256);
  private nOps = 0;
  private raw = Buffer.allocUnsafe(4096);
  private rawBytes = 0;
  private rawEnds = new Int32Array(64);
  private nRaw = 0;
  private texts: string[] = [];

  /** Forgets every series and starts numbering generation `gen` (the main thread's clear). */
  reset(gen: number): void {
    this.series = new SeriesByteCache<number>(Number.MAX_SAFE_INTEGER);
    this.gen = gen;
  }

  /**
   * Learns series: `keys` holds each key (metric bytes, a space, tag bytes) back to back,
   * key i ending at keyEnds[i], its metric metricLengths[i] bytes long; it is `refs[i]`.
   */
  learn(gen: number, keys: Uint8Array, keyEnds: Int32Array, metricLengths: Int32Array, refs: Int32Array): void {
    if (gen !== this.gen) return; // taught before a clear the worker has since seen
    let start = 0;
    for (let i = 0; i < keyEnds.length; i++) {
      const end = keyEnds[i]!;
      const ml = metricLengths[i]!;
      this.series.set(keys, start, start + ml, start + ml + 1, end, refs[i]!);
      start = end;
    }
  }

  /** Drops a connection's splitter (and the partial line it held). */
  close(conn: number): void {
    this.conns.delete(conn);
  }

  get connections(): number {
    return this.conns.size;
  }

  /** Parses one chunk of connection `conn` (a new connection on its first chunk). */
  parse(conn: number, chunk: Uint8Array, maxLineBytes: number): ParsedChunkWire {
    let s = this.conns.get(conn);
    if (s === undefined) {
      s = new LineSplitter(maxLineBytes);
      this.conns.set(conn, s);
    }
    this.n = 0;
    this.nOps = 0;
    this.rawBytes = 0;
    this.nRaw = 0;
    this.texts = [];
    const tooLong = s.pushTo(chunk, this);
    return this.take(conn, s.pendingBytes, tooLong);
  }

  /** LineSink: a put line of the chunk being parsed. */
  put(buf: Buffer, start: number, end: number): boolean {
    const f = this.fast;
    if (parsePutFast(buf, start, end, f)) {
      const ref = this.series.get(buf, f.metricStart, f.metricEnd, f.tagsStart, f.tagsEnd);
      if (ref !== undefined) {
        const i = this.n++;
        if (i === this.ts.length) this.growColumns();
        this.ts[i] = f.timestamp;
        this.vals[i] = f.value;
        this.refs[i] = ref;
        this.ints[i] = f.isInt ? 1 : 0;
        const last = this.nOps - 1;
        if (last >= 0 && this.ops[last]! > 0) this.ops[last]!++;
        else this.op(1);
        return true;
      }
    }
    const len = end - start;
    if (this.rawBytes + len > this.raw.length) {
      const b = Buffer.allocUnsafe(Math.max(this.raw.length * 2, this.rawBytes + len));
      this.raw.copy(b, 0, 0, this.rawBytes);
      this.raw = b;
    }
    buf.copy(this.raw, this.rawBytes, start, end);
    this.rawBytes += len;
    if (this.nRaw === this.rawEnds.length) this.rawEnds = grownI32(this.rawEnds);
    this.rawEnds[this.nRaw++] = this.rawBytes;
    this.op(OP_RAW_PUT);
    return true;
  }

  /** LineSink: any other line, decoded. */
  line(text: string): boolean {
    this.texts.push(text);
    this.op(OP_TEXT);
    return true;
  }

  private op(v: number): void {
    if (this.nOps === this.ops.length) this.ops = grownI32(this.ops);
    this.ops[this.nOps++] = v;
  }

  private growColumns(): void {
    const m = this.ts.length * 2;
    const ts = new Float64Array(m); ts.set(this.ts); this.ts = ts;
    const vals = new Float64Array(m); vals.set(this.vals); this.vals = vals;
    const refs = new Int32Array(m); refs.set(this.refs); this.refs = refs;
    const ints = new Uint8Array(m); ints.set(this.ints); this.ints = ints;
  }

  private take(conn: number, pending: number, tooLong: boolean): ParsedChunkWire {
    const { n, nOps, nRaw, rawBytes } = this;
    const buf = new ArrayBuffer(21 * n + 4 * (nOps + nRaw) + rawBytes);
    let at = 0;
    new Float64Array(buf, at, n).set(this.ts.subarray(0, n)); at += 8 * n;
    new Float64Array(buf, at, n).set(this.vals.subarray(0, n)); at += 8 * n;
    new Int32Array(buf, at, n).set(this.refs.subarray(0, n)); at += 4 * n;
    new Int32Array(buf, at, nOps).set(this.ops.subarray(0, nOps)); at += 4 * nOps;
    new Int32Array(buf, at, nRaw).set(this.rawEnds.subarray(0, nRaw)); at += 4 * nRaw;
    new Uint8Array(buf, at, n).set(this.ints.subarray(0, n)); at += n;
    new Uint8Array(buf, at, rawBytes).set(this.raw.subarray(0, rawBytes));
    return { conn, gen: this.gen, buf, n, nOps, nRaw, rawBytes, texts: this.texts, pending, tooLong };
  }
}

function grownI32(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
