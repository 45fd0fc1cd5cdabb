/**
 * The index cleanup with several servers on one store (test helpers, shared by the memory
 * store test and the Bigtable emulator one): two Tsdbs, `cleaner` running passes while
 * `writer` writes series being removed, and the checks that nothing acknowledged is lost
 * and nothing dangles.
 */
import { expect } from 'vitest';
import { compareBytes, fromUtf8, latin1 } from '../../../core/api/bytes.js';
import type { Mutation, Store, Table, TableSpec } from '../../../core/api/store.js';
import { CLEANUP_ROW } from '../../../tsdb/meta/cleanup-row.js';
import { POSTINGS_FAMILY, POSTINGS_TABLE, postingKey } from '../../../tsdb/meta/postings.js';
import { META_TABLE } from '../../../tsdb/meta/series-index.js';
import { encodeSeriesKey, tsuidOfKey } from '../../../tsdb/schema/row-key.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { DATA_TABLE } from '../../../tsdb/tables.js';
import { pt } from '../helpers/tsdb-fixture.js';
import { UID_COUNTER_ROW, UID_FAMILY_ID, UID_FAMILY_NAME, UID_KINDS, UID_QUALIFIER, UID_TABLE } from '../../../tsdb/uid/uid-kind.js';

export const HOUR = 3_600_000;
export const T0 = 1_704_067_200_000;
export const CONFIG = { retention: '3h', retentionCleanup: true };

/** The store as one that other processes write too (capabilities.singleWriter false). */
export function shared(store: Store): Store {
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter: false } } }) as Store;
}

/** Hooks on the tables of a store: each may run before a call (and throw to fail it). */
export interface Hooks {
  mutate?: (table: string, rows: ReadonlyArray<{ key: Uint8Array; mutations: readonly Mutation[] }>) => Promise<void> | void;
  checkAndPut?: (table: string, key: Uint8Array, mutations: readonly Mutation[]) => Promise<void> | void;
}

export function hooked(store: Store, hooks: Hooks): Store {
  return Object.create(store, {
    createTable: {
      value: async (spec: TableSpec, opts?: { ifNotExists?: boolean }): Promise<Table> => {
        const t = await store.createTable(spec, opts);
        return Object.create(t, {
          mutate: {
            value: async (rows: ReadonlyArray<{ key: Uint8Array; mutations: readonly Mutation[] }>, o?: unknown): Promise<void> => {
              await hooks.mutate?.(spec.name, rows);
              return (t.mutate as (r: unknown, o?: unknown) => Promise<void>)(rows, o);
            },
          },
          checkAndPut: {
            value: async (key: Uint8Array, check: unknown, expected: unknown, mutations: readonly Mutation[], o?: unknown): Promise<boolean> => {
              await hooks.checkAndPut?.(spec.name, key, mutations);
              return (t.checkAndPut as (...a: unknown[]) => Promise<boolean>)(key, check, expected, mutations, o);
            },
          },
        }) as Table;
      },
    },
  }) as Store;
}

export function open(store: Store, clock: { now: number }): Promise<Tsdb> {
  return Tsdb.open(store, { now: () => clock.now, background: false, config: CONFIG });
}

