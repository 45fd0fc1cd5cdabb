/**
 * The read point (MVCC): sequence numbers are assigned when a write is applied to the
 * memstore, but readers see a write only once it is acknowledged by the WAL, and only
 * after every earlier write is too, so a reader never sees a write that could still be lost
 * with an earlier one kept (HBase MultiVersionConcurrencyControl).
 */
export class SeqTracker {
  /** Every write with seq <= visibleSeq is acknowledged. */
  visibleSeq: number;
  /** Last seq of each write in flight, in assignment order, with its done flag. */
  private readonly inflight: { last: number; done: boolean }[] = [];
  private head = 0;
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** Set by releaseWaiters: the read point will not move again, so nobody waits for it. */
  private released = false;
  /** Read snapshots in use: seq → number of reads holding it. */
  private readonly held = new Map<number, number>();

  constructor(lastSeq: number) {
    this.visibleSeq = lastSeq;
  }

  /** Registers a write covering seqs up to `last` (call in assignment order). */
  begin(last: number): { last: number; done: boolean } {
    const w = { last, done: false };
    this.inflight.push(w);
    return w;
  }

  /** Marks a write acknowledged and advances the read point over the done prefix. */
  complete(w: { last: number; done: boolean }): void {
    w.done = true;
    const q = this.inflight;
    while (this.head < q.length && q[this.head]!.done) {
      this.visibleSeq = q[this.head]!.last;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      q.splice(0, this.head);
      this.head = 0;
    }
    if (this.waiters.length > 0) {
      const still: typeof this.waiters = [];
      for (const x of this.waiters) {
        if (x.seq <= this.visibleSeq) x.resolve();
        else still.push(x);
      }
      this.waiters = still;
    }
  }

  /**
   * The store failed: the read point will not move again. Resolves every waiter now, and
   * every later waitVisible at once (a write the log acknowledges after an earlier one
   * failed must not wait for it); they find their seq still above visibleSeq.
   */
  releaseWaiters(): void {
    this.released = true;
    for (const x of this.waiters.splice(0)) x.resolve();
  }

  /**
   * Registers a read at `seq` until releaseSnapshot(seq), so compactions keep what it may
   * still see (oldestSnapshot). Returns the seq.
   */
  holdSnapshot(seq: number): number {
    this.held.set(seq, (this.held.get(seq) ?? 0) + 1);
    return seq;
  }

  releaseSnapshot(seq: number): void {
    const n = this.held.get(seq);
    if (n === undefined) throw new Error(`BUG: snapshot ${seq} released but not held`);
    if (n <= 1) this.held.delete(seq);
    else this.held.set(seq, n - 1);
  }

  /**
   * The oldest snapshot a read may still use: the oldest held one, or the read point. A
   * compaction may resolve (drop overwritten versions, deleted cells and markers) only
   * entries at or below it; every read now or later sees the same rows either way.
   */
  oldestSnapshot(): number {
    let m = this.visibleSeq;
    for (const s of this.held.keys()) if (s < m) m = s;
    return m;
  }

  /** Snapshots held (tests, stats). */
  get heldSnapshots(): number {
    let n = 0;
    for (const c of this.held.values()) n += c;
    return n;
  }

  /** Resolves once seq is visible, or at once after releaseWaiters (seq then stays above visibleSeq). */
  waitVisible(seq: number): Promise<void> {
    if (seq <= this.visibleSeq || this.released) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }
}
