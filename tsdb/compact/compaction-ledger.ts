/**
 * The compaction ledger: where servers share a store without row transforms (Bigtable),
 * which (metric, hour) pairs each server still owes hour compaction, kept in the store so
 * that a server that dies or stops leaves its debt to a live one (tsdb/SCHEMA.md
 * "Compaction ledger", docs/SCALING.md "Hour compaction").
 *
 * A server lists a pair before it writes the first row of it (covered(): the write path
 * waits for it, one mutate per new pair set, about once an hour per server) and keeps it
 * listed while a row of the pair waits in its dirty set (hour-compactor.ts), or while it
 * owes the pair's whole key range (taken over from another server, or rows past a full
 * dirty set). Every LEDGER_BEAT_MS a server with debt rewrites its beat cell (its clock)
 * and reads the others' cells: a server whose beat is older than LEDGER_LEASE_MS, or that
 * stopped, is taken over — one check-and-put, applied only while its beat cell is as read,
 * moves its pairs into the taker's debt cell and deletes its cells. The taker compacts
 * each pair's key range in every salt bucket once the hour is due
 * (HourCompactor.compactRange), then drops the pair. So every row any server wrote is
 * compacted by its writer, or by a live server within LEDGER_LEASE_MS + LEDGER_BEAT_MS of
 * its writer's last beat (once its hour is due), with no sweep of the table. A server with
 * no debt has no cells.
 */
import { compareBytes, latin1, utf8 } from '../../core/api/bytes.js';
import type { Cell, Mutation, Table } from '../../core/api/store.js';

/** The ledger row, in the change-log table's family `n` (no TTL), beside the retention claims. */
export const LEDGER_ROW = utf8('compaction');
export const LEDGER_FAMILY = 'n';
/** Qualifier suffixes after a server's 8-byte id: its beat and its debt. */
const BEAT = 0x62; // 'b'
const DEBT = 0x64; // 'd'
/** Qualifier of the cell saying the table needs no start sweep (written after the first). */
export const SWEPT_QUALIFIER = utf8('swept');
/** How often a server with debt beats and looks for servers to take over. */
export const LEDGER_BEAT_MS = 5_000;
/** A beat older than this: its server is taken for dead and its debt taken over. */
export const LEDGER_LEASE_MS = 15_000;
const STOPPED = 1;

/** A pair: a metric UID and a base hour (epoch s). */
export interface Pair {
  readonly metric: Uint8Array;
  readonly hour: number;
}

/** A beat cell's value: `<u64 ms> <u8 flags>` (bit 0: stopped). */
export function encodeBeat(ms: number, stopped: boolean): Uint8Array {
  const v = new Uint8Array(9);
  new DataView(v.buffer).setBigUint64(0, BigInt(Math.max(0, Math.floor(ms))));
  v[8] = stopped ? STOPPED : 0;
  return v;
}

export function decodeBeat(v: Uint8Array): { ms: number; stopped: boolean } | undefined {
  if (v.length !== 9) return undefined;
  return { ms: Number(new DataView(v.buffer, v.byteOffset, 8).getBigUint64(0)), stopped: (v[8]! & STOPPED) !== 0 };
}

/** A debt cell's value: `<u32 count>`, then per pair the metric UID (`metricWidth` bytes) and `<u32 hour>`. */
export function encodeDebt(pairs: readonly Pair[], metricWidth: number): Uint8Array {
  const v = new Uint8Array(4 + pairs.length * (metricWidth + 4));
  const dv = new DataView(v.buffer);
  dv.setUint32(0, pairs.length);
  let o = 4;
  for (const p of pairs) {
    if (p.metric.length !== metricWidth) throw new Error(`BUG: a metric UID of ${p.metric.length} bytes in the ledger`);
    v.set(p.metric, o);
    dv.setUint32(o + metricWidth, p.hour);
    o += metricWidth + 4;
  }
  return v;
}

export function decodeDebt(v: Uint8Array, metricWidth: number): Pair[] | undefined {
  if (v.length < 4) return undefined;
  const dv = new DataView(v.buffer, v.byteOffset, v.byteLength);
  const n = dv.getUint32(0);
  if (v.length !== 4 + n * (metricWidth + 4)) return undefined;
  const out: Pair[] = [];
  for (let i = 0, o = 4; i < n; i++, o += metricWidth + 4) out.push({ metric: v.slice(o, o + metricWidth), hour: dv.getUint32(o + metricWidth) });
  return out;
}

function pairKey(metric: Uint8Array, hour: number): string {
  return latin1(metric) + String.fromCharCode(hour >>> 16, hour & 0xffff);
}

function qualifierOf(server: Uint8Array, suffix: number): Uint8Array {
  const q = new Uint8Array(server.length + 1);
  q.set(server);
  q[server.length] = suffix;
  return q;
}

