/**
 * The series index's in-memory copy: the series known to be in the index that were
 * written or asked about lately, each with the second it was last seen. Columnar, so a
 * million series are a few typed arrays, not a million objects: the TSUIDs packed in one
 * byte arena, their offsets, lengths and last-seen seconds in three arrays, and an
 * open-addressing hash table of entry numbers (load ≤ 1/2).
 *
 * Sized in bytes: bytes() is the sum of the arrays' lengths, and never passes maxBytes
 * (when the arrays would have to grow past it, the older half of the entries goes
 * instead). Dead series age out: a series not seen for idleMs leaves at the next sweep
 * (every idleMs / 4, at most a minute apart, run by the calls), and the arrays shrink with
 * what is left, so memory follows the active set, not every series ever seen. What left
 * costs disk only: the index finds it there (SeriesIndex.known).
 */

/** Entries and arena bytes of the smallest table. */
const MIN_ENTRIES = 16;
const MIN_ARENA = 256;
/** Bytes per entry besides its TSUID: offset 4, length 2, seen 4, two hash slots of 4. */
const ENTRY_BYTES = 18;

export interface ActiveSeriesOptions {
  /** Most bytes the arrays take (bytes()). */
  readonly maxBytes: number;
  /** A series not seen for this long leaves (0: never by age). */
  readonly idleMs: number;
}

export interface ActiveSeriesStats {
  readonly series: number;
  readonly bytes: number;
  /** Series that left by age, by the byte bound, and sweeps run, since the start. */
  readonly aged: number;
  readonly evicted: number;
  readonly sweeps: number;
}

export class ActiveSeries {
  private readonly maxBytes: number;
  private readonly idleSec: number;
  private readonly sweepEverySec: number;
  private arena: Uint8Array;
  private top = 0;
  private starts: Uint32Array;
  private lens: Uint16Array;
  private seen: Uint32Array;
  /** Entries in use (all live: removals rebuild). */
  private n = 0;
  /** 0 = empty, else entry number + 1. */
  private slots: Int32Array;
  private nextSweep = 0;
  private aged = 0;
  private evicted = 0;
  private sweeps = 0;

  constructor(o: ActiveSeriesOptions) {
    this.maxBytes = Math.max(0, o.maxBytes);
    this.idleSec = Math.max(0, Math.ceil(o.idleMs / 1000));
    this.sweepEverySec = Math.max(1, Math.min(60, Math.floor(this.idleSec / 4)));
    this.arena = new Uint8Array(MIN_ARENA);
    this.starts = new Uint32Array(MIN_ENTRIES);
    this.lens = new Uint16Array(MIN_ENTRIES);
    this.seen = new Uint32Array(MIN_ENTRIES);
    this.slots = new Int32Array(MIN_ENTRIES * 2);
  }

  get size(): number {
    return this.n;
  }

  /** Bytes of the arrays: the copy's whole memory but for a few fields. */
  bytes(): number {
    return this.arena.byteLength + this.starts.byteLength + this.lens.byteLength + this.seen.byteLength + this.slots.byteLength;
  }

  stats(): ActiveSeriesStats {
    return { series: this.n, bytes: this.bytes(), aged: this.aged, evicted: this.evicted, sweeps: this.sweeps };
  }

  /** True when `tsuid` is held (then seen at `nowMs`). */
  has(tsuid: Uint8Array, nowMs: number): boolean {
    this.maybeSweep(nowMs);
    const i = this.find(tsuid, 0, tsuid.length, tsuid.length, tsuid.length);
    if (i < 0) return false;
    this.seen[i] = seconds(nowMs);
    return true;
  }

  /** Holds `tsuid`, seen at `nowMs`. */
  add(tsuid: Uint8Array, nowMs: number): void {
    this.seenParts(tsuid, 0, tsuid.length, tsuid.length, tsuid.length, nowMs);
  }

  /**
   * The series of a data row key (the TSUID is the key without salt and base time) was
   * written at `nowMs`: held, seen then.
   */
  written(rowKey: Uint8Array, saltWidth: number, metricWidth: number, nowMs: number): void {
    const base = saltWidth + metricWidth;
    this.seenParts(rowKey, saltWidth, base, base + 4, rowKey.length, nowMs);
  }

  /** Drops the series `drop` accepts. */
  removeIf(drop: (tsuid: Uint8Array) => boolean): void {
    this.rebuild((i) => !drop(this.arena.subarray(this.starts[i]!, this.starts[i]! + this.lens[i]!)));
  }

  clear(): void {
    this.rebuild(() => false);
  }

  /** The series of key[a0, a1) ++ key[b0, b1) seen at nowMs, added when absent. */
  private seenParts(key: Uint8Array, a0: number, a1: number, b0: number, b1: number, nowMs: number): void {
    this.maybeSweep(nowMs);
    const sec = seconds(nowMs);
    const i = this.find(key, a0, a1, b0, b1);
    if (i >= 0) {
      this.seen[i] = sec;
      return;
    }
    const len = a1 - a0 + b1 - b0;
    if (len > 0xffff || !this.room(len)) return;
    const at = this.top;
    this.arena.set(key.subarray(a0, a1), at);
    this.arena.set(key.subarray(b0, b1), at + a1 - a0);
    this.top += len;
    const e = this.n++;
    this.starts[e] = at;
    this.lens[e] = len;
    this.seen[e] = sec;
    this.insertSlot(e, hashParts(key, a0, a1, b0, b1));
  }

