/**
 * A server's part in the index cleanup where servers share the store (tsdb/SCHEMA.md
 * "Index cleanup", docs/SCALING.md): whatever its own setting, every server
 *   - beats in the cleanup row (cleanup-row.ts) every BEAT_MS, so a pass knows who may be
 *     writing;
 *   - fences each step of a pass it reads in the change log (steps 1 and 2): the catalog
 *     applied it (its entries of the series being removed dropped, or the UIDs being
 *     deleted refused and every name cache dropped); then it waits until every write call
 *     and series recording made before has ended, applies the step once more (an entry
 *     made live by one of those calls is dropped again), and writes the step in its cell:
 *     from then on every write of those series reads the marked row and revives it, and
 *     no series carrying those UIDs is recorded;
 *   - drops every cache before each write while its beat has failed for FENCE_MS, so a
 *     server the passes take for gone (no beat for GONE_MS) writes nothing from old caches.
 * A write call still running DRAIN_MS after a step arrived delays the fence; the pass
 * waiting for it gives up and is tried again later.
 */
import type { Change } from './change-log.js';
import type { CleanupRow } from './cleanup-row.js';

export const BEAT_MS = 5_000;
/** A server whose beat could not be written for this long drops its caches before each write. */
export const FENCE_MS = 10_000;
/** A server whose beat is this old is taken as writing nothing from old caches. */
export const GONE_MS = 20_000;
/** How long a fence waits for the write calls in flight. */
export const DRAIN_MS = 30_000;

export interface CleanupMemberDeps {
  readonly row: CleanupRow;
  /** Applies a cleanup step to the catalog (Catalog.applyCleanup). */
  readonly apply: (c: Extract<Change, { kind: 'cleanup' }>) => void;
  /** Resolves true once every write call made before has ended (false after the timeout). */
  readonly writesEnded: (timeoutMs: number) => Promise<boolean>;
  /** Resolves once every series recording in flight before has left (CreationGate.settled). */
  readonly recordingsSettled: () => Promise<void>;
  readonly now: () => number;
}

export class CleanupMember {
  private readonly d: CleanupMemberDeps;
  private timer: NodeJS.Timeout | undefined;
  /** When the last beat was written (performance.now(), ms: monotonic, whatever the wall clock does). */
  private lastBeatOk: number;
  private pass = 0n;
  private step = 0;
  private fencing: Promise<void> = Promise.resolve();
  private failures = 0;

  constructor(deps: CleanupMemberDeps) {
    this.d = deps;
    this.lastBeatOk = performance.now();
  }

  /** Beats now, then every BEAT_MS until stop(). */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), BEAT_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.fencing;
    await this.d.row.leave().catch(() => undefined);
  }

  /** True while this server's beat has failed for FENCE_MS: its caches must not be used. */
  stale(): boolean {
    return performance.now() - this.lastBeatOk > FENCE_MS;
  }

  /** Beats that failed (the store was unreachable). */
  get beatFailures(): number {
    return this.failures;
  }

  /** Another server's cleanup step, applied by the catalog: fenced here, in order. */
  onStep(c: Extract<Change, { kind: 'cleanup' }>): void {
    if (c.step === 3) return;
    this.fencing = this.fencing.then(async () => {
      await this.fence(c);
    }).catch(() => undefined);
  }

  /** Waits for the writes made before, applies the step again and writes it in the cell. */
  async fence(c: Extract<Change, { kind: 'cleanup' }>): Promise<boolean> {
    if (!(await this.d.writesEnded(DRAIN_MS))) return false;
    await this.d.recordingsSettled();
    this.d.apply(c);
    this.pass = c.pass;
    this.step = c.step;
    await this.beat();
    return true;
  }

  /** Writes this server's beat now (also on its timer). */
  async beat(): Promise<void> {
    const at = performance.now();
    try {
      await this.d.row.beat(this.pass, this.step);
      this.lastBeatOk = at;
    } catch {
      // NB: counted; a server whose beats fail for FENCE_MS stops using its caches (stale()).
      this.failures++;
    }
  }
}
