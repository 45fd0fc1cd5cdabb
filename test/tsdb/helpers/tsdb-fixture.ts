/** A Tsdb on an in-memory store with a settable clock, for write/read tests. */
import { openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { OpenTsdbOptions } from '../../../tsdb/tsdb.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';

export interface Fixture {
  readonly tsdb: Tsdb;
  /** The fake wall clock in ms. */
  clock: { now: number };
}

/** Opens the fixture's store on a clock; the memory store unless useFixtureStore() set one. */
type FixtureStoreFactory = (clock: () => number) => Promise<Store>;
let storeFactory: FixtureStoreFactory | undefined;

/** Runs the tests that use openFixture on another backend (test/bigtable/tsdb.bigtable.test.ts). */
export function useFixtureStore(factory: FixtureStoreFactory | undefined): void {
  storeFactory = factory;
}

export async function openFixture(config: Partial<TsdbConfig> = {}, startMs = Date.UTC(2026, 0, 1), opts: Pick<OpenTsdbOptions, 'decodePool'> = {}): Promise<Fixture> {
  const clock = { now: startMs };
  const store = storeFactory !== undefined ? await storeFactory(() => clock.now) : await openMemoryStore({ clock: () => clock.now });
  const tsdb = await Tsdb.open(store, { config, now: () => clock.now, background: false, ...opts });
  return { tsdb, clock };
}

export function pt(metric: string, timestamp: number, value: number, tags: Record<string, string> = { host: 'a' }, isInt = Number.isInteger(value)): IncomingPoint {
  return { metric, timestamp, value, isInt, tags: Object.entries(tags) };
}

/** What a test file opened: servers with their stores, and decode pools or the like. */
export interface Opened {
  /** Keeps an app and its store for closeAll; returns the app. */
  add<A extends { close(): Promise<unknown> }>(app: A, tsdb: Tsdb): A;
  /** Closes every app, then its store, then the extras given at creation (afterAll). */
  closeAll(): Promise<void>;
}

export function openedServers(...extras: Array<{ close(): Promise<unknown> }>): Opened {
  const open: Array<{ app: { close(): Promise<unknown> }; tsdb: Tsdb }> = [];
  return {
    add(app, tsdb) {
      open.push({ app, tsdb });
      return app;
    },
    async closeAll() {
      for (const o of open.splice(0)) {
        await o.app.close();
        await o.tsdb.close();
      }
      for (const e of extras) await e.close();
    },
  };
}
