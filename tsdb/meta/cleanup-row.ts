/**
 * The index cleanup's row (tsdb/SCHEMA.md "Index cleanup"): row `63` (`c`) of the postings
 * table, family `p`, on every store. Its cells:
 *   - `6c` (`l`) the lease: one pass at a time over every server sharing the store. Taken
 *     with a check-and-put of the value read when it is absent or past its time; it
 *     numbers the passes (a taker writes the number after the one it read).
 *   - `69` (`i`) the intent: what the pass holding the lease is removing right now (series,
 *     names), written before it removes any of it and cleared after, so the next pass
 *     finishes or undoes what a pass that stopped in the middle left (IndexCleanup.repair).
 *   - `61` (`a`) + a server's 8-byte id: where servers share the store, each server's beat
 *     and the last cleanup step it finished fencing (CleanupMember).
 */
import { compareBytes, concatByteList, fromUtf8, utf8 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import type { UidKind } from '../uid/uid-kind.js';
import { POSTINGS_FAMILY } from './postings.js';

export const CLEANUP_ROW = Uint8Array.of(0x63); // 'c'
const LEASE_Q = Uint8Array.of(0x6c); // 'l'
const INTENT_Q = Uint8Array.of(0x69); // 'i'
const MEMBER_TAG = 0x61; // 'a'
const SYNC = { durability: 'sync' } as const;
const KIND_TAG: Record<UidKind, number> = { metric: 0x6d, tagk: 0x6b, tagv: 0x76 };

/** What a pass is removing: series (TSUIDs) and names (kind, id, name). */
export interface CleanupIntent {
  readonly pass: bigint;
  readonly tsuids: readonly Uint8Array[];
  readonly names: ReadonlyArray<{ readonly kind: UidKind; readonly id: Uint8Array; readonly name: string }>;
}

/** A server's beat and the last step it fenced. */
export interface CleanupMemberCell {
  readonly id: Uint8Array;
  readonly beatMs: number;
  readonly pass: bigint;
  readonly step: number;
}

function u64(n: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n);
  return b;
}

function readU64(b: Uint8Array, at: number): bigint {
  return new DataView(b.buffer, b.byteOffset + at, 8).getBigUint64(0);
}

export function encodeIntent(i: CleanupIntent): Uint8Array {
  const parts: Uint8Array[] = [u64(i.pass)];
  const u16 = (n: number): Uint8Array => Uint8Array.of(n >>> 8, n & 0xff);
  const u32 = (n: number): Uint8Array => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  parts.push(u32(i.tsuids.length));
  for (const t of i.tsuids) parts.push(u16(t.length), t);
  parts.push(u32(i.names.length));
  for (const n of i.names) {
    const name = utf8(n.name);
    parts.push(Uint8Array.of(KIND_TAG[n.kind]), u16(n.id.length), n.id, u16(name.length), name);
  }
  return concatByteList(parts);
}

export function decodeIntent(v: Uint8Array): CleanupIntent {
  let o = 8;
  const need = (n: number): void => {
    if (o + n > v.length) throw new RangeError('index cleanup intent: cut short');
  };
  const u16 = (): number => {
    need(2);
    return (v[o++]! << 8) | v[o++]!;
  };
  const u32 = (): number => {
    need(4);
    const n = ((v[o]! << 24) | (v[o + 1]! << 16) | (v[o + 2]! << 8) | v[o + 3]!) >>> 0;
    o += 4;
    return n;
  };
  const bytes = (): Uint8Array => {
    const n = u16();
    need(n);
    o += n;
    return v.slice(o - n, o);
  };
  need(8);
  const pass = readU64(v, 0);
  const tsuids: Uint8Array[] = [];
  for (let n = u32(); n > 0; n--) tsuids.push(bytes());
  const names: Array<{ kind: UidKind; id: Uint8Array; name: string }> = [];
  for (let n = u32(); n > 0; n--) {
    need(1);
    const tag = v[o++];
    const kind = (Object.keys(KIND_TAG) as UidKind[]).find((k) => KIND_TAG[k] === tag);
    if (kind === undefined) throw new RangeError(`index cleanup intent: unknown kind ${tag}`);
    const id = bytes();
    names.push({ kind, id, name: fromUtf8(bytes()) });
  }
  return { pass, tsuids, names };
}

/** The cleanup row of one store, as seen by one server (`me`: its 8-byte id). */
export class CleanupRow {
  private readonly table: Table;
  private readonly me: Uint8Array;
  private readonly now: () => number;
  /** The lease value this server wrote last (what its renewals and releases expect). */
  private held: Uint8Array | undefined;

