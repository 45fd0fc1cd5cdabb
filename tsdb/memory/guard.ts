/**
 * The memory guard: watches the JS heap against the budget's heap share (budget.ts) so
 * the server refuses work before V8 runs out of heap, instead of dying of it.
 *
 * The limit is the heap share of horae.memory.budget_bytes, or V8's own heap limit when
 * that is lower (a server not started on bin/horae.js's heap-limited thread). The heap is
 * sampled on demand: by check() (each HTTP write and query), and by over() (telnet) when
 * the last sample is older than SAMPLE_MS. Only the work the guard admits makes the heap
 * grow, so an idle server is not woken to sample it: the timer samples every SAMPLE_MS
 * only while the guard is over (to see it go under and let telnet read again), and every
 * IDLE_SAMPLE_MS otherwise (the figures of /api/stats). Past HIGH of the limit the guard is
 * `over`: it drops the caches it was given (onPressure) and runs a full collection, at
 * most once per PRESSURE_EVERY_MS (the heap in use counts garbage too, and an idle server
 * allocates nothing that would make V8 collect it), and while over, HTTP writes
 * and queries get 503 with message(), telnet sessions stop reading and answer the lines
 * they hold with a `put:` error line. It is under again below LOW of the limit (the gap
 * keeps it from flapping on every sample).
 *
 * Idle collection: when IDLE_TICKS whole IDLE_SAMPLE_MS passed with no work admitted (no
 * check() or over() call) and the footprint (heap in use plus external memory: buffers)
 * grew past the lowest level seen by IDLE_GROWTH of it (at least IDLE_GROWTH_MIN), the
 * guard runs one full collection (collectAndRelease). V8 collects as allocation goes on,
 * so after a load that stops, the garbage of its last stretch stays (and holds its memory: ~50-60 MiB after 1 M
 * points over telnet) until the next work; the collection returns it (and V8 releases the
 * freed pages) while the server is idle. 40 s: after the store's idle flush (30 s), whose
 * memstore slabs are garbage only once flushed. At most one per idle stretch.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TsdbError } from '../errors.js';
import { heapLimitBytes } from './budget.js';

const MiB = 1024 * 1024;
const SAMPLE_MS = 100;
const IDLE_SAMPLE_MS = 10_000;
const HIGH = 0.9;
const LOW = 0.75;
const PRESSURE_EVERY_MS = 5_000;
const IDLE_TICKS = 4;
const IDLE_GROWTH = 0.25;
const IDLE_GROWTH_MIN = 8 * MiB;

export interface MemoryGuardOptions {
  readonly budgetBytes: number;
  /** Heap bytes in use now (default: V8's used_heap_size). */
  readonly heapUsed?: () => number;
  /** Heap in use plus external memory, for the idle collection (default: V8's used_heap_size + external_memory). */
  readonly footprint?: () => number;
  /** V8's own heap limit (default: heap_size_limit). */
  readonly v8Limit?: number;
  /** Sample on a timer (default true; tests call check()). */
  readonly timer?: boolean;
  /** A full garbage collection (default: V8's gc(), exposed on first use). */
  readonly collect?: () => void;
}

export interface MemoryGuardStats {
  readonly heapUsedBytes: number;
  readonly heapLimitBytes: number;
  readonly budgetBytes: number;
  /** Times the guard went over. */
  readonly pressureEpisodes: number;
  /** Full collections run while idle after work (see the header). */
  readonly idleCollections: number;
  /** Writes and queries refused while over. */
  readonly refusals: number;
  readonly over: boolean;
}

export class MemoryGuard {
  readonly budgetBytes: number;
  /** The heap bytes at which the guard refuses work (HIGH of it) and frees caches. */
  readonly limitBytes: number;
  private readonly heapUsed: () => number;
  private readonly collect: () => void;
  private readonly pressureHandlers: (() => void)[] = [];
  private readonly waiters: (() => void)[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private isOver = false;
  private used = 0;
  private sampledAt = -Infinity;
  private timed: boolean;
  private lastPressureMs = -Infinity;
  private episodes = 0;
  private refused = 0;
  /** check() and over() calls: work admitted. */
  private admissions = 0;
  private admissionsAtTick = 0;
  /** Timer ticks in a row with no work admitted. */
  private idleTicks = 0;
  private readonly footprint: () => number;
  /** The lowest heap in use sampled since the last idle collection (or after it). */
  private baseline = Infinity;
  private idleCollections = 0;

  constructor(o: MemoryGuardOptions) {
    this.budgetBytes = o.budgetBytes;
    this.heapUsed = o.heapUsed ?? (() => getHeapStatistics().used_heap_size);
    this.footprint = o.footprint ?? (() => {
      const h = getHeapStatistics();
      return h.used_heap_size + h.external_memory;
    });
    this.collect = o.collect ?? collectAndRelease;
    this.limitBytes = Math.min(heapLimitBytes(o.budgetBytes), o.v8Limit ?? getHeapStatistics().heap_size_limit);
    this.timed = o.timer !== false;
    this.evaluate();
    this.schedule();
  }

  /** The timer's period follows the state: SAMPLE_MS while over, IDLE_SAMPLE_MS under. */
  private schedule(): void {
    if (!this.timed) return;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(), this.isOver ? SAMPLE_MS : IDLE_SAMPLE_MS);
    this.timer.unref();
  }

