/**
 * The change log: how servers sharing one store keep their caches coherent
 * (tsdb/SCHEMA.md "Change log", docs/SCALING.md "Many TSDs on one table").
 *
 * Every change another server's caches may hold an old answer to — series recorded in the
 * index, a UID renamed, data rows deleted, points written (the newest points and hours
 * /api/query/last keeps) — is appended, once it is durable and before it is acknowledged,
 * as one entry: the sequence counter is incremented (the store's atomic
 * `increment`) and the entry is written under that number. For series recorded and
 * renames the number is taken before the change is made (reserve, announce). Each server polls the log
 * (ChangeFeed.poll, every FEED_POLL_MS): one read of the counter, and when it moved, one
 * scan of the entries after the last one read, in number order; its own entries are skipped.
 *
 * An entry missing under a number the counter already handed out is being written (the
 * writer incremented and has not put it yet: a stalled writer) or never will be (the
 * writer died in between, or the entry expired with the family's TTL). The feed does not
 * wait for it: it applies the entries after it meanwhile, and reads the missing number
 * again at each poll, applying its entry when it appears; after GAP_WAIT_MS without one it
 * applies `unknown` (assume anything changed). Every change is an invalidation (drop or
 * move on a cached answer), so applying them out of order ends in the same state. A
 * stalled writer thus delays no other writer's entries, and its own change is not
 * acknowledged before its entry is written. A change is durable before its entry is
 * written, and no later than GAP_WAIT_MS / 2 after its number was taken (else it is
 * appended again: announce), so a server that reads the store after applying `unknown`
 * sees it.
 *
 * Only stores with several writers need it (capabilities.singleWriter false): on the
 * embedded store this process makes every change itself.
 */
import { compareBytes, concatByteList, fromUtf8, utf8 } from '../../core/api/bytes.js';
import type { Table, TableSpec } from '../../core/api/store.js';
import type { UidKind } from '../uid/uid-kind.js';

export const CHANGES_TABLE = 'tsdb-changes';
/** Entries (with a TTL: the log only needs to outlive a slow poll). */
export const CHANGE_FAMILY = 'c';
/** The sequence counter (no TTL). */
export const SEQUENCE_FAMILY = 'n';
export const CHANGE_QUALIFIER = Uint8Array.of(0x65); // 'e'
export const SEQUENCE_ROW = utf8('seq');
/** How long entries are kept. */
export const CHANGE_TTL_MS = 24 * 3600_000;
/** How often a server reads the log. */
export const FEED_POLL_MS = 250;
/** How long a missing entry is looked for (while later ones are applied) before the feed assumes anything changed. */
export const GAP_WAIT_MS = 5_000;
/** How soon a failed points-written append is tried again. */
export const WRITTEN_RETRY_MS = 1_000;
/** A series entry lists at most this many TSUIDs; a bigger batch is logged by its metrics. */
export const MAX_LISTED_TSUIDS = 4096;
/** A points-written entry lists at most this many series; a bigger batch is logged by its metrics. */
export const MAX_LISTED_WRITTEN = 32_768;

export function changesTableSpec(): TableSpec {
  return {
    name: CHANGES_TABLE,
    families: [{ name: CHANGE_FAMILY, maxVersions: 1, ttlMs: CHANGE_TTL_MS }, { name: SEQUENCE_FAMILY, maxVersions: 1 }],
  };
}

export type Change =
  /** Series recorded in the index (TSUIDs). */
  | { readonly kind: 'series'; readonly tsuids: readonly Uint8Array[] }
  /** Series recorded in the index, too many to list: their metrics' UIDs. */
  | { readonly kind: 'metrics'; readonly metricUids: readonly Uint8Array[] }
  /** A UID renamed: `from` no longer names `id`, `to` does. */
  | { readonly kind: 'rename'; readonly uidKind: UidKind; readonly id: Uint8Array; readonly from: string; readonly to: string }
  /** Data rows of these series deleted. */
  | { readonly kind: 'delete'; readonly tsuids: readonly Uint8Array[] }
  /** Points written: each series (TSUID) with the newest base hour (epoch s) written into. */
  | { readonly kind: 'written'; readonly series: readonly Written[] }
  /** Points written, too many series to list: each metric (UID) with the newest base hour written into. */
  | { readonly kind: 'writtenMetrics'; readonly metrics: readonly Written[] }
  /**
   * A step of an index cleanup pass (meta/index-cleanup.ts): 1, these series are being
   * removed (their index rows are marked); 2, these UIDs are being deleted; 3, the pass
   * ended: these series were removed and these UIDs deleted (the others of step 2 stay).
   */
  | { readonly kind: 'cleanup'; readonly step: CleanupStep; readonly pass: bigint; readonly tsuids: readonly Uint8Array[]; readonly uids: Readonly<Record<UidKind, readonly Uint8Array[]>> }
  /** An entry that could not be read: anything may have changed. */
  | { readonly kind: 'unknown' };

