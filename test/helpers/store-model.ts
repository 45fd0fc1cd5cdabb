/**
 * Model-based randomized runs (leveldb's table_test harness, Pebble's metamorphic tests): a
 * seeded generator emits operations that run against the store under test and the memory
 * store (the oracle) side by side; every read is compared. Engine-only steps (flush,
 * compact, reopen, crash) run on the store under test alone: they must not change any
 * answer. The seed is printed on failure; TEST_SEED=<n> replays one seed.
 */
import { expect } from 'vitest';
import type { Mutation, Row, RowFilter, ScanSpec, Store, Table, TableSpec } from '../../core/api/store.js';
import { toHex } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import { openMemoryStore } from '../../core/memory/memory-store.js';
import { Random } from '../../core/util/random.js';

export const MODEL_TABLE: TableSpec = {
  name: 'model',
  families: [
    { name: 'a' },
    { name: 'v3', maxVersions: 3 },
    { name: 'ttl', maxVersions: 2, ttlMs: 5_000 },
  ],
  splitPoints: [new Uint8Array([0x40]), new Uint8Array([0x80, 0x00])],
};

export interface SystemUnderTest {
  store: Store;
  /** Engine-only steps; each may replace `store` (reopen). */
  flush?(): Promise<void>;
  compact?(major: boolean): Promise<void>;
  reopen?(): Promise<void>;
  /** Called after the last comparison, before close (e.g. to check background work ran). */
  verify?(): Promise<void>;
}

/** Plain, comparable form of rows. */
export function plainRows(rows: readonly (Row | undefined)[]): unknown[] {
  return rows.map((r) =>
    r === undefined ? null : { key: toHex(r.key), cells: r.cells.map((c) => `${c.family}:${toHex(c.qualifier)}@${c.timestamp}=${toHex(c.value)}`) },
  );
}

async function collect(t: Table, spec: ScanSpec): Promise<unknown[]> {
  const out: Row[] = [];
  for await (const b of t.scan(spec)) out.push(...b);
  return plainRows(out);
}

async function outcome<T>(f: () => Promise<T>): Promise<unknown> {
  try {
    const v = await f();
    return { ok: typeof v === 'bigint' ? v.toString() : v === undefined ? null : v };
  } catch (e) {
    return { err: isStoreError(e) ? e.code : (e as Error).name };
  }
}

class Gen {
  readonly r: Random;
  private readonly keys: Uint8Array[] = [];

  constructor(seed: number) {
    this.r = new Random(seed);
    // A small key space with binary bytes, prefixes of each other, and keys on both sides
    // of every split point, so rows collide and cross regions.
    const bases = [[0x00], [0x00, 0x00], [0x01], [0x3f, 0xff], [0x40], [0x40, 0x00], [0x41], [0x7f], [0x80], [0x80, 0x00], [0x80, 0x00, 0x01], [0xfe], [0xff], [0xff, 0xff]];
    for (const b of bases) this.keys.push(new Uint8Array(b));
    for (let i = 0; i < 26; i++) this.keys.push(this.r.bytes(1 + this.r.int(4)));
  }

  key(): Uint8Array {
    return this.keys[this.r.int(this.keys.length)]!;
  }

  family(): string {
    return ['a', 'a', 'v3', 'v3', 'ttl'][this.r.int(5)]!;
  }

  qualifier(): Uint8Array {
    const qs = [[], [0x00], [0x01], [0x01, 0x00], [0x71], [0xff]];
    return new Uint8Array(qs[this.r.int(qs.length)]!);
  }

  ts(now: number): number | undefined {
    const x = this.r.int(4);
    if (x === 0) return undefined;
    return this.someTs(now);
  }

  /** Timestamps from a small set, so versions, markers and TTL boundaries collide often. */
  someTs(now: number): number {
    return now - 1_000 * this.r.int(9) + (this.r.chance(0.2) ? 1_000 : 0);
  }

