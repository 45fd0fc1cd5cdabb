/**
 * Interned byte keys for per-series state kept in columns (issue 32: structures fit for
 * millions). Each key (a TSUID) gets a dense number; its owner keeps the series' fields
 * in typed arrays indexed by that number (meta/newest-hours.ts, meta/last-values.ts), so
 * a million series are a few arrays, not a million objects, strings and map slots.
 *
 *   arena    the keys' bytes, packed (Uint8Array)
 *   starts   number → offset of its key in the arena (Uint32Array; a free number: the next free one)
 *   lens     number → key length (Uint16Array; 0: the number is free)
 *   hashes   number → its key's hash (Int32Array: growth rehashes without reading keys)
 *   slots    open addressing, linear probing, load ≤ 1/2 (Int32Array: number + 1, 0 empty)
 *
 * Removal shifts the following slots of the probe run back (no tombstones, so a lookup
 * stops at the first empty slot for ever); a removed number is reused by the next key
 * added, its key bytes become garbage the arena drops when it compacts (before growing,
 * when garbage is at least a quarter of it). Lookups take a key as two byte ranges (a
 * TSUID is a data row key without salt and base time) or a latin1 string (a TSUID as the
 * change log and the query side pass it).
 *
 * bytes() is the sum of the arrays' lengths: what is held, exactly. The table grows by
 * doubling when asked to add; its owner checks growthBytes() against its bound first and
 * removes keys instead when the growth would pass it. clear() shrinks it to the minimum.
 */

const MIN_NUMBERS = 16;
const MIN_ARENA = 256;
/** The longest key (lens is 16-bit; a TSUID is at most a few hundred bytes). */
export const MAX_KEY_BYTES = 0xffff;

export class KeyTable {
  private arena = new Uint8Array(MIN_ARENA);
  private top = 0;
  /** Arena bytes of removed keys. */
  private garbage = 0;
  private starts = new Uint32Array(MIN_NUMBERS);
  private lens = new Uint16Array(MIN_NUMBERS);
  private hashes = new Int32Array(MIN_NUMBERS);
  private slots = new Int32Array(MIN_NUMBERS * 2);
  /** Numbers handed out at least once (the rest of the capacity is unused). */
  private hi = 0;
  /** The first free number below hi, chained through starts; -1: none. */
  private freeHead = -1;
  private live = 0;
  /** Where removeEighth goes on from. */
  private hand = 0;
  /** Told of the new capacity after the number columns grew (the owner grows its own). */
  private readonly onGrow: (capacity: number) => void;
  /** Applied to every hash (tests narrow it to force collisions). */
  private readonly mix: (h: number) => number;

  constructor(onGrow: (capacity: number) => void = () => undefined, mix: (h: number) => number = (h) => h) {
    this.onGrow = onGrow;
    this.mix = mix;
  }

  /** Keys held. */
  get size(): number {
    return this.live;
  }

  /** Numbers the columns have room for (owners size their columns to it). */
  get capacity(): number {
    return this.starts.length;
  }

  /** Numbers ever handed out since the last clear (a number ≥ this is unused). */
  get highWater(): number {
    return this.hi;
  }

  /** Bytes of the arrays: the table's whole memory but for a few fields. */
  bytes(): number {
    return this.arena.byteLength + this.starts.byteLength + this.lens.byteLength + this.hashes.byteLength + this.slots.byteLength;
  }

  /** True when number n holds a key. */
  has(n: number): boolean {
    return n >= 0 && n < this.hi && this.lens[n]! > 0;
  }

