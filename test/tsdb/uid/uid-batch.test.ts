/**
 * Names assigned together (UidTable.resolveMany, tsdb/SCHEMA.md "Assignment"): known
 * names come from one batched read; new ones reserve a block of ids with one increment
 * by their count and claim them together; two writers resolving overlapping new names at
 * once still agree on one id per name (a lost race leaks its id, as before).
 */
import { describe, expect, it, vi } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import type { Table } from '../../../core/index.js';
import type { TsdbError } from '../../../tsdb/errors.js';
import { uidTableSpec } from '../../../tsdb/tables.js';
import { UidTable, idKey } from '../../../tsdb/uid/uid-table.js';

async function uidTable(): Promise<Table> {
  return (await openMemoryStore()).createTable(uidTableSpec());
}

const hex = (m: Map<string, Uint8Array | TsdbError>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v instanceof Uint8Array ? idKey(v) : v.message]));

describe('UidTable.resolveMany', () => {
  it('reserves one block of ids for the new names, reads the known ones in one get', async () => {
    const table = await uidTable();
    const t = new UidTable(table, 'tagv', 3, 1000);
    await t.getOrCreateId('old');
    const fresh = new UidTable(table, 'tagv', 3, 1000); // nothing cached
    const increment = vi.spyOn(table, 'increment');
    const get = vi.spyOn(table, 'get');
    const names = ['old', ...Array.from({ length: 50 }, (_, i) => `h${i}`)];
    const ids = await fresh.resolveMany(names, { create: true });
    expect(increment).toHaveBeenCalledTimes(1);
    expect(increment.mock.calls[0]![2]).toBe(50n);
    expect(get).toHaveBeenCalledTimes(1);
    expect(hex(ids)).toEqual(Object.fromEntries(names.map((n, i) => [n, idKey(Uint8Array.of(0, 0, i + 1))])));
    for (const n of names) expect(idKey((await t.getId(n))!)).toBe(hex(ids)[n]);
    expect(await t.getName(Uint8Array.of(0, 0, 51))).toBe('h49');
    // Without create: the unknown ones are errors, nothing is assigned.
    expect(hex(await fresh.resolveMany(['h3', 'nope'], { create: false }))).toEqual({ h3: '000005', nope: "No such name for 'tagv': 'nope'" });
    expect(increment).toHaveBeenCalledTimes(1);
  });

  it('gives one id per name when two writers assign overlapping names at once', async () => {
    const table = await uidTable();
    const a = new UidTable(table, 'tagv', 3, 1000);
    const b = new UidTable(table, 'tagv', 3, 1000);
    const names = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const [ra, rb] = await Promise.all([a.resolveMany(names.slice(0, 30), { create: true }), b.resolveMany(names.slice(10), { create: true })]);
    const reader = new UidTable(table, 'tagv', 3, 1000);
    for (const n of names) {
      const id = idKey((await reader.getId(n))!);
      if (ra.has(n)) expect(hex(ra)[n]).toBe(id);
      if (rb.has(n)) expect(hex(rb)[n]).toBe(id);
      expect(await reader.getName((await reader.getId(n))!)).toBe(n);
    }
    expect(a.stats().raceLosses + b.stats().raceLosses).toBeGreaterThan(0);
  });

  it('answers exhausted ids per name', async () => {
    const t = new UidTable(await uidTable(), 'metric', 1, 1000);
    const names = Array.from({ length: 300 }, (_, i) => `m${i}`);
    const out = await t.resolveMany(names, { create: true });
    expect([...out.values()].filter((v) => v instanceof Uint8Array)).toHaveLength(255);
    expect(hex(out)['m299']).toMatch(/All Unique IDs for metrics on 1 bytes are already assigned/);
  });

  it('syncs a block with its increment and forward mappings only, and hands a name assigned buffered to a client only once durable', async () => {
    const table = await uidTable();
    const t = new UidTable(table, 'tagv', 3, 1000);
    const increment = vi.spyOn(table, 'increment');
    const cap = vi.spyOn(table, 'checkAndPut');
    const durabilities = (): string[] => cap.mock.calls.map((c) => c[4]?.durability ?? 'sync');
    await t.resolveMany(['a1', 'a2', 'a3'], { create: true });
    expect(increment.mock.calls.map((c) => c[3]?.durability)).toEqual(['sync']);
    // Reverse check-and-puts buffered, forward ones synced (they make the reverse durable).
    expect(durabilities().sort()).toEqual(['buffered', 'buffered', 'buffered', 'sync', 'sync', 'sync']);
    cap.mockClear();
    increment.mockClear();
    const assigned = new Set<string>();
    await t.resolveMany(['b1', 'b2', 'a1'], { create: true, durability: 'buffered', assigned });
    expect([...assigned].sort()).toEqual(['b1', 'b2']);
    expect(durabilities()).toEqual(['buffered', 'buffered', 'buffered', 'buffered']);
    // b1 is not durable yet: getOrCreateId writes a synced barrier before answering.
    increment.mockClear();
    expect(idKey(await t.getOrCreateId('b1'))).toBe('000004');
    expect(increment.mock.calls.map((c) => [c[2], c[3]?.durability])).toEqual([[0n, 'sync']]);
    // Once the caller's synced write said so (or the barrier ran), no barrier.
    await t.resolveMany(['c1'], { create: true, durability: 'buffered' });
    t.synced(['c1']);
    increment.mockClear();
    await t.getOrCreateId('c1');
    await t.getOrCreateId('b2');
    expect(increment).not.toHaveBeenCalled();
  });
});
