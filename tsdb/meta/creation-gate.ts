/**
 * The fence between series recording and the index cleanup's deletion of UIDs
 * (index-cleanup.ts): when a pass is about to delete some UIDs (step 2), every server
 * refuses to record a series carrying one of them (`retiredIn`: a retryable error; the
 * next try resolves its names again) and tells the pass once the recordings in flight
 * before have left (`settled`). The pass's end (step 3) keeps the deleted ones refused
 * here for good (a series carrying one was built from a name resolved before its
 * deletion) and lets the others go. UIDs announced but never settled by an end (the pass
 * died) stop being refused after PENDING_MS.
 *
 * Owns: the recordings in flight, the UIDs being deleted (pending), the UIDs deleted.
 */
import type { UidKind } from '../uid/uid-kind.js';

/** How long UIDs announced for deletion are refused without the pass's end. */
export const PENDING_MS = 10 * 60_000;

export class CreationGate {
  private seq = 0;
  private readonly inFlight = new Set<number>();
  private readonly retired: Record<UidKind, Set<string>> = { metric: new Set(), tagk: new Set(), tagv: new Set() };
  /** UIDs (hex) a pass is deleting → when it announced them (ms). */
  private readonly pending: Record<UidKind, Map<string, number>> = { metric: new Map(), tagk: new Map(), tagv: new Map() };
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Counts a recording in flight; its token goes to leave(). */
  enter(): number {
    const t = ++this.seq;
    this.inFlight.add(t);
    return t;
  }

  leave(token: number): void {
    this.inFlight.delete(token);
  }

  /** Resolves once every recording that entered before this call has left. */
  async settled(): Promise<void> {
    const upTo = this.seq;
    for (;;) {
      let open = false;
      for (const t of this.inFlight) if (t <= upTo) open = true;
      if (!open) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** UIDs (hex) of `kind` a pass is about to delete: refused from now on. */
  pend(kind: UidKind, hexIds: Iterable<string>): void {
    const at = this.now();
    for (const h of hexIds) this.pending[kind].set(h, at);
  }

  /** A pass ended: `deleted` (hex, by kind) are refused for good, the other pending ones no longer. */
  settle(deleted: Readonly<Record<UidKind, Iterable<string>>>): void {
    for (const kind of ['metric', 'tagk', 'tagv'] as const) {
      for (const h of deleted[kind]) this.retired[kind].add(h);
      this.pending[kind].clear();
    }
  }

  /** Forgets the pending UIDs (the pass's end may have been missed: its deletions are in the store). */
  forgetPending(): void {
    for (const kind of ['metric', 'tagk', 'tagv'] as const) this.pending[kind].clear();
  }

  /** The kind of the first refused UID `tsuid` carries, or undefined. */
  retiredIn(tsuid: Uint8Array, w: { metric: number; tagk: number; tagv: number }): UidKind | undefined {
    const r = this.retired;
    const p = this.pending;
    if (r.metric.size + r.tagk.size + r.tagv.size + p.metric.size + p.tagk.size + p.tagv.size === 0) return undefined;
    const since = this.now() - PENDING_MS;
    const refused = (kind: UidKind, h: string): boolean => {
      if (r[kind].has(h)) return true;
      const at = p[kind].get(h);
      return at !== undefined && at > since;
    };
    if (refused('metric', hex(tsuid, 0, w.metric))) return 'metric';
    for (let at = w.metric; at + w.tagk + w.tagv <= tsuid.length; at += w.tagk + w.tagv) {
      if (refused('tagk', hex(tsuid, at, at + w.tagk))) return 'tagk';
      if (refused('tagv', hex(tsuid, at + w.tagk, at + w.tagk + w.tagv))) return 'tagv';
    }
    return undefined;
  }
}

export function hex(b: Uint8Array, from = 0, to = b.length): string {
  let s = '';
  for (let i = from; i < to; i++) s += b[i]!.toString(16).padStart(2, '0');
  return s;
}
