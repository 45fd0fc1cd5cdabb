/**
 * Phase 10 of the multi-server scenario (scenario.ts): the compaction debt of servers that
 * die (tsdb/compact/compaction-ledger.ts, docs/SCALING.md "Hour compaction").
 *
 * Where servers share the store (Bigtable: the read-back compactor and its ledger), two
 * more servers join the live ones:
 *   - D, whose rows wait an hour for idle (it owes them as long as it lives), writes
 *     series-hours of closed hours; some of its points are rewritten through a live server
 *     (the later write wins) and one of its series-hours is deleted through another; its
 *     ledger lists its pairs and the store holds its rows raw;
 *   - M writes many rows and starts compacting them itself; it is killed with `kill -9` in
 *     the middle (some rows compacted, the others still its debt);
 * D is killed with M and neither is restarted: the live servers take both over and compact
 * every one of their rows within DEAD_DEBT_BOUND_MS of the kill (the store's raw rows of
 * those hours, read by the test, reach 0); every acknowledged point reads back exactly and
 * alike through every live server. Then D starts again (after the others took its rows
 * over) and answers alike.
 *
 * With one server (the embedded store) D is that server: it writes the same series-hours,
 * is killed with `kill -9` at once and restarted; every acknowledged point reads back.
 */
import { expect } from 'vitest';
import { LEDGER_BEAT_MS, LEDGER_LEASE_MS } from '../../../tsdb/compact/compaction-ledger.js';
import { checkAll } from './checks.js';
import type { Problems, Window } from './checks.js';
import { dbl, int, send, sleep, statOf } from './client.js';
import type { Write } from './client.js';
import type { HoraeProcess } from './horae-process.js';
import type { Model } from './model.js';
import type { RawRows } from './raw-rows.js';

/** Beyond a dead server's lease and a beat, what a live server may take to read and rewrite its rows (2 cores shared). */
const REWRITE_MS = 5_000;

export interface DeadServerPhase {
  readonly model: Model;
  /** The servers running now. */
  readonly live: readonly HoraeProcess[];
  readonly win: Window;
  /** The first closed hour written (seconds); the next two are closed too. */
  readonly hour0: number;
  /** The servers' hour compaction pass interval (ms). */
  readonly intervalMs: number;
  /** Where servers share the store: one more server on it, with `config` over the suite's. */
  readonly spawn?: (name: string, config: Readonly<Record<string, number>>) => Promise<HoraeProcess>;
  /** Where servers share the store: its rows still owed hour compaction (raw-rows.ts). */
  readonly rawRows?: (metrics: readonly string[], fromSec: number, toSec: number) => Promise<RawRows>;
  /** kill -9 of the one server (live[0]) and its start again. */
  readonly restartOnly: () => Promise<void>;
}

/** How long after its kill every row of a dead server is compacted: its lease, a beat, a pass, the rewrite. */
export function deadDebtBoundMs(intervalMs: number): number {
  return LEDGER_LEASE_MS + LEDGER_BEAT_MS + intervalMs + REWRITE_MS;
}

