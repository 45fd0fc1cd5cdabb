/**
 * UidTable: name ↔ fixed-width id for one kind (metric, tagk or tagv), stored in the UID
 * table exactly as tsdb/SCHEMA.md "UID table" lays it out (OpenTSDB's layout).
 *
 * Assignment (OpenTSDB's protocol, safe against other writers of the same store):
 *   1. atomically increment the kind's counter → candidate id (exhausted → TSDB_UID_EXHAUSTED);
 *   2. check-and-put the reverse row id → name, expecting it absent;
 *   3. check-and-put the forward row name → id, expecting it absent. Losing this race
 *      means another writer assigned the name first: its id is read back and returned,
 *      our reverse mapping (this kind's cell of the id's row, which the other kinds share)
 *      is removed, and our candidate id stays unused ("leaked").
 * Inside one process, concurrent requests for one new name share one pending promise.
 * Names assigned together (resolveMany: the new names of a batch of series) reserve a
 * block of ids with one increment by their count, then make their reverse and forward
 * check-and-puts all at once. Each name still takes its own id through the same
 * check-and-puts, so the protocol is unchanged for every other writer; ids of a block
 * left unused by a lost race leak as before.
 *
 * Durability: the increment is synced (a counter behind an id in use would make every
 * later claim of that id fail); the reverse check-and-puts are buffered and the forward
 * ones synced, which makes both durable (the store keeps writes durable in order:
 * core/api/store.ts WriteOptions). So a block costs two synced rounds, one per name
 * costs two. resolveMany's caller may take the forward ones buffered too when it ends
 * the chain with a synced write of its own (series creation: the series index write),
 * and getOrCreateId, the name's acknowledgement to a client, ends with a synced write.
 *
 * Caches: both directions, bounded in bytes together (TwoGenCache, half each; an entry
 * costs UID_ENTRY_BYTES beside its name, memory/catalog-memory.ts). Absent names are not cached,
 * so a name created by another process is found on the next lookup.
 */
import { compareBytes, fromUtf8, prefixEnd, utf8 } from '../../core/api/bytes.js';
import type { Durability, Table } from '../../core/api/store.js';
import { TsdbError } from '../errors.js';
import { UID_ENTRY_BYTES } from '../memory/catalog-memory.js';
import { TwoGenCache } from './two-gen-cache.js';
import { UID_COUNTER_ROW, UID_FAMILY_ID, UID_FAMILY_NAME, UID_QUALIFIER } from './uid-kind.js';
import type { UidKind } from './uid-kind.js';

const MAX_ASSIGN_ATTEMPTS = 3;
const SYNC = { durability: 'sync' } as const;
const BUFFERED = { durability: 'buffered' } as const;

export interface ResolveOptions {
  /** Assign ids to names that have none. */
  readonly create: boolean;
  /**
   * Durability of the forward mappings written (default 'sync'); 'buffered' only when the
   * caller's next write is synced (it then makes them durable).
   */
  readonly durability?: Durability;
  /** Filled with the names this call assigned (no series can carry their ids yet). */
  readonly assigned?: Set<string>;
}

export interface UidTableStats {
  readonly cacheHits: number;
  readonly cacheMisses: number;
  readonly assigned: number;
  readonly raceLosses: number;
}

export class UidTable {
  readonly kind: UidKind;
  readonly width: number;
  private readonly table: Table;
  private readonly qualifier: Uint8Array;
  private readonly byName: TwoGenCache<string, Uint8Array>;
  private readonly byId: TwoGenCache<string, string>;
  private readonly pending = new Map<string, Promise<Uint8Array>>();
  /** Names assigned with a buffered forward mapping whose caller has not said it synced (synced()). */
  private readonly unsynced = new Set<string>();
  private hits = 0;
  private misses = 0;
  private assigned = 0;
  private raceLosses = 0;
  private readonly renamed: (() => void) | undefined;

  /**
   * `cacheBytes`: both caches together; `renamed`: told after every rename (the catalog
   * then drops what it derived from names).
   */
  constructor(table: Table, kind: UidKind, width: number, cacheBytes: number, renamed?: () => void) {
    this.table = table;
    this.renamed = renamed;
    this.kind = kind;
    this.width = width;
    this.qualifier = utf8(UID_QUALIFIER[kind]);
    this.byName = new TwoGenCache(cacheBytes / 2, (name) => UID_ENTRY_BYTES + name.length);
    this.byId = new TwoGenCache(cacheBytes / 2, (_id, name) => UID_ENTRY_BYTES + name.length);
  }

