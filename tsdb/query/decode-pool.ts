/**
 * Query decoding on the other cores: a pool of worker threads (decode-worker.ts) that
 * decode the data rows of some salt buckets of a big query while the main thread scans
 * every bucket and decodes the rest. A series lives in one salt bucket, so each series is
 * decoded, windowed, downsampled and rated whole in one place; the main thread then
 * filters, groups and aggregates as usual (execute.ts).
 *
 * A session is one sub-query's scan: rows are packed per worker (row-pack.ts) and sent in
 * batches as the scan goes, so decoding overlaps scanning; finish() collects the series.
 * A session that is abandoned (error, client gone) is cancelled and its state dropped.
 */
import { Worker } from 'node:worker_threads';
import type { Cell } from '../../core/api/store.js';
import { TsdbError } from '../errors.js';
import type { TsdbErrorCode } from '../errors.js';
import { isDataPointCell } from './row-merge.js';
import type { WorkerIn, WorkerOut, WorkerSeries } from './decode-worker.js';
import type { FormatOptions } from './format-json.js';
import type { PackedSeries } from './packed-series.js';
import type { PipelineSpec } from './pipeline.js';
import { RowPacker } from './row-pack.js';
import type { JsonPutScan } from '../write/put-json.js';

/**
 * Bytes of packed rows that make one message to a worker: small enough that a worker
 * starts decoding while the scan goes on (a day of one metric over 100 hosts is ~600 KiB).
 */
const BATCH_BYTES = 64 * 1024;

export interface DecodeSessionOptions {
  /** Points with startMs ≤ ts ≤ endMs are kept. */
  readonly startMs: number;
  readonly endMs: number;
  readonly maxPoints: number;
  /** Run the per-series pipeline half in the worker (points come back prepared). */
  readonly spec?: PipelineSpec;
}

/** A scanned /api/put body (DecodePool.scanPut). */
export interface PutScanResult {
  /** Its datapoints, or its error. */
  readonly scan: JsonPutScan;
  /** The body, to read the scan by: the caller's bytes, moved there and back or kept. */
  readonly bytes: Buffer;
}

type PutScanReply = Extract<WorkerOut, { scan: unknown }>;

/** True when `b` spans all of its (non-shared) ArrayBuffer: a buffer of its own, to transfer. */
function ownsItsBuffer(b: Uint8Array): boolean {
  return b.byteOffset === 0 && b.buffer instanceof ArrayBuffer && b.byteLength === b.buffer.byteLength && b.byteLength > 0;
}

interface Pending {
  resolve(out: WorkerSeries[] | Uint8Array | PutScanReply): void;
  reject(err: Error): void;
}

function workerUrl(): URL {
  // From the TypeScript sources (tests, tsx) a bootstrap registers tsx in the worker; the
  // build runs the compiled decode-worker.js beside this file.
  if (import.meta.url.endsWith('.ts')) return new URL('./decode-worker-tsx.mjs', import.meta.url);
  return new URL('./decode-worker.js', import.meta.url);
}

