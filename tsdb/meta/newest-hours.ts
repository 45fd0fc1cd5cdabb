/**
 * Newest-hour hints: for each series, the newest base hour any of its data rows has, kept
 * in memory so that /api/query/last reads one row per series (one batched get) instead of
 * scanning every salt bucket backwards.
 *
 * A hint is trusted ("verified") only once a read has seen the series' newest row: the
 * reverse scan of lastPoints, which starts past every row the series has, future ones
 * included. From then on the write path keeps it exact: it reports every (series, hour)
 * it writes into before the write is acknowledged (tsdb/write/write-group.ts
 * `onRowWritten`), and an hour only ever moves forward (max). Writes reported while no
 * hint is trusted are kept as unverified lower bounds, so a scan that misses a write made
 * during it still ends with the right hour.
 *
 * So a hint can be too new, never too old, while this process is the only writer of the
 * data table (the embedded and memory stores). Where other servers write too, their writes
 * reach `written` through the change log (meta/change-log.ts) after they are stored, as
 * this process's own do before: a hint is then too old only until the log has been read
 * (docs/SCALING.md states the bound); a batch too big to list by series distrusts the
 * hints of its metrics older than its newest hour (`distrustMetrics`). Rows removed later
 * (DELETE /api/query, retention, a write that failed after it was reported) leave a hint
 * pointing at an empty or missing row: the reader then `forget`s it (the hint stays as an
 * untrusted lower bound) and falls back to the scan for that series.
 *
 * Columnar (issue 32): the TSUIDs are interned in a KeyTable (catalog/key-table.ts) and
 * each one's hint is a number in a Uint32Array column: (base hour / 3600) × 2, + 1 when
 * trusted. No object, string or map slot per series.
 *
 * Bounded in bytes (`maxBytes`): bytes is the arrays' length (the table's and the
 * column's), exactly; when an add would grow them past the bound, an eighth of the hints
 * is dropped instead (a hand going round the series numbers: roughly the oldest-inserted,
 * as freed numbers are reused by newer hints), a part, never the whole.
 * A drop loses what writes reported, so trust is suspended (`beginRead` answers -1) until
 * a read begins with no write in flight: every write reported before the drop has then
 * landed where a scan sees it. A read that began before a drop trusts nothing it found.
 */
import { latin1 } from '../../core/api/bytes.js';
import { KeyTable } from '../catalog/key-table.js';

/** Default bound of the hints' bytes. */
export const NEWEST_HOURS_MAX_BYTES = 64 * 1024 * 1024;

export class NewestHours {
  /** TSUID → series number (its row in `hours`). */
  private readonly keys: KeyTable;
  /** By series number: base hour / 3600 × 2, + 1 when trusted. */
  private hours = new Uint32Array(0);
  private readonly maxBytes: number;
  private readonly writesInFlight: () => boolean;
  private epoch = 0;
  private suspended = false;
  /** Where the next drop starts (a series number). */

