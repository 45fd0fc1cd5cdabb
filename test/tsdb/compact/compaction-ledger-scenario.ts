/**
 * The compaction ledger's scenario (tsdb/compact/compaction-ledger.ts), run on the memory
 * store (compaction-ledger.test.ts) and the Bigtable emulator
 * (test/bigtable/compaction-ledger.bigtable.test.ts): servers A, B, C share one store and
 * write series of one hour (some rows by two of them). A dies: B takes its debt over once
 * A's beat is past its lease, not before; B dies too, before the hour is due: C takes over
 * both and, at the first pass after the hour is due, every row of the hour is one
 * compressed cell with every point written. A restarted server D makes no sweep of the
 * table; C stops cleanly and D takes its debt at its next beat, without waiting for a
 * lease. A store written before the ledger is swept once at the next open.
 */
import { expect } from 'vitest';
import type { Store, Table } from '../../../core/api/store.js';
import { LEDGER_BEAT_MS, LEDGER_FAMILY, LEDGER_LEASE_MS, LEDGER_ROW, SWEPT_QUALIFIER } from '../../../tsdb/compact/compaction-ledger.js';
import { needsCompaction } from '../../../tsdb/compact/hour-compactor.js';
import type { HourCompactor } from '../../../tsdb/compact/hour-compactor.js';
import { CHANGES_TABLE } from '../../../tsdb/meta/change-log.js';
import { mergeRowCells } from '../../../tsdb/query/row-merge.js';
import { baseTimeOfKey } from '../../../tsdb/schema/row-key.js';
import { DATA_FAMILY, DATA_TABLE } from '../../../tsdb/tables.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

/** The hour written: 2026-01-10T12:00Z. */
const H = Date.UTC(2026, 0, 10, 12) / 1000;
const CONFIG = { saltBuckets: 4, compactGraceMs: 60_000, compactIdleMs: 30_000 } as const;