/** Runs `fn` while `readers` apply the change log every 10 ms (as their feeds' timers would). */
export async function withFeeds<T>(readers: readonly Tsdb[], fn: () => Promise<T>): Promise<T> {
  let on = true;
  const loop = (async () => {
    while (on) {
      for (const r of readers) await r.catalog.pollChanges();
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  try {
    return await fn();
  } finally {
    on = false;
    await loop;
  }
}

/** The TSUID of a series whose names all exist (undefined when one does not). */
export async function tsuidOf(t: Tsdb, metric: string, tags: Record<string, string>): Promise<Uint8Array | undefined> {
  const m = await t.metrics.getId(metric);
  if (m === undefined) return undefined;
  const pairs: Uint8Array[] = [];
  for (const [k, v] of Object.entries(tags).sort()) {
    const kid = await t.tagks.getId(k);
    const vid = await t.tagvs.getId(v);
    if (kid === undefined || vid === undefined) return undefined;
    pairs.push(Uint8Array.from([...kid, ...vid]));
  }
  return tsuidOfKey(t.widths, encodeSeriesKey(t.widths, m, pairs));
}

/** The series is findable: its names map both ways, its index row and every posting are there. */
export async function expectFindable(store: Store, t: Tsdb, metric: string, tags: Record<string, string>): Promise<void> {
  t.catalog.dropCaches();
  const tsuid = await tsuidOf(t, metric, tags);
  expect(tsuid, `${metric} ${JSON.stringify(tags)}: names`).toBeDefined();
  const meta = await store.createTable({ name: META_TABLE, families: [{ name: 'name' }] }, { ifNotExists: true });
  const postings = await store.createTable({ name: POSTINGS_TABLE, families: [{ name: POSTINGS_FAMILY }] }, { ifNotExists: true });
  const [row] = await meta.get([tsuid!]);
  expect(row, `${metric} ${JSON.stringify(tags)}: index row`).toBeDefined();
  const w = t.widths;
  const keys: Uint8Array[] = [];
  for (let at = w.metric; at < tsuid!.length; at += w.tagk + w.tagv) keys.push(postingKey(w, tsuid!, at));
  expect((await postings.get(keys)).every((r) => r !== undefined), `${metric} ${JSON.stringify(tags)}: postings`).toBe(true);
}

/**
 * Nothing dangles: every forward UID row's id names it back and every reverse row's name
 * leads to it; every id an index row carries has both; every series of the index has its
 * postings; the cleanup row holds no intent.
 */
export async function expectConsistent(store: Store, t: Tsdb): Promise<void> {
  const uid = await store.createTable({ name: UID_TABLE, families: [{ name: UID_FAMILY_ID }, { name: UID_FAMILY_NAME }] }, { ifNotExists: true });
  const forward = new Map<string, Map<string, string>>(UID_KINDS.map((k) => [UID_QUALIFIER[k], new Map()]));
  const reverse = new Map<string, Map<string, string>>(UID_KINDS.map((k) => [UID_QUALIFIER[k], new Map()]));
  for await (const rows of uid.scan({})) {
    for (const r of rows) {
      if (compareBytes(r.key, UID_COUNTER_ROW) === 0) continue;
      for (const c of r.cells) {
        const q = fromUtf8(c.qualifier);
        if (c.family === UID_FAMILY_ID && forward.has(q)) forward.get(q)!.set(fromUtf8(r.key), latin1(c.value));
        if (c.family === UID_FAMILY_NAME && reverse.has(q)) reverse.get(q)!.set(latin1(r.key), fromUtf8(c.value));
      }
    }
  }
  for (const q of forward.keys()) {
    for (const [name, id] of forward.get(q)!) expect(reverse.get(q)!.get(id), `${q} ${name}: reverse row`).toBe(name);
    for (const [id, name] of reverse.get(q)!) expect(forward.get(q)!.get(name), `${q} ${name}: forward row`).toBe(id);
  }
  const w = t.widths;
  const postings = await store.createTable({ name: POSTINGS_TABLE, families: [{ name: POSTINGS_FAMILY }] }, { ifNotExists: true });
  for (const tsuid of await t.index.tsuids(new Uint8Array(0), Number.MAX_SAFE_INTEGER)) {
    expect(reverse.get('metrics')!.has(latin1(tsuid.subarray(0, w.metric))), 'metric of an index row').toBe(true);
    const keys: Uint8Array[] = [];
    for (let at = w.metric; at < tsuid.length; at += w.tagk + w.tagv) {
      expect(reverse.get('tagk')!.has(latin1(tsuid.subarray(at, at + w.tagk))), 'tagk of an index row').toBe(true);
      expect(reverse.get('tagv')!.has(latin1(tsuid.subarray(at + w.tagk, at + w.tagk + w.tagv))), 'tagv of an index row').toBe(true);
      keys.push(postingKey(w, tsuid, at));
    }
    expect((await postings.get(keys)).every((r) => r !== undefined), 'postings of an index row').toBe(true);
  }
  const [cleanup] = await postings.get([CLEANUP_ROW]);
  expect(cleanup?.cells.some((c) => c.qualifier.length === 1 && c.qualifier[0] === 0x69) ?? false, 'intent left').toBe(false);
}

/**
 * `a` cleans while `b` (another server on the same store) writes m.a{host=h0} from its
 * entry, the write reaching the store only once step 1 reached b, and slowly: the point is
 * acknowledged and the series stays findable; m.b{host=h1}, left alone, goes with its names,
 * and comes back new when written again; nothing dangles.
 */
export async function writeDuringPass(storeA: Store, storeB: Store): Promise<void> {
  const clock = { now: T0 };
  let holding = false;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const slow = async (table: string): Promise<void> => {
    if (table !== DATA_TABLE || !holding) return;
    await held;
    await new Promise((r) => setTimeout(r, 300));
  };
  const a = await open(storeA, clock);
  const b = await open(hooked(storeB, { mutate: slow }), clock);
  try {
    await b.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.b', T0, 2, { host: 'h1' })]);
    clock.now = T0 + 6 * HOUR;
    await a.retentionSweeper!.runOnce();
    await a.cleanupMember!.beat();
    await b.cleanupMember!.beat();
    holding = true;
    const write = b.ingest.write([pt('m.a', clock.now, 7, { host: 'h0' })]);
    const onStep = b.cleanupMember!.onStep.bind(b.cleanupMember);
    b.cleanupMember!.onStep = (c) => {
      onStep(c);
      if (c.step === 1) release();
    };
    await withFeeds([b], () => a.indexCleanup!.runOnce());
    expect(await write).toEqual([undefined]);
    expect(a.indexCleanup!.stats()).toMatchObject({ errors: 0, seriesRemoved: 1 });
    await expectFindable(storeA, a, 'm.a', { host: 'h0' });
    expect((await readSeries(a, 'm.a', { host: 'h0' }, T0, clock.now + 1)).map((p) => p.value)).toEqual([7]);
    expect(await tsuidOf(a, 'm.b', { host: 'h1' })).toBeUndefined();
    await withFeeds([b], () => b.ingest.write([pt('m.b', clock.now, 3, { host: 'h1' })]));
    await expectFindable(storeA, a, 'm.b', { host: 'h1' });
    await expectConsistent(storeA, a);
  } finally {
    release();
    await a.close();
    await b.close();
  }
}

/**
 * As `b` fences step 1 it writes both series being removed again, one in an hour kept, one
 * in an expired hour: both are revived (their rows' marks taken off), findable, nothing dangles.
 */
export async function writeAfterMark(storeA: Store, storeB: Store): Promise<void> {
  const clock = { now: T0 };
  const a = await open(storeA, clock);
  const b = await open(storeB, clock);
  try {
    await b.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.a', T0, 2, { host: 'h1' })]);
    clock.now = T0 + 6 * HOUR;
    await a.retentionSweeper!.runOnce();
    await a.cleanupMember!.beat();
    await b.cleanupMember!.beat();
    const writes: Array<Promise<unknown>> = [];
    const onStep = b.cleanupMember!.onStep.bind(b.cleanupMember);
    b.cleanupMember!.onStep = (c) => {
      onStep(c);
      if (c.step === 1) writes.push(b.ingest.write([pt('m.a', clock.now, 5, { host: 'h0' }), pt('m.a', T0 + 1000, 6, { host: 'h1' })]));
    };
    await withFeeds([b], () => a.indexCleanup!.runOnce());
    await Promise.all(writes);
    expect(writes).toHaveLength(1);
    await expectFindable(storeA, a, 'm.a', { host: 'h0' });
    await expectFindable(storeA, a, 'm.a', { host: 'h1' });
    await expectConsistent(storeA, a);
  } finally {
    await a.close();
    await b.close();
  }
}

/**
 * `a` deletes the names of m.a{host=h9} (its one series expired) while `b`, its caches still
 * holding them, records a new series m.b{host=h9}: the write starts as `a` logs step 2, and
 * its index write is held until `a` deleted a name's reverse row (or 1 s). The series b
 * acknowledges is findable and the names it carries stay; nothing dangles.
 */
export async function newSeriesDuringNameDelete(base: Store, wrap: (s: Store) => Store): Promise<void> {
  const clock = { now: T0 };
  let deleted!: () => void;
  const nameGone = new Promise<void>((r) => (deleted = r));
  let holdIndex = false;
  const a = await open(wrap(hooked(base, {
    checkAndPut: (table, _key, mutations) => {
      const m = mutations[0]!;
      if (table === UID_TABLE && m.type === 'deleteCell' && m.family === UID_FAMILY_NAME) deleted();
    },
  })), clock);
  const b = await open(wrap(hooked(base, {
    mutate: async (table) => {
      if (table === META_TABLE && holdIndex) await Promise.race([nameGone, new Promise((r) => setTimeout(r, 1000))]);
    },
  })), clock);
  try {
    await b.ingest.write([pt('m.a', T0, 1, { host: 'h9' })]);
    await b.ingest.write([pt('m.b', T0 + 6 * HOUR, 1, { host: 'h0' })]); // m.b and host stay
    clock.now = T0 + 6 * HOUR;
    await a.retentionSweeper!.runOnce();
    await a.cleanupMember!.beat();
    await b.cleanupMember!.beat();
    let write: Promise<unknown> | undefined;
    const step = a.catalog.cleanupStep.bind(a.catalog);
    a.catalog.cleanupStep = async (c) => {
      await step(c);
      if (c.step !== 2) return;
      holdIndex = true;
      write = b.ingest.write([pt('m.b', clock.now, 2, { host: 'h9' })]);
    };
    await withFeeds([b], () => a.indexCleanup!.runOnce());
    const outcome = ((await write) as unknown[])[0];
    holdIndex = false;
    if (outcome === undefined) await expectFindable(base, a, 'm.b', { host: 'h9' });
    else expect(outcome).toMatchObject({ code: 'TSDB_OVERLOADED' });
    await expectConsistent(base, a);
    // Written again (after a refusal: its names resolved anew): findable.
    await withFeeds([b], () => b.ingest.write([pt('m.b', clock.now + 1000, 3, { host: 'h9' })]));
    await expectFindable(base, a, 'm.b', { host: 'h9' });
    await expectConsistent(base, a);
  } finally {
    deleted();
    await a.close();
    await b.close();
  }
}
