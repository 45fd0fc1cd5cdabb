/**
 * The client ledger of the durability tests (RocksDB's expected state, HBase ITBLL's
 * "nodes only reference flushed nodes"): every point a writer sends is recorded, and
 * marked acknowledged only when the server said so — a 204 for an HTTP put, the reply to a
 * `version` barrier after telnet puts with no error line before it. The ledger lives in
 * the test process, which is never killed.
 *
 * Points are unique and self-checking: writer w owns the series `dur.m<w mod 4>{w=w<w>}`,
 * its n-th point has timestamp T0 + n seconds and value valueOf(w, n); nothing is written
 * twice, so "the value" of a point is never ambiguous.
 *
 * verify() reads every writer's series back through /api/query and reports acknowledged
 * points missing or wrong (loss), and stored points that were never sent or carry a
 * value that was never sent (phantoms).
 */

export const T0 = 1_700_000_000;

export function metricOf(writer: number): string {
  return `dur.m${writer % 4}`;
}

/** Deterministic value of writer w's n-th point: integers and quarter fractions. */
export function valueOf(writer: number, n: number): number {
  const x = (writer * 7919 + n * 104729) % 1_000_003;
  return n % 3 === 0 ? x + 0.25 * (n % 4) : x;
}

export interface WriterLog {
  readonly writer: number;
  /** Points sent: n < sent. */
  sent: number;
  /** Acknowledged point numbers (as ranges [from, to)), with the server life that acknowledged them. */
  readonly acked: [number, number, number][];
}

export interface VerifyReport {
  readonly acked: number;
  readonly verified: number;
  readonly missing: string[];
  readonly wrongValue: string[];
  readonly phantom: string[];
  /** Points sent without an acknowledgement that were stored anyway (allowed). */
  readonly unackedStored: number;
  /** The missing points as runs: `w<writer> [from, to)` of point numbers (the first 20). */
  readonly missingRuns: string[];
}

export class Ledger {
  readonly writers: WriterLog[] = [];
  /** The server life acknowledgements are now counted in (0, 1, ...: the crash loop sets it). */
  life = 0;

  writer(w: number): WriterLog {
    let log = this.writers[w];
    if (log === undefined) {
      log = { writer: w, sent: 0, acked: [] };
      this.writers[w] = log;
    }
    return log;
  }

  /** Reserves `count` point numbers of writer w (recorded as sent before the request goes out). */
  take(w: number, count: number): number {
    const log = this.writer(w);
    const from = log.sent;
    log.sent += count;
    return from;
  }

  ack(w: number, from: number, count: number): void {
    this.writer(w).acked.push([from, from + count, this.life]);
  }

  ackedCount(): number {
    let n = 0;
    for (const log of this.writers) if (log !== undefined) for (const [a, b] of log.acked) n += b - a;
    return n;
  }

  /** Reads every writer's series back from the server at `base` and compares. */
  async verify(base: string): Promise<VerifyReport> {
    const report = { acked: 0, verified: 0, missing: [] as string[], wrongValue: [] as string[], phantom: [] as string[], unackedStored: 0, missingRuns: [] as string[] };
    for (const log of this.writers) {
      if (log === undefined || log.sent === 0) continue;
      const stored = await readSeries(base, log.writer, log.sent);
      const ackedSet = new Uint8Array(log.sent);
      for (const [a, b] of log.acked) ackedSet.fill(1, a, b);
      let runFrom = -1;
      const endRun = (n: number): void => {
        if (runFrom >= 0 && report.missingRuns.length < 20) {
          const lives = new Set(log.acked.filter(([a, b]) => a < n && b > runFrom).map(([, , l]) => l));
          report.missingRuns.push(`w${log.writer} [${runFrom}, ${n}) acknowledged in life ${[...lives].join(',')}`);
        }
        runFrom = -1;
      };
      for (let n = 0; n < log.sent; n++) {
        if (ackedSet[n] === 1 && !stored.has(T0 + n)) {
          if (runFrom < 0) runFrom = n;
        } else endRun(n);
        if (ackedSet[n] === 1) report.acked++;
        const v = stored.get(T0 + n);
        stored.delete(T0 + n);
        const name = `${metricOf(log.writer)}{w=w${log.writer}} @${T0 + n}`;
        if (v === undefined) {
          if (ackedSet[n] === 1 && report.missing.length < 50) report.missing.push(name);
          else if (ackedSet[n] === 1) report.missing.push('…');
          continue;
        }
        if (v !== valueOf(log.writer, n)) {
          report.wrongValue.push(`${name}: ${v} instead of ${valueOf(log.writer, n)}`);
          continue;
        }
        if (ackedSet[n] === 1) report.verified++;
        else report.unackedStored++;
      }
      endRun(log.sent);
      for (const [ts, v] of stored) report.phantom.push(`${metricOf(log.writer)}{w=w${log.writer}} @${ts} = ${v}`);
    }
    return report;
  }
}

/** Every stored point of writer w's series (seconds → value). */
async function readSeries(base: string, w: number, sent: number): Promise<Map<number, number>> {
  const body = {
    start: T0 - 3600,
    end: T0 + sent + 3600,
    queries: [{ aggregator: 'none', metric: metricOf(w), tags: { w: `w${w}` } }],
  };
  const r = await fetch(`${base}/api/query`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(60_000) });
  const out = new Map<number, number>();
  if (r.status === 400 || r.status === 404) {
    const text = await r.text();
    // No such metric yet (nothing of this writer reached the store).
    if (/No such name/.test(text)) return out;
    throw new Error(`/api/query for writer ${w}: ${r.status} ${text}`);
  }
  if (r.status !== 200) throw new Error(`/api/query for writer ${w}: ${r.status} ${await r.text()}`);
  const res = (await r.json()) as { tags: Record<string, string>; dps: Record<string, number> }[];
  for (const s of res) {
    if (s.tags.w !== `w${w}`) continue;
    for (const [t, v] of Object.entries(s.dps)) out.set(Number(t), v);
  }
  return out;
}
