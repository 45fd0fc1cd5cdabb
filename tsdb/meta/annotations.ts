/**
 * Annotations, stored as OpenTSDB stores them (tsdb/SCHEMA.md "Annotations"): in the data
 * row of the series' hour (or, for a global annotation, in the row
 * `[salt 0][metric 0][base hour]` with no tags), under qualifier `[0x01][2-byte second
 * offset]` — or `[0x01][4-byte ms offset]` when the start time has milliseconds — with the
 * annotation's JSON as the value. Odd-length qualifiers are not data points, so the hour
 * compactor and the point readers leave them alone.
 */
import type { Cell, Mutation } from '../../core/api/store.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { TsdbError } from '../errors.js';
import { patchBaseTime, rowKeyFromTsuid } from '../schema/row-key.js';
import { DATA_FAMILY } from '../tables.js';
import type { Tsdb } from '../tsdb.js';

export interface Annotation {
  readonly tsuid?: string;
  /** Seconds, or ms when > 2^32 - 1 (as data points). */
  readonly startTime: number;
  readonly endTime?: number;
  readonly description?: string;
  readonly notes?: string;
  readonly custom?: Readonly<Record<string, string>>;
}

export const ANNOTATION_PREFIX = 0x01;

/** The qualifier of an annotation starting at `startMs`: second offset unless it has ms. */
export function annotationQualifier(startMs: number): Uint8Array {
  const sec = Math.floor(startMs / 1000);
  const base = sec - (sec % 3600);
  if (startMs % 1000 === 0) {
    const off = sec - base;
    return Uint8Array.of(ANNOTATION_PREFIX, off >>> 8, off & 0xff);
  }
  const off = startMs - base * 1000;
  return Uint8Array.of(ANNOTATION_PREFIX, (off >>> 24) & 0xff, (off >>> 16) & 0xff, (off >>> 8) & 0xff, off & 0xff);
}

export function isAnnotationQualifier(q: Uint8Array): boolean {
  return (q.length === 3 || q.length === 5) && q[0] === ANNOTATION_PREFIX;
}

/** A row's cells include an annotation (most rows have none: skip the parse). */
export function hasAnnotationCell(cells: readonly Cell[]): boolean {
  for (let i = 0; i < cells.length; i++) if (isAnnotationQualifier(cells[i]!.qualifier)) return true;
  return false;
}

/** Start time in ms (timestamps ≤ 2^32 - 1 are seconds). */
export function startMsOf(a: Pick<Annotation, 'startTime'>): number {
  return a.startTime > 4_294_967_295 ? a.startTime : a.startTime * 1000;
}

/** The row an annotation lives in: its series' hour row, or the global row of the hour. */
export function annotationRow(tsdb: Tsdb, tsuidHex: string | undefined, startMs: number): Uint8Array {
  const w = tsdb.widths;
  const sec = Math.floor(startMs / 1000);
  const base = sec - (sec % 3600);
  if (tsuidHex === undefined || tsuidHex === '') {
    const key = new Uint8Array(w.saltWidth + w.metric + 4);
    return patchBaseTime(key, w.saltWidth + w.metric, base);
  }
  if (!/^([0-9A-Fa-f]{2})+$/.test(tsuidHex) || (tsuidHex.length / 2 - w.metric) % (w.tagk + w.tagv) !== 0) {
    throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid TSUID: ${tsuidHex}`);
  }
  const tsuid = Uint8Array.from(tsuidHex.match(/../g)!.map((h) => parseInt(h, 16)));
  return patchBaseTime(rowKeyFromTsuid(w, tsuid, 0), w.saltWidth + w.metric, base);
}

/** Validates and normalizes an annotation from a request; throws TSDB_ILLEGAL_ARGUMENT. */
export function annotationOf(o: unknown): Annotation {
  if (o === null || typeof o !== 'object') throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'Missing annotation');
  const a = o as Record<string, unknown>;
  const start = Number(a.startTime ?? a.start_time);
  if (!Number.isInteger(start) || start <= 0) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'Missing start time');
  const out: Record<string, unknown> = { startTime: start };
  if (a.tsuid !== undefined && a.tsuid !== null && a.tsuid !== '') out.tsuid = String(a.tsuid).toUpperCase();
  const end = a.endTime ?? a.end_time;
  if (end !== undefined && end !== null && end !== 0) out.endTime = Number(end);
  for (const f of ['description', 'notes'] as const) if (typeof a[f] === 'string') out[f] = a[f];
  if (a.custom !== null && typeof a.custom === 'object') out.custom = a.custom;
  return out as unknown as Annotation;
}

export async function readAnnotation(tsdb: Tsdb, tsuid: string | undefined, startMs: number): Promise<Annotation | undefined> {
  const key = annotationRow(tsdb, tsuid, startMs);
  const q = annotationQualifier(startMs);
  const [row] = await tsdb.data.get([key], { families: [DATA_FAMILY] });
  const cell = row?.cells.find((c) => sameBytes(c.qualifier, q));
  return cell === undefined ? undefined : (JSON.parse(fromUtf8(cell.value)) as Annotation);
}

export async function writeAnnotation(tsdb: Tsdb, a: Annotation): Promise<void> {
  const startMs = startMsOf(a);
  const put: Mutation = { type: 'put', family: DATA_FAMILY, qualifier: annotationQualifier(startMs), value: utf8(JSON.stringify(a)) };
  await tsdb.data.mutate([{ key: annotationRow(tsdb, a.tsuid, startMs), mutations: [put] }], { durability: 'sync' });
}

export async function deleteAnnotation(tsdb: Tsdb, tsuid: string | undefined, startMs: number): Promise<void> {
  const del: Mutation = { type: 'deleteCell', family: DATA_FAMILY, qualifier: annotationQualifier(startMs) };
  await tsdb.data.mutate([{ key: annotationRow(tsdb, tsuid, startMs), mutations: [del] }], { durability: 'sync' });
}

/** The annotations among a row's cells whose start lies in [startMs, endMs]. */
export function annotationsInCells(cells: readonly Cell[], startMs: number, endMs: number): Annotation[] {
  const out: Annotation[] = [];
  for (const c of cells) {
    if (!isAnnotationQualifier(c.qualifier)) continue;
    const a = JSON.parse(fromUtf8(c.value)) as Annotation;
    const s = startMsOf(a);
    if (s >= startMs && s <= endMs) out.push(a);
  }
  return out;
}

/** Global annotations with start in [startMs, endMs], by start time. */
export async function globalAnnotations(tsdb: Tsdb, startMs: number, endMs: number): Promise<Annotation[]> {
  const first = annotationRow(tsdb, undefined, startMs);
  const last = annotationRow(tsdb, undefined, endMs);
  const end = patchBaseTime(last, tsdb.widths.saltWidth + tsdb.widths.metric, Math.floor(endMs / 3_600_000) * 3600 + 3600);
  const out: Annotation[] = [];
  for await (const rows of tsdb.data.scan({ start: first, end, families: [DATA_FAMILY] })) {
    for (const r of rows) if (r.key.length === first.length) out.push(...annotationsInCells(r.cells, startMs, endMs));
  }
  return out.sort((a, b) => startMsOf(a) - startMsOf(b));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
