/**
 * Retention on stores without row transforms (Bigtable, the memory store; on the embedded
 * store the row transform drops expired rows: compact/hour-transform.ts): once an hour of
 * the clock, every salt bucket is swept of its expired rows (tsdb/SCHEMA.md "Retention").
 *
 * A data row key is `[salt][metric][base hour][tags]`, so the expired rows of one metric in
 * one bucket are one key range: `[salt][metric]` up to `[salt][metric][first hour kept]`.
 * A sweep of a bucket deletes that range for every metric with a retention
 * (Table.deleteRange), the rule found by the metric's current name (retention.ts retentionOfName:
 * a metric created or renamed on another server gets its own rule, never a stale one).
 * Every range starts at hour 0, so a row written into an expired hour after a sweep goes
 * at the next one.
 *
 * Several servers on one store (capabilities.singleWriter false): each bucket is swept
 * once per clock hour by whichever server claims it first — a check-and-put of the
 * bucket's claim cell (the hour, the server) in the change-log table's sequence family
 * (tsdb/SCHEMA.md "Retention sweep claims"); the others skip it. A delete of an expired
 * row is the same whoever makes it, so a claimer that dies mid-sweep loses nothing: the
 * next hour's sweep covers what it left. On a store with one writer the claims are kept
 * in memory.
 */
