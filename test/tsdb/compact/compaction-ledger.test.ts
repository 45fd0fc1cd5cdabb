/**
 * The compaction ledger (tsdb/compact/compaction-ledger.ts) on the memory store: its cells
 * round-trip, and the scenario of compaction-ledger-scenario.ts with four servers on one
 * store declaring other writers (on the Bigtable emulator:
 * test/bigtable/compaction-ledger.bigtable.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { openMemoryStore } from '../../../core/index.js';
import type { Store } from '../../../core/api/store.js';
import { CompactionLedger, LEDGER_FAMILY, LEDGER_LEASE_MS, LEDGER_ROW, decodeBeat, decodeDebt, encodeBeat, encodeDebt } from '../../../tsdb/compact/compaction-ledger.js';
import { changesTableSpec } from '../../../tsdb/meta/change-log.js';
import { runLedgerScenario } from './compaction-ledger-scenario.js';

function shared(store: Store): Store {
  return Object.create(store, { capabilities: { value: { ...store.capabilities, singleWriter: false } } }) as Store;
}

describe('compaction ledger', () => {
  it('encodes beats and debts', () => {
    expect(toHex(encodeBeat(1_767_225_600_000, false))).toBe('0000019b76daa80000');
    expect(decodeBeat(encodeBeat(1_767_225_600_000, true))).toEqual({ ms: 1_767_225_600_000, stopped: true });
    const pairs = [{ metric: fromHex('000001'), hour: 1_767_225_600 }, { metric: fromHex('00002a'), hour: 0 }];
    const v = encodeDebt(pairs, 3);
    expect(toHex(v)).toBe('00000002' + '000001' + '6955b900' + '00002a' + '00000000');
    expect(decodeDebt(v, 3)).toEqual(pairs);
    expect(decodeDebt(v.subarray(0, v.length - 1), 3)).toBeUndefined();
    expect(decodeBeat(fromHex('00'))).toBeUndefined();
  });

  it('lists again what a server listed after it was taken over while alive (a stall past its lease)', async () => {
    const table = await (await openMemoryStore()).createTable(changesTableSpec());
    let now = 1_000_000;
    const a = new CompactionLedger({ table, server: fromHex('00000000000000aa'), metricWidth: 3, now: () => now });
    const b = new CompactionLedger({ table, server: fromHex('00000000000000bb'), metricWidth: 3, now: () => now });
    const debtOf = async (id: string): Promise<string[]> => {
      const [row] = await table.get([LEDGER_ROW], { families: [LEDGER_FAMILY] });
      const cell = row?.cells.find((c) => toHex(c.qualifier) === `${id}64`);
      return cell === undefined ? [] : decodeDebt(cell.value, 3)!.map((p) => `${toHex(p.metric)}@${p.hour}`);
    };
    a.addRow(fromHex('000001'), 3600);
    await a.covered();
    expect(await debtOf('00000000000000aa')).toEqual(['000001@3600']);
    now += LEDGER_LEASE_MS + 1;
    b.addRow(fromHex('000002'), 3600);
    await b.beat();
    expect(b.stats()).toMatchObject({ takeovers: 1, pairs: 2 });
    expect(await debtOf('00000000000000aa')).toEqual([]);
    expect(await debtOf('00000000000000bb')).toEqual(['000002@3600', '000001@3600']);
    // A was alive: its next beat finds its debt gone and lists its pairs again.
    expect(a.covered()).toBeUndefined();
    await a.beat();
    expect(await debtOf('00000000000000aa')).toEqual(['000001@3600']);
    expect(a.covered()).toBeUndefined();
  });

  it('leaves no row uncompacted when servers die or stop, with no sweep of the table at a restart', async () => {
    const store = await openMemoryStore();
    await runLedgerScenario([shared(store), shared(store), shared(store), shared(store)]);
  });
});
