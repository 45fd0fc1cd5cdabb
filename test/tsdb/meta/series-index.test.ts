/**
 * The series index finds a tag-filtered query's series through the postings of the
 * filtered values (meta/postings.ts) exactly as testing every series of the metric does:
 * random TSUIDs and plans (literals, several values, any value, value sets as wildcards
 * resolve them), series recorded between searches, values no series holds, explicit
 * tags, the limit; without reading the metric's series list, and reading about the
 * shortest clause's postings. A store from before postings gets them (buildPostings);
 * deletes take the postings with them.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import type { Table } from '../../../core/api/store.js';
import { openMemoryStore } from '../../../core/index.js';
import { Random } from '../../../core/util/random.js';
import type { PostingClause } from '../../../tsdb/meta/postings.js';
import { postingsTableSpec } from '../../../tsdb/meta/postings.js';
import { META_CREATED, META_FAMILY, SeriesIndex, metaTableSpec } from '../../../tsdb/meta/series-index.js';
import { planRowKeyFilter } from '../../../tsdb/query/row-key-filter.js';
import { createTagFilter } from '../../../tsdb/query/tag-filter.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';

const W: SchemaWidths = { metric: 3, tagk: 3, tagv: 3, saltWidth: 1, saltBuckets: 20 };
const METRIC = Uint8Array.from([0, 0, 7]);
const OTHER = Uint8Array.from([0, 0, 8]);
const uid = (n: number): Uint8Array => Uint8Array.from([0, n >> 8, n & 255]);

/** A table whose scans are counted. */
function counted(t: Table): { table: Table; scans: () => number } {
  let scans = 0;
  const table = new Proxy(t, {
    get(target, prop, recv) {
      if (prop === 'scan') return (...a: Parameters<Table['scan']>) => (scans++, target.scan(...a));
      const v = Reflect.get(target, prop, recv) as unknown;
      return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { table, scans: () => scans };
}

async function openIndex(): Promise<{ index: SeriesIndex; meta: Table; postings: Table; metaScans: () => number; close: () => Promise<void> }> {
  const store = await openMemoryStore();
  const m = counted(await store.createTable(metaTableSpec()));
  const postings = await store.createTable(postingsTableSpec());
  const index = new SeriesIndex(m.table, postings, W, { keep: true });
  return { index, meta: m.table, postings, metaScans: m.scans, close: () => store.close() };
}

/** True when `t` holds a pair of each clause's tagk with one of its values. */
function inClauses(t: Uint8Array, clauses: readonly PostingClause[]): boolean {
  return clauses.every((c) => {
    for (let at = 3; at + 6 <= t.length; at += 6) {
      if (toHex(t.subarray(at, at + 3)) !== toHex(c.tagk)) continue;
      return c.values === undefined || c.values.some((v) => toHex(v) === toHex(t.subarray(at + 3, at + 6)));
    }
    return false;
  });
}

describe('series index postings', () => {
  it('find exactly the series a full test of every series finds, without reading the series list', async () => {
    const { index, metaScans, close } = await openIndex();
    const r = new Random(20261207);
    // Small alphabets: tagks 1-4, values 1-6, so values are shared by many series.
    const randomTsuid = (metric: Uint8Array): Uint8Array => {
      const bytes = [...metric];
      for (const k of [1, 2, 3, 4]) if (r.chance(0.7)) bytes.push(...uid(k), ...uid(1 + r.int(6)));
      return Uint8Array.from(bytes.length === 3 ? [...bytes, ...uid(1), ...uid(1)] : bytes);
    };
    const known = new Map<string, Uint8Array>();
    const record = async (n: number): Promise<void> => {
      const batch = Array.from({ length: n }, () => randomTsuid(r.chance(0.8) ? METRIC : OTHER));
      await index.record(batch, 1);
      for (const t of batch) known.set(toHex(t), t);
    };
    await record(300);
    let matched = 0;
    let cut = 0;
    for (let round = 0; round < 300; round++) {
      if (round % 50 === 25) await record(40);
      const filters = [1, 2, 3, 4].filter(() => r.chance(0.5)).map((k) => {
        const literal = r.chance(0.6);
        const values = literal ? Array.from({ length: 1 + (r.chance(0.7) ? 0 : 1) }, () => uid(1 + r.int(7))) : undefined; // 7: no series has it
        return { filter: literal ? createTagFilter('literal_or', 'k', 'v') : createTagFilter('wildcard', 'k', '*'), tagk: uid(k), ...(values === undefined ? {} : { tagvs: values }) };
      });
      const plan = planRowKeyFilter(W, filters, { explicitTags: r.chance(0.2) });
      if (plan.seriesTest === undefined) continue;
      // An entry of any value stands for a wildcard: any value, or the values it resolved to.
      const clauses: PostingClause[] = plan.entries.map((e) => (e.values !== undefined || r.chance(0.5) ? e
        : { tagk: e.tagk, values: [1, 2, 3, 4, 5, 6, 7].filter(() => r.chance(0.5)).map(uid) }));
      const limit = r.chance(0.2) ? 1 + r.int(5) : 1000;
      const all = [...known.values()].filter((t) => toHex(t.subarray(0, 3)) === toHex(METRIC)).sort((a, b) => Buffer.compare(a, b));
      const want = all.filter((t) => plan.seriesTest!(t) && inClauses(t, clauses)).map(toHex);
      const got = (await index.matching(METRIC, clauses, limit, undefined, plan.seriesTest)).map(toHex);
      if (clauses.length === 0 || want.length <= limit) {
        expect(got, `round ${round}: ${plan.seriesRegex}`).toEqual(want.slice(0, limit));
      } else {
        // Cut: `limit` of the matches, in order.
        cut++;
        expect(got.length).toBe(limit);
        expect(got.every((t) => want.includes(t))).toBe(true);
        expect([...got].sort()).toEqual(got);
      }
      matched += want.length;
    }
    expect(matched).toBeGreaterThan(1000);
    expect(cut).toBeGreaterThan(5);
    // Clauses never read the series list (only a search without clauses does: explicit tags alone).
    expect(metaScans()).toBeLessThan(30);
    await close();
  });

  it('read about clauses × the shortest clause, not the metric', async () => {
    const { index, metaScans, close } = await openIndex();
    // 3000 series: host=1..3000, dc=1..3; rack=1 on ten of them.
    const batch = Array.from({ length: 3000 }, (_, i) => {
      const pairs = [...uid(1), ...uid(1 + i), ...uid(2), ...uid(1 + (i % 3))];
      if (i % 300 === 0) pairs.push(...uid(3), ...uid(1));
      return Uint8Array.from([...METRIC, ...pairs]);
    });
    await index.record(batch, 1);
    const before = index.postings.postingsRead;
    const got = await index.matching(METRIC, [{ tagk: uid(2), values: [uid(1)] }, { tagk: uid(3), values: [uid(1)] }], 1000);
    expect(got.length).toBe(10); // i % 300 === 0 and i % 3 === 0: every one of the ten
    const read = index.postings.postingsRead - before;
    expect(read).toBeLessThanOrEqual(1010); // one batch of dc=1 (1000 rows), the ten of rack=1
    // A wildcard resolved to many values (over 64: one scan of the tagk, filtered).
    const hosts = Array.from({ length: 100 }, (_, i) => uid(1 + i * 7));
    const some = await index.matching(METRIC, [{ tagk: uid(1), values: hosts }, { tagk: uid(2), values: [uid(2)] }], 1000);
    expect(some.map(toHex)).toEqual(batch.filter((_, i) => i % 7 === 0 && i < 700 && i % 3 === 1).map(toHex));
    // A value given twice: its series once.
    const twice = await index.matching(METRIC, [{ tagk: uid(3), values: [uid(1), uid(1)] }], 1000);
    expect(twice.length).toBe(10);
    expect(metaScans()).toBe(0);
    await close();
  });

  it('are built for the series of a store from before postings, once', async () => {
    const { index, meta, close } = await openIndex();
    const old = [Uint8Array.from([...METRIC, ...uid(1), ...uid(5)]), Uint8Array.from([...METRIC, ...uid(1), ...uid(6), ...uid(2), ...uid(1)])];
    // What an older version wrote: index rows only.
    await meta.mutate(old.map((key) => ({ key, mutations: [{ type: 'put', family: META_FAMILY, qualifier: META_CREATED, value: new Uint8Array(8) }] })));
    expect(await index.matching(METRIC, [{ tagk: uid(1), values: [uid(6)] }], 10)).toEqual([]);
    expect(await index.buildPostings()).toBe(2);
    expect((await index.matching(METRIC, [{ tagk: uid(1), values: [uid(6)] }], 10)).map(toHex)).toEqual([toHex(old[1]!)]);
    expect((await index.tagValues(METRIC, uid(1))).map(toHex)).toEqual(['000005', '000006']);
    expect(await index.buildPostings()).toBe(0);
    expect(await index.postings.built()).toBe(true);
    await close();
    // A new store: nothing to build, the built row alone.
    const fresh = await openIndex();
    expect(await fresh.index.postings.built()).toBe(false);
    expect(await fresh.index.buildPostings()).toBe(0);
    expect(await fresh.index.postings.built()).toBe(true);
    expect((await fresh.postings.get([Uint8Array.from([0x62])]))[0]).toBeDefined();
    await fresh.close();
  });

  it('go with the series deleted', async () => {
    const { index, close } = await openIndex();
    const a = Uint8Array.from([...METRIC, ...uid(1), ...uid(1)]);
    const b = Uint8Array.from([...METRIC, ...uid(1), ...uid(2)]);
    const c = Uint8Array.from([...OTHER, ...uid(1), ...uid(1)]);
    await index.record([a, b, c], 1);
    const host = (m: Uint8Array): Promise<string[]> => index.matching(m, [{ tagk: uid(1), values: undefined }], 10).then((x) => x.map(toHex));
    expect(await host(METRIC)).toEqual([toHex(a), toHex(b)]);
    await index.remove(METRIC, [a]);
    expect(await host(METRIC)).toEqual([toHex(b)]);
    expect(await index.known([a, b])).toEqual([false, true]);
    await index.remove(METRIC);
    expect(await host(METRIC)).toEqual([]);
    expect(await index.tagValues(METRIC, uid(1))).toEqual([]);
    expect(await host(OTHER)).toEqual([toHex(c)]);
    await close();
  });
});
