/**
 * The memstore's storage: slabs that entry bytes are appended to, the leaves of its sorted
 * index (numbers only, in typed arrays), and the key comparisons on bytes in place. See
 * memstore.ts for the structure as a whole.
 *
 * An entry is stored once, as [uvarint keyLen][key][uvarint valueLen][value] in a slab of
 * a `SlabArena`; a leaf holds, per entry, where its key is and its row-prefix numbers. No
 * per-entry JS object exists: views are made only when a reader asks (memstore-iterator.ts).
 */
import { compareRange } from '../api/bytes.js';
import { TRAILER_BYTES } from './internal-key.js';

/** Entries per leaf: a sorted run the inserts shift with `copyWithin`. */
export const LEAF_MAX = 256;
/** Default slab sizes: the first slab of a memstore, doubling up to the largest. */
export const SLAB_MIN_BYTES = 16 << 10;
export const SLAB_MAX_BYTES = 1 << 20;

/** Longest copy done by a loop instead of `TypedArray#set` (which has a fixed cost). */
const SHORT_COPY = 64;

export function copyBytes(dst: Uint8Array, d: number, src: Uint8Array, s: number, n: number): void {
  if (n <= SHORT_COPY) {
    for (let i = 0; i < n; i++) dst[d + i] = src[s + i]!;
  } else {
    dst.set(src.subarray(s, s + n), d);
  }
}

/** Bytes of the uvarint of a length (< 2^32); core/util/coding.ts uvarintSize, unrolled. */
export function uvarintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/**
 * Append-only byte storage. Slabs grow from `minBytes` to `maxBytes` (a memstore that
 * stays small holds little memory); an entry of a quarter of the next slab or more gets a
 * slab of its own, so the space a slab leaves unused at its end stays under a quarter of
 * it. Bytes, once written, never change: views of them stay valid for the arena's life.
 * Slabs live in SharedArrayBuffers, so a flush job on a worker thread reads them in place.
 */
export class SlabArena {
  readonly slabs: Uint8Array[] = [];
  /** A DataView of each slab (word-at-a-time key comparisons). */
  readonly views: DataView[] = [];
  /** Bytes of all slabs (capacity, not use). */
  allocatedBytes = 0;
  /** Where the last `reserve` put its bytes. */
  slab = 0;
  offset = 0;
  private cur = -1;
  private pos = 0;
  private nextBytes: number;
  private readonly maxBytes: number;

  constructor(minBytes = SLAB_MIN_BYTES, maxBytes = SLAB_MAX_BYTES) {
    this.nextBytes = minBytes;
    this.maxBytes = maxBytes;
  }

  /**
   * Reserves `n` bytes for a run of entries copied in one piece: as `reserve`, but a run
   * under a quarter of the largest slab size first grows the next slab's size until the
   * run counts as small, so runs fill shared slabs instead of each taking a slab of its own.
   */
  reserveRun(n: number): void {
    while (n * 4 >= this.nextBytes && this.nextBytes < this.maxBytes) this.nextBytes = Math.min(this.maxBytes, this.nextBytes * 2);
    this.reserve(n);
  }

  /** Reserves `n` bytes; they are at `slabs[this.slab]`, from `this.offset`. */
  reserve(n: number): void {
    if (this.cur >= 0 && this.pos + n <= this.slabs[this.cur]!.length) {
      this.slab = this.cur;
      this.offset = this.pos;
      this.pos += n;
      return;
    }
    if (n * 4 >= this.nextBytes) {
      // Large entry: a slab of its own; the current slab keeps taking small ones.
      this.slab = this.push(n);
      this.offset = 0;
      return;
    }
    this.cur = this.push(this.nextBytes);
    if (this.nextBytes < this.maxBytes) this.nextBytes = Math.min(this.maxBytes, this.nextBytes * 2);
    this.slab = this.cur;
    this.offset = 0;
    this.pos = n;
  }

  private push(bytes: number): number {
    const buf = slabBuffer(bytes);
    this.slabs.push(new Uint8Array(buf, 0, bytes));
    this.views.push(new DataView(buf, 0, bytes));
    this.allocatedBytes += bytes;
    return this.slabs.length - 1;
  }
}

/**
 * A slab's memory: shared (a flush hands the slabs to the job worker as they are, no copy),
 * and growable (a maximum length given), which makes V8 map it from the OS (mmap) instead
 * of taking it from the array-buffer allocator, glibc's malloc, whose per-thread arenas
 * keep freed memory resident: a flushed memstore's slabs stayed in holes of the writing
 * thread's arena (bench/results/TRIED.md, "Memory at rest"). Mapped memory goes back to
 * the OS when the slab is collected: after a 1 M-point telnet load left alone 50 s, the
 * server's RSS was 173 MiB against 198 and 198 with plain slabs. The views are fixed-length
 * (`new Uint8Array(buf, 0, n)`): a view that tracks a growable buffer's length would take
 * V8's slower resizable-buffer paths.
 */
export function slabBuffer(bytes: number): SharedArrayBuffer {
  return new (SharedArrayBuffer as GrowableSharedArrayBufferConstructor)(bytes, { maxByteLength: bytes });
}