  mutation(now: number): Mutation {
    const x = this.r.int(20);
    const family = this.family();
    if (x < 12) {
      const ts = this.ts(now);
      return { type: 'put', family, qualifier: this.qualifier(), value: this.r.bytes(this.r.int(12)), ...(ts === undefined ? {} : { timestamp: ts }) };
    }
    const upTo = this.r.chance(0.5) ? undefined : this.someTs(now);
    const up = upTo === undefined ? {} : { upTo };
    if (x < 15) return { type: 'deleteCell', family, qualifier: this.qualifier(), ...up };
    if (x < 17) return { type: 'deleteVersion', family, qualifier: this.qualifier(), timestamp: this.someTs(now) };
    if (x < 19) return { type: 'deleteFamily', family, ...up };
    return { type: 'deleteRow', ...up };
  }

  filter(): RowFilter {
    const k = this.key();
    switch (this.r.int(6)) {
      case 0:
        return { kind: 'prefix', prefix: k.subarray(0, 1) };
      case 1: {
        const template = new Uint8Array(2);
        template[1] = k[0]!;
        return { kind: 'fuzzyKey', rules: [{ template, mask: new Uint8Array([0, 1]) }] };
      }
      case 2:
        return { kind: 'keyRegex', pattern: '[\\x00-\\x7f].*' };
      case 3:
        return { kind: 'qualifierRange', family: 'v3', start: new Uint8Array([0x01]), end: new Uint8Array([0x72]) };
      case 4:
        return { kind: 'timeRange', range: { start: 1_000_000 - 5_000 + this.r.int(5_000) } };
      default:
        return { kind: 'and', filters: [{ kind: 'prefix', prefix: k.subarray(0, 1) }, { kind: 'qualifierRange', start: new Uint8Array([0x01]) }] };
    }
  }

  scanSpec(): ScanSpec {
    const spec: { -readonly [K in keyof ScanSpec]: ScanSpec[K] } = {};
    if (this.r.chance(0.5)) spec.start = this.key();
    if (this.r.chance(0.5)) spec.end = this.key();
    if (spec.start !== undefined && spec.end !== undefined && compare(spec.start, spec.end) > 0) [spec.start, spec.end] = [spec.end, spec.start];
    if (this.r.chance(0.3)) spec.reverse = true;
    if (this.r.chance(0.3)) spec.limit = 1 + this.r.int(8);
    if (this.r.chance(0.3)) spec.batchRows = 1 + this.r.int(4);
    if (this.r.chance(0.3)) spec.maxVersions = 1 + this.r.int(3);
    if (this.r.chance(0.3)) spec.filter = this.filter();
    if (this.r.chance(0.15)) spec.families = [this.family()];
    if (this.r.chance(0.15)) spec.timeRange = { start: 1_000_000 - 6_000, end: 1_000_000 + this.r.int(20_000) };
    return spec;
  }
}

function compare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export interface ModelRunOptions {
  readonly seed: number;
  readonly steps: number;
  /** Builds the system under test for a clock; called once. */
  readonly open: (clock: () => number) => Promise<SystemUnderTest>;
}