  /** Entry number of key[a0, a1) ++ key[b0, b1), or -1. */
  private find(key: Uint8Array, a0: number, a1: number, b0: number, b1: number): number {
    const len = a1 - a0 + b1 - b0;
    const mask = this.slots.length - 1;
    for (let s = hashParts(key, a0, a1, b0, b1) & mask; ; s = (s + 1) & mask) {
      const v = this.slots[s]!;
      if (v === 0) return -1;
      const e = v - 1;
      if (this.lens[e] === len && this.equalParts(this.starts[e]!, key, a0, a1, b0, b1)) return e;
    }
  }

  private equalParts(at: number, key: Uint8Array, a0: number, a1: number, b0: number, b1: number): boolean {
    const a = this.arena;
    for (let i = a0; i < a1; i++) if (a[at++] !== key[i]) return false;
    for (let i = b0; i < b1; i++) if (a[at++] !== key[i]) return false;
    return true;
  }

  private insertSlot(e: number, h: number): void {
    const mask = this.slots.length - 1;
    let s = h & mask;
    while (this.slots[s] !== 0) s = (s + 1) & mask;
    this.slots[s] = e + 1;
  }

  /**
   * Makes room for one more entry of `len` bytes: grows the arrays (doubling) while that
   * stays within maxBytes, else drops the older half of the entries. False when even an
   * empty table has no room.
   */
  private room(len: number): boolean {
    if (this.n < this.starts.length && this.top + len <= this.arena.length) return true;
    let entries = this.starts.length;
    let arena = this.arena.length;
    while (this.n + 1 > entries) entries *= 2;
    while (this.top + len > arena) arena *= 2;
    if (sizeOf(entries, arena) <= this.maxBytes) {
      this.resize(entries, arena);
      return true;
    }
    if (this.n === 0) return false;
    const cut = this.seen.slice(0, this.n).sort()[this.n >>> 1]!;
    const before = this.n;
    this.rebuild((i) => this.seen[i]! > cut);
    this.evicted += before - this.n;
    return this.n < this.starts.length && this.top + len <= this.arena.length;
  }

  /** Drops the series not seen for idleSec, when a sweep is due. */
  private maybeSweep(nowMs: number): void {
    if (this.idleSec === 0) return;
    const sec = seconds(nowMs);
    if (sec < this.nextSweep) return;
    this.nextSweep = sec + this.sweepEverySec;
    const oldest = sec - this.idleSec;
    let stale = 0;
    for (let i = 0; i < this.n; i++) if (this.seen[i]! < oldest) stale++;
    if (stale === 0 && (this.n >= this.starts.length / 4 || this.starts.length <= MIN_ENTRIES)) return;
    this.sweeps++;
    this.aged += stale;
    this.rebuild((i) => this.seen[i]! >= oldest);
  }

  /** Keeps the entries `keep` accepts, compacted, in arrays shrunk to fit them (at most the current ones). */
  private rebuild(keep: (i: number) => boolean): void {
    const keptIdx: number[] = [];
    let bytes = 0;
    for (let i = 0; i < this.n; i++) {
      if (!keep(i)) continue;
      keptIdx.push(i);
      bytes += this.lens[i]!;
    }
    let entries = MIN_ENTRIES;
    while (entries < keptIdx.length * 2 && entries < this.starts.length) entries *= 2;
    let arena = MIN_ARENA;
    while (arena < bytes * 2 && arena < this.arena.length) arena *= 2;
    entries = Math.max(entries, keptIdx.length);
    arena = Math.max(arena, bytes);
    const old = { arena: this.arena, starts: this.starts, lens: this.lens, seen: this.seen };
    this.alloc(entries, arena);
    for (const i of keptIdx) {
      const s = old.starts[i]!;
      const len = old.lens[i]!;
      this.arena.set(old.arena.subarray(s, s + len), this.top);
      const e = this.n++;
      this.starts[e] = this.top;
      this.lens[e] = len;
      this.seen[e] = old.seen[i]!;
      this.insertSlot(e, hashParts(this.arena, this.top, this.top + len, 0, 0));
      this.top += len;
    }
  }

  /** Grows the arrays to `entries` and `arena` bytes, keeping every entry. */
  private resize(entries: number, arena: number): void {
    const old = { arena: this.arena, starts: this.starts, lens: this.lens, seen: this.seen, n: this.n, top: this.top };
    this.alloc(entries, arena);
    this.arena.set(old.arena.subarray(0, old.top));
    this.starts.set(old.starts.subarray(0, old.n));
    this.lens.set(old.lens.subarray(0, old.n));
    this.seen.set(old.seen.subarray(0, old.n));
    this.n = old.n;
    this.top = old.top;
    for (let e = 0; e < this.n; e++) this.insertSlot(e, hashParts(this.arena, this.starts[e]!, this.starts[e]! + this.lens[e]!, 0, 0));
  }

  private alloc(entries: number, arena: number): void {
    this.arena = new Uint8Array(arena);
    this.starts = new Uint32Array(entries);
    this.lens = new Uint16Array(entries);
    this.seen = new Uint32Array(entries);
    this.slots = new Int32Array(slotsFor(entries));
    this.n = 0;
    this.top = 0;
  }
}

function seconds(ms: number): number {
  return Math.max(0, Math.min(0xffffffff, Math.floor(ms / 1000)));
}

function slotsFor(entries: number): number {
  let s = 2;
  while (s < entries * 2) s *= 2;
  return s;
}

/** Bytes of a table of `entries` entries and `arena` arena bytes. */
function sizeOf(entries: number, arena: number): number {
  return arena + entries * (ENTRY_BYTES - 8) + slotsFor(entries) * 4;
}

/** FNV-1a over key[a0, a1) then key[b0, b1), mixed. */
function hashParts(key: Uint8Array, a0: number, a1: number, b0: number, b1: number): number {
  let h = 0x811c9dc5;
  for (let i = a0; i < a1; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
  for (let i = b0; i < b1; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}
