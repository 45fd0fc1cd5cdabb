/**
 * Store contract: scans of several key ranges (ScanSpec.ranges) — rows in key order across
 * the ranges, each bound as in a one-range scan, empty ranges and lists, the limit over all
 * ranges, small batches, filters, reverse, and bad range lists refused.
 */
import { describe, expect, it } from 'vitest';
import type { KeyRange } from '../../core/api/store.js';
import { bytesOf, expectErrorClass, put, scanAll, scanKeys, write } from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

/** Keys r00, r02, ..., r98 (50 rows), each with cf:q = its key. */
const EVEN = Array.from({ length: 50 }, (_, i) => `r${String(i * 2).padStart(2, '0')}`);

const rng = (start: string, end: string): KeyRange => ({ start: bytesOf(start), end: bytesOf(end) });

export function rangesContract(ctx: ContractContext): void {
  const caps = ctx.caps;

  describe('scans of several ranges', () => {
    async function evenTable() {
      const t = await ctx.table();
      await t.mutate(EVEN.map((k) => ({ key: bytesOf(k), mutations: [put('cf', 'q', k)] })));
      return t;
    }

    it('return the rows of every range in key order, bounds as in a one-range scan', async () => {
      const t = await evenTable();
      expect(await scanKeys(t, { ranges: [rng('r10', 'r16'), rng('r21', 'r25'), rng('r40', 'r41')] }))
        .toEqual(['r10', 'r12', 'r14', 'r22', 'r24', 'r40']);
      // Adjacent ranges, a range from the table's start and one to its end.
      expect(await scanKeys(t, { ranges: [{ start: new Uint8Array(0), end: bytesOf('r04') }, rng('r04', 'r08'), { start: bytesOf('r96'), end: new Uint8Array(0) }] }))
        .toEqual(['r00', 'r02', 'r04', 'r06', 'r96', 'r98']);
      // One range spanning everything is the whole table.
      expect(await scanKeys(t, { ranges: [{ start: new Uint8Array(0), end: new Uint8Array(0) }] })).toEqual(EVEN);
    });

    it('empty ranges, ranges without rows and an empty list read nothing', async () => {
      const t = await evenTable();
      expect(await scanKeys(t, { ranges: [] })).toEqual([]);
      expect(await scanKeys(t, { ranges: [rng('r10', 'r10'), rng('r11', 'r12'), rng('s', 't')] })).toEqual([]);
      expect(await scanKeys(t, { ranges: [rng('r10', 'r10'), rng('r10', 'r13'), rng('r13', 'r13')] })).toEqual(['r10', 'r12']);
      expect((await scanAll(t, { ranges: [rng('a', 'b')] })).batches).toEqual([]);
    });

    it('count the limit over all ranges, in small batches', async () => {
      const t = await evenTable();
      const ranges = [rng('r00', 'r10'), rng('r20', 'r30'), rng('r90', 'r99')];
      expect(await scanKeys(t, { ranges, limit: 7 })).toEqual(['r00', 'r02', 'r04', 'r06', 'r08', 'r20', 'r22']);
      expect(await scanKeys(t, { ranges, limit: 5 })).toEqual(['r00', 'r02', 'r04', 'r06', 'r08']);
      const { rows, batches } = await scanAll(t, { ranges, batchRows: 2 });
      expect(rows.map((r) => r.key)).toEqual(['r00', 'r02', 'r04', 'r06', 'r08', 'r20', 'r22', 'r24', 'r26', 'r28', 'r90', 'r92', 'r94', 'r96', 'r98'].map((k) => bytesOf(k)));
      for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(2);
    });

    it('apply filters and families in every range', async () => {
      const t = await ctx.table({ families: [{ name: 'cf' }, { name: 'cf2' }] });
      await write(t,
        ['a1', [put('cf', 'q', 'x'), put('cf2', 'q', 'y')]], ['a2', [put('cf', 'q', 'x')]], ['b1', [put('cf2', 'q', 'y')]],
        ['c1', [put('cf', 'q', 'x')]], ['c2', [put('cf', 'q', 'x')]]);
      const ranges = [rng('a', 'b'), rng('b', 'c'), rng('c', 'd')];
      expect(await scanKeys(t, { ranges, filter: { kind: 'keyRegex', pattern: '.1' } })).toEqual(['a1', 'b1', 'c1']);
      expect(await scanKeys(t, { ranges, families: ['cf2'] })).toEqual(['a1', 'b1']);
      expect(await scanKeys(t, { ranges, filter: { kind: 'prefix', prefix: bytesOf('c') } })).toEqual(['c1', 'c2']);
      expect(await scanKeys(t, { ranges: [rng('a', 'b'), rng('c2', 'd')], filter: { kind: 'prefix', prefix: bytesOf('c') } })).toEqual(['c2']);
    });

    it.runIf(caps.reverseScan)('reverse: the same rows in descending order, the limit from the end', async () => {
      const t = await evenTable();
      const ranges = [rng('r10', 'r16'), rng('r21', 'r25'), { start: bytesOf('r95'), end: new Uint8Array(0) }];
      expect(await scanKeys(t, { ranges, reverse: true })).toEqual(['r98', 'r96', 'r24', 'r22', 'r14', 'r12', 'r10']);
      expect(await scanKeys(t, { ranges, reverse: true, limit: 3 })).toEqual(['r98', 'r96', 'r24']);
      expect(await scanKeys(t, { ranges, reverse: true, batchRows: 1 })).toEqual(['r98', 'r96', 'r24', 'r22', 'r14', 'r12', 'r10']);
    });

    it('refuse unsorted, overlapping or inverted ranges, an open end before the last, and ranges with start/end', async () => {
      const t = await evenTable();
      await expectErrorClass(() => scanAll(t, { ranges: [rng('r20', 'r30'), rng('r10', 'r15')] }), RangeError);
      await expectErrorClass(() => scanAll(t, { ranges: [rng('r10', 'r20'), rng('r15', 'r30')] }), RangeError);
      await expectErrorClass(() => scanAll(t, { ranges: [rng('r20', 'r10')] }), RangeError);
      await expectErrorClass(() => scanAll(t, { ranges: [{ start: bytesOf('r10'), end: new Uint8Array(0) }, rng('r20', 'r30')] }), RangeError);
      await expectErrorClass(() => scanAll(t, { ranges: [rng('r10', 'r20')], start: bytesOf('r00') }), TypeError);
      await expectErrorClass(() => scanAll(t, { ranges: 'r10' as unknown as KeyRange[] }), TypeError);
    });
  });
}