export type CleanupStep = 1 | 2 | 3;

/** An id (TSUID or metric UID) and a base hour, epoch s. */
export type Written = readonly [Uint8Array, number];

const TAG = { series: 0x73, metrics: 0x6d, rename: 0x72, delete: 0x64, written: 0x77, writtenMetrics: 0x57, cleanup: 0x78 } as const; // 's' 'm' 'r' 'd' 'w' 'W' 'x'
const UID_TAG: Record<UidKind, number> = { metric: 0x6d, tagk: 0x6b, tagv: 0x76 }; // 'm' 'k' 'v'
export const WRITER_ID_BYTES = 8;

/** An entry's value: tag, writer id, payload (tsdb/SCHEMA.md "Change log"). */
export function encodeChange(writer: Uint8Array, c: Exclude<Change, { kind: 'unknown' }>): Uint8Array {
  const parts: Uint8Array[] = [Uint8Array.of(TAG[c.kind]), writer];
  const u16 = (n: number): Uint8Array => Uint8Array.of(n >>> 8, n & 0xff);
  const u32 = (n: number): Uint8Array => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  const bytes = (b: Uint8Array): void => {
    parts.push(u16(b.length), b);
  };
  if (c.kind === 'cleanup') {
    const pass = new Uint8Array(8);
    new DataView(pass.buffer).setBigUint64(0, c.pass);
    parts.push(Uint8Array.of(c.step), pass);
    for (const list of [c.tsuids, c.uids.metric, c.uids.tagk, c.uids.tagv]) {
      parts.push(u32(list.length));
      for (const b of list) bytes(b);
    }
  } else if (c.kind === 'written' || c.kind === 'writtenMetrics') {
    const list = c.kind === 'written' ? c.series : c.metrics;
    parts.push(u32(list.length));
    for (const [id, hour] of list) parts.push(u16(id.length), id, u32(hour));
  } else if (c.kind === 'rename') {
    parts.push(Uint8Array.of(UID_TAG[c.uidKind]));
    bytes(c.id);
    bytes(utf8(c.from));
    bytes(utf8(c.to));
  } else {
    const list = c.kind === 'metrics' ? c.metricUids : c.tsuids;
    parts.push(u32(list.length));
    for (const b of list) bytes(b);
  }
  return concatByteList(parts);
}