import { PeriodicPass } from '../periodic-pass.js';
import { compareBytes, concatByteList, utf8 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';
import { writeBaseTimeAt } from '../schema/row-key.js';
import { saltBytes } from '../schema/salt.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { RetentionConfig } from './retention.js';
import { retentionOfName } from './retention.js';

/** How often a server looks for buckets not yet swept this hour. */
export const RETENTION_CHECK_MS = 60_000;
/** The claims row, in the change-log table's family `n` (no TTL). */
export const CLAIMS_ROW = utf8('retention');
export const CLAIMS_FAMILY = 'n';
/** Ranges deleted at once. */
const PARALLEL_RANGES = 8;
const HOUR_MS = 3_600_000;

/** A claim cell's value (tsdb/SCHEMA.md "Retention sweep claims"): the clock hour, the server. */
export function encodeClaim(hour: number, server: Uint8Array): Uint8Array {
  const value = new Uint8Array(4 + server.length);
  new DataView(value.buffer).setUint32(0, hour);
  value.set(server, 4);
  return value;
}

/** The clock hour of a claim cell's value, undefined when it is not one. */
export function claimedHour(v: Uint8Array): number | undefined {
  return v.length < 4 ? undefined : new DataView(v.buffer, v.byteOffset, 4).getUint32(0);
}

export interface RetentionSweepDeps {
  readonly data: Table;
  readonly widths: SchemaWidths;
  readonly retention: RetentionConfig;
  /** Every metric's UID and current name (UidTable.allNames). */
  readonly metrics: () => Promise<ReadonlyArray<readonly [Uint8Array, string]>>;
  /** The change-log table, where other servers share the store; claims are kept there. */
  readonly claims?: Table;
  /** This server, in its claims (8 bytes). */
  readonly server: Uint8Array;
  readonly now: () => number;
  readonly log?: (msg: string) => void;
}

export interface RetentionSweepStats {
  readonly passes: number;
  /** Buckets this server swept, and lost to another server that claimed them at the same time. */
  readonly bucketsSwept: number;
  readonly bucketsClaimedElsewhere: number;
  /** Key ranges deleted (one per bucket and metric with a retention). */
  readonly rangesDeleted: number;
  readonly errors: number;
  readonly lastError?: string;
}

export class RetentionSweeper {
  private readonly deps: RetentionSweepDeps;
  /** Bucket → the clock hour (epoch s) it was last swept, where claims are kept here. */
  private readonly sweptHere = new Map<number, number>();
  private readonly periodic = new PeriodicPass(() => this.pass(), RETENTION_CHECK_MS);
  private passes = 0;
  private bucketsSwept = 0;
  private claimedElsewhere = 0;
  private rangesDeleted = 0;
  private errors = 0;
  private lastError: string | undefined;

  constructor(deps: RetentionSweepDeps) {
    this.deps = deps;
  }

  /** Sweeps now, then every RETENTION_CHECK_MS until stop() (timer unref'd). */
  start(): void {
    this.periodic.start({ now: true });
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass: sweeps every bucket not yet swept this clock hour that this server claims. */
  runOnce(): Promise<void> {
    return this.periodic.runOnce();
  }

  stats(): RetentionSweepStats {
    return {
      passes: this.passes, bucketsSwept: this.bucketsSwept, bucketsClaimedElsewhere: this.claimedElsewhere, rangesDeleted: this.rangesDeleted,
      errors: this.errors, ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    };
  }

  private async pass(): Promise<void> {
    this.passes++;
    try {
      const now = this.deps.now();
      const hour = Math.floor(now / HOUR_MS) * 3600;
      const { saltWidth, saltBuckets } = this.deps.widths;
      const buckets = saltWidth === 0 ? 1 : saltBuckets;
      const mine = await this.claim(buckets, hour);
      if (mine.length === 0) return;
      const ranges = await this.expiredRanges(mine, now);
      for (let i = 0; i < ranges.length && !this.periodic.stopped; i += PARALLEL_RANGES) {
        await Promise.all(ranges.slice(i, i + PARALLEL_RANGES).map(async (r) => {
          await this.deps.data.deleteRange(r);
          this.rangesDeleted++;
        }));
      }
      this.bucketsSwept += mine.length;
    } catch (err) {
      this.errors++;
      this.lastError = (err as Error).message;
      this.deps.log?.(`retention sweep failed: ${this.lastError}`);
    }
  }

  /** The key ranges of expired rows, per bucket of `buckets` and metric with a retention. */
  private async expiredRanges(buckets: readonly number[], now: number): Promise<Array<{ start: Uint8Array; end: Uint8Array }>> {
    const { saltWidth } = this.deps.widths;
    const out: Array<{ start: Uint8Array; end: Uint8Array }> = [];
    for (const [id, name] of await this.deps.metrics()) {
      const keep = retentionOfName(this.deps.retention, name);
      if (keep === undefined) continue;
      // A row is expired once its whole hour is: base + 1 h <= now - keep.
      const firstKept = Math.floor((now - keep - HOUR_MS) / HOUR_MS) * 3600 + 3600;
      if (firstKept <= 0) continue;
      for (const b of buckets) {
        const start = concatByteList([saltBytes(b, saltWidth), id]);
        const end = new Uint8Array(start.length + 4);
        end.set(start);
        writeBaseTimeAt(end, start.length, firstKept);
        out.push({ start, end });
      }
    }
    return out;
  }

  /** The buckets (of 0..buckets-1) this server is to sweep for clock hour `hour`, claimed. */
  private async claim(buckets: number, hour: number): Promise<number[]> {
    const mine: number[] = [];
    const claims = this.deps.claims;
    if (claims === undefined) {
      for (let b = 0; b < buckets; b++) {
        if ((this.sweptHere.get(b) ?? -1) >= hour) continue;
        this.sweptHere.set(b, hour);
        mine.push(b);
      }
      return mine;
    }
    const [row] = await claims.get([CLAIMS_ROW], { families: [CLAIMS_FAMILY] });
    for (let b = 0; b < buckets; b++) {
      const qualifier = Uint8Array.of(b >>> 8, b & 0xff);
      const had = row?.cells.find((c) => compareBytes(c.qualifier, qualifier) === 0)?.value;
      if (had !== undefined && (claimedHour(had) ?? -1) >= hour) continue;
      const value = encodeClaim(hour, this.deps.server);
      const cell = { family: CLAIMS_FAMILY, qualifier };
      if (await claims.checkAndPut(CLAIMS_ROW, cell, had, [{ type: 'put', ...cell, value }], { durability: 'sync' })) mine.push(b);
      else this.claimedElsewhere++;
    }
    return mine;
  }
}
