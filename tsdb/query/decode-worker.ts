/**
 * A query decode worker thread (decode-pool.ts is its other end). For each query session
 * it receives packed data rows (row-pack.ts) of the salt buckets given to it, decodes them
 * into per-series typed arrays as the main thread's scanner does, and at the end runs the
 * per-series half of the pipeline (window, downsample, rate: pipeline.ts SeriesPreparer)
 * and sends each series' points back, transferred, not copied.
 *
 * Messages in:  {type:'begin', sid, startMs, endMs, maxPoints, spec?} | {type:'rows', sid, bytes}
 *               | {type:'end', sid} | {type:'cancel', sid}
 *               | {type:'format', sid, series, opts} (format-parallel.ts: a part of an answer's JSON; series packed)
 *               | {type:'scanPut', sid, bytes} (an /api/put JSON body scanned: put-json.ts scanPutJson)
 * Messages out: {sid, series:[{index, raw, points}]} | {sid, bytes}
 *               | {sid, scan, body, error?} (scanPut: the body transferred back, with its scan or the error)
 *               | {sid, error:{name, code?, message}}
 */
import { parentPort } from 'node:worker_threads';
import type { PointBlock } from '../codec/point-block.js';
import { TsdbError } from '../errors.js';
import { mergeRowCells } from './row-merge.js';
import { DATA_FAMILY } from '../tables.js';
import { formatSeriesListBytes } from './format-json.js';
import type { FormatOptions } from './format-json.js';
import { unpackSeries } from './packed-series.js';
import type { PackedSeries } from './packed-series.js';
import { SeriesPreparer } from './pipeline.js';
import type { PipelineSpec } from './pipeline.js';
import { appendRow, appendRowBuckets, rowDownsampleOf } from './point-append.js';
import type { RowDownsample } from './point-append.js';
import { unpackRows } from './row-pack.js';
import { scanBuffers, scanPutJson } from '../write/put-json.js';
import type { JsonPutScan } from '../write/put-json.js';
import type { Points } from './series.js';

export type WorkerIn =
  | { type: 'begin'; sid: number; startMs: number; endMs: number; maxPoints: number; spec?: PipelineSpec }
  | { type: 'format'; sid: number; series: PackedSeries; opts: FormatOptions }
  | { type: 'scanPut'; sid: number; bytes: Uint8Array }
  | { type: 'rows'; sid: number; bytes: Uint8Array }
  | { type: 'end'; sid: number }
  | { type: 'cancel'; sid: number };

export interface WorkerSeries {
  /** The series' index in the query (rows sent). */
  readonly index: number;
  /** Points read (inside the scan window), before downsampling. */
  readonly raw: number;
  /** Prepared (with a spec) or raw points. */
  readonly points: Points;
}

export type WorkerOut =
  | { sid: number; series: WorkerSeries[] }
  | { sid: number; bytes: Uint8Array }
  | { sid: number; scan: JsonPutScan | null; body: Uint8Array; error?: { name: string; code?: string; message: string } }
  | { sid: number; error: { name: string; code?: string; message: string } };

interface Session {
  readonly startMs: number;
  readonly endMs: number;
  readonly maxPoints: number;
  readonly spec: PipelineSpec | undefined;
  readonly series: Map<number, { p: Points; raw: number }>;
  /**
   * Rows are downsampled as they come (point-append.ts), when the spec allows it. (Queries
   * whose hour rows their summaries answer are not sent here: execute.ts.)
   */
  readonly rowDs: RowDownsample | undefined;
  points: number;
  block: PointBlock | undefined;
  failed: Error | undefined;
}

const EMPTY_F64 = new Float64Array(0);
const EMPTY_U8 = new Uint8Array(0);
const sessions = new Map<number, Session>();

function onRows(s: Session, bytes: Uint8Array): void {
  unpackRows(bytes, DATA_FAMILY, (index, baseMs, cells) => {
    const block = mergeRowCells(cells, s.block);
    s.block = block;
    if (block.count === 0) return;
    let e = s.series.get(index);
    if (e === undefined) {
      e = { p: { count: 0, ts: EMPTY_F64, values: EMPTY_F64, isInt: EMPTY_U8 }, raw: 0 };
      s.series.set(index, e);
    }
    appendTo(s, e, block, baseMs);
  });
}

