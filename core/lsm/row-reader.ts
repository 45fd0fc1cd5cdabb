/**
 * Turns the merged entries of one row (puts and delete markers of every version, from
 * memstores and files) into what a reader sees, and what a major compaction keeps.
 *
 * Semantics (the same as the reference store in core/memory, which applies every mutation
 * eagerly in write order): replaying a column's puts and the markers that cover it in
 * sequence-number order, where
 *   - a put replaces the version with the same timestamp, then the column keeps only its
 *     newest `maxVersions` versions (older ones are gone for good);
 *   - DeleteCell(T), DeleteFamily(T), DeleteRow(T) remove versions with timestamp <= T;
 *   - DeleteVersion(T) removes the version with timestamp == T;
 * gives the column's surviving versions. TTL, time range, qualifier filters and the
 * requested version count then select what a read returns.
 *
 * The common case (one put in the column and no marker that could cover it) takes a fast
 * path without the replay. Entries with a sequence number above the read's snapshot are
 * invisible and skipped.
 */
import type { Cell } from '../api/store.js';
import type { InternalIterator } from '../iter/internal-iterator.js';
import { compareRange } from '../api/bytes.js';
import { KeyKind, TRAILER_BYTES, seqOf, timestampOf } from './internal-key.js';

export interface FamilyRule {
  readonly maxVersions: number;
  /** Cells with nowMs - timestamp > ttlMs are expired (visible at exactly ttlMs old). */
  readonly ttlMs: number | undefined;
}

export interface RowReadContext {
  readonly snapshotSeq: number;
  readonly nowMs: number;
  readonly families: ReadonlyMap<string, FamilyRule>;
  /** Families to return (undefined: all). */
  readonly familyFilter: ReadonlySet<string> | undefined;
  readonly cellMatches: ((family: string, qualifier: Uint8Array, timestamp: number) => boolean) | undefined;
  /** Versions per column to return. */
  readonly maxVersions: number;
}

interface ColEntry {
  ts: number;
  seq: number;
  kind: number;
  value: Uint8Array;
  /** Copy of the internal key (compaction mode only). */
  key: Uint8Array | undefined;
}

interface Marker {
  ts: number;
  seq: number;
}

const DEFAULT_RULE: FamilyRule = { maxVersions: 1, ttlMs: undefined };

/**
 * Receives the surviving versions of each column, newest first: `col` numbers the columns
 * of the row (it changes when a new column starts), `key` is set in compaction mode only.
 */
type VersionSink = (
  family: string, rule: FamilyRule, qualifier: Uint8Array, ts: number, value: Uint8Array,
  key: Uint8Array | undefined, col: number,
) => void;

const NO_MARKERS: Marker[] = [];

/**
 * Consumes every entry of the row at the iterator's position (the iterator must be valid and
 * at the row's first entry) and calls `sink` for each surviving version. Leaves the
 * iterator at the first entry of the next row (or invalid).
 *
 * NB: hot path of every scan. The first entry of a column is kept in locals; only columns
 * with several entries (versions, markers) allocate and take the general replay.
 */
function consumeRow(
  it: InternalIterator, snapshotSeq: number, families: ReadonlyMap<string, FamilyRule>,
  keepKeys: boolean, sink: VersionSink,
): void {
  let k = it.key();
  const rowLen = (k[0]! << 8) | k[1]!;
  const row = k.slice(2, 2 + rowLen);
  let rowMarkers = NO_MARKERS;
  let famMarkers = NO_MARKERS;
  let famBytes: Uint8Array | undefined;
  let family = '';
  let rule = DEFAULT_RULE;
  let qual: Uint8Array | undefined;
  let colNo = 0;
  // The current column: its first entry in locals, further entries in `more`.
  let n = 0;
  let fTs = 0;
  let fSeq = 0;
  let fKind = 0;
  let fValue: Uint8Array | undefined;
  let fKey: Uint8Array | undefined;
  let more: ColEntry[] | undefined;

  const finishColumn = (): void => {
    if (n === 0) return;
    colNo++;
    if (n === 1) {
      n = 0;
      if (fKind !== KeyKind.Put) return;
      if (rowMarkers.length > 0 && coveredBy(rowMarkers, fTs, fSeq)) return;
      if (famMarkers.length > 0 && coveredBy(famMarkers, fTs, fSeq)) return;
      sink(family, rule, qual!, fTs, fValue!, fKey, colNo);
      return;
    }
    const col: ColEntry[] = [{ ts: fTs, seq: fSeq, kind: fKind, value: fValue!, key: fKey }, ...more!];
    n = 0;
    more = undefined;
    const survivors = resolveColumn(col, rowMarkers, famMarkers, rule.maxVersions);
    for (const v of survivors) sink(family, rule, qual!, v.ts, v.value, v.key, colNo);
  };

  for (;;) {
    const seq = seqOf(k);
    if (seq <= snapshotSeq) {
      const kind = k[k.length - 1]!;
      if (kind === KeyKind.DeleteRow) {
        if (rowMarkers === NO_MARKERS) rowMarkers = [];
        rowMarkers.push({ ts: timestampOf(k), seq });
      } else {
        const fs = 2 + rowLen;
        const fl = k[fs]!;
        if (famBytes === undefined || compareRange(k, fs + 1, fs + 1 + fl, famBytes, 0, famBytes.length) !== 0) {
          finishColumn();
          qual = undefined;
          famBytes = k.slice(fs + 1, fs + 1 + fl);
          family = String.fromCharCode.apply(null, famBytes as unknown as number[]);
          rule = families.get(family) ?? DEFAULT_RULE;
          famMarkers = NO_MARKERS;
        }
        if (kind === KeyKind.DeleteFamily) {
          if (famMarkers === NO_MARKERS) famMarkers = [];
          famMarkers.push({ ts: timestampOf(k), seq });
        } else {
          const qs = fs + 1 + fl;
          const qe = k.length - TRAILER_BYTES;
          if (qual === undefined || compareRange(k, qs, qe, qual, 0, qual.length) !== 0) {
            finishColumn();
            qual = k.slice(qs, qe);
          }
          if (n === 0) {
            fTs = timestampOf(k);
            fSeq = seq;
            fKind = kind;
            fValue = it.value();
            fKey = keepKeys ? k.slice() : undefined;
          } else {
            if (more === undefined) more = [];
            more.push({ ts: timestampOf(k), seq, kind, value: it.value(), key: keepKeys ? k.slice() : undefined });
          }
          n++;
        }
      }
    }
    it.next();
    if (!it.valid) break;
    k = it.key();
    if (((k[0]! << 8) | k[1]!) !== rowLen || compareRange(k, 2, 2 + rowLen, row, 0, rowLen) !== 0) break;
  }
  finishColumn();
}