/** Runs the phase; the problems its checks found. */
export async function runDeadServerPhase(ph: DeadServerPhase): Promise<Problems> {
  const { model, live, win, hour0 } = ph;
  const problems: Problems = [];
  const check = async (servers: readonly HoraeProcess[], phase: string): Promise<void> => {
    const found = await checkAll(model, servers, win, phase);
    problems.push(...found.slice(0, 6), ...(found.length > 6 ? [`${phase}: … and ${found.length - 6} more`] : []));
  };
  const hours = [hour0, hour0 + 3600, hour0 + 7200];
  // D's series-hours: 12 series, 3 closed hours, 5 points each.
  const deadWrites: Write[] = [];
  for (let h = 0; h < 12; h++) {
    for (const [i, hour] of hours.entries()) {
      for (let k = 0; k < 5; k++) deadWrites.push({ metric: 'ms.dead', tags: { host: `dd${h}` }, p: int(hour + k * 600 + i, h * 100 + k) });
    }
  }
  // Rewritten through a live server after D took them: doubles now.
  const rewrites = deadWrites.filter((w) => w.tags.host === 'dd0' && w.p.ts >= hours[1]! && w.p.ts < hours[2]!).map((w) => ({ ...w, p: dbl(w.p.ts, w.p.value + 0.5) }));
  const deleted = { start: hours[2]!, end: hours[2]! + 3599, queries: [{ aggregator: 'none', metric: 'ms.dead', tags: { host: 'dd1' } }] };
  const writeDead = async (d: HoraeProcess): Promise<void> => {
    expect(await send(model, d, deadWrites)).toEqual([]);
    expect(await send(model, live[0]!, rewrites)).toEqual([]);
    const r = await live.at(-1)!.http('DELETE', '/api/query', deleted);
    expect(r.status, r.body).toBe(200);
    model.deleteHours('ms.dead', { host: 'dd1' }, deleted.start, deleted.end);
  };

  if (ph.spawn === undefined || ph.rawRows === undefined) {
    await writeDead(live[0]!);
    await ph.restartOnly();
    await check(live, 'a server killed with its hours pending, restarted');
    return problems;
  }
  const rawRows = ph.rawRows;
  const [d, m] = await Promise.all([
    ph.spawn('server D', { 'horae.hour_compaction.idle_ms': 3_600_000 }),
    ph.spawn('server M', { 'horae.hour_compaction.idle_ms': 4_000 }),
  ]);
  await writeDead(d);
  // (and what it may have taken over from a server that stopped or died before)
  expect(await statOf(d, 'horae.compaction.ledger_pairs'), 'D lists ms.dead in its 3 hours').toBeGreaterThanOrEqual(3);
  expect((await rawRows(['ms.dead'], hour0, hour0 + 3 * 3600)).rows, 'D\'s rows wait for compaction').toBeGreaterThan(0);

  // M: 150 series in 3 closed hours, 2 points a row; it compacts them 4 s after its last write.
  const midWrites: Write[] = [];
  for (let s = 0; s < 150; s++) for (const hour of hours) for (let k = 0; k < 2; k++) midWrites.push({ metric: 'ms.midway', tags: { host: `mw${s}` }, p: int(hour + 60 * (s % 60) + k, s + k) });
  expect(await send(model, m, midWrites)).toEqual([]);
  const untilMid = Date.now() + 30_000;
  while ((await statOf(m, 'tsd.compaction.count', { type: 'hours' })) === 0) {
    if (Date.now() > untilMid) throw new Error('server M did not start compacting its rows within 30 s');
    await sleep(10);
  }
  const killedAt = Date.now();
  await Promise.all([m.kill9(), d.kill9()]);
  const atKill = await rawRows(['ms.midway'], hour0, hour0 + 3 * 3600);
  expect(atKill.rows, 'M was killed in the middle of its compaction: rows left').toBeGreaterThan(0);
  expect(atKill.rows, 'M was killed in the middle of its compaction: rows done').toBeLessThan(atKill.total);
  expect((await rawRows(['ms.dead'], hour0, hour0 + 3 * 3600)).rows, 'D\'s rows wait for compaction').toBeGreaterThan(0);

  // The live servers take over both and compact every row within the bound.
  const bound = deadDebtBoundMs(ph.intervalMs);
  let raw = await rawRows(['ms.dead', 'ms.midway'], hour0, hour0 + 3 * 3600);
  while (raw.rows > 0) {
    if (Date.now() - killedAt > bound) throw new Error(`${raw.rows} rows (${raw.cells} cells) of the killed servers still raw ${bound} ms after their kill`);
    await sleep(250);
    raw = await rawRows(['ms.dead', 'ms.midway'], hour0, hour0 + 3 * 3600);
  }
  expect(raw.total, 'every row of D and M is still there').toBe(12 * 3 - 1 + 150 * 3);
  await check(live, 'the rows of two killed servers, compacted by the others');

  // D starts again once the others took its rows over, and answers alike.
  await d.start();
  await check([...live, d], 'the killed server started again');
  return problems;
}
