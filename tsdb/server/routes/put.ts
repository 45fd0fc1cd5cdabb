/**
 * POST /api/put: one point or an array, as JSON or msgpack (body-parsers.ts).
 *
 *   all points stored, no flags          → 204, empty body
 *   some rejected, no flags              → 400 {"error":{…"One or more data points had errors"…}}
 *   ?summary                             → {"success":N,"failed":M} (200, or 400 when M > 0)
 *   ?details (wins over summary)         → adds "errors":[{"datapoint":{…},"error":"…"}]
 *   ?sync                                → this request is fsynced even in the relaxed mode
 *   body not an object/array, bad JSON   → 400, nothing stored
 *   body over the limit                  → 413, nothing stored
 *   write pipeline full                  → 503 with Retry-After, nothing stored
 *   heap past the memory budget          → 503 with Retry-After, nothing stored (memory/guard.ts)
 *
 * Good points of a request are stored even when others in it are rejected. A 204 means
 * the points are in the write-ahead log and synced (unless the server runs with
 * durability 'buffered', the documented relaxed mode).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { TsdbError } from '../../errors.js';
import type { IncomingPoint } from '../../write/data-point.js';
import { valueOfJson } from '../../write/data-point.js';
import type { MemoryGuard } from '../../memory/guard.js';
import type { Tsdb } from '../../tsdb.js';
import { sendError } from '../http-errors.js';
import { RawJson } from '../body-parsers.js';
import { BAD_JSON, READ_WHOLE, scanPutJson } from '../../write/put-json.js';
import type { JsonPutScan } from '../../write/put-json.js';
import { jsonPoint } from '../../write/put-json-point.js';
import type { PointOutcome, PointSource } from '../../write/put-entry.js';

interface PutQuery {
  readonly summary?: string;
  readonly details?: string;
  readonly sync?: string;
}

export function registerPutRoutes(app: FastifyInstance, tsdb: Tsdb, memory: Pick<MemoryGuard, 'check' | 'refuse'>): void {
  const handler = async (req: { query: unknown; body: unknown }, reply: FastifyReply): Promise<unknown> => {
    const q = req.query as PutQuery;
    const opts = q.sync !== undefined ? { durability: 'sync' as const } : {};
    if (req.body === undefined || req.body === null) return sendError(reply, 400, 'Missing request content');
    if (req.body instanceof RawJson) {
      // A body scanned on a worker comes back as new bytes (moved there and back).
      const { scan, bytes } = await scanBody(tsdb, req.body.bytes);
      if (scan.error === BAD_JSON) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', BAD_JSON);
      if (scan.error !== undefined) return sendError(reply, 400, scan.error);
      if (scan.count === 0) return sendError(reply, 400, 'No datapoints found in content');
      return respond(reply, q, scan.count, await writeScanned(tsdb, bytes, scan, opts));
    }
    // msgpack: decoded already.
    const body = req.body;
    if (typeof body !== 'object') return sendError(reply, 400, 'The JSON must start as an object or an array');
    const raw: readonly unknown[] = Array.isArray(body) ? body : [body];
    if (raw.length === 0) return sendError(reply, 400, 'No datapoints found in content');
    return respond(reply, q, raw.length, await writeObjects(tsdb, raw, opts));
  };
  // Overloaded: refuse before the body is read, so waiting bodies cannot pile up in memory.
  const admit = async (_req: unknown, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (tsdb.ingest.overloaded()) return sendError(reply, 503, 'Please throttle writes: too many points in flight');
    return memory.check() ? sendError(reply, 503, `Please throttle writes: ${memory.refuse().message}`) : undefined;
  };
  for (const path of ['/api/put', '/api/v1/put']) app.post(path, { config: { role: 'write' }, onRequest: admit }, handler);
}

/**
 * With horae.ingest.put_worker_scan, bodies at least this big are scanned on a query decode
 * worker when there is one: the scan is much of what the main thread spends on a JSON put,
 * and the copy and the messages cost ~0.1 ms a body.
 */
export const WORKER_SCAN_MIN_BYTES = 64 << 10;

/**
 * scanPutJson, on a decode worker for a big body when configured (the main thread meanwhile
 * serves others), with the bytes to read the body from afterwards (the worker's, when the
 * body was moved to it: DecodePool.scanPut).
 */
async function scanBody(tsdb: Tsdb, bytes: Buffer): Promise<{ scan: JsonPutScan; bytes: Buffer }> {
  const pool = tsdb.config.ingestPutWorkerScan && bytes.length >= WORKER_SCAN_MIN_BYTES ? tsdb.queryDecodePool() : undefined;
  if (pool === undefined) return { scan: scanPutJson(bytes), bytes };
  try {
    return await pool.scanPut(bytes);
  } catch (err) {
    // The pool closed or a worker died meanwhile: scan here, unless the body went with it.
    if (bytes.length === 0) throw new TsdbError('TSDB_OVERLOADED', `The decode worker scanning this body failed (${(err as Error).message}); none of its points were written, please retry`);
    return { scan: scanPutJson(bytes), bytes };
  }
}

interface PointError {
  readonly index: number;
  readonly datapoint: unknown;
  readonly error: string;
}

/** Writes datapoints given as objects (msgpack); returns the rejected ones. */
async function writeObjects(tsdb: Tsdb, raw: readonly unknown[], opts: { durability?: 'sync' }): Promise<PointError[]> {
  const source: PointSource = { count: raw.length, protocol: undefined, scan: () => false, parse: (i) => pointOfJson(raw[i]) };
  return errorsOf(await tsdb.ingest.put(source, opts), (i) => raw[i]);
}