export class DecodePool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextSid = 1;
  private nextScan = 0;
  private closed = false;
  /** Sessions begun and rows sent to workers, since the pool started. */
  sessions = 0;
  rowsSent = 0;
  /** /api/put bodies scanned on workers (scanPut), since the pool started. */
  putScans = 0;
  /** Of those, the bodies moved to the worker and back rather than copied. */
  putMoves = 0;

  readonly threads: number;

  constructor(threads: number) {
    this.threads = threads;
    const url = workerUrl();
    for (let i = 0; i < threads; i++) {
      const w = new Worker(url);
      w.unref();
      w.on('message', (m: WorkerOut) => {
        const p = this.pending.get(m.sid);
        if (p === undefined) return;
        this.pending.delete(m.sid);
        if ('scan' in m) p.resolve(m);
        else if ('error' in m) p.reject(errorFromWire(m.error));
        else p.resolve('series' in m ? m.series : m.bytes);
      });
      w.on('error', (err) => this.failAll(err));
      this.workers.push(w);
    }
  }

  /**
   * Which worker decodes a salt bucket, or -1 for the main thread. The main thread scans
   * every bucket, so it keeps 0.8 of an even share of the decoding.
   */
  workerOf(salt: number, buckets: number): number {
    const mainShare = Math.floor((buckets * 0.8) / (this.threads + 1));
    return salt < mainShare ? -1 : (salt - mainShare) % this.threads;
  }

  session(o: DecodeSessionOptions): DecodeSession {
    if (this.closed) throw new Error('decode pool is closed');
    this.sessions++;
    return new DecodeSession(this, o);
  }

  /** @internal */
  post(worker: number, msg: WorkerIn, transfer: ArrayBuffer[] = []): void {
    this.workers[worker]!.postMessage(msg, transfer);
  }

  /** @internal */
  newSid(): number {
    return this.nextSid++;
  }

  /** @internal */
  expect(sid: number): Promise<WorkerSeries[]> {
    return new Promise((resolve, reject) => this.pending.set(sid, { resolve: resolve as Pending['resolve'], reject }));
  }

  /**
   * `series` (packed: format-parallel.ts packSeries; its buffers are transferred) formatted
   * by `worker` as format-json.ts formatSeriesListBytes does.
   */
  format(worker: number, series: PackedSeries, opts: FormatOptions): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new Error('decode pool is closed'));
    const sid = this.newSid();
    const p = new Promise<Uint8Array>((resolve, reject) => this.pending.set(sid, { resolve: resolve as Pending['resolve'], reject }));
    this.post(worker, { type: 'format', sid, series, opts }, [series.f64.buffer as ArrayBuffer, series.isInt.buffer as ArrayBuffer]);
    return p;
  }

  /** @internal */
  forget(sid: number): void {
    this.pending.delete(sid);
  }

  /**
   * An /api/put JSON body scanned on a worker (put-json.ts scanPutJson: the columns
   * come back transferred). A body that owns its whole ArrayBuffer (what fastify gathers
   * from several chunks) is moved to the worker and back instead of copied: `bytes` is
   * detached (length 0) until the promise settles, and the caller reads the body from the
   * result. Other bodies are copied, and the result holds the caller's own. Workers take
   * turns. Rejects when the pool closes or the worker fails meanwhile: a moved body is then
   * gone (the caller's `bytes` still has length 0).
   */
  async scanPut(bytes: Buffer): Promise<PutScanResult> {
    if (this.closed) throw new Error('decode pool is closed');
    const sid = this.newSid();
    const p = new Promise<PutScanReply>((resolve, reject) => this.pending.set(sid, { resolve: resolve as Pending['resolve'], reject }));
    this.putScans++;
    const owned = ownsItsBuffer(bytes);
    const sent = owned ? bytes : new Uint8Array(bytes);
    if (owned) this.putMoves++;
    this.post(this.nextScan++ % this.threads, { type: 'scanPut', sid, bytes: sent }, [sent.buffer as ArrayBuffer]);
    const m = await p;
    if (m.error !== undefined) throw errorFromWire(m.error);
    const body = owned ? Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength) : bytes;
    return { scan: m.scan!, bytes: body };
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(new Error(`query decode worker failed: ${err.message}`, { cause: err }));
    this.pending.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failAll(new Error('closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** One sub-query's rows on their way to the workers. */
export class DecodeSession {
  private readonly sids: number[] = [];
  private readonly packers: RowPacker[] = [];
  private readonly started: boolean[] = [];
  private done = false;

  private readonly pool: DecodePool;
  private readonly o: DecodeSessionOptions;

  constructor(pool: DecodePool, o: DecodeSessionOptions) {
    this.pool = pool;
    this.o = o;
    for (let i = 0; i < pool.threads; i++) {
      this.sids.push(pool.newSid());
      this.packers.push(new RowPacker());
      this.started.push(false);
    }
  }

  /** Starts the session in `worker` (before its first rows). */
  private begin(worker: number): void {
    if (this.started[worker]) return;
    this.started[worker] = true;
    this.pool.post(worker, {
      type: 'begin', sid: this.sids[worker]!, startMs: this.o.startMs, endMs: this.o.endMs, maxPoints: this.o.maxPoints,
      ...(this.o.spec === undefined ? {} : { spec: this.o.spec }),
    });
  }

  /** Queues a row of `series` (its index in the query) for `worker`. */
  add(worker: number, series: number, baseMs: number, cells: readonly Cell[]): void {
    this.begin(worker);
    const p = this.packers[worker]!;
    p.add(series, baseMs, cells, isDataPointCell);
    this.pool.rowsSent++;
    if (p.bytes >= BATCH_BYTES) this.flush(worker);
  }

  private flush(worker: number): void {
    const p = this.packers[worker]!;
    if (p.rows === 0) return;
    const bytes = p.take();
    this.pool.post(worker, { type: 'rows', sid: this.sids[worker]!, bytes }, [bytes.buffer as ArrayBuffer]);
  }

  /** Sends every worker the rows queued for it so far. */
  send(): void {
    for (let w = 0; w < this.sids.length; w++) if (this.started[w]) this.flush(w);
  }

  /** Every worker's series: prepared points (with a spec) or raw, by series index. */
  async finish(): Promise<WorkerSeries[]> {
    this.done = true;
    const waits: Array<Promise<WorkerSeries[]>> = [];
    for (let w = 0; w < this.sids.length; w++) {
      if (!this.started[w]) continue;
      this.flush(w);
      const sid = this.sids[w]!;
      waits.push(this.pool.expect(sid));
      this.pool.post(w, { type: 'end', sid });
    }
    const parts = await Promise.all(waits);
    return parts.flat();
  }

  /** Drops the session's state in the workers (after an error or a cancelled query). */
  cancel(): void {
    if (this.done) return;
    this.done = true;
    for (let w = 0; w < this.sids.length; w++) {
      if (!this.started[w]) continue;
      this.pool.forget(this.sids[w]!);
      this.pool.post(w, { type: 'cancel', sid: this.sids[w]! });
    }
  }
}

function errorFromWire(e: { name: string; code?: string; message: string }): Error {
  if (e.code !== undefined) return new TsdbError(e.code as TsdbErrorCode, e.message);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}
