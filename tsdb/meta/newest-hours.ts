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
 * Bounded in bytes (`maxBytes`; a hint costs NEWEST_HOUR_BYTES beside its key,
 * memory/catalog-memory.ts): past that the oldest-inserted hints are dropped, an eighth
 * of the bound at a time (make-room.ts).
 * A drop loses what writes reported, so trust is suspended (`beginRead` answers -1) until
 * a read begins with no write in flight: every write reported before the drop has then
 * landed where a scan sees it. A read that began before a drop trusts nothing it found.
 */
import { latin1 } from '../../core/api/bytes.js';
import { NEWEST_HOUR_BYTES } from '../memory/catalog-memory.js';
import { makeRoom } from './make-room.js';

/** Default bound of the hints' bytes. */
export const NEWEST_HOURS_MAX_BYTES = 64 * 1024 * 1024;

export class NewestHours {
  /** TSUID (latin1) → base hour (epoch s) × 2, + 1 when trusted. */
  private readonly hours = new Map<string, number>();
  private readonly maxBytes: number;
  /** Bytes of the hints by the estimate. */
  private held = 0;
  private readonly writesInFlight: () => boolean;
  private epoch = 0;
  private suspended = false;

  constructor(writesInFlight: () => boolean, maxBytes = NEWEST_HOURS_MAX_BYTES) {
    this.writesInFlight = writesInFlight;
    this.maxBytes = Math.max(1, maxBytes);
  }

  get size(): number {
    return this.hours.size;
  }

  /** Bytes held, by the estimate. */
  get bytes(): number {
    return this.held;
  }

  /** The trusted newest base hour (epoch s) of the series, if any. */
  trusted(tsuid: Uint8Array): number | undefined {
    const v = this.hours.get(latin1(tsuid));
    return v !== undefined && v % 2 === 1 ? (v - 1) / 2 : undefined;
  }

  /** The write path writes a row of the series (TSUID as latin1) at `baseSec`. */
  written(tsuidKey: string, baseSec: number): void {
    const v = this.hours.get(tsuidKey);
    if (v === undefined) this.insert(tsuidKey, baseSec * 2);
    else if (baseSec * 2 > v - (v % 2)) this.hours.set(tsuidKey, baseSec * 2 + (v % 2));
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
    const key = latin1(tsuid);
    const v = this.hours.get(key);
    if (v === undefined) this.insert(key, baseSec * 2 + 1);
    else this.hours.set(key, Math.max(baseSec * 2, v - (v % 2)) + 1);
  }

  /** The trusted hint led to a row without points: it stays only as an untrusted lower bound. */
  forget(tsuid: Uint8Array): void {
    const key = latin1(tsuid);
    const v = this.hours.get(key);
    if (v !== undefined && v % 2 === 1) this.hours.set(key, v - 1);
  }

  /**
   * Another server wrote series of these metrics (UID as latin1, `metricWidth` chars → the
   * newest base hour written, epoch s), too many to list: their trusted hints older than
   * that are distrusted (one pass over the hints).
   */
  distrustMetrics(metrics: ReadonlyMap<string, number>, metricWidth: number): void {
    for (const [k, v] of this.hours) {
      if (v % 2 === 0) continue;
      const hour = metrics.get(k.slice(0, metricWidth));
      if (hour !== undefined && (v - 1) / 2 < hour) this.hours.set(k, v - 1);
    }
  }

  /** Trust nothing until reads establish it again (what writes reported is kept). */
  distrustAll(): void {
    for (const [k, v] of this.hours) if (v % 2 === 1) this.hours.set(k, v - 1);
  }

  private insert(key: string, v: number): void {
    const freed = makeRoom(this.hours, this.held + hintBytes(key), this.maxBytes, hintBytes);
    if (freed > 0) {
      this.held -= freed;
      this.epoch++;
      this.suspended = true;
    }
    this.hours.set(key, v);
    this.held += hintBytes(key);
  }
}

function hintBytes(key: string): number {
  return NEWEST_HOUR_BYTES + key.length;
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
