/**
 * RateHistory: a fixed-size ring of per-second rates derived from cumulative counters, so
 * that the operator page shows the last minutes as soon as it opens (GET /api/horae/overview
 * "history").
 *
 * Each `record(timeMs, counters)` after the first appends one sample: for every counter,
 * (value - previous value) / elapsed seconds. A counter that went down (it was reset: the
 * server's counters start at zero, a region's start again after a split) or is missing
 * gives `null` for that sample, never a negative or invented rate. A record whose time
 * does not advance is ignored. Samples are kept oldest first; the oldest is dropped when
 * `capacity` is reached.
 *
 * Single-threaded; no timers of its own (the caller decides when to sample).
 */

/** The history in columns, as uPlot draws it: `timesMs[i]` belongs to `rates[name][i]`. */
export interface RateColumns<K extends string> {
  /** End time (ms since the epoch) of each sample's interval, ascending. */
  readonly timesMs: number[];
  /** Per counter: the rate per second over the interval ending at timesMs[i], or null. */
  readonly rates: Record<K, (number | null)[]>;
}

export class RateHistory<K extends string> {
  readonly names: readonly K[];
  readonly capacity: number;
  private readonly times: Float64Array;
  /** Per counter, the ring of rates; NaN stands for null. */
  private readonly values: Float64Array[];
  /** Index of the oldest sample. */
  private head = 0;
  private size = 0;
  private lastTimeMs: number | undefined;
  private lastCounters: Partial<Record<K, number>> = {};

  /** REQUIRES: capacity >= 1; `names` distinct. */
  constructor(names: readonly K[], capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.names = [...names];
    this.capacity = capacity;
    this.times = new Float64Array(capacity);
    this.values = this.names.map(() => new Float64Array(capacity));
  }

  /** Time of the last record (the baseline of the next sample), or undefined before the first. */
  get lastRecordMs(): number | undefined {
    return this.lastTimeMs;
  }

  /** Number of samples held (at most `capacity`). */
  get length(): number {
    return this.size;
  }

  /** Records the counters' values at `timeMs`; appends a sample unless it is the first record. */
  record(timeMs: number, counters: Readonly<Partial<Record<K, number>>>): void {
    const prevTime = this.lastTimeMs;
    if (prevTime !== undefined && !(timeMs > prevTime)) return;
    if (prevTime !== undefined) {
      const seconds = (timeMs - prevTime) / 1000;
      const slot = (this.head + this.size) % this.capacity;
      this.times[slot] = timeMs;
      this.names.forEach((name, i) => {
        const before = this.lastCounters[name];
        const now = counters[name];
        const ok = before !== undefined && now !== undefined && Number.isFinite(before) && Number.isFinite(now) && now >= before;
        this.values[i]![slot] = ok ? (now - before) / seconds : Number.NaN;
      });
      if (this.size < this.capacity) this.size++;
      else this.head = (this.head + 1) % this.capacity;
    }
    this.lastTimeMs = timeMs;
    this.lastCounters = { ...counters };
  }

  /** The samples, oldest first, as fresh arrays. */
  columns(): RateColumns<K> {
    const timesMs: number[] = [];
    const rates = {} as Record<K, (number | null)[]>;
    for (const name of this.names) rates[name] = [];
    for (let k = 0; k < this.size; k++) {
      const slot = (this.head + k) % this.capacity;
      timesMs.push(this.times[slot]!);
      this.names.forEach((name, i) => {
        const v = this.values[i]![slot]!;
        rates[name].push(Number.isNaN(v) ? null : v);
      });
    }
    return { timesMs, rates };
  }
}