  /** Largest id this width can hold. */
  get maxId(): number {
    return 2 ** (8 * this.width) - 1;
  }

  /** The cached id of `name`, without touching the store. */
  cachedId(name: string): Uint8Array | undefined {
    const id = this.byName.get(name);
    if (id === undefined) this.misses++;
    else this.hits++;
    return id;
  }

  /** The id of `name`, or undefined when it has none. */
  async getId(name: string): Promise<Uint8Array | undefined> {
    const cached = this.cachedId(name);
    if (cached !== undefined) return cached;
    const [row] = await this.table.get([utf8(name)], { families: [UID_FAMILY_ID] });
    const id = this.cellValue(row?.cells, UID_FAMILY_ID);
    if (id === undefined) return undefined;
    if (id.length !== this.width) {
      throw new TsdbError('TSDB_UID_CORRUPT', `UID of ${this.kind} '${name}' is ${id.length} bytes, expected ${this.width}`);
    }
    this.remember(name, id);
    return id;
  }

  /** The id of `name`; throws TSDB_NO_SUCH_NAME (OpenTSDB's message) when it has none. */
  async requireId(name: string): Promise<Uint8Array> {
    const id = await this.getId(name);
    if (id === undefined) throw noSuchName(this.kind, name);
    return id;
  }

  /**
   * The id of `name`, assigning a new one when it has none; durable when it resolves (a
   * name assigned by a batch of series may not be yet: a synced write then follows).
   */
  async getOrCreateId(name: string): Promise<Uint8Array> {
    const id = await this.getId(name);
    if (id !== undefined) {
      if (this.unsynced.has(name)) await this.syncBarrier();
      return id;
    }
    let p = this.pending.get(name);
    if (p === undefined) {
      p = this.assign(name).finally(() => this.pending.delete(name));
      this.pending.set(name, p);
    }
    const out = await p;
    if (this.unsynced.has(name)) await this.syncBarrier();
    return out;
  }

  /** The names assigned with buffered forward mappings are durable now (the caller's synced write resolved). */
  synced(names: Iterable<string>): void {
    for (const n of names) this.unsynced.delete(n);
  }

  /**
   * The ids of `names` (distinct), from the cache, else one batched read, else — with
   * `create` — assigned together (see the file header); a name's TsdbError (no such name,
   * ids exhausted, a corrupt row) in its place. Store failures reject.
   */
  async resolveMany(names: readonly string[], opts: ResolveOptions): Promise<Map<string, Uint8Array | TsdbError>> {
    const { create } = opts;
    const durability = opts.durability ?? 'sync';
    const out = new Map<string, Uint8Array | TsdbError>();
    const waits: Array<Promise<void>> = [];
    const read: string[] = [];
    for (const name of names) {
      const id = this.cachedId(name);
      if (id !== undefined) {
        out.set(name, id);
        continue;
      }
      const p = this.pending.get(name);
      if (p !== undefined) waits.push(settleInto(out, name, p));
      else read.push(name);
    }
    const absent: string[] = [];
    if (read.length > 0) {
      const rows = await this.table.get(read.map(utf8), { families: [UID_FAMILY_ID] });
      for (let i = 0; i < read.length; i++) {
        const name = read[i]!;
        const id = this.cellValue(rows[i]?.cells, UID_FAMILY_ID);
        if (id === undefined) {
          const p = this.pending.get(name); // started by another call while we read
          if (p !== undefined) waits.push(settleInto(out, name, p));
          else if (create) absent.push(name);
          else out.set(name, noSuchName(this.kind, name));
        } else if (id.length !== this.width) {
          out.set(name, new TsdbError('TSDB_UID_CORRUPT', `UID of ${this.kind} '${name}' is ${id.length} bytes, expected ${this.width}`));
        } else {
          this.remember(name, id);
          out.set(name, id);
        }
      }
    }
    if (absent.length > 0) {
      const block = this.assignBlock(absent, durability);
      const assigned = opts.assigned;
      absent.forEach((name, i) => {
        const p = block.then((ids) => ids[i]!).finally(() => this.pending.delete(name));
        this.pending.set(name, p);
        waits.push(settleInto(out, name, p));
        if (assigned !== undefined) waits.push(p.then(() => void assigned.add(name), () => undefined));
      });
    }
    await Promise.all(waits);
    return out;
  }