/** The writer and change of an entry's value; undefined when it is not one. */
export function decodeChange(v: Uint8Array): { writer: Uint8Array; change: Change } | undefined {
  if (v.length < 1 + WRITER_ID_BYTES) return undefined;
  let o = 1 + WRITER_ID_BYTES;
  const writer = v.subarray(1, o);
  const bytes = (): Uint8Array => {
    if (o + 2 > v.length) throw new RangeError('short');
    const n = (v[o]! << 8) | v[o + 1]!;
    if (o + 2 + n > v.length) throw new RangeError('short');
    const b = v.slice(o + 2, o + 2 + n);
    o += 2 + n;
    return b;
  };
  try {
    const tag = v[0];
    if (tag === TAG.rename) {
      const k = v[o++];
      const uidKind = (Object.keys(UID_TAG) as UidKind[]).find((x) => UID_TAG[x] === k);
      if (uidKind === undefined) return undefined;
      const id = bytes();
      return { writer, change: { kind: 'rename', uidKind, id, from: fromUtf8(bytes()), to: fromUtf8(bytes()) } };
    }
    const u32 = (): number => {
      if (o + 4 > v.length) throw new RangeError('short');
      const n = ((v[o]! << 24) | (v[o + 1]! << 16) | (v[o + 2]! << 8) | v[o + 3]!) >>> 0;
      o += 4;
      return n;
    };
    const byteList = (): Uint8Array[] => {
      const out: Uint8Array[] = [];
      for (let i = u32(); i > 0; i--) out.push(bytes());
      return out;
    };
    if (tag === TAG.cleanup) {
      const step = v[o++];
      if (step !== 1 && step !== 2 && step !== 3) return undefined;
      if (o + 8 > v.length) return undefined;
      const pass = new DataView(v.buffer, v.byteOffset + o, 8).getBigUint64(0);
      o += 8;
      const tsuids = byteList();
      return { writer, change: { kind: 'cleanup', step, pass, tsuids, uids: { metric: byteList(), tagk: byteList(), tagv: byteList() } } };
    }
    if (tag === TAG.written || tag === TAG.writtenMetrics) {
      const count = u32();
      const list: Written[] = [];
      for (let i = 0; i < count; i++) {
        const id = bytes();
        list.push([id, u32()]);
      }
      return { writer, change: tag === TAG.written ? { kind: 'written', series: list } : { kind: 'writtenMetrics', metrics: list } };
    }
    if (tag !== TAG.series && tag !== TAG.metrics && tag !== TAG.delete) return undefined;
    const count = u32();
    const list: Uint8Array[] = [];
    for (let i = 0; i < count; i++) list.push(bytes());
    if (tag === TAG.metrics) return { writer, change: { kind: 'metrics', metricUids: list } };
    return { writer, change: { kind: tag === TAG.series ? 'series' : 'delete', tsuids: list } };
  } catch {
    return undefined;
  }
}

/** A number taken for an entry (ChangeLog.reserve), and when (elapsed ms). */
export interface Reservation {
  readonly seq: bigint;
  readonly at: number;
}

/** The row key of entry `seq`: 8 bytes big-endian. */
export function changeKey(seq: bigint): Uint8Array {
  const k = new Uint8Array(8);
  new DataView(k.buffer).setBigUint64(0, seq);
  return k;
}

const SYNC = { durability: 'sync' } as const;

/** Appending to and reading the log of one store (one per Tsdb). */
export class ChangeLog {
  readonly table: Table;
  /** This process's id in the entries it writes (random). */
  readonly writer: Uint8Array;
  private readonly metricWidth: number;
  private appended = 0;
  /** Points written, waiting for the next points-written entry (TSUID as latin1 → newest base hour). */
  private pendingWritten = new Map<string, number>();
  private writtenWaiters: Array<{ resolve(): void; reject(err: unknown): void }> = [];
  private writtenAppending = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Elapsed time in ms (monotonic), for reservations. */
  private readonly elapsed: () => number;

  constructor(table: Table, writer: Uint8Array, metricWidth: number, elapsed: () => number = () => performance.now()) {
    this.table = table;
    this.writer = writer;
    this.metricWidth = metricWidth;
    this.elapsed = elapsed;
  }

  /** Appends a change already durable; new series of many metrics become a `metrics` entry. */
  async append(c: Exclude<Change, { kind: 'unknown' }>): Promise<void> {
    await this.write((await this.reserve()).seq, c);
  }

  /**
   * Takes the number of the entry of a change about to be made durable (announce() writes
   * it, abandon() fills it when the change failed). A writer that dies after this leaves a
   * number without an entry, which every reader takes for "anything changed" after
   * GAP_WAIT_MS: so a change made durable by a server that died before announcing it still
   * reaches every cache.
   */
  async reserve(): Promise<Reservation> {
    const seq = await this.table.increment(SEQUENCE_ROW, { family: SEQUENCE_FAMILY, qualifier: CHANGE_QUALIFIER }, 1n, SYNC);
    return { seq, at: this.elapsed() };
  }

  /**
   * Writes the entry of a reserved number, its change now durable. A change made durable
   * more than GAP_WAIT_MS / 2 after its number was taken is appended once more under a new
   * number: a reader that gave up on the first one (GAP_WAIT_MS after it first missed it)
   * may have read the store before the change was in it.
   */
  async announce(r: Reservation, c: Exclude<Change, { kind: 'unknown' }>): Promise<void> {
    const late = this.elapsed() - r.at > GAP_WAIT_MS / 2;
    await this.write(r.seq, c);
    if (late) await this.append(c);
  }

