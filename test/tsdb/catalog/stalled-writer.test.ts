/**
 * A writer stalled between taking a change-log number and writing its entry delays no other
 * server (docs/SCALING.md "Many TSDs on one table"): three Tsdbs on one store that declares
 * other writers, their feeds polling on their timers. Server A takes a number for its new
 * series and hangs before writing the entry; server B then creates a series of the same
 * metric; reader C, whose series plan of that metric is cached, answers B's series within
 * 1 s of B's acknowledgement, and A's within 1 s of A's once A's entry is written. A
 * writer that dies at its reservation or after it (its write unacknowledged, then sent to
 * B, which finds the series recorded) leaves no reader stale past GAP_WAIT_MS + 1 s.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import type { Mutation, Store, Table, TableSpec } from '../../../core/api/store.js';
import { CHANGES_TABLE, ChangeLog, GAP_WAIT_MS } from '../../../tsdb/meta/change-log.js';
import { executeQuery } from '../../../tsdb/query/execute.js';
import { parseQueryJson } from '../../../tsdb/query/query-spec.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const BOUND_MS = 1000;

function shared(store: Store): Store {
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter: false } } }) as Store;
}

interface Stall {
  gate: Promise<void> | undefined;
  held: number;
  /** What hangs: the entry's put (default), or the number's reservation (the counter's increment). */
  at?: 'put' | 'reserve';
}

/** A store whose change-log entry puts (or reservations) wait for `gate` while it is set. */
function stalling(store: Store, stall: Stall): Store {
  return Object.create(shared(store), {
    createTable: {
      value: async (spec: TableSpec, opts?: { ifNotExists?: boolean }): Promise<Table> => {
        const t = await store.createTable(spec, opts);
        if (spec.name !== CHANGES_TABLE) return t;
        return Object.create(t, {
          increment: {
            value: async (...args: unknown[]): Promise<bigint> => {
              if (stall.gate !== undefined && stall.at === 'reserve') {
                stall.held++;
                await stall.gate;
              }
              return (t.increment as (...a: unknown[]) => Promise<bigint>)(...args);
            },
          },
          mutate: {
            value: async (rows: ReadonlyArray<{ key: Uint8Array; mutations: readonly Mutation[] }>, o?: unknown): Promise<void> => {
              if (stall.gate !== undefined && stall.at !== 'reserve' && rows.some((r) => r.key.length === 8)) {
                stall.held++;
                await stall.gate;
              }
              return (t.mutate as (r: unknown, o?: unknown) => Promise<void>)(rows, o);
            },
          },
        }) as Table;
      },
    },
  }) as Store;
}

async function hosts(t: Tsdb, startMs: number): Promise<string[]> {
  const q = parseQueryJson({ start: startMs, end: startMs + 3_600_000, queries: [{ metric: 'm', aggregator: 'none', tags: { host: 'seed|a|b' } }] }, startMs); // literals: a cached plan holds the values that existed
  return (await executeQuery(t, q, { maxSeries: 100, maxPoints: 1000 })).series.map((s) => s.tags.host!).sort();
}

/** Ms until `t` answers `want` (polling every 20 ms, up to 10 s; Infinity if never). */
async function msUntil(t: Tsdb, startMs: number, want: string[]): Promise<number> {
  const from = Date.now();
  while (Date.now() - from < 10_000) {
    if (JSON.stringify(await hosts(t, startMs)) === JSON.stringify(want)) return Date.now() - from;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

/** Three servers on one memory store, `a` stalled by `stall`; the current hour and a timestamp in it. */
async function threeServers(stall: Stall): Promise<{ mem: Store; a: Tsdb; b: Tsdb; c: Tsdb; startMs: number; ts: number }> {
  const mem = await openMemoryStore();
  const config = { compactHours: false };
  const a = await Tsdb.open(stalling(mem, stall), { config });
  const b = await Tsdb.open(shared(mem), { config });
  const c = await Tsdb.open(shared(mem), { config });
  return { mem, a, b, c, startMs: Math.floor(Date.now() / 3_600_000) * 3_600_000, ts: Math.floor(Date.now() / 1000) - 1 };
}

describe('a writer stalled between its change-log number and its entry', () => {
  it('delays no other server: a reader sees another writer\'s new series within 1 s, and the stalled one\'s within 1 s of its acknowledgement', async () => {
    const stall: Stall = { gate: undefined, held: 0 };
    const { mem, a, b, c, startMs, ts } = await threeServers(stall);
    try {
      expect(await b.ingest.write([pt('m', ts, 1, { host: 'seed' })])).toEqual([undefined]);
      expect(await msUntil(c, startMs, ['seed'])).toBeLessThan(BOUND_MS);
      while ((c.catalog.feedStats()?.applied ?? 0) < 2) await new Promise((r) => setTimeout(r, 5)); // B's series and points entries
      expect(await hosts(c, startMs)).toEqual(['seed']); // C's plan of m is kept from here on, until its feed touches m

      let release!: () => void;
      stall.gate = new Promise<void>((r) => (release = r));
      const log = new ChangeLog(await mem.openTable(CHANGES_TABLE), new Uint8Array(8), 3);
      const before = await log.head();
      let aAcked = false;
      const aWrite = a.ingest.write([pt('m', ts, 2, { host: 'a' })]).then((o) => {
        aAcked = true;
        return o;
      });
      // A has taken its number and hangs before writing the entry.
      while (stall.held === 0) await new Promise((r) => setTimeout(r, 5));
      expect(await log.head()).toBe(before + 1n);
      stall.gate = undefined;

      expect(await b.ingest.write([pt('m', ts, 3, { host: 'b' })])).toEqual([undefined]);
      const seenB = await msUntil(c, startMs, ['b', 'seed']);
      expect(seenB).toBeLessThan(BOUND_MS);
      expect(aAcked).toBe(false); // A's series is in the store, not acknowledged, and not yet in C's plan

      release();
      expect(await aWrite).toEqual([undefined]);
      expect(await msUntil(c, startMs, ['a', 'b', 'seed'])).toBeLessThan(BOUND_MS);
      expect(c.catalog.feedStats()).toMatchObject({ unknown: 0 });
    } finally {
      await a.close();
      await b.close();
      await c.close();
    }
  }, 30_000);
  it.each(['reserve', 'put'] as const)('a writer dying at its %s: the series, sent again to another server, is in every answer within GAP_WAIT_MS + 1 s', async (at) => {
    const stall: Stall = { gate: undefined, held: 0, at };
    const { a, b, c, startMs, ts } = await threeServers(stall);
    try {
      expect(await b.ingest.write([pt('m', ts, 1, { host: 'seed' })])).toEqual([undefined]);
      while ((c.catalog.feedStats()?.applied ?? 0) < 2) await new Promise((r) => setTimeout(r, 5));
      expect(await hosts(c, startMs)).toEqual(['seed']);
      // A hangs for good (it "died"): its write is never acknowledged; the client sends it to B.
      stall.gate = new Promise<void>(() => undefined);
      void a.ingest.write([pt('m', ts, 2, { host: 'a' })]);
      while (stall.held === 0) await new Promise((r) => setTimeout(r, 5));
      stall.gate = undefined;
      expect(await b.ingest.write([pt('m', ts, 2, { host: 'a' })])).toEqual([undefined]);
      const seen = await msUntil(c, startMs, ['a', 'seed']);
      expect(seen).toBeLessThan(at === 'reserve' ? BOUND_MS : GAP_WAIT_MS + BOUND_MS);
    } finally {
      await b.close();
      await c.close();
    }
  }, 30_000);
});