function coveredBy(ms: Marker[], ts: number, seq: number): boolean {
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    if (m.ts >= ts && m.seq > seq) return true;
  }
  return false;
}

/** The column's surviving versions, newest timestamp first. */
function resolveColumn(col: ColEntry[], rowMarkers: Marker[], famMarkers: Marker[], maxVersions: number): ColEntry[] {
  if (col.length === 1) {
    const e = col[0]!;
    if (e.kind !== KeyKind.Put) return [];
    if (coveredBy(rowMarkers, e.ts, e.seq) || coveredBy(famMarkers, e.ts, e.seq)) return [];
    return col;
  }
  // General case: replay puts and markers in sequence order.
  const events: { seq: number; ts: number; kind: number; e: ColEntry | undefined }[] = [];
  for (const e of col) events.push({ seq: e.seq, ts: e.ts, kind: e.kind, e });
  for (const m of rowMarkers) events.push({ seq: m.seq, ts: m.ts, kind: KeyKind.DeleteCell, e: undefined });
  for (const m of famMarkers) events.push({ seq: m.seq, ts: m.ts, kind: KeyKind.DeleteCell, e: undefined });
  events.sort((a, b) => a.seq - b.seq);
  let versions: ColEntry[] = [];
  for (const ev of events) {
    switch (ev.kind) {
      case KeyKind.Put: {
        const e = ev.e!;
        let i = 0;
        while (i < versions.length && versions[i]!.ts > e.ts) i++;
        if (i < versions.length && versions[i]!.ts === e.ts) versions[i] = e;
        else versions.splice(i, 0, e);
        if (versions.length > maxVersions) versions.length = maxVersions;
        break;
      }
      case KeyKind.DeleteCell:
        versions = versions.filter((v) => v.ts > ev.ts);
        break;
      case KeyKind.DeleteVersion:
        versions = versions.filter((v) => v.ts !== ev.ts);
        break;
      default:
        break;
    }
  }
  return versions;
}

/**
 * Reads the row at the iterator's position into the cells a reader sees (possibly none)
 * and advances to the next row. `row` receives a copy of the row key.
 */
export function readRow(it: InternalIterator, ctx: RowReadContext): { key: Uint8Array; cells: Cell[] } {
  const k = it.key();
  const key = k.slice(2, 2 + ((k[0]! << 8) | k[1]!));
  const cells: Cell[] = [];
  const { familyFilter, cellMatches, nowMs } = ctx;
  const want = ctx.maxVersions;
  let lastCol = -1;
  let taken = 0;
  let expired = false;
  consumeRow(it, ctx.snapshotSeq, ctx.families, false, (family, rule, qualifier, ts, value, _key, col) => {
    if (col !== lastCol) {
      lastCol = col;
      taken = 0;
      expired = false;
    }
    if (taken >= want || expired) return;
    if (familyFilter !== undefined && !familyFilter.has(family)) return;
    if (rule.ttlMs !== undefined && nowMs - ts > rule.ttlMs) {
      expired = true; // older versions are expired too
      return;
    }
    if (cellMatches !== undefined && !cellMatches(family, qualifier, ts)) return;
    // NB: values are views into memstore and block buffers: copy, the caller owns them.
    cells.push({ family, qualifier, timestamp: ts, value: value.slice() });
    taken++;
  });
  return { key, cells };
}

/**
 * Major-compaction view of a row: calls `emit` with the internal key and value of every
 * surviving, unexpired version, in internal-key order, and drops every marker. Requires
 * that the iterator covers ALL data of the row older than the markers it drops (a major
 * compaction over every file of the region) and that snapshotSeq covers all of it.
 */
export function compactRow(
  it: InternalIterator, snapshotSeq: number, nowMs: number, families: ReadonlyMap<string, FamilyRule>,
  emit: (key: Uint8Array, value: Uint8Array) => void,
): void {
  consumeRow(it, snapshotSeq, families, true, (_family, rule, _qualifier, ts, value, key) => {
    if (rule.ttlMs !== undefined && nowMs - ts > rule.ttlMs) return;
    emit(key!, value);
  });
}