  /** Fills a reserved number whose change was not made with an entry that changes nothing (best effort). */
  async abandon(r: Reservation): Promise<void> {
    await this.write(r.seq, { kind: 'series', tsuids: [] }).catch(() => undefined);
  }

  private async write(seq: bigint, c: Exclude<Change, { kind: 'unknown' }>): Promise<void> {
    let change = c;
    if (c.kind === 'series' && c.tsuids.length > MAX_LISTED_TSUIDS) change = { kind: 'metrics', metricUids: metricsOf(c.tsuids, this.metricWidth) };
    await this.table.mutate([{ key: changeKey(seq), mutations: [{ type: 'put', family: CHANGE_FAMILY, qualifier: CHANGE_QUALIFIER, value: encodeChange(this.writer, change) }] }], SYNC);
    this.appended++;
  }

  /**
   * Appends that points of these series (TSUID as latin1 → the newest base hour written,
   * epoch s) are stored; resolves once an entry holding them is durable. One such append
   * is in flight at a time: what comes meanwhile waits and goes in the next entry, so a
   * writer adds at most two calls per round trip of them, whatever its write rate.
   */
  appendWritten(series: Iterable<readonly [string, number]>): Promise<void> {
    const pending = this.pendingWritten;
    for (const [k, hour] of series) {
      const had = pending.get(k);
      if (had === undefined || hour > had) pending.set(k, hour);
    }
    const done = new Promise<void>((resolve, reject) => this.writtenWaiters.push({ resolve, reject }));
    if (!this.writtenAppending) void this.drainWritten();
    return done;
  }

  private async drainWritten(): Promise<void> {
    this.writtenAppending = true;
    while (this.writtenWaiters.length > 0) {
      const batch = this.pendingWritten;
      const waiters = this.writtenWaiters;
      this.pendingWritten = new Map();
      this.writtenWaiters = [];
      try {
        if (batch.size > 0) await this.append(writtenChange(batch, this.metricWidth));
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err);
        this.requeueWritten(batch);
      }
    }
    this.writtenAppending = false;
  }

  /**
   * A points-written append failed: its writes are not acknowledged, but may be stored, so
   * they go in the next entry, which is tried again within WRITTEN_RETRY_MS if no write
   * comes meanwhile (until close()).
   */
  private requeueWritten(batch: ReadonlyMap<string, number>): void {
    if (this.closed) return;
    for (const [k, hour] of batch) {
      const had = this.pendingWritten.get(k);
      if (had === undefined || hour > had) this.pendingWritten.set(k, hour);
    }
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.pendingWritten.size > 0) this.appendWritten([]).catch(() => undefined);
    }, WRITTEN_RETRY_MS);
    this.retryTimer.unref();
  }

  /** Stops retrying failed points-written appends. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Entries appended by this process. */
  get appendedCount(): number {
    return this.appended;
  }

  /** The last number handed out (0 for an empty log). */
  async head(): Promise<bigint> {
    const [row] = await this.table.get([SEQUENCE_ROW], { families: [SEQUENCE_FAMILY] });
    const v = row?.cells.find((c) => compareBytes(c.qualifier, CHANGE_QUALIFIER) === 0)?.value;
    return v === undefined || v.length !== 8 ? 0n : new DataView(v.buffer, v.byteOffset, 8).getBigInt64(0);
  }

  /** The entries numbered after..upTo that are there, by number. */
  async entries(after: bigint, upTo: bigint): Promise<Map<bigint, Uint8Array>> {
    const out = new Map<bigint, Uint8Array>();
    for await (const rows of this.table.scan({ start: changeKey(after + 1n), end: changeKey(upTo + 1n), families: [CHANGE_FAMILY] })) {
      for (const r of rows) {
        if (r.key.length !== 8) continue;
        const cell = r.cells.find((c) => compareBytes(c.qualifier, CHANGE_QUALIFIER) === 0);
        if (cell !== undefined) out.set(new DataView(r.key.buffer, r.key.byteOffset, 8).getBigUint64(0), cell.value);
      }
    }
    return out;
  }
}

