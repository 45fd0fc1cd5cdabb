/**
 * Store contract: regions and statistics, TTL against the server clock, flush and compact
 * not changing results, close (STORE_CLOSED everywhere after it), and for persistent
 * backends, everything surviving a reopen.
 */
import { describe, expect, it } from 'vitest';
import { compareBytes, decodeInt64, encodeInt64 } from '../../core/api/bytes.js';
import type { RegionInfo, Row, Store, Table } from '../../core/api/store.js';
import {
  b, bytesOf, cells, expectStoreError, fmt, getRow, put, scanAll, scanKeys, T0, write,
} from './contract-harness.js';
import type { ContractContext } from './contract-harness.js';

/** True when `key` is in [r.start, r.end) with empty ends meaning the table's ends. */
export function regionHolds(r: { start: Uint8Array; end: Uint8Array }, key: Uint8Array): boolean {
  return compareBytes(key, r.start) >= 0 && (r.end.length === 0 || compareBytes(key, r.end) < 0);
}

/** Asserts regions cover the key space in order, contiguously, with distinct ids. */
export function expectCoverage(regions: readonly RegionInfo[]): void {
  expect(regions.length).toBeGreaterThan(0);
  expect(regions[0]!.start).toHaveLength(0);
  expect(regions[regions.length - 1]!.end).toHaveLength(0);
  for (let i = 1; i < regions.length; i++) {
    expect(regions[i]!.start.length).toBeGreaterThan(0);
    expect(compareBytes(regions[i - 1]!.end, regions[i]!.start)).toBe(0);
    expect(compareBytes(regions[i - 1]!.start, regions[i]!.start)).toBeLessThan(0);
  }
  expect(new Set(regions.map((r) => r.id)).size).toBe(regions.length);
}

/** Every version of every cell, as strings, for before/after comparisons. */
async function snapshot(t: Table): Promise<[string, string[] | undefined][]> {
  return (await scanAll(t, { maxVersions: 1000 })).rows.map((r: Row) => [fmt(r.key), cells(r, true)]);
}