  /** The name of `id`, or undefined. */
  async getName(id: Uint8Array): Promise<string | undefined> {
    const key = idKey(id);
    const cached = this.byId.get(key);
    if (cached !== undefined) return cached;
    const [row] = await this.table.get([id], { families: [UID_FAMILY_NAME] });
    const name = this.cellValue(row?.cells, UID_FAMILY_NAME);
    if (name === undefined) return undefined;
    const s = fromUtf8(name);
    this.remember(s, id);
    return s;
  }

  /**
   * Every (id, name) of this kind, in id order: one scan of the reverse rows of the ids
   * handed out so far (an id handed out and never named is left out). Nothing is cached.
   */
  async allNames(): Promise<Array<[Uint8Array, string]>> {
    const out: Array<[Uint8Array, string]> = [];
    const used = Math.min(await this.usedIds(), this.maxId);
    if (used <= 0) return out;
    const end = used + 1 > this.maxId ? undefined : encodeId(used + 1, this.width);
    const spec = { start: encodeId(1, this.width), ...(end === undefined ? {} : { end }), families: [UID_FAMILY_NAME] };
    for await (const batch of this.table.scan(spec)) {
      for (const row of batch) {
        const name = row.key.length === this.width ? this.cellValue(row.cells, UID_FAMILY_NAME) : undefined;
        if (name !== undefined) out.push([row.key, fromUtf8(name)]);
      }
    }
    return out;
  }

  /** Names of this kind starting with `prefix`, in byte order, at most `max`. */
  async namesWithPrefix(prefix: string, max: number): Promise<string[]> {
    const out: string[] = [];
    const start = utf8(prefix);
    const end = start.length === 0 ? undefined : prefixEnd(start);
    for await (const batch of this.table.scan({ start, end, families: [UID_FAMILY_ID] })) {
      for (const row of batch) {
        if (compareBytes(row.key, UID_COUNTER_ROW) === 0) continue;
        if (this.cellValue(row.cells, UID_FAMILY_ID) === undefined) continue;
        out.push(fromUtf8(row.key));
        if (out.length >= max) return out;
      }
    }
    return out;
  }

  /** Every (name, id) of this kind whose name matches `re`. */
  async grep(re: RegExp): Promise<Array<[string, Uint8Array]>> {
    const out: Array<[string, Uint8Array]> = [];
    for await (const batch of this.table.scan({ families: [UID_FAMILY_ID] })) {
      for (const row of batch) {
        if (compareBytes(row.key, UID_COUNTER_ROW) === 0) continue;
        const id = this.cellValue(row.cells, UID_FAMILY_ID);
        const name = fromUtf8(row.key);
        if (id !== undefined && re.test(name)) out.push([name, id]);
      }
    }
    return out;
  }

  /** Ids handed out so far (the counter), including leaked ones. */
  async usedIds(): Promise<number> {
    const [row] = await this.table.get([UID_COUNTER_ROW], { families: [UID_FAMILY_ID] });
    const v = this.cellValue(row?.cells, UID_FAMILY_ID);
    return v === undefined || v.length !== 8 ? 0 : Number(new DataView(v.buffer, v.byteOffset, 8).getBigInt64(0));
  }

