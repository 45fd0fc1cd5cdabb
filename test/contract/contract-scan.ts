/**
 * Store contract: scans — [start, end) bounds, reverse, limit, batching, families, time
 * ranges and versions, argument errors, writes during a scan, abort, early exit.
 */
import { describe, expect, it } from 'vitest';
import type { Row, Table } from '../../core/api/store.js';
import {
  b, bytesOf, cells, expectErrorClass, expectStoreError, fmt, put, scanAll, scanKeys, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

/** Keys r00, r02, ..., r98 (50 rows), each with cf:q = its key. */
const EVEN = Array.from({ length: 50 }, (_, i) => `r${String(i * 2).padStart(2, '0')}`);

export function scanContract(ctx: ContractContext): void {
  const caps = ctx.caps;

  async function evenTable(): Promise<Table> {
    const t = await ctx.table();
    await t.mutate(EVEN.map((k) => ({ key: bytesOf(k), mutations: [put('cf', 'q', k)] })));
    return t;
  }

  describe('scans', () => {
    it('an empty table scans to nothing, without empty batches', async () => {
      const t = await ctx.table();
      expect((await scanAll(t)).batches).toEqual([]);
    });

    it('scans the whole table in key order with rows complete', async () => {
      const t = await evenTable();
      const { rows } = await scanAll(t);
      expect(rows.map((r) => fmt(r.key))).toEqual(EVEN);
      expect(rows.map((r) => cells(r)![0])).toEqual(EVEN.map((k) => `cf:q=${k}`));
    });

    it('start is inclusive and end exclusive', async () => {
      const t = await evenTable();
      expect(await scanKeys(t, { start: bytesOf('r10'), end: bytesOf('r16') })).toEqual(['r10', 'r12', 'r14']);
      expect(await scanKeys(t, { start: bytesOf('r11'), end: bytesOf('r17') })).toEqual(['r12', 'r14', 'r16']);
      expect(await scanKeys(t, { start: bytesOf('r96') })).toEqual(['r96', 'r98']);
      expect(await scanKeys(t, { end: bytesOf('r04') })).toEqual(['r00', 'r02']);
      expect(await scanKeys(t, { start: bytesOf('r10'), end: bytesOf('r10') })).toEqual([]);
      expect(await scanKeys(t, { start: bytesOf('s') })).toEqual([]);
      expect(await scanKeys(t, { end: bytesOf('r') })).toEqual([]);
    });

    it('empty start and end mean the ends of the table', async () => {
      const t = await evenTable();
      expect(await scanKeys(t, { start: new Uint8Array(0), end: new Uint8Array(0) })).toEqual(EVEN);
      expect(await scanKeys(t, { start: new Uint8Array(0), end: bytesOf('r02') })).toEqual(['r00']);
      expect(await scanKeys(t, { start: bytesOf('r98'), end: new Uint8Array(0) })).toEqual(['r98']);
    });

    it('bounds respect prefix order: a key sorts before its extensions', async () => {
      const t = await ctx.table();
      await write(t, ['a', [put('cf', 'q', '1')]], ['a\u0000', [put('cf', 'q', '2')]], ['ab', [put('cf', 'q', '3')]], ['b', [put('cf', 'q', '4')]]);
      expect(await scanKeys(t, { start: bytesOf('a'), end: bytesOf('ab') })).toEqual(['a', '0x6100']);
      expect(await scanKeys(t, { start: bytesOf('a\u0000'), end: bytesOf('b') })).toEqual(['0x6100', 'ab']);
    });

    it('start after end is a RangeError', async () => {
      const t = await evenTable();
      await expectErrorClass(() => scanKeys(t, { start: bytesOf('r2'), end: bytesOf('r1') }), RangeError);
    });

    it('limit caps the rows returned', async () => {
      const t = await evenTable();
      expect(await scanKeys(t, { limit: 3 })).toEqual(['r00', 'r02', 'r04']);
      expect(await scanKeys(t, { start: bytesOf('r95'), limit: 10 })).toEqual(['r96', 'r98']);
      expect(await scanKeys(t, { limit: 1000 })).toEqual(EVEN);
    });

    it('batches never exceed batchRows and concatenate to the whole scan', async () => {
      const t = await evenTable();
      for (const batchRows of [1, 7, 50, 51]) {
        const { rows, batches } = await scanAll(t, { batchRows });
        for (const batch of batches) {
          expect(batch.length).toBeGreaterThan(0);
          expect(batch.length).toBeLessThanOrEqual(batchRows);
        }
        expect(rows.map((r) => fmt(r.key))).toEqual(EVEN);
      }
      const limited = await scanAll(t, { batchRows: 7, limit: 10 });
      expect(limited.rows.map((r) => fmt(r.key))).toEqual(EVEN.slice(0, 10));
      for (const batch of limited.batches) expect(batch.length).toBeLessThanOrEqual(7);
    });

    it.runIf(caps.reverseScan)('reverse scans return the same range in descending order', async () => {
      const t = await evenTable();
      const desc = [...EVEN].reverse();
      expect(await scanKeys(t, { reverse: true })).toEqual(desc);
      expect(await scanKeys(t, { reverse: true, start: bytesOf('r10'), end: bytesOf('r16') })).toEqual(['r14', 'r12', 'r10']);
      expect(await scanKeys(t, { reverse: true, start: bytesOf('r11'), end: bytesOf('r17') })).toEqual(['r16', 'r14', 'r12']);
      expect(await scanKeys(t, { reverse: true, limit: 3 })).toEqual(['r98', 'r96', 'r94']);
      expect(await scanKeys(t, { reverse: true, end: bytesOf('r04') })).toEqual(['r02', 'r00']);
      const { rows, batches } = await scanAll(t, { reverse: true, batchRows: 7 });
      expect(rows.map((r) => fmt(r.key))).toEqual(desc);
      for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(7);
    });

    it.runIf(caps.reverseScan)('reverse scans order binary keys by unsigned bytes', async () => {
      const t = await ctx.table();
      const ks = [b(0x00), b(0x00, 0x00), b(0x7f), b(0x80), b(0xff), b(0xff, 0xff)];
      await t.mutate(ks.map((key) => ({ key, mutations: [put('cf', 'q', 'v')] })));
      expect(await scanKeys(t, { reverse: true })).toEqual(['0xffff', '0xff', '0x80', '0x7f', '0x0000', '0x00']);
    });

    it.runIf(!caps.reverseScan)('reverse scans reject with STORE_NOT_SUPPORTED', async () => {
      const t = await evenTable();
      await expectStoreError(() => scanKeys(t, { reverse: true }), 'STORE_NOT_SUPPORTED');
    });

    it('families limits the cells, and rows left without cells are skipped (not counted by limit)', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'a' }, { name: 'b' }] });
      await t.mutate(Array.from({ length: 10 }, (_, i) => ({
        key: b(i),
        mutations: i % 2 === 0 ? [put('a', 'q', `a${i}`), put('b', 'q', `b${i}`)] : [put('a', 'q', `a${i}`)],
      })));
      const { rows } = await scanAll(t, { families: ['b'], limit: 3 });
      expect(rows.map((r) => [fmt(r.key), cells(r)])).toEqual([
        ['0x00', ['b:q=b0']], ['0x02', ['b:q=b2']], ['0x04', ['b:q=b4']],
      ]);
      expect((await scanAll(t, { families: ['a', 'b'] })).rows).toHaveLength(10);
      await expectStoreError(() => scanKeys(t, { families: ['nope'] }), 'STORE_FAMILY_NOT_FOUND');
    });

    it('timeRange selects versions in [start, end); maxVersions counts within it', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 5 }] });
      for (const ts of [10, 20, 30, 40]) await write(t, ['k', [put('cf', 'q', `v${ts}`, ts)]], ['only10', [put('cf', 'q', 'x', 10)]]);
      await write(t, ['only40', [put('cf', 'q', 'y', 40)]]);
      const scanTs = async (spec: Parameters<Table['scan']>[0]): Promise<[string, string[] | undefined][]> =>
        (await scanAll(t, spec)).rows.map((r: Row) => [fmt(r.key), cells(r, true)]);
      expect(await scanTs({ timeRange: { start: 20, end: 40 }, maxVersions: 5 })).toEqual([['k', ['cf:q@30=v30', 'cf:q@20=v20']]]);
      expect(await scanTs({ timeRange: { end: 25 } })).toEqual([['k', ['cf:q@20=v20']], ['only10', ['cf:q@10=x']]]);
      expect(await scanTs({ timeRange: { start: 40 } })).toEqual([['k', ['cf:q@40=v40']], ['only40', ['cf:q@40=y']]]);
      expect(await scanTs({ maxVersions: 2, start: bytesOf('k'), end: bytesOf('l') })).toEqual([['k', ['cf:q@40=v40', 'cf:q@30=v30']]]);
      expect(await scanTs({ timeRange: { start: 11, end: 20 } })).toEqual([]);
    });

    it('a time range applies within the family\'s maxVersions newest versions', async () => {
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 2 }] });
      for (const ts of [10, 20, 30]) await write(t, ['k', [put('cf', 'q', `v${ts}`, ts)]]);
      // v10 is beyond maxVersions 2: never returned, not even to a range that selects only it.
      expect((await scanAll(t, { timeRange: { end: 15 }, maxVersions: 5 })).rows).toEqual([]);
      expect((await scanAll(t, { timeRange: { end: 25 }, maxVersions: 5 })).rows.map((r) => cells(r, true))).toEqual([['cf:q@20=v20']]);
    });

    it('rejects bad limits, batch sizes, versions and bound types', async () => {
      const t = await evenTable();
      for (const limit of [0, -1, 1.5]) await expectErrorClass(() => scanKeys(t, { limit }), RangeError);
      for (const batchRows of [0, -3, 2.5]) await expectErrorClass(() => scanKeys(t, { batchRows }), RangeError);
      for (const maxVersions of [0, -1]) await expectErrorClass(() => scanKeys(t, { maxVersions }), RangeError);
      await expectErrorClass(() => scanKeys(t, { timeRange: { start: 20, end: 10 } }), RangeError);
      await expectErrorClass(() => scanKeys(t, { start: 'r1' as unknown as Uint8Array }), TypeError);
    });

    it('a scan survives writes and deletes between batches', async () => {
      const t = await ctx.table();
      const initial = Array.from({ length: 300 }, (_, i) => `k${String(i * 2).padStart(4, '0')}`);
      await t.mutate(initial.map((k) => ({ key: bytesOf(k), mutations: [put('cf', 'q', 'orig')] })));
      const touched = new Set<string>();
      const seen: string[] = [];
      let n = 0;
      for await (const batch of t.scan({ batchRows: 10 })) {
        for (const r of batch) {
          seen.push(fmt(r.key));
          expect(['orig', 'new']).toContain(fmt(r.cells[0]!.value));
        }
        n++;
        // Insert behind and ahead, overwrite and delete ahead.
        const ahead = `k${String(Math.min(598, n * 20 + 40)).padStart(4, '0')}`;
        const del = `k${String(Math.min(598, n * 20 + 80)).padStart(4, '0')}`;
        touched.add(ahead).add(del);
        await t.mutate([
          { key: bytesOf(`k${String(n).padStart(4, '0')}x`), mutations: [put('cf', 'q', 'new')] },
          { key: bytesOf(`${ahead}x`), mutations: [put('cf', 'q', 'new')] },
          { key: bytesOf(ahead), mutations: [put('cf', 'q', 'new')] },
          { key: bytesOf(del), mutations: [{ type: 'deleteRow' }] },
        ]);
      }
      for (let i = 1; i < seen.length; i++) expect(seen[i]! > seen[i - 1]!, `${seen[i - 1]} then ${seen[i]}`).toBe(true);
      const seenSet = new Set(seen);
      for (const k of initial) if (!touched.has(k)) expect(seenSet.has(k), k).toBe(true);
    });

    // A row rewritten while a scan runs is seen whole, before or after, even when a flush and
    // a major compaction (which drop overwritten versions and deleted cells) ran in between
    // and the scan reaches the row's region only afterwards. (A compaction that ignored the
    // scan's snapshot left it seeing neither: the old cells gone, the new ones too new.)
    for (const reverse of [false, true]) {
      it.runIf(!reverse || caps.reverseScan)(`${reverse ? 'a reverse' : 'a'} scan sees rows rewritten and compacted behind its back whole, old or new`, async () => {
        const t = await ctx.table({ splitPoints: [bytesOf('m')] });
        const first = Array.from({ length: 20 }, (_, i) => `a${String(i).padStart(2, '0')}`);
        const later = Array.from({ length: 20 }, (_, i) => `x${String(i).padStart(2, '0')}`);
        const near = reverse ? later : first;
        const far = reverse ? first : later;
        await t.mutate([...first, ...later].map((k) => ({ key: bytesOf(k), mutations: [put('cf', 'old', 'o1'), put('cf', 'v', 'o1')] })));
        await t.flush();
        const seen = new Map<string, string[]>();
        let rewritten = false;
        for await (const batch of t.scan({ batchRows: 5, reverse })) {
          for (const r of batch) seen.set(fmt(r.key), cells(r)!);
          if (!rewritten && seen.size >= 5) {
            rewritten = true;
            // Every row: the 'old' cell deleted, a new version of 'v', a new cell; then
            // the old versions are compacted away.
            await t.mutate([...near, ...far].map((k) => ({
              key: bytesOf(k),
              mutations: [{ type: 'deleteCell', family: 'cf', qualifier: bytesOf('old') }, put('cf', 'v', 'n2'), put('cf', 'new', 'n2')],
            })));
            await t.flush();
            await t.compact({ major: true });
          }
        }
        expect(rewritten).toBe(true);
        const before = ['cf:old=o1', 'cf:v=o1'];
        const after = ['cf:new=n2', 'cf:v=n2'];
        for (const k of far) expect([before, after], k).toContainEqual(seen.get(k));
        expect([...seen.keys()].length).toBe(first.length + later.length);
      });
    }

    it.runIf(caps.reverseScan)('a reverse scan survives writes and deletes between batches', async () => {
      const t = await evenTable();
      const seen: string[] = [];
      let n = 0;
      for await (const batch of t.scan({ batchRows: 5, reverse: true })) {
        seen.push(...batch.map((r) => fmt(r.key)));
        n++;
        await t.mutate([
          { key: bytesOf(`r${String(99 - n).padStart(2, '0')}`), mutations: [put('cf', 'q', 'new')] },
          { key: bytesOf(`r${String(n).padStart(2, '0')}`), mutations: [put('cf', 'q', 'new')] },
        ]);
      }
      for (let i = 1; i < seen.length; i++) expect(seen[i]! < seen[i - 1]!).toBe(true);
      for (const k of EVEN) expect(seen).toContain(k);
    });

    it('two interleaved scans of one table are independent', async () => {
      const t = await evenTable();
      const a = t.scan({ batchRows: 3 })[Symbol.asyncIterator]();
      const bIt = t.scan({ batchRows: 4, start: bytesOf('r50') })[Symbol.asyncIterator]();
      const ra: string[] = [];
      const rb: string[] = [];
      for (;;) {
        const [x, y] = [await a.next(), await bIt.next()];
        if (!x.done) ra.push(...x.value.map((r) => fmt(r.key)));
        if (!y.done) rb.push(...y.value.map((r) => fmt(r.key)));
        if (x.done && y.done) break;
      }
      expect(ra).toEqual(EVEN);
      expect(rb).toEqual(EVEN.slice(25));
    });

    it('breaking out of a scan early leaves the table usable', async () => {
      const t = await evenTable();
      for (let i = 0; i < 20; i++) {
        for await (const batch of t.scan({ batchRows: 2 })) {
          expect(batch.length).toBeGreaterThan(0);
          break;
        }
      }
      await write(t, ['zz', [put('cf', 'q', 'v')]]);
      expect(await scanKeys(t)).toEqual([...EVEN, 'zz']);
    });

    it('an aborted signal ends a scan with STORE_ABORTED, before or during iteration', async () => {
      const t = await evenTable();
      const pre = new AbortController();
      pre.abort();
      await expectStoreError(() => scanKeys(t, { signal: pre.signal }), 'STORE_ABORTED');
      const mid = new AbortController();
      const got: string[] = [];
      await expectStoreError(async () => {
        for await (const batch of t.scan({ batchRows: 5, signal: mid.signal })) {
          got.push(...batch.map((r) => fmt(r.key)));
          mid.abort();
        }
      }, 'STORE_ABORTED');
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(EVEN.length);
    });

    it('an aborted signal fails a get with STORE_ABORTED', async () => {
      const t = await evenTable();
      const c = new AbortController();
      c.abort();
      await expectStoreError(() => t.get([bytesOf('r00')], { signal: c.signal }), 'STORE_ABORTED');
    });
  });
}