  constructor(writesInFlight: () => boolean, maxBytes = NEWEST_HOURS_MAX_BYTES) {
    this.writesInFlight = writesInFlight;
    this.maxBytes = Math.max(1, maxBytes);
    this.keys = new KeyTable((capacity) => {
      const h = new Uint32Array(capacity);
      if (capacity >= this.hours.length) h.set(this.hours);
      this.hours = h;
    });
    this.hours = new Uint32Array(this.keys.capacity);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Bytes held: the arrays' lengths. */
  get bytes(): number {
    return this.keys.bytes() + this.hours.byteLength;
  }

  /** The trusted newest base hour (epoch s) of the series, if any. */
  trusted(tsuid: Uint8Array): number | undefined {
    const n = this.keys.find(tsuid, 0, tsuid.length);
    if (n < 0) return undefined;
    const v = this.hours[n]!;
    return v % 2 === 1 ? ((v - 1) / 2) * 3600 : undefined;
  }

  /** The write path writes a row of the series (TSUID as latin1) at `baseSec`. */
  written(tsuidKey: string, baseSec: number): void {
    const n = this.keys.findLatin1(tsuidKey);
    if (n >= 0) return this.raise(n, baseSec);
    // The number first: the insert may grow the column (a new array).
    const m = this.insert(null, tsuidKey, 0, 0, 0);
    this.hours[m] = hourOf(baseSec) * 2;
  }

  /** written() of the series of data row key `key` (its TSUID: the key without salt and base time). */
  writtenRow(key: Uint8Array, saltWidth: number, metricWidth: number, baseSec: number): void {
    const base = saltWidth + metricWidth;
    const n = this.keys.find(key, saltWidth, base, base + 4, key.length);
    if (n >= 0) return this.raise(n, baseSec);
    const m = this.insert(key, '', saltWidth, base, base + 4);
    this.hours[m] = hourOf(baseSec) * 2;
  }

  /** A token for `establish`, taken before a read that may establish hints; -1: none may. */
  beginRead(): number {
    if (this.suspended && !this.writesInFlight()) this.suspended = false;
    return this.suspended ? -1 : this.epoch;
  }

  /**
   * A read that began with `token` saw the series' newest row at `baseSec`: from now on the
   * hint is trusted (with any newer hour the write path reported meanwhile).
   */
  establish(tsuid: Uint8Array, baseSec: number, token: number): void {
    if (token !== this.epoch) return;
    let n = this.keys.find(tsuid, 0, tsuid.length);
    if (n < 0) {
      // Absent, so no write raced the read unreported (a hint dropped since the read began
      // would have moved the epoch): the hints the insert may drop are other series'.
      n = this.insert(tsuid, '', 0, tsuid.length, tsuid.length);
      this.hours[n] = 0;
    }
    const v = this.hours[n]!;
    this.hours[n] = Math.max(hourOf(baseSec) * 2, v - (v % 2)) + 1;
  }

  /** The trusted hint led to a row without points: it stays only as an untrusted lower bound. */
  forget(tsuid: Uint8Array): void {
    const n = this.keys.find(tsuid, 0, tsuid.length);
    if (n >= 0 && this.hours[n]! % 2 === 1) this.hours[n] = this.hours[n]! - 1;
  }

  /**
   * Another server wrote series of these metrics (UID as latin1, `metricWidth` chars → the
   * newest base hour written, epoch s), too many to list: their trusted hints older than
   * that are distrusted (one pass over the hints).
   */
  distrustMetrics(metrics: ReadonlyMap<string, number>, metricWidth: number): void {
    for (let n = 0; n < this.keys.highWater; n++) {
      const v = this.hours[n]!;
      if (v % 2 === 0 || !this.keys.has(n)) continue;
      const hour = metrics.get(String.fromCharCode(...this.keys.keyOf(n).subarray(0, metricWidth)));
      if (hour !== undefined && ((v - 1) / 2) * 3600 < hour) this.hours[n] = v - 1;
    }
  }

  /** Trust nothing until reads establish it again (what writes reported is kept). */
  distrustAll(): void {
    for (let n = 0; n < this.keys.highWater; n++) this.hours[n] = this.hours[n]! & ~1;
  }

  /** Moves number n's hint up to `baseSec`, keeping its trust. */
  private raise(n: number, baseSec: number): void {
    const v = this.hours[n]!;
    const h = hourOf(baseSec) * 2;
    if (h > v - (v % 2)) this.hours[n] = h + (v % 2);
  }

  /**
   * A number for a new key — key[a0, a1) ++ key[b0, end), or the latin1 string `text` when
   * `key` is null — after dropping an eighth of the hints while adding would pass the bound.
   */
  private insert(key: Uint8Array | null, text: string, a0: number, a1: number, b0: number): number {
    const len = key === null ? text.length : a1 - a0 + key.length - b0;
    while (this.keys.size > 0 && this.bytes + this.growth(len) > this.maxBytes) this.dropEighth();
    return key === null ? this.keys.addLatin1(text) : this.keys.add(key, a0, a1, b0, key.length);
  }

  /** Bytes an add of a `len`-byte key would add: the table's growth and the column's with it. */
  private growth(len: number): number {
    const g = this.keys.growthBytes(len);
    return this.keys.growsNumbers() ? g + this.hours.byteLength : g;
  }

  private dropEighth(): void {
    this.keys.removeEighth((n) => {
      this.hours[n] = 0;
    });
    this.epoch++;
    this.suspended = true;
  }
}

/** A base time (epoch s, hour-aligned) as an hour number. */
function hourOf(baseSec: number): number {
  return Math.floor(baseSec / 3600);
}

/** The TSUID of a data row key (salt and base time left out), as NewestHours keys it. */
export function tsuidKeyOfRowKey(key: Uint8Array, saltWidth: number, metricWidth: number): string {
  // One flat string (a concatenation char by char would keep a rope: ~4× the memory).
  const n = key.length - saltWidth - 4;
  if (scratch.length < n) scratch = new Uint8Array(Math.max(n, scratch.length * 2));
  const metricEnd = saltWidth + metricWidth;
  scratch.set(key.subarray(saltWidth, metricEnd), 0);
  scratch.set(key.subarray(metricEnd + 4), metricWidth);
  return latin1(scratch.subarray(0, n));
}

let scratch = new Uint8Array(64);