export function lifecycleContract(ctx: ContractContext): void {
  const caps = ctx.caps;
  const SPLITS = [bytesOf('g'), bytesOf('n'), bytesOf('t'), b(0x80)];
  const KEYS = [b(0x00), bytesOf('a'), bytesOf('f\u00ff'), bytesOf('g'), bytesOf('g\u0000'), bytesOf('m'), bytesOf('n'),
    bytesOf('s'), bytesOf('t'), b(0x7f), b(0x80), b(0x80, 0x00), b(0xff, 0xff)];

  describe('regions', () => {
    it('a table without split points is one region covering everything', async () => {
      const t = await ctx.table();
      const regions = await t.regions();
      expectCoverage(regions);
      if (!caps.autoSplit) expect(regions).toHaveLength(1);
    });

    it('split points become region boundaries, in order, covering the key space', async () => {
      const t = await ctx.table({ splitPoints: SPLITS });
      const regions = await t.regions();
      expectCoverage(regions);
      const boundaries = regions.slice(1).map((r) => fmt(r.start));
      for (const s of SPLITS) expect(boundaries).toContain(fmt(s));
      if (!caps.autoSplit) expect(boundaries).toEqual(SPLITS.map(fmt));
    });

    it('every row lands in exactly one region, and per-region scans partition the table', async () => {
      const t = await ctx.table({ splitPoints: SPLITS });
      await t.mutate(KEYS.map((key) => ({ key, mutations: [put('cf', 'q', 'v')] })));
      const regions = await t.regions();
      for (const key of KEYS) expect(regions.filter((r) => regionHolds(r, key)), fmt(key)).toHaveLength(1);
      const parts: string[] = [];
      for (const r of regions) {
        const ks = await scanKeys(t, { start: r.start, end: r.end });
        for (const k of ks) expect(regionHolds(r, KEYS.find((x) => fmt(x) === k)!)).toBe(true);
        parts.push(...ks);
      }
      expect(parts).toEqual(await scanKeys(t));
      expect(parts).toHaveLength(KEYS.length);
    });

    it('region stats count writes, reads and size', async () => {
      const t = await ctx.table({ splitPoints: SPLITS });
      await t.mutate(KEYS.map((key) => ({ key, mutations: [put('cf', 'q', 'value'), put('cf', 'r', 'value')] })));
      const written = await t.regions();
      const sum = (rs: RegionInfo[], f: (r: RegionInfo) => number): number => rs.reduce((n, r) => n + f(r), 0);
      expect(sum(written, (r) => r.stats.cellsWritten)).toBeGreaterThanOrEqual(2 * KEYS.length);
      expect(sum(written, (r) => r.stats.writeRequests)).toBeGreaterThan(0);
      for (const r of written) {
        if (KEYS.some((k) => regionHolds(r, k))) expect(r.stats.sizeBytes, r.id).toBeGreaterThan(0);
      }
      const { rows } = await scanAll(t);
      await t.get([KEYS[0]!]);
      const read = await t.regions();
      expect(sum(read, (r) => r.stats.rowsRead) - sum(written, (r) => r.stats.rowsRead)).toBeGreaterThanOrEqual(rows.length + 1);
      expect(sum(read, (r) => r.stats.readRequests)).toBeGreaterThan(sum(written, (r) => r.stats.readRequests));
      const stats = await ctx.store.stats();
      expect(stats.backend).toBe(caps.backend);
      expect(stats.tables).toBe(1);
      expect(stats.regions).toBeGreaterThanOrEqual(read.length);
    });
  });

  describe('TTL', () => {
    async function ttlTable(): Promise<Table> {
      return ctx.store.createTable({ name: 't', families: [{ name: 'short', ttlMs: 1000, maxVersions: 3 }, { name: 'keep' }] });
    }

    it('a cell is visible while clock - timestamp <= ttlMs, then vanishes from gets and scans', async () => {
      const t = await ttlTable();
      await write(t, ['k', [put('short', 'q', 'v'), put('keep', 'q', 'w')]], ['only', [put('short', 'q', 'x')]]);
      ctx.clock.advance(1000);
      expect(cells(await getRow(t, 'k'))).toEqual(['keep:q=w', 'short:q=v']);
      expect(await scanKeys(t)).toEqual(['k', 'only']);
      ctx.clock.advance(1);
      expect(cells(await getRow(t, 'k'))).toEqual(['keep:q=w']);
      expect(await getRow(t, 'only')).toBeUndefined();
      expect(await scanKeys(t)).toEqual(['k']);
      expect(await scanKeys(t, { families: ['short'] })).toEqual([]);
    });

    it('TTL counts from the cell timestamp: old timestamps are invisible at once, future ones visible', async () => {
      const t = await ttlTable();
      await write(t, ['old', [put('short', 'q', 'v', T0 - 1001)]], ['edge', [put('short', 'q', 'v', T0 - 1000)]],
        ['future', [put('short', 'q', 'v', T0 + 5000)]]);
      expect(await scanKeys(t)).toEqual(['edge', 'future']);
      ctx.clock.advance(5999);
      expect(await scanKeys(t)).toEqual(['future']);
      ctx.clock.advance(2);
      expect(await scanKeys(t)).toEqual([]);
    });

    it('a table-level TTL applies to families without their own, and survives reopen', async () => {
      const t = await ctx.store.createTable({ name: 'tt', ttlMs: 2000, families: [{ name: 'd' }, { name: 'own', ttlMs: 500 }] });
      expect(t.spec.ttlMs).toBe(2000);
      await write(t, ['k', [put('d', 'q', 'v'), put('own', 'q', 'w')]]);
      ctx.clock.advance(501);
      expect(cells(await getRow(t, 'k'))).toEqual(['d:q=v']);
      ctx.clock.advance(1500);
      expect(await getRow(t, 'k')).toBeUndefined();
      if (ctx.factory.reopen !== undefined) {
        const again = await (await ctx.reopen()).openTable('tt');
        expect(again.spec.ttlMs).toBe(2000);
        expect(await getRow(again, 'k')).toBeUndefined();
      }
    });

    it('expired versions drop out individually', async () => {
      const t = await ttlTable();
      await write(t, ['k', [put('short', 'q', 'a', T0 - 1500), put('short', 'q', 'b', T0 - 500), put('short', 'q', 'c', T0)]]);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual([`short:q@${T0}=c`, `short:q@${T0 - 500}=b`]);
      ctx.clock.advance(600);
      expect(cells(await getRow(t, 'k', { maxVersions: 3 }), true)).toEqual([`short:q@${T0}=c`]);
    });

    it('increment and checkAndPut treat an expired cell as absent', async () => {
      const t = await ttlTable();
      const cell = { family: 'short', qualifier: bytesOf('n') };
      await write(t, ['k', [put('short', 'n', encodeInt64(41n))]]);
      expect(await t.increment(bytesOf('k'), cell, 1n)).toBe(42n);
      ctx.clock.advance(2000);
      expect(await t.checkAndPut(bytesOf('k'), cell, encodeInt64(42n), [put('short', 'n', 'x')])).toBe(false);
      expect(await t.increment(bytesOf('k'), cell, 1n)).toBe(1n);
      expect(decodeInt64((await getRow(t, 'k'))!.cells[0]!.value)).toBe(1n);
      ctx.clock.advance(2000);
      expect(await t.checkAndPut(bytesOf('k'), cell, undefined, [put('short', 'n', 'fresh')])).toBe(true);
      expect(cells(await getRow(t, 'k'))).toEqual(['short:n=fresh']);
    });
  });

  describe('flush and compact', () => {
    it('flush and compaction change no result (versions, deletes, overwrites)', async () => {
      // NB: no version is deleted while older versions beyond maxVersions exist; whether
      // those reappear is left open (see the read rule in core/memory/memory-store.ts).
      const t = await ctx.store.createTable({ name: 't', families: [{ name: 'cf', maxVersions: 3 }, { name: 'g' }, { name: 'h', maxVersions: 2 }] });
      for (let i = 0; i < 30; i++) {
        await write(t, [b(i), [put('cf', 'q', `v${i}`, 10), put('cf', 'q', `w${i}`, 20), put('cf', 'q', `x${i}`, 30), put('g', 'q', 'g'),
          put('h', 'q', 'h1', 1), put('h', 'q', 'h3', 3), put('h', 'q', 'h2', 2)]]);
      }
      await t.mutate([
        { key: b(3), mutations: [{ type: 'deleteRow' }] },
        { key: b(4), mutations: [{ type: 'deleteVersion', family: 'cf', qualifier: bytesOf('q'), timestamp: 30 }] },
        { key: b(5), mutations: [{ type: 'deleteFamily', family: 'g' }] },
        { key: b(6), mutations: [{ type: 'deleteCell', family: 'cf', qualifier: bytesOf('q') }, put('cf', 'q', 'back', 1)] },
      ]);
      const before = await snapshot(t);
      expect(before).toHaveLength(29);
      await t.flush();
      expect(await snapshot(t)).toEqual(before);
      await t.compact();
      expect(await snapshot(t)).toEqual(before);
      await t.compact({ major: true });
      expect(await snapshot(t)).toEqual(before);
      expect(cells(await getRow(t, b(6), { maxVersions: 5 }), true)).toEqual(['cf:q@1=back', `g:q@${T0}=g`, 'h:q@3=h3', 'h:q@2=h2']);
      expect(cells(await getRow(t, b(4), { maxVersions: 5, families: ['cf'] }), true)).toEqual(['cf:q@20=w4', 'cf:q@10=v4']);
    });
  });

  describe('close', () => {
    it('close is idempotent and every call afterwards rejects with STORE_CLOSED', async () => {
      const t = await ctx.table();
      await write(t, ['k', [put('cf', 'q', 'v')]]);
      const s: Store = ctx.store;
      await s.close();
      await s.close();
      const cell = { family: 'cf', qualifier: bytesOf('q') };
      const calls: [string, () => unknown][] = [
        ['createTable', () => s.createTable({ name: 'x', families: [{ name: 'cf' }] })],
        ['openTable', () => s.openTable('t')],
        ['listTables', () => s.listTables()],
        ['dropTable', () => s.dropTable('t')],
        ['stats', () => s.stats()],
        ['get', () => t.get([bytesOf('k')])],
        ['mutate', () => write(t, ['k', [put('cf', 'q', 'v')]])],
        ['scan', () => scanKeys(t)],
        ['increment', () => t.increment(bytesOf('k'), cell, 1n)],
        ['checkAndPut', () => t.checkAndPut(bytesOf('k'), cell, undefined, [])],
        ['regions', () => t.regions()],
        ['flush', () => t.flush()],
        ['compact', () => t.compact({ major: true })],
      ];
      for (const [name, call] of calls) {
        const err = await expectStoreError(call, 'STORE_CLOSED').catch((e: unknown) => {
          throw new Error(`${name}: ${String(e)}`);
        });
        expect(err).toBeDefined();
      }
    });

    it('a scan in progress fails with STORE_CLOSED once the store closes', async () => {
      const t = await ctx.table();
      await t.mutate(Array.from({ length: 20 }, (_, i) => ({ key: b(i), mutations: [put('cf', 'q', 'v')] })));
      const iter = t.scan({ batchRows: 2 })[Symbol.asyncIterator]();
      const first = await iter.next();
      expect(first.done).toBe(false);
      const closing = ctx.store.close();
      await expectStoreError(() => iter.next(), 'STORE_CLOSED');
      await closing;
    });
  });

  describe.runIf(ctx.factory.reopen !== undefined)('persistence', () => {
    async function populate(): Promise<Table> {
      const t = await ctx.store.createTable({
        name: 'p', families: [{ name: 'cf', maxVersions: 3 }, { name: 'g', ttlMs: 60_000 }], splitPoints: [bytesOf('m')],
      });
      await ctx.store.createTable({ name: 'gone', families: [{ name: 'cf' }] });
      await ctx.store.dropTable('gone');
      await t.mutate(Array.from({ length: 40 }, (_, i) => ({
        key: bytesOf(`k${String(i).padStart(2, '0')}`),
        mutations: [put('cf', 'a', `a${i}-1`, 100), put('cf', 'a', `a${i}-2`, 200), put('g', 'x', `x${i}`)],
      })));
      await t.mutate([
        { key: bytesOf('k01'), mutations: [{ type: 'deleteRow' }] },
        { key: bytesOf('k02'), mutations: [{ type: 'deleteVersion', family: 'cf', qualifier: bytesOf('a'), timestamp: 200 }] },
        { key: bytesOf('k03'), mutations: [{ type: 'deleteCell', family: 'cf', qualifier: bytesOf('a') }] },
        { key: bytesOf('k03'), mutations: [put('cf', 'a', 'older', 50)] },
        { key: bytesOf('k04'), mutations: [put('cf', 'a', 'replaced', 200)] },
        { key: bytesOf('k05'), mutations: [{ type: 'deleteFamily', family: 'g' }] },
      ]);
      await t.mutate([{ key: bytesOf('zz'), mutations: [put('cf', 'b', 'buffered')] }], { durability: 'buffered' });
      await t.increment(bytesOf('ctr'), { family: 'cf', qualifier: bytesOf('n') }, 41n);
      await t.increment(bytesOf('ctr'), { family: 'cf', qualifier: bytesOf('n') }, 1n);
      return t;
    }

    async function expectSame(before: [string, string[] | undefined][], beforeRegions: string[]): Promise<void> {
      const store = await ctx.reopen();
      expect(await store.listTables()).toEqual(['p']);
      const t = await store.openTable('p');
      expect(t.spec.families.map((f) => [f.name, f.maxVersions ?? 1, f.ttlMs])).toEqual([['cf', 3, undefined], ['g', 1, 60_000]]);
      expect(await snapshot(t)).toEqual(before);
      const boundaries = (await t.regions()).slice(1).map((r) => fmt(r.start));
      expect(boundaries).toContain('m');
      if (!caps.autoSplit) expect(boundaries).toEqual(beforeRegions);
      expect(await t.increment(bytesOf('ctr'), { family: 'cf', qualifier: bytesOf('n') }, 0n)).toBe(42n);
      ctx.clock.advance(60_001);
      expect(cells(await getRow(t, 'k00'))).toEqual(['cf:a=a0-2']);
    }

    it('everything written survives close and reopen (versions, deletes, specs, drops)', async () => {
      const t = await populate();
      const before = await snapshot(t);
      expect(before.find(([k]) => k === 'k01')).toBeUndefined();
      expect(before.find(([k]) => k === 'k03')![1]).toEqual(['cf:a@50=older', `g:x@${T0}=x3`]);
      const regions = (await t.regions()).slice(1).map((r) => fmt(r.start));
      await expectSame(before, regions);
    });

    it('data survives reopen after flush and compaction too', async () => {
      const t = await populate();
      await t.flush();
      await t.compact({ major: true });
      const before = await snapshot(t);
      const regions = (await t.regions()).slice(1).map((r) => fmt(r.start));
      await expectSame(before, regions);
      const again = await ctx.reopen();
      expect(await snapshot(await again.openTable('p'))).toEqual(
        before.filter(([, c]) => c!.some((s) => s.startsWith('cf:'))).map(([k, c]) => [k, c!.filter((s) => s.startsWith('cf:'))]));
    });
  });
}