/** The points-written entry of a batch: by series, or past MAX_LISTED_WRITTEN by metric. */
function writtenChange(batch: ReadonlyMap<string, number>, metricWidth: number): Exclude<Change, { kind: 'unknown' }> {
  if (batch.size <= MAX_LISTED_WRITTEN) return { kind: 'written', series: [...batch].map(([k, hour]): Written => [Buffer.from(k, 'latin1'), hour]) };
  const byMetric = new Map<string, number>();
  for (const [k, hour] of batch) {
    const m = k.slice(0, metricWidth);
    const had = byMetric.get(m);
    if (had === undefined || hour > had) byMetric.set(m, hour);
  }
  return { kind: 'writtenMetrics', metrics: [...byMetric].map(([m, hour]): Written => [Buffer.from(m, 'latin1'), hour]) };
}

/** The distinct metric UIDs of TSUIDs (the metric width is the TSUID's first field). */
function metricsOf(tsuids: readonly Uint8Array[], width: number): Uint8Array[] {
  const seen = new Map<string, Uint8Array>();
  for (const t of tsuids) {
    const m = t.subarray(0, width);
    seen.set(Buffer.from(m).toString('latin1'), m.slice());
  }
  return [...seen.values()];
}

export interface ChangeFeedStats {
  readonly applied: number;
  readonly unknown: number;
  readonly polls: number;
  readonly errors: number;
  readonly lastError?: string;
}

/**
 * Reads the log in order and hands every other writer's change to `apply`. start() skips
 * what was logged before (the caches start empty); poll() applies what came since.
 */
export class ChangeFeed {
  private readonly log: ChangeLog;
  private readonly apply: (c: Change) => void;
  private readonly now: () => number;
  /** The last number read past (every entry up to it applied, or missing and in `gaps`). */
  private at = 0n;
  /** Numbers handed out whose entry was not there yet → when that was first seen (ms), by number. */
  private readonly gaps = new Map<bigint, number>();
  private appliedCount = 0;
  private unknownCount = 0;
  private polls = 0;
  private errors = 0;
  private lastError: string | undefined;
  private polling: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(log: ChangeLog, apply: (c: Change) => void, now: () => number = Date.now) {
    this.log = log;
    this.apply = apply;
    this.now = now;
  }

  /** Starts after the log's current end; with `everyMs`, polls on a timer until stop(). */
  async start(everyMs?: number): Promise<void> {
    this.at = await this.log.head();
    if (everyMs === undefined) return;
    const tick = (): void => {
      this.timer = setTimeout(() => void this.poll().finally(() => {
        if (this.timer !== undefined) tick();
      }), everyMs);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /** Applies the entries logged since the last poll (one at a time: concurrent calls share it). */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().catch((err: unknown) => {
      this.errors++;
      this.lastError = err instanceof Error ? err.message : String(err);
    }).finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  stats(): ChangeFeedStats {
    return { applied: this.appliedCount, unknown: this.unknownCount, polls: this.polls, errors: this.errors, ...(this.lastError === undefined ? {} : { lastError: this.lastError }) };
  }

  private async pollOnce(): Promise<void> {
    this.polls++;
    const head = await this.log.head();
    if (head <= this.at && this.gaps.size === 0) return;
    // One scan covers the numbers still missing and the new ones.
    const first = this.gaps.keys().next();
    const from = first.done === true ? this.at : first.value - 1n;
    const upTo = head > this.at ? head : this.at;
    const entries = await this.log.entries(from, upTo);
    const now = this.now();
    for (const [seq, since] of this.gaps) {
      const v = entries.get(seq);
      if (v !== undefined) this.applyEntry(v);
      else if (now - since < GAP_WAIT_MS) continue;
      else {
        this.unknownCount++;
        this.apply({ kind: 'unknown' });
      }
      this.gaps.delete(seq);
    }
    for (let seq = this.at + 1n; seq <= head; seq++) {
      const v = entries.get(seq);
      if (v === undefined) this.gaps.set(seq, now);
      else this.applyEntry(v);
    }
    if (head > this.at) this.at = head;
  }

  private applyEntry(v: Uint8Array): void {
    const d = decodeChange(v);
    if (d === undefined) {
      this.unknownCount++;
      this.apply({ kind: 'unknown' });
    } else if (compareBytes(d.writer, this.log.writer) !== 0) {
      this.appliedCount++;
      this.apply(d.change);
    }
  }
}