/**
 * Writes a scanned JSON body through the ingest entry: datapoints the scan read whole are
 * offered by their bytes (known series need nothing more); the others are made points
 * from the scan one by one (and, once written, teach the byte cache their series).
 */
async function writeScanned(tsdb: Tsdb, bytes: Buffer, scan: JsonPutScan, opts: { durability?: 'sync' }): Promise<PointError[]> {
  const source: PointSource = {
    count: scan.count,
    protocol: 'json',
    scan(k, out) {
      if (scan.kind[k] !== READ_WHOLE) return false;
      out.buf = bytes;
      // The metric's bytes inside its quotes.
      out.metricStart = scan.metricStart[k]! + 1;
      out.metricEnd = scan.metricEnd[k]! - 1;
      out.tagsStart = scan.tagsStart[k]!;
      out.tagsEnd = scan.tagsEnd[k]!;
      out.timestamp = scan.timestamp[k]!;
      out.value = scan.value[k]!;
      out.isInt = scan.isInt[k] === 1;
      out.big = undefined;
      out.sameTags = scan.sameTags[k] === 1;
      return true;
    },
    parse: (k) => jsonPoint(bytes, scan, k),
  };
  // A rejected datapoint is echoed (?details) as the value its bytes are.
  return errorsOf(await tsdb.ingest.put(source, opts), (k) => JSON.parse(bytes.toString('utf8', scan.objStart[k], scan.objEnd[k])));
}

/** The rejected datapoints of a put, in order. */
function errorsOf(outcomes: readonly PointOutcome[], datapoint: (i: number) => unknown): PointError[] {
  const errors: PointError[] = [];
  for (let i = 0; i < outcomes.length; i++) {
    const o = outcomes[i];
    if (o !== undefined) errors.push({ index: i, datapoint: datapoint(i), error: o.message });
  }
  return errors;
}

/** 204, or the summary/details body, or OpenTSDB's 400 for rejected points. */
function respond(reply: FastifyReply, q: PutQuery, total: number, errors: readonly PointError[]): FastifyReply {
  const failed = errors.length;
  const success = total - failed;
  if (q.details !== undefined) {
    return reply.code(failed > 0 ? 400 : 200).send({ success, failed, errors: errors.map((e) => ({ datapoint: echo(e.datapoint), error: e.error })) });
  }
  if (q.summary !== undefined) return reply.code(failed > 0 ? 400 : 200).send({ success, failed });
  if (failed > 0) {
    return sendError(reply, 400, 'One or more data points had errors', 'Please see the TSD logs or append "details" to the put request');
  }
  return reply.code(204).send();
}

/**
 * A msgpack datapoint as an IncomingPoint. The series key is built straight from the
 * tags object; the [k, v] pairs are made only when the writer asks for them (a series it
 * has not seen), so a point of a known series costs one object and one string.
 */
class JsonPoint implements IncomingPoint {
  readonly metric: string;
  readonly timestamp: number;
  readonly value: number;
  readonly isInt: boolean;
  readonly big?: bigint;
  readonly seriesText: string;
  private readonly tagsObj: Readonly<Record<string, unknown>>;
  private pairs: Array<[string, string]> | undefined;

  constructor(metric: string, timestamp: number, v: { value: number; isInt: boolean; big?: bigint }, tags: Readonly<Record<string, unknown>>, seriesText: string) {
    this.metric = metric;
    this.timestamp = timestamp;
    this.value = v.value;
    this.isInt = v.isInt;
    if (v.big !== undefined) this.big = v.big;
    this.tagsObj = tags;
    this.seriesText = seriesText;
  }

  get tags(): ReadonlyArray<readonly [string, string]> {
    this.pairs ??= Object.keys(this.tagsObj).map((k) => [k, String(this.tagsObj[k])]);
    return this.pairs;
  }
}

/** One msgpack datapoint → IncomingPoint; throws TsdbError with OpenTSDB's per-point messages (those of put-json-point.ts). */
export function pointOfJson(o: unknown): IncomingPoint {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw illegal('Datapoint must be an object');
  const d = o as { metric?: unknown; timestamp?: unknown; value?: unknown; tags?: unknown };
  if (typeof d.metric !== 'string' || d.metric.length === 0) throw illegal('Metric name was empty');
  const timestamp = timestampOfJson(d.timestamp);
  const v = valueOfJson(d.value);
  if (d.tags === null || typeof d.tags !== 'object' || Array.isArray(d.tags)) throw illegal('Missing tags');
  const tags = d.tags as Record<string, unknown>;
  let text = d.metric;
  let n = 0;
  for (const k in tags) {
    const val = tags[k];
    if (typeof val !== 'string' && typeof val !== 'number') throw illegal(`Invalid tag value for ${k}`);
    text += ` ${k}=${val}`;
    n++;
  }
  if (n === 0) throw illegal('Missing tags');
  return new JsonPoint(d.metric, timestamp, v, tags, text);
}

function timestampOfJson(t: unknown): number {
  const n = typeof t === 'number' ? t : typeof t === 'string' && /^\d+$/.test(t) ? Number(t) : typeof t === 'bigint' ? Number(t) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw illegal('Invalid timestamp');
  return n;
}

/** A rejected datapoint as ?details echoes it, nesting cut at 8 levels (JSON.stringify recurses). */
function echo(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? v.toString() : v;
  if (depth >= 8) return '(nested too deeply)';
  if (Array.isArray(v)) return v.map((x) => echo(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) Object.defineProperty(out, k, { value: echo((v as Record<string, unknown>)[k], depth + 1), enumerable: true });
  return out;
}

function illegal(message: string): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message);
}
