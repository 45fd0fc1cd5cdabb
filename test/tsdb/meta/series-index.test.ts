/**
 * The series index's in-memory copy answers `matching` through posting lists (the series
 * of each tag pair) exactly as testing every series of the metric does: random TSUIDs and
 * plans, lists built before and after new series are recorded, pairs no series holds,
 * explicit tags, and the limit.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../core/api/bytes.js';
import { openMemoryStore } from '../../../core/index.js';
import { Random } from '../../../core/util/random.js';
import { SeriesIndex, metaTableSpec } from '../../../tsdb/meta/series-index.js';
import { planRowKeyFilter } from '../../../tsdb/query/row-key-filter.js';
import { createTagFilter } from '../../../tsdb/query/tag-filter.js';
import type { SchemaWidths } from '../../../tsdb/schema/widths.js';

const W: SchemaWidths = { metric: 3, tagk: 3, tagv: 3, saltWidth: 1, saltBuckets: 20 };
const METRIC = Uint8Array.from([0, 0, 7]);
const OTHER = Uint8Array.from([0, 0, 8]);

describe('series index posting lists', () => {
  it('match exactly the series a full test of every series matches', async () => {
    const store = await openMemoryStore();
    const table = await store.createTable(metaTableSpec());
    const index = new SeriesIndex(table, W.metric, { cache: true });
    const r = new Random(20261127);
    // Small alphabets: tagks 1-4, values 1-6, so pairs are shared by many series.
    const uid = (n: number): Uint8Array => Uint8Array.from([0, 0, n]);
    const randomTsuid = (metric: Uint8Array): Uint8Array => {
      const tagks = [1, 2, 3, 4].filter(() => r.chance(0.7));
      const bytes = [...metric];
      for (const k of tagks) bytes.push(...uid(k), ...uid(1 + r.int(6)));
      // Now and then a pair twice (no writer makes one; the lists must still name it once).
      if (bytes.length > 3 && r.chance(0.05)) bytes.push(...bytes.slice(-6));
      return Uint8Array.from(bytes);
    };
    const known: Uint8Array[] = [];
    const record = async (n: number): Promise<void> => {
      const batch = Array.from({ length: n }, () => randomTsuid(r.chance(0.8) ? METRIC : OTHER));
      await index.record(batch, 1);
      known.push(...batch);
    };
    await record(300);
    let matched = 0;
    let narrowed = 0;
    for (let round = 0; round < 400; round++) {
      // New series after the lists were built must be found through them too.
      if (round % 50 === 25) await record(40);
      const tagks = [1, 2, 3, 4].filter(() => r.chance(0.5));
      const filters = tagks.map((k) => {
        const literal = r.chance(0.7);
        const values = literal ? Array.from({ length: 1 + (r.chance(0.7) ? 0 : 1) }, () => uid(1 + r.int(7))) : undefined; // 7: no series has it
        return { filter: literal ? createTagFilter('literal_or', 'k', 'v') : createTagFilter('wildcard', 'k', '*'), tagk: uid(k), ...(values === undefined ? {} : { tagvs: values }) };
      });
      const plan = planRowKeyFilter(W, filters, { explicitTags: r.chance(0.2) });
      if (plan.seriesTest === undefined) continue;
      const limit = r.chance(0.2) ? 1 + r.int(5) : 1000;
      const all = [...new Map(known.filter((t) => toHex(t.subarray(0, 3)) === toHex(METRIC)).map((t) => [toHex(t), t])).values()];
      all.sort((a, b) => Buffer.compare(a, b));
      const want = all.filter((t) => plan.seriesTest!(t)).slice(0, limit);
      const got = await index.matching(METRIC, plan.seriesRegex!, limit, undefined, plan.seriesTest, plan.requiredPairs);
      expect(got.map(toHex), `round ${round}: ${plan.seriesRegex}`).toEqual(want.map(toHex));
      // Without the lists (the pattern's byte test over every series): the same answer.
      expect((await index.matching(METRIC, plan.seriesRegex!, limit, undefined, plan.seriesTest)).map(toHex)).toEqual(want.map(toHex));
      matched += want.length;
      if (plan.requiredPairs.length > 0) narrowed++;
    }
    expect(matched).toBeGreaterThan(1000);
    expect(narrowed).toBeGreaterThan(100);
    await store.close();
  });

  it('names in requiredPairs exactly the key entries of one value', () => {
    const f = (tagk: number, ...values: number[]) => ({ filter: createTagFilter('literal_or', 'k', 'v'), tagk: Uint8Array.from([0, 0, tagk]), tagvs: values.map((v) => Uint8Array.from([0, 0, v])) });
    const plan = planRowKeyFilter(W, [f(2, 5), f(1, 3, 4), { filter: createTagFilter('wildcard', 'k', '*'), tagk: Uint8Array.from([0, 0, 3]) }, f(4, 9)]);
    expect(plan.requiredPairs.map(toHex)).toEqual(['000002000005', '000004000009']);
  });
});