export interface LedgerDeps {
  /** The change-log table. */
  readonly table: Table;
  /** This server's id (8 bytes). */
  readonly server: Uint8Array;
  readonly metricWidth: number;
  readonly now: () => number;
}

export interface LedgerStats {
  /** Pairs this server lists now. */
  readonly pairs: number;
  /** Servers whose debt this one took over. */
  readonly takeovers: number;
  readonly writes: number;
  readonly errors: number;
  readonly lastError?: string;
}

/** One server's side of the ledger (one per HourCompactor). */
export class CompactionLedger {
  private readonly deps: LedgerDeps;
  private readonly beatQ: Uint8Array;
  private readonly debtQ: Uint8Array;
  /** Pairs with rows in the dirty set → how many rows. */
  private readonly rows = new Map<string, { pair: Pair; n: number }>();
  /** Pairs whose whole key range this server owes (taken over, or past a full dirty set). */
  private readonly ranges = new Map<string, Pair>();
  /** The pairs of the debt cell last written (undefined: none written). */
  private written: Set<string> | undefined;
  /** Bumped when a pair not in `written` is listed; `writtenVersion`: the version the last write covered. */
  private version = 0;
  private writtenVersion = 0;
  private writing: Promise<void> | undefined;
  private stopped = false;
  private takeovers = 0;
  private writes = 0;
  private errors = 0;
  private lastError: string | undefined;

  constructor(deps: LedgerDeps) {
    this.deps = deps;
    this.beatQ = qualifierOf(deps.server, BEAT);
    this.debtQ = qualifierOf(deps.server, DEBT);
  }

  /** A row of (metric, hour) entered the dirty set. */
  addRow(metric: Uint8Array, hour: number): void {
    const k = pairKey(metric, hour);
    const e = this.rows.get(k);
    if (e !== undefined) e.n++;
    else {
      this.rows.set(k, { pair: { metric: metric.slice(), hour }, n: 1 });
      this.listed(k);
    }
  }

  /** A row of (metric, hour) left the dirty set compacted. */
  removeRow(metric: Uint8Array, hour: number): void {
    const k = pairKey(metric, hour);
    const e = this.rows.get(k);
    if (e !== undefined && --e.n <= 0) this.rows.delete(k);
  }

  /** This server owes the whole key range of (metric, hour). */
  addRange(metric: Uint8Array, hour: number): void {
    const k = pairKey(metric, hour);
    if (this.ranges.has(k)) return;
    this.ranges.set(k, { metric: metric.slice(), hour });
    this.listed(k);
  }

  /** The ranges owed, oldest hour first. */
  dueRanges(): Pair[] {
    return [...this.ranges.values()].sort((a, b) => a.hour - b.hour || compareBytes(a.metric, b.metric));
  }

  /** The range of (metric, hour) was compacted. */
  rangeDone(p: Pair): void {
    this.ranges.delete(pairKey(p.metric, p.hour));
  }

  /** Resolves once the ledger in the store lists every pair listed here so far; undefined when it does. */
  covered(): Promise<void> | undefined {
    if (this.writtenVersion >= this.version) return undefined;
    return this.write(false);
  }

  /** Reads the ledger: true when the start sweep was done (or is not needed) on this store. */
  async swept(): Promise<boolean> {
    const [row] = await this.deps.table.get([LEDGER_ROW], { families: [LEDGER_FAMILY] });
    return row?.cells.some((c) => compareBytes(c.qualifier, SWEPT_QUALIFIER) === 0) === true;
  }

  /** Records that no start sweep is owed on this store any more. */
  async markSwept(): Promise<void> {
    const cell = { family: LEDGER_FAMILY, qualifier: SWEPT_QUALIFIER };
    await this.deps.table.mutate([{ key: LEDGER_ROW, mutations: [{ type: 'put', ...cell, value: Uint8Array.of(1) }] }], { durability: 'sync' });
  }

