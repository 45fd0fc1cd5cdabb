/**
 * The InternalIterator contract: one interface for memstore, SST block, SST file and
 * merged views (leveldb Iterator, Pebble InternalIterator). Entries are (key, value) pairs
 * of byte strings in the order of a comparator the creator fixes (for the engine, the
 * internal-key order of core/lsm/internal-key.ts).
 *
 * Positioning: `seekToFirst`, `seekToLast`, `seek(t)` (first entry with key >= t),
 * `seekForPrev(t)` (last entry with key <= t), `next`, `prev`. After any positioning call
 * `valid` tells whether the iterator is at an entry. `next`/`prev` REQUIRE `valid`.
 *
 * Lifetimes: the buffer returned by `key()` is valid only until the next positioning call
 * (iterators may reconstruct prefix-compressed keys in place); copy it to keep it.
 * `value()` returns a view into an immutable buffer and may be kept.
 *
 * Errors accumulate: when a block cannot be read or fails its checksum, the iterator
 * becomes invalid and `error()` returns the error (a StoreError with code
 * STORE_CORRUPTION or STORE_IO naming the file and offset). Callers check `error()` when
 * `valid` turns false.
 *
 * Iterators are synchronous and single-threaded; `close()` releases pinned blocks/files.
 */
export interface InternalIterator {
  readonly valid: boolean;
  seekToFirst(): void;
  seekToLast(): void;
  seek(target: Uint8Array): void;
  seekForPrev(target: Uint8Array): void;
  next(): void;
  prev(): void;
  key(): Uint8Array;
  value(): Uint8Array;
  error(): Error | undefined;
  close(): void;
}

export type Comparator = (a: Uint8Array, b: Uint8Array) => number;

/**
 * Optional in-place form of a Comparator: compares a[aStart, aEnd) with the whole of b, and
 * must return exactly what `compare(a.subarray(aStart, aEnd), b)` returns (sign and value),
 * without allocating. Lets block iterators compare decoded keys without creating views.
 */
export type RangeComparator = (a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array) => number;