/** A view of `store` that counts the scans of the data table. */
function counting(store: Store, scans: { n: number }): Store {
  const wrapTable = (t: Table): Table => new Proxy(t, {
    get(target, k) {
      if (k === 'scan') {
        return (...args: Parameters<Table['scan']>) => {
          scans.n++;
          return target.scan(...args);
        };
      }
      const v = Reflect.get(target, k, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return new Proxy(store, {
    get(target, k) {
      if (k === 'createTable' || k === 'openTable') {
        return async (...args: unknown[]) => {
          const t = await (target[k] as (...a: unknown[]) => Promise<Table>).apply(target, args);
          return t.spec.name === DATA_TABLE ? wrapTable(t) : t;
        };
      }
      const v = Reflect.get(target, k, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Every data row of hours from `fromHour`: "metric hour tags" → points as "offset=value", and whether it waits for compaction. */
async function rowsOf(t: Tsdb, fromHour: number): Promise<Map<string, { points: string; raw: boolean }>> {
  const out = new Map<string, { points: string; raw: boolean }>();
  const w = t.widths;
  for await (const rows of t.data.scan({ families: [DATA_FAMILY] })) {
    for (const r of rows) {
      const hour = baseTimeOfKey(w, r.key);
      if (hour < fromHour) continue;
      const metric = await t.metrics.getName(r.key.subarray(w.saltWidth, w.saltWidth + w.metric));
      const tags = Buffer.from(r.key.subarray(w.saltWidth + w.metric + 4)).toString('hex');
      const b = mergeRowCells(r.cells);
      const points: string[] = [];
      for (let i = 0; i < b.count; i++) points.push(`${b.offsetsMs[i]}=${b.values[i]}`);
      out.set(`${metric} ${hour} ${tags}`, { points: points.join(','), raw: needsCompaction(r.cells) });
    }
  }
  return out;
}

/** The ledger row's servers (8-byte ids, hex) that hold a beat. */
async function ledgerServers(changes: Table): Promise<string[]> {
  const [row] = await changes.get([LEDGER_ROW], { families: [LEDGER_FAMILY] });
  return (row?.cells ?? []).filter((c) => c.qualifier.length === 9 && c.qualifier[8] === 0x62).map((c) => Buffer.from(c.qualifier.subarray(0, 8)).toString('hex'));
}

function beat(t: Tsdb): Promise<void> {
  return (t.compactor as HourCompactor).beat();
}

/** `stores`: four views of one store that declares other writers (A, B, C, D). */
export async function runLedgerScenario(stores: readonly Store[]): Promise<void> {
  let nowMs = (H + 1800) * 1000;
  const now = (): number => nowMs;
  const scans = { n: 0 };
  const open = (s: Store): Promise<Tsdb> => Tsdb.open(s, { background: false, now, config: CONFIG });
  const [a, b, c] = [await open(stores[0]!), await open(stores[1]!), await open(stores[2]!)];
  let d: Tsdb | undefined;
  const changes = await stores[0]!.openTable(CHANGES_TABLE);
  try {
    // Each writes its own series; host "shared" is written by A and by B (one row, two writers).
    const write = async (t: Tsdb, host: string, base: number, v: number): Promise<void> => {
      const points = [];
      for (let s = 0; s < 1200; s += 300) points.push(pt(host === 'shared' ? 'm.shared' : `m.${host.slice(0, 1)}`, base + s, v + s, { host }));
      expect(await t.ingest.write(points)).toEqual(points.map(() => undefined));
    };
    for (const [t, host, v] of [[a, 'a1', 1], [a, 'a2', 2], [b, 'b1', 3], [c, 'c1', 4], [a, 'shared', 5], [b, 'shared', 6]] as const) await write(t, host, H + (v % 2) * 7, v);
    // Listed before written: each writer's cells are in the store already.
    const ids = (await ledgerServers(changes)).sort();
    expect(ids).toHaveLength(3);
    const before = await rowsOf(a, H);
    expect([...before.values()].filter((r) => r.raw)).toHaveLength(before.size);

    // A dies (no more beats). Within its lease nobody takes it over.
    for (const t of [a, b, c]) await beat(t);
    nowMs += LEDGER_LEASE_MS;
    await beat(b);
    await beat(c);
    expect((b.compactor.stats().takeovers ?? 0) + (c.compactor.stats().takeovers ?? 0)).toBe(0);
    nowMs += LEDGER_BEAT_MS;
    await beat(b);
    expect(b.compactor.stats().takeovers).toBe(1);
    await beat(c); // B beat in time: nothing to take
    expect(c.compactor.stats().takeovers).toBe(0);
    expect(await ledgerServers(changes)).toHaveLength(2);

    // B dies before the hour is due; C takes both over after B's lease.
    nowMs += LEDGER_LEASE_MS + LEDGER_BEAT_MS;
    await beat(c);
    expect(c.compactor.stats().takeovers).toBe(1);
    expect(await ledgerServers(changes)).toHaveLength(1);
    // Due once the hour ended grace ago (the rows saw no write for idle since long before): not earlier.
    nowMs = (H + 3600) * 1000 + CONFIG.compactGraceMs - 1;
    await c.compactor.runOnce();
    expect([...(await rowsOf(c, H)).values()].filter((r) => !r.raw)).toEqual([]);
    nowMs += 1;
    await c.compactor.runOnce();
    const after = await rowsOf(c, H);
    expect([...after.entries()].filter(([, r]) => r.raw)).toEqual([]);
    expect(after).toEqual(new Map([...before].map(([k, r]) => [k, { points: r.points, raw: false }])));
    expect(c.compactor.stats()).toMatchObject({ rangesCompacted: 3, ledgerPairs: 0 }); // m.a, m.b, m.shared (B owed A's too)
    await beat(c); // no debt left: its cells go
    expect(await ledgerServers(changes)).toEqual([]);

    // A restarted server makes no sweep of the table; C writes the next hour and stops cleanly.
    d = await open(counting(stores[3]!, scans));
    scans.n = 0;
    await d.compactor.runOnce();
    expect(scans.n).toBe(0);
    await write(c, 'c2', H + 3600, 9);
    await c.close();
    await beat(d);
    expect(d.compactor.stats().takeovers).toBe(1);
    nowMs = (H + 7200) * 1000 + CONFIG.compactGraceMs;
    await d.compactor.runOnce();
    expect([...(await rowsOf(d, H + 3600)).values()]).toEqual([{ points: '0=9,300000=309,600000=609,900000=909', raw: false }]);

    // A store written before the ledger (no "swept" cell): the next open sweeps it once.
    await changes.mutate([{ key: LEDGER_ROW, mutations: [{ type: 'deleteCell', family: LEDGER_FAMILY, qualifier: SWEPT_QUALIFIER }] }]);
    const e = await open(counting(stores[3]!, scans));
    scans.n = 0;
    await e.compactor.runOnce();
    expect(scans.n).toBeGreaterThan(0);
    const f = await open(counting(stores[3]!, scans));
    scans.n = 0;
    await f.compactor.runOnce();
    expect(scans.n).toBe(0);
    await e.close();
    await f.close();
  } finally {
    await b.close();
    await d?.close();
    // A died: never closed (its close would beat again).
  }
}
