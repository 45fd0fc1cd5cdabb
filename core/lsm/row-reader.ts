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
import { KeyKind, TRAILER_BYTES, compareInternalKeys, seqOf, timestampOf } from './internal-key.js';

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
  /**
   * Return values as views of the sources' buffers (ReadOptionsBase.borrowValues): block
   * bytes and memstore slabs never change once written, so the views stay correct; the
   * copy is what the caller's ownership otherwise costs.
   */
  readonly borrowValues: boolean;
}

export interface ColEntry {
  ts: number;
  seq: number;
  kind: number;
  value: Uint8Array;
  /** Copy of the internal key (compaction mode only). */
  key: Uint8Array | undefined;
}

export interface Marker {
  ts: number;
  seq: number;
}

export const DEFAULT_RULE: FamilyRule = { maxVersions: 1, ttlMs: undefined };
const NO_MARKERS: Marker[] = [];
/** Shared by every empty qualifier returned (a zero-length array cannot be changed). */
const EMPTY_QUALIFIER = new Uint8Array(0);

/**
 * Walks the entries of one row and produces its surviving versions, either as cells for a
 * reader (`readRow`) or as entries for a major compaction (`compactRow`). One instance is
 * reused for every row (its state is reset per row): this is the hot path of every scan,
 * so it keeps the first entry of each column in fields and allocates only for columns with
 * several entries (versions, markers), which take the general replay.
 *
 * Not reentrant; synchronous; single-threaded.
 */
class RowAssembler {
  // Per read.
  private ctx: RowReadContext | undefined;
  private emitEntry: ((key: Uint8Array, value: Uint8Array) => void) | undefined;
  private nowMs = 0;
  private families: ReadonlyMap<string, FamilyRule> = new Map();
  // Family cache: kept across rows of one read (families repeat row after row).
  private famBytes: Uint8Array | undefined;
  private family = '';
  private rule = DEFAULT_RULE;
  // Per row.
  private rowMarkers = NO_MARKERS;
  private famMarkers = NO_MARKERS;
  private cells: Cell[] = [];
  // Per column.
  private qual: Uint8Array | undefined;
  private n = 0;
  private fTs = 0;
  private fSeq = 0;
  private fKind = 0;
  private fValue: Uint8Array | undefined;
  private fKey: Uint8Array | undefined;
  private more: ColEntry[] | undefined;

  private begin(families: ReadonlyMap<string, FamilyRule>, nowMs: number): void {
    if (families !== this.families) {
      this.families = families;
      this.famBytes = undefined;
    }
    this.nowMs = nowMs;
  }

  readRow(it: InternalIterator, ctx: RowReadContext): { key: Uint8Array; cells: Cell[] } {
    this.begin(ctx.families, ctx.nowMs);
    this.ctx = ctx;
    this.emitEntry = undefined;
    this.cells = [];
    const key = this.consume(it, ctx.snapshotSeq, false);
    const cells = this.cells;
    this.cells = [];
    this.ctx = undefined;
    return { key, cells };
  }

  compactRow(
    it: InternalIterator, keepSeq: number, nowMs: number, families: ReadonlyMap<string, FamilyRule>,
    emit: (key: Uint8Array, value: Uint8Array) => void,
  ): void {
    this.begin(families, nowMs);
    this.ctx = undefined;
    this.emitEntry = this.keep;
    this.keptAbove = false;
    this.consume(it, keepSeq, true);
    this.emitEntry = undefined;
    const keys = this.keptKeys;
    const values = this.keptValues;
    if (!this.keptAbove) {
      // Survivors only: found column by column, so already in internal-key order.
      for (let i = 0; i < keys.length; i++) emit(keys[i]!, values[i]!);
    } else {
      // Entries above keepSeq came as they were met, among the survivors of their column:
      // back into internal-key order for the file.
      const order = Array.from(keys.keys()).sort((a, b) => compareInternalKeys(keys[a]!, keys[b]!));
      for (const i of order) emit(keys[i]!, values[i]!);
    }
    keys.length = 0;
    values.length = 0;
  }

  /** compactRow's output of the current row (keys and values), before it is ordered. */
  private readonly keptKeys: Uint8Array[] = [];
  private readonly keptValues: Uint8Array[] = [];
  /** An entry above keepSeq was kept in this row (the output needs sorting). */
  private keptAbove = false;
  private readonly keep = (key: Uint8Array, value: Uint8Array): void => {
    this.keptKeys.push(key);
    this.keptValues.push(value);
  };