  /** Called (at most once per PRESSURE_EVERY_MS) when the guard goes or stays over: drop what can be rebuilt. */
  onPressure(handler: () => void): void {
    this.pressureHandlers.push(handler);
  }

  /** The timer: samples, and collects once when idle after growth (see the header). */
  tick(): void {
    this.idleTicks = this.admissions !== this.admissionsAtTick ? 0 : this.idleTicks + 1;
    this.evaluate();
    this.admissionsAtTick = this.admissions;
    const f = this.footprint();
    const due = this.idleTicks === IDLE_TICKS && f >= this.baseline + Math.max(IDLE_GROWTH_MIN, this.baseline * IDLE_GROWTH);
    if (f < this.baseline) this.baseline = f;
    if (this.isOver || !due) return;
    this.collect();
    this.idleCollections++;
    this.sample();
    this.baseline = this.footprint();
  }

  /** The lowest footprint seen (sampled on work, at most once per SAMPLE_MS: see over()). */
  private noteFootprint(): void {
    const f = this.footprint();
    if (f < this.baseline) this.baseline = f;
  }

  /** Samples the heap now (work admitted); true while over. */
  check(): boolean {
    this.admissions++;
    return this.evaluate();
  }

  private evaluate(): boolean {
    this.sample();
    if (this.isOver && performance.now() - this.lastPressureMs >= PRESSURE_EVERY_MS) {
      this.lastPressureMs = performance.now();
      for (const h of this.pressureHandlers) h();
      this.collect();
      this.sample();
    }
    return this.isOver;
  }

  private sample(): void {
    this.used = this.heapUsed();
    this.sampledAt = performance.now();
    if (this.admissions !== this.admissionsAtTick) this.noteFootprint();
    if (!this.isOver && this.used > HIGH * this.limitBytes) {
      this.isOver = true;
      this.episodes++;
      this.schedule();
    } else if (this.isOver && this.used < LOW * this.limitBytes) {
      this.isOver = false;
      this.schedule();
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** True while the heap is past the budget's share (sampled again when the last sample is older than SAMPLE_MS). */
  over(): boolean {
    this.admissions++;
    if (performance.now() - this.sampledAt >= SAMPLE_MS) this.evaluate();
    return this.isOver;
  }

  /** Resolves once the guard is under again (at once when it is). */
  whenUnder(): Promise<void> {
    if (!this.isOver) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Counts a refused write or query and returns its error (TSDB_OVERLOADED, HTTP 503). */
  refuse(): TsdbError {
    this.refused++;
    return new TsdbError('TSDB_OVERLOADED', this.message());
  }

  /** Why work is refused, with the figures and the key to raise. */
  message(): string {
    return `memory over budget: heap ${mib(this.used)} MiB in use, the limit is ${mib(this.limitBytes * HIGH)} MiB `
      + `(${Math.round(HIGH * 100)}% of ${mib(this.limitBytes)} MiB, the heap share of horae.memory.budget_bytes = ${mib(this.budgetBytes)} MiB); retry later`;
  }

  stats(): MemoryGuardStats {
    this.sample();
    return {
      heapUsedBytes: this.used, heapLimitBytes: this.limitBytes, budgetBytes: this.budgetBytes,
      pressureEpisodes: this.episodes, refusals: this.refused, over: this.isOver, idleCollections: this.idleCollections,
    };
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.timed = false;
    for (const w of this.waiters.splice(0)) w();
  }
}

let gc: (() => void) | undefined;

/**
 * A full collection that returns the freed heap to the OS: V8's gc() (exposed at run time
 * the first time it is needed), twice. One collection frees the objects, but their pages
 * are swept after it and stay committed; the second releases the pages left empty. After a
 * 1 M-point telnet load the idle collection left the server's old space at 34 MiB
 * committed for 16 MiB in use; with the second, at 20 (the server's RSS ~20 MiB lower).
 */
export function collectAndRelease(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose_gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
}

function mib(bytes: number): number {
  return Math.round(bytes / MiB);
}