/** Runs one seeded operation log; throws (with the seed and step in the message) on divergence. */
export async function runModel(o: ModelRunOptions): Promise<void> {
  let now = 1_000_000;
  const clock = () => now;
  const g = new Gen(o.seed);
  const oracle = await openMemoryStore({ clock });
  const sut = await o.open(clock);
  const otab = await oracle.createTable(MODEL_TABLE);
  await sut.store.createTable(MODEL_TABLE);
  const tab = async () => sut.store.openTable(MODEL_TABLE.name);
  const log: string[] = [];
  const check = (step: number, what: string, got: unknown, want: unknown) => {
    expect(got, `seed ${o.seed} step ${step} ${what}\n(replay: TEST_SEED=${o.seed}); last ops:\n${log.slice(-12).join('\n')}`).toEqual(want);
  };
  try {
    for (let step = 0; step < o.steps; step++) {
      const x = g.r.int(100);
      const t = await tab();
      if (x < 40) {
        const rows: { key: Uint8Array; mutations: Mutation[] }[] = [];
        const n = 1 + g.r.int(3);
        for (let i = 0; i < n; i++) {
          const muts = [];
          const m = 1 + g.r.int(3);
          for (let j = 0; j < m; j++) muts.push(g.mutation(now));
          rows.push({ key: g.key(), mutations: muts });
        }
        log.push(`${step}: mutate ${JSON.stringify(rows, (_k, v) => (v instanceof Uint8Array ? toHex(v) : v))}`);
        const durability = g.r.chance(0.5) ? 'sync' : 'buffered';
        check(step, 'mutate', await outcome(() => t.mutate(rows, { durability })), await outcome(() => otab.mutate(rows)));
      } else if (x < 48) {
        const key = g.key();
        const delta = BigInt(g.r.int(200) - 100);
        log.push(`${step}: increment ${toHex(key)} ${delta}`);
        const cell = { family: 'a', qualifier: new Uint8Array([0x63]) };
        check(step, 'increment', await outcome(() => t.increment(key, cell, delta)), await outcome(() => otab.increment(key, cell, delta)));
      } else if (x < 53) {
        const key = g.key();
        const cell = { family: 'a', qualifier: g.qualifier() };
        const [cur] = await otab.get([key]);
        const have = cur?.cells.find((c) => c.family === 'a' && toHex(c.qualifier) === toHex(cell.qualifier))?.value;
        const expected = g.r.chance(0.5) ? have : g.r.chance(0.5) ? undefined : g.r.bytes(2);
        const muts = [g.mutation(now)];
        log.push(`${step}: checkAndPut ${toHex(key)}`);
        check(step, 'checkAndPut', await outcome(() => t.checkAndPut(key, cell, expected, muts)), await outcome(() => otab.checkAndPut(key, cell, expected, muts)));
      } else if (x < 68) {
        const keys = [g.key(), g.key(), g.key()];
        const opts = g.r.chance(0.5) ? { maxVersions: 1 + g.r.int(3) } : g.r.chance(0.5) ? { filter: g.filter() } : {};
        log.push(`${step}: get ${keys.map(toHex).join(',')} ${JSON.stringify(opts, (_k, v) => (v instanceof Uint8Array ? toHex(v) : v))}`);
        check(step, 'get', plainRows(await t.get(keys, opts)), plainRows(await otab.get(keys, opts)));
      } else if (x < 85) {
        const spec = g.scanSpec();
        log.push(`${step}: scan ${JSON.stringify(spec, (_k, v) => (v instanceof Uint8Array ? toHex(v) : v))}`);
        if (spec.reverse === true && !sut.store.capabilities.reverseScan) {
          // A backend without reverse scans must refuse them (Capabilities.reverseScan).
          check(step, 'reverse scan refused', await outcome(() => collect(t, spec)), { err: 'STORE_NOT_SUPPORTED' });
        } else {
          check(step, 'scan', await collect(t, spec), await collect(otab, spec));
        }
      } else if (x < 89) {
        now += 1_000 * g.r.int(3);
        log.push(`${step}: clock +`);
      } else if (x < 93 && sut.flush !== undefined) {
        log.push(`${step}: flush`);
        await sut.flush();
      } else if (x < 96 && sut.compact !== undefined) {
        const major = g.r.chance(0.5);
        log.push(`${step}: compact major=${major}`);
        await sut.compact(major);
      } else if (sut.reopen !== undefined) {
        log.push(`${step}: reopen`);
        await sut.reopen();
      }
    }
    const t = await tab();
    check(o.steps, 'final scan', await collect(t, { maxVersions: 3 }), await collect(otab, { maxVersions: 3 }));
    if (sut.store.capabilities.reverseScan) {
      check(o.steps, 'final reverse scan', await collect(t, { reverse: true, maxVersions: 3 }), await collect(otab, { reverse: true, maxVersions: 3 }));
    }
    await sut.verify?.();
  } finally {
    await sut.store.close();
    await oracle.close();
  }
}

/** Seeds to run: TEST_SEED pins one; otherwise `count` seeds derived from `base`. */
export function seeds(base: number, count: number): number[] {
  const pinned = process.env.TEST_SEED;
  if (pinned !== undefined && pinned !== '') return [Number(pinned)];
  return Array.from({ length: count }, (_, i) => base + i * 7919);
}