  /** Consumes the row at the iterator (valid, at the row's first entry); returns the row key. */
  private consume(it: InternalIterator, snapshotSeq: number, keepKeys: boolean): Uint8Array {
    let k = it.key();
    const rowLen = (k[0]! << 8) | k[1]!;
    const row = k.slice(2, 2 + rowLen);
    this.rowMarkers = NO_MARKERS;
    this.famMarkers = NO_MARKERS;
    this.qual = undefined;
    this.n = 0;
    this.more = undefined;
    let famSeen = false;
    for (;;) {
      const seq = seqOf(k);
      if (seq > snapshotSeq) {
        // Invisible to a read; a compaction keeps it as it is (reads newer than keepSeq
        // replay it on top of the resolved older entries, as they would on all of them).
        if (keepKeys) {
          this.keptAbove = true;
          this.keep(k.slice(), it.value());
        }
      } else {
        const kind = k[k.length - 1]!;
        if (kind === KeyKind.DeleteRow) {
          if (this.rowMarkers === NO_MARKERS) this.rowMarkers = [];
          this.rowMarkers.push({ ts: timestampOf(k), seq });
        } else {
          const fs = 2 + rowLen;
          const fl = k[fs]!;
          const fb = this.famBytes;
          if (fb === undefined || compareRange(k, fs + 1, fs + 1 + fl, fb, 0, fb.length) !== 0) {
            this.finishColumn();
            this.qual = undefined;
            this.famMarkers = NO_MARKERS;
            const bytes = k.slice(fs + 1, fs + 1 + fl);
            this.famBytes = bytes;
            this.family = String.fromCharCode.apply(null, bytes as unknown as number[]);
            this.rule = this.families.get(this.family) ?? DEFAULT_RULE;
          } else if (!famSeen) {
            // Same family as the previous row's last one: a new row starts a new column.
            this.famMarkers = NO_MARKERS;
          }
          famSeen = true;
          if (kind === KeyKind.DeleteFamily) {
            if (this.famMarkers === NO_MARKERS) this.famMarkers = [];
            this.famMarkers.push({ ts: timestampOf(k), seq });
          } else {
            const qs = fs + 1 + fl;
            const qe = k.length - TRAILER_BYTES;
            const q = this.qual;
            if (q === undefined || compareRange(k, qs, qe, q, 0, q.length) !== 0) {
              this.finishColumn();
              // NB: V8 11 makes zero-length slices ~6x dearer than short ones; share one.
              this.qual = qe === qs ? EMPTY_QUALIFIER : k.slice(qs, qe);
            }
            if (this.n === 0) {
              this.fTs = timestampOf(k);
              this.fSeq = seq;
              this.fKind = kind;
              this.fValue = it.value();
              this.fKey = keepKeys ? k.slice() : undefined;
            } else {
              if (this.more === undefined) this.more = [];
              this.more.push({ ts: timestampOf(k), seq, kind, value: it.value(), key: keepKeys ? k.slice() : undefined });
            }
            this.n++;
          }
        }
      }
      it.next();
      if (!it.valid) break;
      k = it.key();
      if (((k[0]! << 8) | k[1]!) !== rowLen || compareRange(k, 2, 2 + rowLen, row, 0, rowLen) !== 0) break;
    }
    this.finishColumn();
    return row;
  }

  private finishColumn(): void {
    const n = this.n;
    if (n === 0) return;
    this.n = 0;
    if (n === 1) {
      if (this.fKind !== KeyKind.Put) return;
      if (this.rowMarkers.length > 0 && coveredBy(this.rowMarkers, this.fTs, this.fSeq)) return;
      if (this.famMarkers.length > 0 && coveredBy(this.famMarkers, this.fTs, this.fSeq)) return;
      this.startVersions();
      this.version(this.fTs, this.fValue!, this.fKey);
      return;
    }
    const col: ColEntry[] = [{ ts: this.fTs, seq: this.fSeq, kind: this.fKind, value: this.fValue!, key: this.fKey }, ...this.more!];
    this.more = undefined;
    const survivors = resolveColumn(col, this.rowMarkers, this.famMarkers, this.rule.maxVersions);
    this.startVersions();
    for (const v of survivors) if (!this.version(v.ts, v.value, v.key)) break;
  }

  private taken = 0;

  private startVersions(): void {
    this.taken = 0;
  }

  /** One surviving version, newest first within its column; false when the column is done. */
  private version(ts: number, value: Uint8Array, key: Uint8Array | undefined): boolean {
    const rule = this.rule;
    // Older versions of an expired cell are expired too.
    if (rule.ttlMs !== undefined && this.nowMs - ts > rule.ttlMs) return false;
    const emit = this.emitEntry;
    if (emit !== undefined) {
      emit(key!, value);
      return true;
    }
    const ctx = this.ctx!;
    if (this.taken >= ctx.maxVersions) return false;
    if (ctx.familyFilter !== undefined && !ctx.familyFilter.has(this.family)) return false;
    const q = this.qual!;
    if (ctx.cellMatches !== undefined && !ctx.cellMatches(this.family, q, ts)) return true;
    // NB: values are views into memstore and block buffers: copy, the caller owns them
    // (unless it only borrows them).
    this.cells.push({ family: this.family, qualifier: q, timestamp: ts, value: ctx.borrowValues ? value : value.slice() });
    this.taken++;
    return true;
  }
}

function coveredBy(ms: Marker[], ts: number, seq: number): boolean {
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    if (m.ts >= ts && m.seq > seq) return true;
  }
  return false;
}

/** The column's surviving versions, newest timestamp first (before TTL). */
export function resolveColumn(col: ColEntry[], rowMarkers: Marker[], famMarkers: Marker[], maxVersions: number): ColEntry[] {
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

const assembler = new RowAssembler();

/**
 * Reads the row at the iterator's position into the cells a reader sees (possibly none)
 * and advances to the next row; `key` is a copy of the row key.
 */
export function readRow(it: InternalIterator, ctx: RowReadContext): { key: Uint8Array; cells: Cell[] } {
  return assembler.readRow(it, ctx);
}

/**
 * Major-compaction view of a row: calls `emit`, in internal-key order, with the internal
 * key and value of every surviving, unexpired version among the entries with seq <=
 * keepSeq, whose markers it drops, and of every entry above keepSeq as it is (a read at a
 * snapshot >= keepSeq sees the same row from the output as from the input). Requires that
 * the iterator covers ALL data of the row older than the markers it drops (a major
 * compaction over every file of the region) and that no read uses a snapshot below keepSeq.
 */
export function compactRow(
  it: InternalIterator, keepSeq: number, nowMs: number, families: ReadonlyMap<string, FamilyRule>,
  emit: (key: Uint8Array, value: Uint8Array) => void,
): void {
  assembler.compactRow(it, keepSeq, nowMs, families, emit);
}
