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
import { decodeBeat, decodeDebt, encodeBeat, encodeDebt } from '../../../tsdb/compact/compaction-ledger.js';
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

  it('leaves no row uncompacted when servers die or stop, with no sweep of the table at a restart', async () => {
    const store = await openMemoryStore();
    await runLedgerScenario([shared(store), shared(store), shared(store), shared(store)]);
  });
});
