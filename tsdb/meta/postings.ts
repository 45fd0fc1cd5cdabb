/**
 * The series postings (tsdb/SCHEMA.md "Series postings"): the inverted index of the series
 * index. For each series and tag pair one posting row `70 [metric][tagk][tagv][pairs]`,
 * for each tag value of a metric one value row `76 [metric][tagk][tagv]`, so the series of
 * a metric that hold a tag value are one prefix scan, in TSUID order, and the values of a
 * tag key within a metric another. A tag-filtered query reads the postings of its filtered
 * values (search()) instead of the metric's whole series list (Prometheus' postings,
 * VictoriaMetrics' indexdb).
 */
import { compareBytes, latin1, prefixEnd } from '../../core/api/bytes.js';
import type { Durability, RowMutation, Table, TableSpec } from '../../core/api/store.js';
import type { SchemaWidths } from '../schema/widths.js';

export const POSTINGS_TABLE = 'tsdb-postings';
export const POSTINGS_FAMILY = 'p';
/** The qualifier of every postings cell (`p`); the values are empty but the built row's. */
export const POSTINGS_QUALIFIER = Uint8Array.from([0x70]);
export const KIND_POSTING = 0x70; // 'p'
export const KIND_VALUE = 0x76; // 'v'
/** Row key of the built row: the postings cover every series of the series index. */
export const BUILT_KEY = Uint8Array.from([0x62]); // 'b'
export const BUILT_VERSION = 1;

/** Series per write of a build (Postings.build). */
const BUILD_BATCH = 1024;
/** A clause of more values than this scans its tag key's postings once instead of one scan per value. */
const MAX_VALUE_SCANS = 64;
const EMPTY = new Uint8Array(0);

export function postingsTableSpec(): TableSpec {
  return { name: POSTINGS_TABLE, families: [{ name: POSTINGS_FAMILY, maxVersions: 1 }] };
}

type Widths = Pick<SchemaWidths, 'metric' | 'tagk' | 'tagv'>;

