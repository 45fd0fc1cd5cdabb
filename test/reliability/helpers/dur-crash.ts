/**
 * The crash-under-load loop shared by the durability tests (RocksDB's blackbox crash test,
 * adapted): a child server takes HTTP puts (plain and ?sync) and telnet puts from several
 * writers while it flushes, compacts and splits (small memstores and regions, see
 * CRASH_CONFIG); after a random (seeded) moment it is killed with SIGKILL and restarted on
 * the same data directory, several times in a row. After the last restart the ledger
 * reads everything back through /api/query.
 */
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { Ledger } from './dur-ledger.js';
import type { VerifyReport } from './dur-ledger.js';
import { httpWriter, newCounters, telnetWriter } from './dur-load.js';
import type { Target, WriterCounters } from './dur-load.js';
import { prng, sleep, startChild, storeStats, tempDir } from './dur-child.js';
import type { Child } from './dur-child.js';

/** Longest wait, over a whole run, for the first compaction and split (see runCrashLoop). */
const COVERAGE_WAIT_MS = 20_000;
/** A life of the server that does not reach its acknowledgements within this is killed anyway. */
const LIFE_TIMEOUT_MS = 30_000;

/** Small memstores, files and regions, so a few seconds of load flush, compact and split. */
export const CRASH_CONFIG: readonly string[] = [
  'horae.salt.buckets = 2',
  'horae.storage.memstore_flush_bytes = 16384',
  'horae.storage.region_split_bytes = 32768',
  'horae.storage.lsm_compaction_min_files = 2',
  'horae.storage.wal_file_bytes = 131072',
  'horae.hour_compaction.grace_ms = 0',
  'horae.hour_compaction.idle_ms = 300',
  'horae.hour_compaction.interval_ms = 200',
];

export interface CrashLoopOptions {
  readonly seed: number;
  readonly kills: number;
  /**
   * Each life of the server lasts until it acknowledged this many points (and, while the
   * run has not yet seen a compaction and a split, one of each, waiting 20 s at most over
   * the run; or 30 s passed, on a very busy machine), then a further uniform [0, maxExtraMs) ms: the kill lands at a random
   * moment, after enough data for flushes, compactions and splits to run.
   */
  readonly acksPerLife: number;
  readonly maxExtraMs: number;
  readonly httpWriters: number;
  readonly telnetWriters: number;
  readonly maxBatch: number;
  /** Share of HTTP batches sent with ?sync. Default 0.5. */
  readonly syncFraction?: number;
  readonly env?: Readonly<Record<string, string>>;
  readonly config?: readonly string[];
}

export interface CrashLoopResult {
  readonly kills: number;
  readonly report: VerifyReport;
  readonly counters: WriterCounters;
  /** Summed over the server's lives (each life's counters start at 0). */
  readonly flushes: number;
  readonly compactions: number;
  readonly splits: number;
  readonly finalRegions: number;
  readonly finalStats: Awaited<ReturnType<typeof storeStats>>;
  readonly ms: number;
  readonly finalExitCode: number | null;
  /** Only after a loss: the same reads again, a moment later and after a graceful restart. */
  readonly recheck?: string;
}

