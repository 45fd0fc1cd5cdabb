/**
 * The servers sharing a store (tsdb/SCHEMA.md "Server heartbeats"): where other processes
 * write the store too (capabilities.singleWriter false), every server writes a heartbeat
 * row every BEAT_INTERVAL_MS — its id, address, version, start time, the time of the
 * beat and a few counters — and a last one marked `stopped` when it stops cleanly. Any
 * server lists them all (/api/stats, the operator page): a server whose last beat is older
 * than SILENT_AFTER_MS without a `stopped` one has died or lost the store. Rows expire
 * with the family's TTL, so servers gone for a week drop off the list. On a store with one
 * writer nothing is written: the list is this server alone.
 *
 * A server dying loses nothing acknowledged either way: every acknowledged point is in the
 * store before its acknowledgement (docs/SCALING.md); the heartbeat only reports.
 */
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import type { Table, TableSpec } from '../../core/api/store.js';

export const SERVERS_TABLE = 'tsdb-servers';
export const SERVERS_FAMILY = 'h';
export const BEAT_QUALIFIER = Uint8Array.of(0x62); // 'b'
export const SERVERS_TTL_MS = 7 * 24 * 3600_000;
export const BEAT_INTERVAL_MS = 5_000;
export const SILENT_AFTER_MS = 3 * BEAT_INTERVAL_MS;

export function serversTableSpec(): TableSpec {
  return { name: SERVERS_TABLE, families: [{ name: SERVERS_FAMILY, maxVersions: 1, ttlMs: SERVERS_TTL_MS }] };
}

/** One heartbeat: the value of a server's row, as UTF-8 JSON. */
export interface ServerBeat {
  /** 16 hex digits, random per process; also the row key. */
  readonly id: string;
  /** host:port it listens on. */
  readonly address: string;
  readonly version: string;
  readonly startedMs: number;
  readonly beatMs: number;
  /** Set on the last beat of a clean stop. */
  readonly stopped?: boolean;
  /** Cumulative since the start (points written and rejected, series created, queries, change-log entries applied). */
  readonly counters: Readonly<Record<string, number>>;
}

/** A listed server: its last beat, how old it is, and what that means. */
export interface ServerView extends ServerBeat {
  readonly ageMs: number;
  /** live: beat within SILENT_AFTER_MS; stopped: stopped cleanly; silent: neither (died or cut off). */
  readonly state: 'live' | 'stopped' | 'silent';
  /** This process. */
  readonly self: boolean;
}

export function encodeBeat(b: ServerBeat): Uint8Array {
  return utf8(JSON.stringify(b));
}

/** The beat in a row's value; undefined when it is not one. */
export function decodeBeat(v: Uint8Array): ServerBeat | undefined {
  try {
    const b = JSON.parse(fromUtf8(v)) as Partial<ServerBeat>;
    if (typeof b.id !== 'string' || typeof b.address !== 'string' || typeof b.beatMs !== 'number' || typeof b.startedMs !== 'number') return undefined;
    return { id: b.id, address: b.address, version: String(b.version ?? ''), startedMs: b.startedMs, beatMs: b.beatMs, ...(b.stopped === true ? { stopped: true } : {}), counters: b.counters ?? {} };
  } catch {
    return undefined;
  }
}

export interface ServerSelf {
  readonly id: string;
  readonly version: string;
  readonly startedMs: number;
  address(): string;
  counters(): Record<string, number>;
}

/** This server's heartbeat, and the list of every server's (one per server process). */
export class ServerRegistry {
  private readonly table: Table | undefined;
  private readonly me: ServerSelf;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private beats = 0;
  private failures = 0;

  /** `table`: the servers table, or undefined where this process is the store's one writer. */
  constructor(table: Table | undefined, me: ServerSelf, now: () => number = Date.now) {
    this.table = table;
    this.me = me;
    this.now = now;
  }

  get id(): string {
    return this.me.id;
  }

  /** Beats now, then every BEAT_INTERVAL_MS until stop(). */
  async start(): Promise<void> {
    await this.beat();
    if (this.table === undefined) return;
    this.timer = setInterval(() => void this.beat(), BEAT_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops beating; the last beat says `stopped`. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.beat(true);
  }

  /** Every server's last beat (this one's as of now), oldest start first. */
  async list(): Promise<ServerView[]> {
    const now = this.now();
    const out = new Map<string, ServerView>();
    if (this.table !== undefined) {
      for await (const rows of this.table.scan({ families: [SERVERS_FAMILY] })) {
        for (const r of rows) {
          const b = r.cells[0] === undefined ? undefined : decodeBeat(r.cells[0].value);
          if (b !== undefined) out.set(b.id, view(b, now, b.id === this.me.id));
        }
      }
    }
    out.set(this.me.id, view(this.current(now, false), now, true));
    return [...out.values()].sort((a, b) => a.startedMs - b.startedMs || (a.id < b.id ? -1 : 1));
  }

  /** Beats written, and the ones that failed (the store was unreachable). */
  stats(): { readonly beats: number; readonly failures: number } {
    return { beats: this.beats, failures: this.failures };
  }

  private current(now: number, stopped: boolean): ServerBeat {
    return {
      id: this.me.id, address: this.me.address(), version: this.me.version, startedMs: this.me.startedMs, beatMs: now,
      ...(stopped ? { stopped: true } : {}), counters: this.me.counters(),
    };
  }

  private beat(stopped = false): Promise<void> {
    const table = this.table;
    if (table === undefined) return Promise.resolve();
    const p = (async () => {
      try {
        const value = encodeBeat(this.current(this.now(), stopped));
        await table.mutate([{ key: utf8(this.me.id), mutations: [{ type: 'put', family: SERVERS_FAMILY, qualifier: BEAT_QUALIFIER, value }] }]);
        this.beats++;
      } catch {
        // NB: reported by the counter; the next beat tries again and the server keeps serving.
        this.failures++;
      }
    })();
    this.beating = p;
    return p;
  }
}

function view(b: ServerBeat, now: number, self: boolean): ServerView {
  const ageMs = Math.max(0, now - b.beatMs);
  const state = b.stopped === true ? 'stopped' : self || ageMs <= SILENT_AFTER_MS ? 'live' : 'silent';
  return { ...b, ageMs, state, self };
}
