/** A Tsdb on an in-memory store with a settable clock, for write/read tests. */
import { openMemoryStore } from '../../../core/index.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';

export interface Fixture {
  readonly tsdb: Tsdb;
  /** The fake wall clock in ms. */
  clock: { now: number };
}

export async function openFixture(config: Partial<TsdbConfig> = {}, startMs = Date.UTC(2026, 0, 1)): Promise<Fixture> {
  const clock = { now: startMs };
  const store = await openMemoryStore({ clock: () => clock.now });
  const tsdb = await Tsdb.open(store, { config, now: () => clock.now, background: false });
  return { tsdb, clock };
}

export function pt(metric: string, timestamp: number, value: number, tags: Record<string, string> = { host: 'a' }, isInt = Number.isInteger(value)): IncomingPoint {
  return { metric, timestamp, value, isInt, tags: Object.entries(tags) };
}
