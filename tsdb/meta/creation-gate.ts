/**
 * The fence between series creation and the index cleanup (index-cleanup.ts): while the
 * cleanup removes series and names, no series is recorded (Catalog.recordSeries waits at
 * `enter`), and the cleanup starts only once every recording in flight has left. A UID
 * the cleanup removed is never handed out again (the id counter only grows), so a series
 * carrying one was built from a name resolved before its removal (a cache, or a lookup
 * racing the cleanup): recording it is refused (`retiredIn`), and the write is refused
 * with a retryable error instead of storing a series no name leads to. Its next try
 * resolves the name again and gets a new UID.
 *
 * Owns: the closed state, the recordings in flight, the series being retired, the retired
 * UIDs of this process.
 */
import type { UidKind } from '../uid/uid-kind.js';

export class CreationGate {
  private inFlight = 0;
  private closed: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private drained: (() => void) | undefined;
  private readonly retired: Record<UidKind, Set<string>> = { metric: new Set(), tagk: new Set(), tagv: new Set() };
  /**
   * Series (TSUID as latin1) the cleanup is about to remove: recording one records it
   * again, whatever the index or its in-memory copy says, and takes it off this set (the
   * cleanup then keeps it).
   */
  readonly retiring = new Set<string>();

  /** Waits while the gate is closed, then counts a recording in flight. */
  async enter(): Promise<void> {
    while (this.closed !== undefined) await this.closed;
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.drained?.();
  }

  /** Closes the gate and resolves once no recording is in flight. */
  async close(): Promise<void> {
    if (this.closed !== undefined) throw new Error('BUG: the creation gate is closed twice');
    this.closed = new Promise<void>((r) => (this.open = r));
    if (this.inFlight > 0) await new Promise<void>((r) => (this.drained = r));
    this.drained = undefined;
  }

  reopen(): void {
    const open = this.open;
    this.closed = undefined;
    this.open = undefined;
    open?.();
  }

  /** UIDs (hex) of `kind` removed for good. */
  retire(kind: UidKind, hexIds: Iterable<string>): void {
    for (const h of hexIds) this.retired[kind].add(h);
  }

  /** The kind of the first retired UID `tsuid` carries, or undefined. */
  retiredIn(tsuid: Uint8Array, w: { metric: number; tagk: number; tagv: number }): UidKind | undefined {
    const r = this.retired;
    if (r.metric.size + r.tagk.size + r.tagv.size === 0) return undefined;
    if (r.metric.has(hex(tsuid, 0, w.metric))) return 'metric';
    for (let at = w.metric; at + w.tagk + w.tagv <= tsuid.length; at += w.tagk + w.tagv) {
      if (r.tagk.has(hex(tsuid, at, at + w.tagk))) return 'tagk';
      if (r.tagv.has(hex(tsuid, at + w.tagk, at + w.tagk + w.tagv))) return 'tagv';
    }
    return undefined;
  }
}

function hex(b: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += b[i]!.toString(16).padStart(2, '0');
  return s;
}
