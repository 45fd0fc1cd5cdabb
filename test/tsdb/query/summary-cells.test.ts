/**
 * Hour buckets from summary cells (tsdb/SCHEMA.md "Summary cells", query/summary-scan.ts):
 * on a store the read-back compactor compacts (the memory store here; the emulator through
 * test/bigtable/tsdb.bigtable.test.ts), hourly sum/avg/count queries answer byte for byte
 * what the embedded store (which has no summary cells) answers on the same points, while
 * the rows a summary cell does not describe exactly are read again: a late point beside a
 * compacted hour, an hour of fewer points than a summary needs, a summary cell whose hour
 * cell was deleted, one whose suffix names another cell, the window's partial hours and
 * the hours too recent to be compacted.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import { Random } from '../../../core/util/random.js';
import { isHourCellQualifier, isSummaryCellQualifier } from '../../../tsdb/schema/qualifier.js';
import { baseTimeOfKey } from '../../../tsdb/schema/row-key.js';
import { executeQuery } from '../../../tsdb/query/execute.js';
import { formatQueryResultsBytes } from '../../../tsdb/query/format-json.js';
import { parseQueryJson } from '../../../tsdb/query/query-spec.js';
import { DATA_FAMILY } from '../../../tsdb/tables.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
const HOURS = 6;
const HOSTS = ['a', 'b', 'c', 'd'];

/** Every 10 s of HOURS hours for each host (host c: 50 points in hour 2, too few for a summary). */
function points(): IncomingPoint[] {
  const rng = new Random(7);
  const out: IncomingPoint[] = [];
  for (const host of HOSTS) {
    for (let t = T0; t < T0 + HOURS * 3600; t += 10) {
      const hour = Math.floor((t - T0) / 3600);
      if (host === 'c' && hour === 2 && (t - T0) % 3600 >= 500) continue;
      const v = host === 'd' ? rng.int(1000) - 500 : Math.round(rng.next() * 1e6) / 1e4;
      out.push(pt('m', t, v, { host }));
    }
  }
  return out;
}

async function answer(tsdb: Tsdb, body: object): Promise<{ text: string; summaries: number }> {
  const q = parseQueryJson(Buffer.from(JSON.stringify(body)), Date.now(), { queryString: {} });
  const run = await executeQuery(tsdb, q, { maxSeries: 1e6, maxPoints: 1e9 });
  return { text: Buffer.from(formatQueryResultsBytes(run.series, { arrays: q.arrays, msResolution: q.msResolution })).toString(), summaries: run.stats.summaries };
}

