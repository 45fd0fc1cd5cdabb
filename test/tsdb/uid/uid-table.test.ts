import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import type { Table } from '../../../core/index.js';
import { isTsdbError } from '../../../tsdb/errors.js';
import { uidTableSpec } from '../../../tsdb/tables.js';
import { UidTable, encodeId, idKey } from '../../../tsdb/uid/uid-table.js';

async function uidTable(): Promise<Table> {
  const store = await openMemoryStore();
  return store.createTable(uidTableSpec());
}

describe('UidTable', () => {
  it('assigns sequential ids from 1 and maps both ways', async () => {
    const t = new UidTable(await uidTable(), 'metric', 3, 100);
    expect(idKey(await t.getOrCreateId('sys.cpu.user'))).toBe('000001');
    expect(idKey(await t.getOrCreateId('sys.cpu.system'))).toBe('000002');
    expect(idKey(await t.getOrCreateId('sys.cpu.user'))).toBe('000001');
    expect(await t.getName(encodeId(2, 3))).toBe('sys.cpu.system');
    expect(await t.getName(encodeId(3, 3))).toBeUndefined();
    expect(await t.getId('nope')).toBeUndefined();
    expect(await t.usedIds()).toBe(2);
  });

  it('keeps kinds apart in one table and survives dropped caches', async () => {
    const table = await uidTable();
    const m = new UidTable(table, 'metric', 3, 100);
    const k = new UidTable(table, 'tagk', 3, 100);
    expect(idKey(await m.getOrCreateId('host'))).toBe('000001');
    expect(idKey(await k.getOrCreateId('host'))).toBe('000001');
    expect(idKey(await k.getOrCreateId('dc'))).toBe('000002');
    m.dropCaches();
    expect(await m.getId('dc')).toBeUndefined();
    expect(idKey((await k.getId('dc'))!)).toBe('000002');
  });

  it('lists every name of a kind with its id in one scan (renamed names as they are now, unnamed ids left out)', async () => {
    const table = await uidTable();
    const m = new UidTable(table, 'metric', 3, 100);
    const v = new UidTable(table, 'tagv', 3, 100);
    for (const n of ['a', 'b', 'c', 'abc']) await m.getOrCreateId(n);
    for (const n of ['x', 'y', 'z', 'w', 'u']) await v.getOrCreateId(n); // tagv ids 1..5 share row keys with the metrics'
    await m.rename('b', 'b2');
    await table.increment(Uint8Array.of(0), { family: 'id', qualifier: new TextEncoder().encode('metrics') }, 1n); // id 5: handed out, never named
    await m.getOrCreateId('d');
    expect((await m.allNames()).map(([id, n]) => `${idKey(id)} ${n}`)).toEqual(['000001 a', '000002 b2', '000003 c', '000004 abc', '000006 d']);
    expect(await new UidTable(table, 'tagk', 3, 100).allNames()).toEqual([]);
  });

  it('gives one id per name when many writers race (two processes, many concurrent calls)', async () => {
    const table = await uidTable();
    const a = new UidTable(table, 'tagv', 3, 1000);
    const b = new UidTable(table, 'tagv', 3, 1000);
    const names = Array.from({ length: 60 }, (_, i) => `host${i}`);
    const calls: Promise<[string, string]>[] = [];
    for (let round = 0; round < 4; round++) {
      for (const n of names) {
        calls.push(a.getOrCreateId(n).then((id) => [n, idKey(id)]));
        calls.push(b.getOrCreateId(n).then((id) => [n, idKey(id)]));
      }
    }
    const results = await Promise.all(calls);
    const idOf = new Map<string, string>();
    for (const [n, id] of results) {
      if (idOf.has(n)) expect(id).toBe(idOf.get(n));
      else idOf.set(n, id);
    }
    expect(new Set(idOf.values()).size).toBe(names.length);
    const c = new UidTable(table, 'tagv', 3, 1000);
    for (const [n, id] of idOf) {
      expect(idKey((await c.getId(n))!)).toBe(id);
      expect(await c.getName((await c.getId(n))!)).toBe(n);
    }
    expect(a.stats().raceLosses + b.stats().raceLosses).toBeGreaterThan(0);
  });

  it('a writer that loses a race removes only its own reverse mapping, not the other kinds\' of the same id', async () => {
    // Reverse rows are keyed by id alone: metric 7, tagk 7 and tagv 7 share one row.
    const table = await uidTable();
    const metrics = new UidTable(table, 'metric', 3, 1000);
    const tagks = new UidTable(table, 'tagk', 3, 1000);
    const names = Array.from({ length: 40 }, (_, i) => `n${i}`);
    for (const n of names) {
      await metrics.getOrCreateId(`m.${n}`);
      await tagks.getOrCreateId(`k.${n}`);
    }
    const a = new UidTable(table, 'tagv', 3, 1000);
    const b = new UidTable(table, 'tagv', 3, 1000);
    await Promise.all(names.flatMap((n) => [a.getOrCreateId(n), b.getOrCreateId(n)]));
    expect(a.stats().raceLosses + b.stats().raceLosses).toBeGreaterThan(0);
    const freshM = new UidTable(table, 'metric', 3, 1000);
    const freshK = new UidTable(table, 'tagk', 3, 1000);
    const freshV = new UidTable(table, 'tagv', 3, 1000);
    for (const [i, n] of names.entries()) {
      expect(await freshM.getName(encodeId(i + 1, 3))).toBe(`m.${n}`);
      expect(await freshK.getName(encodeId(i + 1, 3))).toBe(`k.${n}`);
      expect(await freshV.getName((await freshV.getId(n))!)).toBe(n);
    }
  });

  it('reports an exhausted id space with OpenTSDB message', async () => {
    const t = new UidTable(await uidTable(), 'metric', 1, 1000);
    for (let i = 1; i <= 255; i++) await t.getOrCreateId(`m${i}`);
    const err = await t.getOrCreateId('one.too.many').catch((e: unknown) => e);
    expect(isTsdbError(err, 'TSDB_UID_EXHAUSTED')).toBe(true);
    expect((err as Error).message).toBe('All Unique IDs for metrics on 1 bytes are already assigned!');
    expect(await t.getId('one.too.many')).toBeUndefined();
  });

  it('renames keeping the id, and refuses to overwrite an existing name', async () => {
    const t = new UidTable(await uidTable(), 'metric', 3, 100);
    const id = await t.getOrCreateId('old.name');
    await t.getOrCreateId('taken');
    expect(await t.rename('old.name', 'new.name')).toEqual(id);
    expect(await t.getId('old.name')).toBeUndefined();
    expect(await t.getName(id)).toBe('new.name');
    const err = await t.rename('new.name', 'taken').catch((e: unknown) => e);
    expect(isTsdbError(err, 'TSDB_ILLEGAL_ARGUMENT')).toBe(true);
  });

  it('lists names by prefix and by regex', async () => {
    const t = new UidTable(await uidTable(), 'metric', 3, 100);
    for (const n of ['sys.cpu.user', 'sys.cpu.system', 'sys.mem.free', 'app.requests']) await t.getOrCreateId(n);
    expect(await t.namesWithPrefix('sys.cpu', 10)).toEqual(['sys.cpu.system', 'sys.cpu.user']);
    expect(await t.namesWithPrefix('sys', 2)).toHaveLength(2);
    expect((await t.grep(/mem|app/)).map(([n]) => n).sort()).toEqual(['app.requests', 'sys.mem.free']);
    const missing = await t.requireId('nope').catch((e: unknown) => e);
    expect((missing as Error).message).toBe("No such name for 'metrics': 'nope'");
  });
});