  /** The number of key k[a0, a1) ++ k[b0, b1), or -1. */
  find(k: Uint8Array, a0: number, a1: number, b0 = a1, b1 = a1): number {
    const len = a1 - a0 + b1 - b0;
    const h = this.mix(hashRanges(k, a0, a1, b0, b1));
    const mask = this.slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const v = this.slots[s]!;
      if (v === 0) return -1;
      const n = v - 1;
      if (this.hashes[n] === h && this.lens[n] === len && this.equalRanges(this.starts[n]!, k, a0, a1, b0, b1)) return n;
    }
  }

  /** The number of the key whose bytes are the char codes of latin1 string `s`, or -1. */
  findLatin1(s: string): number {
    const h = this.mix(hashLatin1(s));
    const mask = this.slots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = this.slots[i]!;
      if (v === 0) return -1;
      const n = v - 1;
      if (this.hashes[n] === h && this.lens[n] === s.length && this.equalLatin1(this.starts[n]!, s)) return n;
    }
  }

  /** The number of key k[a0, a1) ++ k[b0, b1), added when absent (it may grow the table). */
  add(k: Uint8Array, a0: number, a1: number, b0 = a1, b1 = a1): number {
    const had = this.find(k, a0, a1, b0, b1);
    if (had >= 0) return had;
    const len = a1 - a0 + b1 - b0;
    const at = this.place(len);
    this.arena.set(k.subarray(a0, a1), at);
    this.arena.set(k.subarray(b0, b1), at + a1 - a0);
    return this.enter(at, len, this.mix(hashRanges(k, a0, a1, b0, b1)));
  }

  /** add() of the key given as a latin1 string. */
  addLatin1(s: string): number {
    const had = this.findLatin1(s);
    if (had >= 0) return had;
    const at = this.place(s.length);
    for (let i = 0; i < s.length; i++) this.arena[at + i] = s.charCodeAt(i);
    return this.enter(at, s.length, this.mix(hashLatin1(s)));
  }

  /** Removes number n's key (n is free from now on and may be handed out again). */
  remove(n: number): void {
    if (!this.has(n)) return;
    const mask = this.slots.length - 1;
    let s = this.hashes[n]! & mask;
    while (this.slots[s] !== n + 1) s = (s + 1) & mask;
    // Backward shift: each later slot of the run moves into the hole unless its home lies
    // cyclically in (hole, slot].
    let hole = s;
    for (let j = (s + 1) & mask; this.slots[j] !== 0; j = (j + 1) & mask) {
      const home = this.hashes[this.slots[j]! - 1]! & mask;
      const stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (stays) continue;
      this.slots[hole] = this.slots[j]!;
      hole = j;
    }
    this.slots[hole] = 0;
    this.garbage += this.lens[n]!;
    this.lens[n] = 0;
    this.starts[n] = this.freeHead < 0 ? 0xffffffff : this.freeHead;
    this.freeHead = n;
    this.live--;
  }

  /**
   * Removes an eighth of the keys (at least one): the next live numbers after the last one
   * this removed, a hand going round the numbers (roughly the oldest-inserted first), each
   * after `onRemove(n)` (the owner clears its columns' row n). The owners' bound eviction.
   */
  removeEighth(onRemove: (n: number) => void): void {
    let goal = Math.max(1, Math.ceil(this.live / 8));
    const hi = this.hi;
    const from = this.hand;
    for (let i = 0; goal > 0 && i < hi; i++) {
      const n = (from + i) % hi;
      if (!this.has(n)) continue;
      onRemove(n);
      this.remove(n);
      goal--;
      this.hand = n + 1;
    }
  }

  /** The key of number n (a view of the arena: valid until the next add or remove). */
  keyOf(n: number): Uint8Array {
    return this.arena.subarray(this.starts[n]!, this.starts[n]! + this.lens[n]!);
  }

  /** The key of number n as a latin1 string. */
  latin1Of(n: number): string {
    return Buffer.from(this.arena.buffer, this.arena.byteOffset + this.starts[n]!, this.lens[n]!).toString('latin1');
  }

  /** True when the next add() of a new key grows the number columns (owners' columns double with them). */
  growsNumbers(): boolean {
    return this.freeHead < 0 && this.hi === this.starts.length;
  }

  /** The bytes add() of a `len`-byte key would add to bytes() (0: it fits as it is). */
  growthBytes(len: number): number {
    let n = 0;
    if (this.freeHead < 0 && this.hi === this.starts.length) n += numberBytes(this.starts.length);
    if (this.top + len > this.arena.length && !(this.garbage >= this.arena.length / 4 && this.top - this.garbage + len <= this.arena.length)) {
      let a = this.arena.length;
      while (this.top - this.garbage + len > a) a *= 2;
      if (a === this.arena.length) a *= 2;
      n += a - this.arena.length;
    }
    return n;
  }

  /** Removes every key and shrinks the arrays to the minimum. */
  clear(): void {
    this.arena = new Uint8Array(MIN_ARENA);
    this.top = 0;
    this.garbage = 0;
    this.starts = new Uint32Array(MIN_NUMBERS);
    this.lens = new Uint16Array(MIN_NUMBERS);
    this.hashes = new Int32Array(MIN_NUMBERS);
    this.slots = new Int32Array(MIN_NUMBERS * 2);
    this.hi = 0;
    this.freeHead = -1;
    this.live = 0;
    this.hand = 0;
    this.onGrow(MIN_NUMBERS);
  }

  /** Arena offset for a new key of `len` bytes: compacts or grows the arena as needed. */
  private place(len: number): number {
    if (len < 1 || len > MAX_KEY_BYTES) throw new RangeError(`a key of ${len} bytes (1..${MAX_KEY_BYTES})`);
    if (this.top + len > this.arena.length) {
      const liveBytes = this.top - this.garbage;
      let size = this.arena.length;
      if (!(this.garbage >= size / 4 && liveBytes + len <= size)) {
        while (liveBytes + len > size) size *= 2;
        if (size === this.arena.length) size *= 2;
      }
      this.compact(size);
    }
    const at = this.top;
    this.top += len;
    return at;
  }

  /** Copies the live keys into a new arena of `size` bytes, in number order. */
  private compact(size: number): void {
    const old = this.arena;
    const arena = new Uint8Array(size);
    let top = 0;
    for (let n = 0; n < this.hi; n++) {
      const len = this.lens[n]!;
      if (len === 0) continue;
      const s = this.starts[n]!;
      arena.set(old.subarray(s, s + len), top);
      this.starts[n] = top;
      top += len;
    }
    this.arena = arena;
    this.top = top;
    this.garbage = 0;
  }

  /** Gives the key at arena[at, at+len) a number and a slot. */
  private enter(at: number, len: number, h: number): number {
    let n = this.freeHead;
    if (n >= 0) {
      const next = this.starts[n]!;
      this.freeHead = next === 0xffffffff ? -1 : next;
    } else {
      if (this.hi === this.starts.length) this.grow();
      n = this.hi++;
    }
    this.starts[n] = at;
    this.lens[n] = len;
    this.hashes[n] = h;
    this.live++;
    this.insertSlot(n, h);
    return n;
  }

  private insertSlot(n: number, h: number): void {
    const mask = this.slots.length - 1;
    let s = h & mask;
    while (this.slots[s] !== 0) s = (s + 1) & mask;
    this.slots[s] = n + 1;
  }

  /** Doubles the number columns and the slots, rehashing from the hashes column. */
  private grow(): void {
    const cap = this.starts.length * 2;
    const starts = new Uint32Array(cap);
    starts.set(this.starts);
    const lens = new Uint16Array(cap);
    lens.set(this.lens);
    const hashes = new Int32Array(cap);
    hashes.set(this.hashes);
    this.starts = starts;
    this.lens = lens;
    this.hashes = hashes;
    this.slots = new Int32Array(cap * 2);
    for (let n = 0; n < this.hi; n++) if (this.lens[n]! > 0) this.insertSlot(n, this.hashes[n]!);
    this.onGrow(cap);
  }

  private equalRanges(at: number, k: Uint8Array, a0: number, a1: number, b0: number, b1: number): boolean {
    const a = this.arena;
    for (let i = a0; i < a1; i++) if (a[at++] !== k[i]) return false;
    for (let i = b0; i < b1; i++) if (a[at++] !== k[i]) return false;
    return true;
  }

  private equalLatin1(at: number, s: string): boolean {
    const a = this.arena;
    for (let i = 0; i < s.length; i++) if (a[at + i] !== s.charCodeAt(i)) return false;
    return true;
  }
}

/** Bytes the number columns and slots add when `capacity` numbers double. */
function numberBytes(capacity: number): number {
  return capacity * (4 + 2 + 4) + capacity * 2 * 4;
}

/** FNV-1a over k[a0, a1) then k[b0, b1), then murmur3's finalizer. In memory only. */
export function hashRanges(k: Uint8Array, a0: number, a1: number, b0: number, b1: number): number {
  let h = 0x811c9dc5;
  for (let i = a0; i < a1; i++) h = Math.imul(h ^ k[i]!, 0x01000193);
  for (let i = b0; i < b1; i++) h = Math.imul(h ^ k[i]!, 0x01000193);
  return finish(h);
}

/** hashRanges of the bytes a latin1 string stands for. */
function hashLatin1(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ (s.charCodeAt(i) & 0xff), 0x01000193);
  return finish(h);
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}