  /**
   * Renames `from` to `to`, keeping the id: writes the new forward row (must not exist),
   * points the reverse row at the new name, then deletes the old forward row.
   */
  async rename(from: string, to: string): Promise<Uint8Array> {
    const id = await this.requireId(from);
    const created = await this.table.checkAndPut(utf8(to), this.ref(UID_FAMILY_ID), undefined, [this.put(UID_FAMILY_ID, id)], SYNC);
    if (!created) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Name already exists with UID: ${this.kind} '${to}'`);
    await this.table.mutate([{ key: id, mutations: [this.put(UID_FAMILY_NAME, utf8(to))] }], SYNC);
    await this.table.mutate([{ key: utf8(from), mutations: [{ type: 'deleteCell', family: UID_FAMILY_ID, qualifier: this.qualifier }] }], SYNC);
    this.byName.delete(from);
    this.remember(to, id);
    this.renamed?.();
    return id;
  }

  /**
   * Deletes the name and its UID, as OpenTSDB's `uid delete` does: the forward (name → UID)
   * and reverse (UID → name) mappings go; the UID is never handed out again (the counter
   * stays) and data still stored under it is no longer reachable by name. Rejects with
   * TSDB_NO_SUCH_NAME when the name has no UID.
   */
  async delete(name: string): Promise<Uint8Array> {
    const id = await this.requireId(name);
    await this.table.mutate([
      { key: utf8(name), mutations: [{ type: 'deleteCell', family: UID_FAMILY_ID, qualifier: this.qualifier }] },
      { key: id, mutations: [{ type: 'deleteCell', family: UID_FAMILY_NAME, qualifier: this.qualifier }] },
    ], SYNC);
    this.byName.delete(name);
    this.byId.delete(idKey(id));
    this.renamed?.();
    return id;
  }

  /**
   * The index cleanup's delete of an unused name (meta/index-cleanup.ts): the forward row
   * name → id first, then the reverse row id → name, each only while it still holds what
   * it held (a check-and-put), so a rename or a new assignment since is left alone. A stop
   * between the two leaves a reverse row no name leads to; the cleanup's next pass finishes
   * it (its intent).
   */
  async deleteMapping(name: string, id: Uint8Array): Promise<void> {
    await this.table.checkAndPut(utf8(name), this.ref(UID_FAMILY_ID), id, [{ type: 'deleteCell', family: UID_FAMILY_ID, qualifier: this.qualifier }], SYNC);
    this.byName.delete(name);
    await this.table.checkAndPut(id, this.ref(UID_FAMILY_NAME), utf8(name), [{ type: 'deleteCell', family: UID_FAMILY_NAME, qualifier: this.qualifier }], SYNC);
    this.byId.delete(idKey(id));
  }

  /**
   * Puts back both mappings of `name` and `id` where one is missing (the index cleanup's
   * repair of a delete it stopped in the middle of, for an id a series carries): the
   * reverse row if it has no name, the forward row if the name has no id.
   */
  async restoreMapping(name: string, id: Uint8Array): Promise<void> {
    await this.table.checkAndPut(id, this.ref(UID_FAMILY_NAME), undefined, [this.put(UID_FAMILY_NAME, utf8(name))], SYNC);
    await this.table.checkAndPut(utf8(name), this.ref(UID_FAMILY_ID), undefined, [this.put(UID_FAMILY_ID, id)], SYNC);
  }

  dropCaches(): void {
    this.byName.clear();
    this.byId.clear();
  }

  /** Bytes of both caches (by the estimate above) and their entries. */
  cacheBytes(): number {
    return this.byName.bytes + this.byId.bytes;
  }

  cacheEntries(): number {
    return this.byName.size + this.byId.size;
  }

  stats(): UidTableStats {
    return { cacheHits: this.hits, cacheMisses: this.misses, assigned: this.assigned, raceLosses: this.raceLosses };
  }

  private async assign(name: string): Promise<Uint8Array> {
    return (await this.assignBlock([name], 'sync'))[0]!;
  }

  /** A synced write (the counter plus 0): everything written before it is durable once it resolves. */
  private async syncBarrier(): Promise<void> {
    await this.table.increment(UID_COUNTER_ROW, this.ref(UID_FAMILY_ID), 0n, SYNC);
    this.unsynced.clear();
  }

  /**
   * Assigns ids to `names` (none has one yet): one increment reserves a block, then each
   * name claims its id. Each entry of the answer resolves to the name's id or rejects
   * with its error.
   */
  private async assignBlock(names: readonly string[], durability: Durability): Promise<Array<Promise<Uint8Array>>> {
    const last = await this.table.increment(UID_COUNTER_ROW, this.ref(UID_FAMILY_ID), BigInt(names.length), SYNC);
    const first = last - BigInt(names.length) + 1n;
    return names.map((name, i) => {
      const p = this.claim(name, first + BigInt(i), 1, durability);
      p.catch(() => undefined); // rejections reach whoever awaits the name
      return p;
    });
  }

  /** Claims id number `n` for `name` (steps 2 and 3 of the file header), or the winner's id. */
  private async claim(name: string, n: bigint, attempt: number, durability: Durability): Promise<Uint8Array> {
    if (n > BigInt(this.maxId) || n <= 0n) {
      throw new TsdbError('TSDB_UID_EXHAUSTED', `All Unique IDs for ${UID_QUALIFIER[this.kind]} on ${this.width} bytes are already assigned!`);
    }
    const nameBytes = utf8(name);
    const id = encodeId(Number(n), this.width);
    // Buffered: the forward check-and-put below, or the caller's synced write, follows it.
    const reverseOk = await this.table.checkAndPut(id, this.ref(UID_FAMILY_NAME), undefined, [this.put(UID_FAMILY_NAME, nameBytes)], BUFFERED);
    if (!reverseOk) {
      // The counter handed out an id whose reverse row exists: the table was edited
      // behind our back. Skip the id, as OpenTSDB does, and try the next one.
      if (attempt >= MAX_ASSIGN_ATTEMPTS) {
        throw new TsdbError('TSDB_UID_CORRUPT', `UID ${idKey(id)} of ${this.kind} already has a name; run horae fsck`);
      }
      return this.claim(name, await this.table.increment(UID_COUNTER_ROW, this.ref(UID_FAMILY_ID), 1n, SYNC), attempt + 1, durability);
    }
    const forwardOk = await this.table.checkAndPut(nameBytes, this.ref(UID_FAMILY_ID), undefined, [this.put(UID_FAMILY_ID, id)], durability === 'sync' ? SYNC : BUFFERED);
    if (forwardOk) {
      this.assigned++;
      if (durability !== 'sync') this.unsynced.add(name);
      this.remember(name, id);
      return id;
    }
    // Another writer assigned this name first: use its id, drop our reverse mapping —
    // only this kind's cell: the row of an id also holds the other kinds' names.
    this.raceLosses++;
    // Buffered: a lost removal leaves an unused reverse row, as OpenTSDB always does.
    await this.table.checkAndPut(id, this.ref(UID_FAMILY_NAME), nameBytes, [{ type: 'deleteCell', family: UID_FAMILY_NAME, qualifier: this.qualifier }], BUFFERED);
    const winner = await this.getId(name);
    if (winner === undefined) throw new TsdbError('TSDB_UID_CORRUPT', `UID race on ${this.kind} '${name}' left no forward mapping`);
    return winner;
  }

  private remember(name: string, id: Uint8Array): void {
    this.byName.set(name, id);
    this.byId.set(idKey(id), name);
  }

  private cellValue(cells: readonly { family: string; qualifier: Uint8Array; value: Uint8Array }[] | undefined, family: string): Uint8Array | undefined {
    if (cells === undefined) return undefined;
    for (const c of cells) {
      if (c.family === family && compareBytes(c.qualifier, this.qualifier) === 0) return c.value;
    }
    return undefined;
  }

  private ref(family: string): { family: string; qualifier: Uint8Array } {
    return { family, qualifier: this.qualifier };
  }

  private put(family: string, value: Uint8Array): { type: 'put'; family: string; qualifier: Uint8Array; value: Uint8Array } {
    return { type: 'put', family, qualifier: this.qualifier, value };
  }
}

/** Puts what `p` settles to (an id, or its TsdbError) into `out`; other errors reject. */
async function settleInto(out: Map<string, Uint8Array | TsdbError>, name: string, p: Promise<Uint8Array>): Promise<void> {
  try {
    out.set(name, await p);
  } catch (err) {
    if (!(err instanceof TsdbError)) throw err;
    out.set(name, err);
  }
}

/** `n` big-endian in `width` bytes. */
export function encodeId(n: number, width: number): Uint8Array {
  const out = new Uint8Array(width);
  for (let i = width - 1; i >= 0; i--) {
    out[i] = n % 256;
    n = Math.floor(n / 256);
  }
  return out;
}

/** The id as OpenTSDB prints it: upper-case hex. */
export function idKey(id: Uint8Array): string {
  let s = '';
  for (const b of id) s += b.toString(16).padStart(2, '0');
  return s.toUpperCase();
}

/** OpenTSDB's message for an unknown name. */
export function noSuchName(kind: UidKind, name: string): TsdbError {
  return new TsdbError('TSDB_NO_SUCH_NAME', `No such name for '${UID_QUALIFIER[kind]}': '${name}'`);
}