/** Appends a decoded row's points to its series (rows of a series come in hour order). */
function appendTo(s: Session, e: { p: Points; raw: number }, block: PointBlock, baseMs: number): void {
  const n = s.rowDs === undefined ? appendRow(e.p, block, baseMs, s.startMs, s.endMs) : appendRowBuckets(e.p, block, baseMs, s.startMs, s.endMs, s.rowDs.intervalMs, s.rowDs.fn);
  e.raw += n;
  s.points += n;
  if (s.points > s.maxPoints) throw new TsdbError('TSDB_TOO_LARGE', `Query exceeded a limit: more than ${s.maxPoints} data points`);
}

function onEnd(sid: number, s: Session): void {
  const preparer = s.spec === undefined ? undefined : new SeriesPreparer(s.spec);
  const out: WorkerSeries[] = [];
  const transfer: ArrayBuffer[] = [];
  for (const [index, { p: raw, raw: rawCount }] of s.series) {
    const points = preparer === undefined ? raw : s.rowDs !== undefined ? preparer.prepareDownsampled(raw) : preparer.prepare(raw);
    // Own buffers of exactly the points, so the transfer moves nothing else.
    const own: Points = {
      count: points.count,
      ts: points.ts.slice(0, points.count),
      values: points.values.slice(0, points.count),
      isInt: points.isInt.slice(0, points.count),
      ...(points.exact === undefined ? {} : { exact: points.exact.slice(0, points.count) }),
    };
    transfer.push(own.ts.buffer as ArrayBuffer, own.values.buffer as ArrayBuffer, own.isInt.buffer as ArrayBuffer);
    if (own.exact !== undefined) transfer.push(own.exact.buffer as ArrayBuffer);
    out.push({ index, raw: rawCount, points: own });
  }
  post({ sid, series: out }, transfer);
}

function post(msg: WorkerOut, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(msg, transfer);
}

function wireError(err: unknown): { name: string; code?: string; message: string } {
  if (err instanceof TsdbError) return { name: err.name, code: err.code, message: err.message };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: 'Error', message: String(err) };
}

parentPort!.on('message', (m: WorkerIn) => {
  if (m.type === 'scanPut') {
    // The body goes back to the main thread (transferred) with its scan, or with the error.
    const back = [m.bytes.buffer as ArrayBuffer];
    try {
      const scan = scanPutJson(m.bytes);
      post({ sid: m.sid, scan, body: m.bytes }, [...scanBuffers(scan), ...back]);
    } catch (err) {
      post({ sid: m.sid, scan: null, body: m.bytes, error: wireError(err) }, back);
    }
    return;
  }
  if (m.type === 'format') {
    try {
      const text = formatSeriesListBytes(unpackSeries(m.series), m.opts);
      // Its own buffer of exactly the bytes, transferred (the output buffer may be bigger).
      const bytes = new Uint8Array(text.length);
      bytes.set(text);
      post({ sid: m.sid, bytes }, [bytes.buffer]);
    } catch (err) {
      post({ sid: m.sid, error: wireError(err) });
    }
    return;
  }
  if (m.type === 'begin') {
    // Row-by-row downsampling needs the spec's pipeline after it (a prepared session).
    const rowDs = m.spec === undefined ? undefined : rowDownsampleOf(m.spec.downsample);
    sessions.set(m.sid, {
      startMs: m.startMs, endMs: m.endMs, maxPoints: m.maxPoints, spec: m.spec, series: new Map(), rowDs,
      points: 0, block: undefined, failed: undefined,
    });
    return;
  }
  const s = sessions.get(m.sid);
  if (s === undefined) return;
  if (m.type === 'cancel') {
    sessions.delete(m.sid);
    return;
  }
  if (m.type === 'rows') {
    if (s.failed !== undefined) return;
    try {
      onRows(s, m.bytes);
    } catch (err) {
      s.failed = err instanceof Error ? err : new Error(String(err));
      s.series.clear();
    }
    return;
  }
  sessions.delete(m.sid);
  if (s.failed !== undefined) {
    post({ sid: m.sid, error: wireError(s.failed) });
    return;
  }
  try {
    onEnd(m.sid, s);
  } catch (err) {
    post({ sid: m.sid, error: wireError(err) });
  }
});