/** `kind` followed by the parts. */
function keyOf(kind: number, ...parts: Uint8Array[]): Uint8Array {
  let n = 1;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  out[0] = kind;
  let o = 1;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** The posting row key of `tsuid` for its pair at byte offset `at` (a pair boundary). */
export function postingKey(w: Widths, tsuid: Uint8Array, at: number): Uint8Array {
  const pw = w.tagk + w.tagv;
  return keyOf(KIND_POSTING, tsuid.subarray(0, w.metric), tsuid.subarray(at, at + pw), tsuid.subarray(w.metric));
}

/** The value row key of the pair at byte offset `at` of `tsuid`. */
export function valueKey(w: Widths, tsuid: Uint8Array, at: number): Uint8Array {
  return keyOf(KIND_VALUE, tsuid.subarray(0, w.metric), tsuid.subarray(at, at + w.tagk + w.tagv));
}

/** The prefix of a metric's postings: of a tag key, and of one of its values when given. */
export function postingPrefix(metric: Uint8Array, tagk?: Uint8Array, tagv?: Uint8Array): Uint8Array {
  return keyOf(KIND_POSTING, metric, ...(tagk === undefined ? [] : [tagk]), ...(tagv === undefined ? [] : [tagv]));
}

export interface DecodedPosting {
  readonly metric: Uint8Array;
  readonly tagk: Uint8Array;
  readonly tagv: Uint8Array;
  readonly tsuid: Uint8Array;
}

/** A posting row key's fields; undefined when it is not one (tsdb/SCHEMA.md reader rule). */
export function decodePostingKey(w: Widths, key: Uint8Array): DecodedPosting | undefined {
  const pw = w.tagk + w.tagv;
  const head = 1 + w.metric + pw;
  if (key[0] !== KIND_POSTING || key.length < head + pw || (key.length - head) % pw !== 0) return undefined;
  const metric = key.subarray(1, 1 + w.metric);
  const tsuid = new Uint8Array(w.metric + key.length - head);
  tsuid.set(metric);
  tsuid.set(key.subarray(head), w.metric);
  return { metric, tagk: key.subarray(1 + w.metric, 1 + w.metric + w.tagk), tagv: key.subarray(1 + w.metric + w.tagk, head), tsuid };
}

/**
 * The posting and value rows of the series (a value row once per batch). Every key is a
 * view of one buffer: a batch of new series makes ~11 rows each, and a backing store per
 * key cost more than writing them (bench:cardinality profile).
 */
export function postingRows(w: Widths, tsuids: readonly Uint8Array[]): RowMutation[] {
  const pw = w.tagk + w.tagv;
  const m = w.metric;
  let size = 0;
  for (const t of tsuids) {
    const pairs = Math.floor((t.length - m) / pw);
    size += pairs * (1 + m + pw + (t.length - m) + 1 + m + pw);
  }
  const buf = new Uint8Array(size);
  let o = 0;
  const rows: RowMutation[] = [];
  const values = new Set<string>();
  const put = [{ type: 'put' as const, family: POSTINGS_FAMILY, qualifier: POSTINGS_QUALIFIER, value: EMPTY }];
  for (const t of tsuids) {
    const tags = t.subarray(m);
    for (let at = m; at + pw <= t.length; at += pw) {
      // 70 [metric][pair][tags]: postingKey
      const start = o;
      buf[o++] = KIND_POSTING;
      for (let i = 0; i < m; i++) buf[o++] = t[i]!;
      for (let i = at; i < at + pw; i++) buf[o++] = t[i]!;
      buf.set(tags, o);
      o += tags.length;
      rows.push({ key: buf.subarray(start, o), mutations: put });
      // 76 [metric][pair]: valueKey, once per batch
      let id = String.fromCharCode(t[0]!);
      for (let i = 1; i < m; i++) id += String.fromCharCode(t[i]!);
      for (let i = at; i < at + pw; i++) id += String.fromCharCode(t[i]!);
      if (values.has(id)) continue;
      values.add(id);
      const vStart = o;
      buf[o++] = KIND_VALUE;
      for (let i = 0; i < m; i++) buf[o++] = t[i]!;
      for (let i = at; i < at + pw; i++) buf[o++] = t[i]!;
      rows.push({ key: buf.subarray(vStart, o), mutations: put });
    }
  }
  return rows;
}

/**
 * One filtered tag key of a search: series holding `tagk` with one of `values` (sorted
 * or not), or with any value when `values` is undefined.
 */
export interface PostingClause {
  readonly tagk: Uint8Array;
  readonly values: readonly Uint8Array[] | undefined;
}

export class Postings {
  readonly table: Table;
  private readonly w: Widths;
  /** Postings rows read by searches (for tests and /api/stats). */
  postingsRead = 0;

  constructor(table: Table, widths: Widths) {
    this.table = table;
    this.w = widths;
  }

  /**
   * Writes the posting and value rows of the series, synced unless `durability` says
   * 'buffered' (the caller's next write is synced, and makes them durable with it).
   */
  async write(tsuids: readonly Uint8Array[], durability: Durability = 'sync'): Promise<void> {
    const rows = postingRows(this.w, tsuids);
    if (rows.length > 0) await this.table.mutate(rows, { durability });
  }

  /** Removes the postings of these series; with `tsuids` undefined, every row of the metric. */
  async remove(metric: Uint8Array, tsuids?: readonly Uint8Array[]): Promise<void> {
    if (tsuids === undefined) {
      for (const kind of [KIND_POSTING, KIND_VALUE]) {
        const p = keyOf(kind, metric);
        await this.table.deleteRange({ start: p, end: prefixEnd(p) });
      }
      return;
    }
    const pw = this.w.tagk + this.w.tagv;
    const rows: RowMutation[] = [];
    for (const t of tsuids) for (let at = this.w.metric; at + pw <= t.length; at += pw) rows.push({ key: postingKey(this.w, t, at), mutations: [{ type: 'deleteRow' }] });
    if (rows.length > 0) await this.table.mutate(rows, { durability: 'sync' });
  }

  /** True when the built row is there (tsdb/SCHEMA.md "Series postings"). */
  async built(): Promise<boolean> {
    const [row] = await this.table.get([BUILT_KEY], { families: [POSTINGS_FAMILY] });
    return row !== undefined;
  }

  /**
   * Writes the postings of every series of the series index (`meta`, scanned in order, in
   * batches), then the built row; nothing when it is there. Returns the series covered.
   */
  async build(meta: Table, metaFamily: string): Promise<number> {
    if (await this.built()) return 0;
    let n = 0;
    let batch: Uint8Array[] = [];
    for await (const rows of meta.scan({ families: [metaFamily], batchRows: BUILD_BATCH })) {
      for (const r of rows) batch.push(r.key);
      if (batch.length >= BUILD_BATCH) {
        await this.write(batch);
        n += batch.length;
        batch = [];
      }
    }
    await this.write(batch);
    n += batch.length;
    const cell = { type: 'put' as const, family: POSTINGS_FAMILY, qualifier: POSTINGS_QUALIFIER, value: Uint8Array.from([BUILT_VERSION]) };
    await this.table.mutate([{ key: BUILT_KEY, mutations: [cell] }], { durability: 'sync' });
    return n;
  }

  /** The tag values of `tagk` that series of `metric` carried (value rows), sorted. */
  async tagValues(metric: Uint8Array, tagk: Uint8Array, signal?: AbortSignal): Promise<Uint8Array[]> {
    const p = keyOf(KIND_VALUE, metric, tagk);
    const out: Uint8Array[] = [];
    for await (const rows of this.table.scan({ start: p, end: prefixEnd(p), families: [POSTINGS_FAMILY], ...(signal === undefined ? {} : { signal }) })) {
      for (const r of rows) if (r.key.length === p.length + this.w.tagv) out.push(r.key.subarray(p.length));
    }
    return out;
  }

  /**
   * The tag pairs (tagk, tagv) series of `metric` carry: its value rows whose postings
   * are not empty (a value row may outlive its series), sorted by tagk then tagv.
   */
  async pairs(metric: Uint8Array, signal?: AbortSignal): Promise<Array<{ tagk: Uint8Array; tagv: Uint8Array }>> {
    const p = keyOf(KIND_VALUE, metric);
    const found: Array<{ tagk: Uint8Array; tagv: Uint8Array }> = [];
    for await (const rows of this.table.scan({ start: p, end: prefixEnd(p), families: [POSTINGS_FAMILY], ...(signal === undefined ? {} : { signal }) })) {
      for (const r of rows) {
        if (r.key.length !== p.length + this.w.tagk + this.w.tagv) continue;
        found.push({ tagk: r.key.subarray(p.length, p.length + this.w.tagk), tagv: r.key.subarray(p.length + this.w.tagk) });
      }
    }
    const held = await Promise.all(found.map(async (x) => {
      const q = postingPrefix(metric, x.tagk, x.tagv);
      for await (const rows of this.table.scan({ start: q, end: prefixEnd(q), families: [POSTINGS_FAMILY], limit: 1, batchRows: 1 })) if (rows.length > 0) return true;
      return false;
    }));
    return found.filter((_, i) => held[i]);
  }

  /**
   * Series of `metric` in every clause (holding each clause's tag key with one of its
   * values) that `test` accepts, sorted, at most `limit` (when cut: `limit` of them, not
   * necessarily the first). The clauses' postings are read side by side a batch at a
   * time and each TSUID read is tested against every clause (its pairs are in it): the
   * first clause read to its end gives the whole answer, and `limit` matches found in one
   * clause end the search, so a search reads about clauses × the shortest clause.
   * REQUIRES clauses.length ≥ 1.
   */
  async search(metric: Uint8Array, clauses: readonly PostingClause[], limit: number,
    test?: (tsuid: Uint8Array) => boolean, signal?: AbortSignal): Promise<Uint8Array[]> {
    const accept = clauseTest(this.w, clauses, test);
    const cursors = clauses.map((c) => this.cursor(metric, c, signal));
    const found = clauses.map((): Uint8Array[] => []);
    try {
      for (;;) {
        for (let i = 0; i < cursors.length; i++) {
          const next = await cursors[i]!.next();
          if (next.done === true) return found[i]!.sort(compareBytes).slice(0, limit);
          const f = found[i]!;
          for (const t of next.value) if (accept(t)) f.push(t);
          if (f.length >= limit) return f.sort(compareBytes).slice(0, limit);
        }
      }
    } finally {
      for (const c of cursors) await c.return(undefined);
    }
  }

  /** The TSUIDs of a clause's postings, a batch at a time (values in sequence). */
  private async *cursor(metric: Uint8Array, c: PostingClause, signal?: AbortSignal): AsyncGenerator<Uint8Array[], void, undefined> {
    const scans: Array<{ prefix: Uint8Array; values?: ReadonlySet<string> }> = [];
    if (c.values === undefined) scans.push({ prefix: postingPrefix(metric, c.tagk) });
    else if (c.values.length > MAX_VALUE_SCANS) scans.push({ prefix: postingPrefix(metric, c.tagk), values: new Set(c.values.map(latin1)) });
    else for (const v of new Map(c.values.map((x) => [latin1(x), x])).values()) scans.push({ prefix: postingPrefix(metric, c.tagk, v) }); // a value given twice is read once
    const vAt = 1 + this.w.metric + this.w.tagk;
    for (const s of scans) {
      for await (const rows of this.table.scan({ start: s.prefix, end: prefixEnd(s.prefix), families: [POSTINGS_FAMILY], ...(signal === undefined ? {} : { signal }) })) {
        const out: Uint8Array[] = [];
        this.postingsRead += rows.length;
        for (const r of rows) {
          if (s.values !== undefined && !s.values.has(latin1(r.key.subarray(vAt, vAt + this.w.tagv)))) continue;
          const d = decodePostingKey(this.w, r.key);
          if (d !== undefined) out.push(d.tsuid);
        }
        yield out;
      }
    }
  }
}

/** A test of a TSUID against every clause (and `test`): a pair of each clause's tag key with one of its values. */
function clauseTest(w: Widths, clauses: readonly PostingClause[], test?: (tsuid: Uint8Array) => boolean): (tsuid: Uint8Array) => boolean {
  const pw = w.tagk + w.tagv;
  const checks = clauses.map((c) => ({ tagk: latin1(c.tagk), values: c.values === undefined ? undefined : new Set(c.values.map(latin1)) }));
  return (t) => {
    for (const c of checks) {
      let ok = false;
      for (let at = w.metric; at + pw <= t.length; at += pw) {
        if (latin1(t.subarray(at, at + w.tagk)) !== c.tagk) continue;
        ok = c.values === undefined || c.values.has(latin1(t.subarray(at + w.tagk, at + pw)));
        break;
      }
      if (!ok) return false;
    }
    return test === undefined || test(t);
  };
}