export async function runCrashLoop(o: CrashLoopOptions): Promise<CrashLoopResult> {
  const started = Date.now();
  const tmp = tempDir('horae-dur-');
  const dataDir = join(tmp.dir, 'data');
  mkdirSync(dataDir);
  const random = prng(o.seed);
  const ledger = new Ledger();
  const counters = newCounters();
  const target: Target = { port: 0 };
  let stopped = false;
  const load = { ledger, target, counters, isStopped: () => stopped, maxBatch: o.maxBatch, syncFraction: o.syncFraction ?? 0.5 };
  const writers: Promise<void>[] = [];
  let w = 0;
  for (let i = 0; i < o.httpWriters; i++, w++) writers.push(httpWriter(w, { ...load, random: prng(o.seed * 31 + w) }));
  for (let i = 0; i < o.telnetWriters; i++, w++) writers.push(telnetWriter(w, { ...load, random: prng(o.seed * 31 + w) }));
  const start = (): Promise<Child> => startChild({ dataDir, config: o.config ?? CRASH_CONFIG, ...(o.env === undefined ? {} : { env: o.env }) });
  let flushes = 0;
  let compactions = 0;
  let splits = 0;
  let coverageWaited = 0;
  let coverageWaitFrom = 0;
  try {
    for (let k = 0; k < o.kills; k++) {
      ledger.life = k;
      const child = await start();
      target.port = child.port;
      const acks = (): number => counters.httpAcked + counters.telnetAcked;
      const lifeStart = acks();
      const deadline = Date.now() + LIFE_TIMEOUT_MS;
      let until = Infinity;
      let life = { flushesDone: 0, compactionsDone: 0, splitsDone: 0 };
      while (Date.now() < until) {
        // Until the run has seen a compaction and a split, a life also waits for them, for
        // at most COVERAGE_WAIT_MS over the whole run (so the test stays within its timeout).
        const covered = compactions + life.compactionsDone > 0 && splits + life.splitsDone > 0;
        const reached = acks() - lifeStart >= o.acksPerLife;
        if (reached && !covered && coverageWaitFrom === 0) coverageWaitFrom = Date.now();
        const waitMore = reached && !covered && coverageWaited + (Date.now() - coverageWaitFrom) < COVERAGE_WAIT_MS;
        if (until === Infinity && ((reached && !waitMore) || Date.now() > deadline)) {
          if (coverageWaitFrom !== 0) coverageWaited += Date.now() - coverageWaitFrom;
          coverageWaitFrom = 0;
          until = Date.now() + Math.floor(random() * o.maxExtraMs);
        }
        await sleep(Math.min(150, Math.max(0, until - Date.now())));
        if (Date.now() >= until) break;
        try {
          life = await storeStats(child.base);
        } catch {
          // busy: the next poll will do
        }
      }
      await child.kill9();
      target.port = 0;
      flushes += life.flushesDone;
      compactions += life.compactionsDone;
      splits += life.splitsDone;
    }
    ledger.life = o.kills;
    const last = await start();
    target.port = last.port;
    await sleep(300);
    stopped = true;
    await Promise.all(writers);
    const report = await ledger.verify(last.base);
    const finalStats = await storeStats(last.base);
    // On a loss, tell a read that missed points (the same server answering again, a moment
    // later) from points the store lost (still missing after a graceful restart).
    let recheck: string | undefined;
    const lost = (r: VerifyReport): number => r.missing.length + r.wrongValue.length;
    if (lost(report) > 0) {
      await sleep(2000);
      const again = await ledger.verify(last.base);
      recheck = `re-read 2 s later: ${again.missing.length} missing, ${again.wrongValue.length} wrong`;
    }
    const finalExitCode = await last.stop();
    if (lost(report) > 0) {
      const reopened = await start();
      try {
        const after = await ledger.verify(reopened.base);
        recheck += `; after a graceful restart: ${after.missing.length} missing, ${after.wrongValue.length} wrong`;
      } finally {
        await reopened.stop();
      }
    }
    return {
      kills: o.kills, report, counters, flushes, compactions, splits, finalRegions: finalStats.regions, finalStats,
      ms: Date.now() - started, finalExitCode, ...(recheck === undefined ? {} : { recheck }),
    };
  } finally {
    stopped = true;
    await Promise.all(writers).catch(() => undefined);
    if (process.env.HORAE_DUR_KEEP === undefined) tmp.remove();
    else console.info(`kept ${tmp.dir}`);
  }
}

/** One line of figures for the test output and the report. */
export function describeResult(label: string, r: CrashLoopResult): string {
  return `${label}: ${r.kills} SIGKILLs survived in ${(r.ms / 1000).toFixed(1)} s; ${r.report.acked} points acknowledged ` +
    `(HTTP ${r.counters.httpAcked}, telnet ${r.counters.telnetAcked}), ${r.report.verified} verified, ` +
    `${r.report.unackedStored} unacknowledged but stored; flushes ${r.flushes}, compactions ${r.compactions}, ` +
    `splits ${r.splits} (regions at the end ${r.finalRegions}); connection errors ${r.counters.connectionErrors}` +
    (r.report.missingRuns.length > 0 ? `; missing: ${r.report.missingRuns.join('; ')}` : '') +
    (r.recheck !== undefined ? `; ${r.recheck}` : '');
}