  /**
   * Beats (where this server has debt, or cells to remove) and takes over every server
   * whose beat is past its lease or that stopped. Errors are counted, not thrown.
   */
  async beat(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.write(false);
      const [row] = await this.deps.table.get([LEDGER_ROW], { families: [LEDGER_FAMILY] });
      if (this.written !== undefined && row?.cells.some((c) => compareBytes(c.qualifier, this.debtQ) === 0) !== true) {
        // Taken over while alive (a stall past the lease, a clock behind): the taker owes
        // what it took, but the pairs listed here since must be listed again.
        this.written = undefined;
        this.version++;
        await this.write(false);
      }
      for (const other of othersOf(row?.cells ?? [], this.deps.server)) {
        const b = decodeBeat(other.beat.value);
        if (b !== undefined && !b.stopped && this.deps.now() - b.ms <= LEDGER_LEASE_MS) continue;
        await this.takeOver(other.beat, other.debt);
      }
    } catch (err) {
      this.errors++;
      this.lastError = (err as Error).message;
    }
  }

  /** The last beat says `stopped`: the others take this server's debt at their next beat. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    await this.write(true).catch((err: unknown) => {
      this.errors++;
      this.lastError = (err as Error).message;
    });
    this.stopped = true;
  }

  stats(): LedgerStats {
    return {
      pairs: this.current().size, takeovers: this.takeovers, writes: this.writes, errors: this.errors,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    };
  }

  private listed(k: string): void {
    if (this.written?.has(k) !== true) this.version++;
  }

  private current(): Map<string, Pair> {
    const out = new Map<string, Pair>();
    for (const [k, e] of this.rows) out.set(k, e.pair);
    for (const [k, p] of this.ranges) out.set(k, p);
    return out;
  }

  /** Writes this server's cells (beat, and the debt where it changed); one write at a time. */
  private write(stopping: boolean): Promise<void> {
    const prev = this.writing ?? Promise.resolve();
    const p = prev.catch(() => undefined).then(async () => {
      await this.writeNow(stopping, undefined);
    });
    this.writing = p;
    return p;
  }

  /**
   * One mutate of this server's cells, or (with `take`) the check-and-put that takes
   * another server's debt into them. Without debt, the cells are deleted.
   */
  private async writeNow(stopping: boolean, take: { beat: Cell; debt: Pair[] | undefined; debtQ: Uint8Array } | undefined): Promise<boolean> {
    if (this.stopped) return false;
    const version = this.version;
    const pairs = this.current();
    if (take !== undefined) for (const p of take.debt ?? []) pairs.set(pairKey(p.metric, p.hour), p);
    const fam = LEDGER_FAMILY;
    const mutations: Mutation[] = [];
    if (pairs.size === 0) {
      if (this.written === undefined && take === undefined) {
        this.writtenVersion = version;
        return true;
      }
      mutations.push({ type: 'deleteCell', family: fam, qualifier: this.beatQ }, { type: 'deleteCell', family: fam, qualifier: this.debtQ });
    } else {
      mutations.push({ type: 'put', family: fam, qualifier: this.beatQ, value: encodeBeat(this.deps.now(), stopping) });
      const same = this.written !== undefined && this.written.size === pairs.size && [...pairs.keys()].every((k) => this.written!.has(k));
      if (!same) mutations.push({ type: 'put', family: fam, qualifier: this.debtQ, value: encodeDebt([...pairs.values()], this.deps.metricWidth) });
    }
    const sync = { durability: 'sync' } as const;
    if (take === undefined) {
      await this.deps.table.mutate([{ key: LEDGER_ROW, mutations }], sync);
    } else {
      mutations.push({ type: 'deleteCell', family: fam, qualifier: take.beat.qualifier }, { type: 'deleteCell', family: fam, qualifier: take.debtQ });
      const check = { family: fam, qualifier: take.beat.qualifier };
      if (!(await this.deps.table.checkAndPut(LEDGER_ROW, check, take.beat.value, mutations, sync))) return false;
      for (const p of take.debt ?? []) this.ranges.set(pairKey(p.metric, p.hour), p);
    }
    this.writes++;
    this.written = pairs.size === 0 ? undefined : new Set(pairs.keys());
    this.writtenVersion = version;
    return true;
  }

  /** Takes over a server whose beat is `beat`: its pairs become ranges owed here. */
  private async takeOver(beat: Cell, debt: Cell | undefined): Promise<void> {
    const pairs = debt === undefined ? undefined : decodeDebt(debt.value, this.deps.metricWidth);
    const debtQ = qualifierOf(beat.qualifier.subarray(0, beat.qualifier.length - 1), DEBT);
    const prev = this.writing ?? Promise.resolve();
    const p = prev.catch(() => undefined).then(() => this.writeNow(false, { beat, debt: pairs, debtQ }));
    this.writing = p.then(() => undefined);
    if (await p) this.takeovers++;
  }
}

/** The other servers' beat cells (and debt cells) of the ledger row. */
function othersOf(cells: readonly Cell[], me: Uint8Array): Array<{ beat: Cell; debt: Cell | undefined }> {
  const debts = new Map<string, Cell>();
  const beats: Cell[] = [];
  for (const c of cells) {
    const q = c.qualifier;
    if (q.length !== me.length + 1) continue;
    const id = q.subarray(0, me.length);
    if (compareBytes(id, me) === 0) continue;
    if (q[me.length] === BEAT) beats.push(c);
    else if (q[me.length] === DEBT) debts.set(latin1(id), c);
  }
  return beats.map((beat) => ({ beat, debt: debts.get(latin1(beat.qualifier.subarray(0, me.length))) }));
}