  constructor(table: Table, me: Uint8Array, now: () => number) {
    this.table = table;
    this.me = me;
    this.now = now;
  }

  private cell(q: Uint8Array): { family: string; qualifier: Uint8Array } {
    return { family: POSTINGS_FAMILY, qualifier: q };
  }

  private async read(q: Uint8Array): Promise<Uint8Array | undefined> {
    const [row] = await this.table.get([CLEANUP_ROW], { families: [POSTINGS_FAMILY] });
    return row?.cells.find((c) => compareBytes(c.qualifier, q) === 0)?.value;
  }

  /**
   * Takes the lease for `ms` when no live pass holds it (`force`: whoever holds it; where
   * this process is the store's one writer, a lease left is a stopped process's); the new
   * pass's number, or undefined.
   */
  async takeLease(ms: number, force = false): Promise<bigint | undefined> {
    const old = await this.read(LEASE_Q);
    const now = this.now();
    if (!force && old !== undefined && old.length === 24 && Number(readU64(old, 0)) > now) return undefined;
    const pass = (old === undefined || old.length !== 24 ? 0n : readU64(old, 8)) + 1n;
    const value = concatByteList([u64(BigInt(now + ms)), u64(pass), this.me]);
    if (!(await this.table.checkAndPut(CLEANUP_ROW, this.cell(LEASE_Q), old, [{ type: 'put', ...this.cell(LEASE_Q), value }], SYNC))) return undefined;
    this.held = value;
    return pass;
  }

  /** Extends the lease held by `ms` from now; false when it was lost (the pass must stop). */
  async renew(ms: number): Promise<boolean> {
    const held = this.held;
    if (held === undefined) return false;
    const value = concatByteList([u64(BigInt(this.now() + ms)), held.subarray(8)]);
    if (!(await this.table.checkAndPut(CLEANUP_ROW, this.cell(LEASE_Q), held, [{ type: 'put', ...this.cell(LEASE_Q), value }], SYNC))) return false;
    this.held = value;
    return true;
  }

  /** Ends the lease held (its pass number stays for the next taker). */
  async release(): Promise<void> {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    const value = concatByteList([u64(0n), held.subarray(8)]);
    await this.table.checkAndPut(CLEANUP_ROW, this.cell(LEASE_Q), held, [{ type: 'put', ...this.cell(LEASE_Q), value }], SYNC);
  }

  async readIntent(): Promise<CleanupIntent | undefined> {
    const v = await this.read(INTENT_Q);
    return v === undefined ? undefined : decodeIntent(v);
  }

  /** Writes the intent while the lease is held; false when it was lost. */
  async writeIntent(i: CleanupIntent): Promise<boolean> {
    const held = this.held;
    if (held === undefined) return false;
    return this.table.checkAndPut(CLEANUP_ROW, this.cell(LEASE_Q), held, [{ type: 'put', ...this.cell(INTENT_Q), value: encodeIntent(i) }], SYNC);
  }

  async clearIntent(): Promise<void> {
    await this.table.mutate([{ key: CLEANUP_ROW, mutations: [{ type: 'deleteCell', ...this.cell(INTENT_Q) }] }], SYNC);
  }

  /** Writes this server's beat and the last step it fenced. */
  async beat(pass: bigint, step: number): Promise<void> {
    const value = concatByteList([u64(BigInt(this.now())), u64(pass), Uint8Array.of(step)]);
    await this.table.mutate([{ key: CLEANUP_ROW, mutations: [{ type: 'put', ...this.cell(concatByteList([Uint8Array.of(MEMBER_TAG), this.me])), value }] }], SYNC);
  }

  /** Removes this server's beat (it stopped). */
  async leave(): Promise<void> {
    await this.table.mutate([{ key: CLEANUP_ROW, mutations: [{ type: 'deleteCell', ...this.cell(concatByteList([Uint8Array.of(MEMBER_TAG), this.me])) }] }], SYNC);
  }

  /** Every server's beat cell. */
  async members(): Promise<CleanupMemberCell[]> {
    const [row] = await this.table.get([CLEANUP_ROW], { families: [POSTINGS_FAMILY] });
    const out: CleanupMemberCell[] = [];
    for (const c of row?.cells ?? []) {
      if (c.qualifier.length !== 9 || c.qualifier[0] !== MEMBER_TAG || c.value.length !== 17) continue;
      out.push({ id: c.qualifier.subarray(1), beatMs: Number(readU64(c.value, 0)), pass: readU64(c.value, 8), step: c.value[16]! });
    }
    return out;
  }
}