/** ES2024's growable SharedArrayBuffer constructor (Node 20 has it; lib ES2022 does not type it). */
type GrowableSharedArrayBufferConstructor = new (bytes: number, options: { maxByteLength: number }) => SharedArrayBuffer;

/**
 * A sorted run of at most LEAF_MAX entries. Per entry i: `loc[4i..4i+3]` = slab index, key
 * offset, key length, value length (the value follows the key and its length's uvarint);
 * `pre[3i]`, `pre[3i+1]`, `pre[3i+2]` = the key's row-prefix numbers (rowPrefixAt of row
 * bytes 0–5, 6–11 and 12–17).
 */
export class Leaf {
  n = 0;
  readonly loc = new Uint32Array(LEAF_MAX * 4);
  readonly pre = new Float64Array(LEAF_MAX * 3);

  /** Inserts at `pos` (0..n), shifting later entries. REQUIRES: n < LEAF_MAX. */
  insert(pos: number, slab: number, off: number, klen: number, vlen: number, p1: number, p2: number, p3: number): void {
    const n = this.n;
    const loc = this.loc;
    const pre = this.pre;
    if (pos < n) {
      loc.copyWithin(4 * pos + 4, 4 * pos, 4 * n);
      pre.copyWithin(3 * pos + 3, 3 * pos, 3 * n);
    }
    const j = 4 * pos;
    loc[j] = slab;
    loc[j + 1] = off;
    loc[j + 2] = klen;
    loc[j + 3] = vlen;
    pre[3 * pos] = p1;
    pre[3 * pos + 1] = p2;
    pre[3 * pos + 2] = p3;
    this.n = n + 1;
  }

  /** Moves entries [from, n) into a new leaf and returns it. */
  splitOff(from: number): Leaf {
    const right = new Leaf();
    const n = this.n;
    right.loc.set(this.loc.subarray(4 * from, 4 * n));
    right.pre.set(this.pre.subarray(3 * from, 3 * n));
    right.n = n - from;
    this.n = from;
    return right;
  }
}

/**
 * Row bytes [from, from + 6) of the internal key at buf[o..], zero padded, as an exact
 * integer: ordering these first gives the same order as the rows' bytes (a zero pad never
 * exceeds a real byte, and equal prefixes fall through to the full comparison). Comparing
 * two numbers instead of two byte strings avoids touching the keys' memory on most steps
 * of a binary search, which is what random inserts into a large memstore spend their time
 * on (cache misses). REQUIRES: the row's bytes are within buf.
 */
export function rowPrefixAt(buf: Uint8Array, o: number, from: number): number {
  const rl = (buf[o]! << 8) | buf[o + 1]!;
  const end = from + 6 < rl ? from + 6 : rl;
  let v = 0;
  let i = from;
  for (; i < end; i++) v = v * 256 + buf[o + 2 + i]!;
  for (; i < from + 6; i++) v *= 256;
  return v;
}

/** Row bytes the three row-prefix numbers cover (rowPrefixAt at 0, 6 and 12). */
export const ROW_PREFIX_BYTES = 18;

/**
 * compareInternalKeys on two keys in slabs, a[as, ae) and b[bs, be) with their DataViews,
 * whose three row-prefix numbers are equal: so their rows agree in the bytes both have of
 * the first ROW_PREFIX_BYTES, and the row comparison starts after those. Rows, qualifiers
 * and trailers are compared 4 bytes a step (big-endian words order as bytes do): a random
 * insert into a large memstore ends its binary search among the cells of one row, where
 * every step compares two whole keys. Same sign as compareInternalKeys (not necessarily
 * the same value). REQUIRES: both are well-formed internal keys.
 */
export function compareKeysAfterPrefix(a: Uint8Array, av: DataView, as: number, ae: number, b: Uint8Array, bv: DataView, bs: number, be: number): number {
  const ra = (a[as]! << 8) | a[as + 1]!;
  const rb = (b[bs]! << 8) | b[bs + 1]!;
  const known = Math.min(ROW_PREFIX_BYTES, ra, rb);
  const fa = as + 2 + ra;
  const fb = bs + 2 + rb;
  let c = compareWords(a, av, as + 2 + known, fa, b, bv, bs + 2 + known, fb);
  if (c !== 0) return c;
  const qa = fa + 1 + a[fa]!;
  const qb = fb + 1 + b[fb]!;
  c = compareRange(a, fa + 1, qa, b, fb + 1, qb);
  if (c !== 0) return c;
  const ta = ae - TRAILER_BYTES;
  const tb = be - TRAILER_BYTES;
  c = compareWords(a, av, qa, ta, b, bv, qb, tb);
  if (c !== 0) return c;
  return compareWords(a, av, ta, ae, b, bv, tb, be);
}

/** compareRange (core/api/bytes.ts) 4 bytes a step through DataViews of a and b. */
export function compareWords(a: Uint8Array, av: DataView, as: number, ae: number, b: Uint8Array, bv: DataView, bs: number, be: number): number {
  const la = ae - as;
  const lb = be - bs;
  const n = la < lb ? la : lb;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const x = av.getUint32(as + i);
    const y = bv.getUint32(bs + i);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; i < n; i++) {
    const d = a[as + i]! - b[bs + i]!;
    if (d !== 0) return d;
  }
  return la - lb;
}