describe('hour buckets from summary cells', () => {
  it('answer what the embedded store answers, and only where a summary cell describes the row exactly', async () => {
    // Hours 0..4 compacted and settled; hour 5 ended 30 s ago (not yet due for compaction).
    const nowMs = (T0 + HOURS * 3600 + 30) * 1000;
    const { tsdb, clock } = await openFixture({}, nowMs + 3600_000);
    const embedded = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), clock: () => clock.now, maintenanceIntervalMs: 0 });
    const ref = await Tsdb.open(embedded, { now: () => clock.now, background: false });
    try {
      const all = points();
      await tsdb.ingest.write(all);
      await tsdb.compactor.runOnce({ force: true });
      clock.now = nowMs;
      // A late point in hour 1 of host a (beside the compacted cell, raw), sent to both.
      const late = [pt('m', T0 + 3600 + 15, 1234.5, { host: 'a' })];
      await tsdb.ingest.write(late);
      // Host b, hour 4: its hour cell deleted alone (its summary cell left behind); the
      // reference never had those points.
      // Host d, hour 3: its summary cell renamed to a suffix no hour cell has.
      const b4 = (r: { key: Uint8Array }) => baseTimeOfKey(tsdb.widths, r.key) === T0 + 4 * 3600;
      const d3 = (r: { key: Uint8Array }) => baseTimeOfKey(tsdb.widths, r.key) === T0 + 3 * 3600;
      const tagOf = async (host: string): Promise<Uint8Array> => (await tsdb.tagvs.getId(host))!;
      const [bId, dId] = [await tagOf('b'), await tagOf('d')];
      const hasTagv = (key: Uint8Array, id: Uint8Array) => Buffer.from(key.subarray(key.length - id.length)).equals(Buffer.from(id)); // host is the one tag
      let orphaned = 0;
      for await (const rows of tsdb.data.scan({ families: [DATA_FAMILY] })) {
        for (const r of rows) {
          if (b4(r) && hasTagv(r.key, bId)) {
            const h = r.cells.find((c) => isHourCellQualifier(c.qualifier))!;
            await tsdb.data.mutate([{ key: r.key, mutations: [{ type: 'deleteCell', family: DATA_FAMILY, qualifier: h.qualifier }] }]);
            orphaned++;
          }
          if (d3(r) && hasTagv(r.key, dId)) {
            const s = r.cells.find((c) => isSummaryCellQualifier(c.qualifier))!;
            const other = s.qualifier.slice();
            other[8] ^= 0xff; // another suffix, and a summary of other points: its sum's last bit flipped
            other[24] ^= 1;
            await tsdb.data.mutate([{ key: r.key, mutations: [
              { type: 'deleteCell', family: DATA_FAMILY, qualifier: s.qualifier },
              { type: 'put', family: DATA_FAMILY, qualifier: other, value: s.value, timestamp: s.timestamp },
            ] }]);
            orphaned++;
          }
        }
      }
      expect(orphaned).toBe(2);
      await ref.ingest.write(all.filter((p) => !(p.tags[0]![1] === 'b' && Math.floor((p.timestamp - T0) / 3600) === 4)));
      await ref.ingest.write(late);

      const end = T0 + HOURS * 3600 - 1;
      const cases: [string, object, number][] = [
        // 4 hosts × hours 0..4 = 20 rows: a1 (late point), b4 (no hour cell), c2 (no summary),
        // d3 (foreign suffix) read again. Hour 5 has summary cells too (the forced pass
        // compacted it), but ended 30 s ago: read in full, its summary cells not used.
        ['1h-avg by host', { start: T0, end, queries: [{ metric: 'm', aggregator: 'avg', downsample: '1h-avg', filters: [{ type: 'wildcard', tagk: 'host', filter: '*', groupBy: true }] }] }, 16],
        ['1h-sum of all', { start: T0, end, queries: [{ metric: 'm', aggregator: 'sum', downsample: '1h-sum' }] }, 16],
        ['1h-count of all', { start: T0, end, queries: [{ metric: 'm', aggregator: 'zimsum', downsample: '1h-count' }] }, 16],
        // From 00:30 to 03:30: the buckets (and so the scan) start and end at hours: hours
        // 0..3, less a1, c2 and d3.
        ['1h-avg from half past', { start: T0 + 1800, end: T0 + 3 * 3600 + 1800, queries: [{ metric: 'm', aggregator: 'avg', downsample: '1h-avg' }] }, 13],
        // One host: its rows by exact gets.
        ['1h-avg of host a', { start: T0, end, queries: [{ metric: 'm', aggregator: 'avg', downsample: '1h-avg', tags: { host: 'a' } }] }, 4],
        ['1h-sum of host b', { start: T0, end, queries: [{ metric: 'm', aggregator: 'sum', downsample: '1h-sum', tags: { host: 'b' } }] }, 4],
      ];
      for (const [name, body, summaries] of cases) {
        const got = await answer(tsdb, body);
        const want = await answer(ref, body);
        expect(got.text, name).toBe(want.text);
        expect(got.text.length, name).toBeGreaterThan(50);
        expect(got.summaries, name).toBe(summaries);
      }
    } finally {
      await ref.close();
      await embedded.close();
      await tsdb.close();
    }
  });
});
