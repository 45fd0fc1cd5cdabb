/**
 * The index cleanup (horae.retention.cleanup, meta/index-cleanup.ts) against a model, on
 * the memory store: random series of metrics with a retention (and one kept forever) are
 * written as the clock moves on, names come back after they were removed, the retention
 * sweep and the cleanup run now and then. After each cleanup the series index holds
 * exactly the series with a row in the hours kept, the UID table exactly the names those
 * series carry (and nothing else), every id ever handed out stays unique (a name written
 * again gets a new, larger one: the counter never goes back), and every point kept reads
 * exactly. Also a write racing a pass: the series it writes stays in the index.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../core/index.js';
import { Random } from '../../../core/util/random.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { tsuidTagPairs } from '../../../tsdb/schema/row-key.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import type { UidKind } from '../../../tsdb/uid/uid-kind.js';
import { pt } from '../helpers/tsdb-fixture.js';

const HOUR = 3_600_000;
const T0 = 1_704_067_200_000;
const CONFIG = { retention: '3h', retentionMetrics: 'keep.*=forever, short.*=1h', retentionCleanup: true };
const METRICS = ['m.a', 'm.b', 'short.c', 'keep.d'];
const HOSTS = ['h0', 'h1', 'h2', 'h3', 'h4', 'h5'];
const DCS = ['d0', 'd1', 'd2'];

function keepOf(metric: string): number | undefined {
  return metric.startsWith('keep.') ? undefined : metric.startsWith('short.') ? HOUR : 3 * HOUR;
}

/** Series text → ms → value, the last write winning. */
type Model = Map<string, Map<number, number>>;

function seriesText(metric: string, tags: Record<string, string>): string {
  return `${metric}{${Object.entries(tags).sort().map(([k, v]) => `${k}=${v}`).join(',')}}`;
}

function parseText(s: string): { metric: string; tags: Record<string, string> } {
  const [metric, rest] = s.split('{') as [string, string];
  return { metric, tags: Object.fromEntries(rest.slice(0, -1).split(',').map((p) => p.split('=') as [string, string])) };
}

/** The first ms kept whole under the metric's retention at `now` (the first hour kept), or 0. */
function firstKeptMs(metric: string, now: number): number {
  const keep = keepOf(metric);
  if (keep === undefined) return 0;
  return Math.floor((now - keep - HOUR) / HOUR) * HOUR + HOUR;
}

async function openTsdb(clock: { now: number }): Promise<Tsdb> {
  const store = await openMemoryStore();
  return Tsdb.open(store, { now: () => clock.now, background: false, config: CONFIG });
}

async function indexSeries(tsdb: Tsdb): Promise<string[]> {
  const out: string[] = [];
  for (const t of await tsdb.index.tsuids(new Uint8Array(0), Number.MAX_SAFE_INTEGER)) {
    const tags: Record<string, string> = {};
    for (const [k, v] of tsuidTagPairs(tsdb.widths, t)) tags[(await tsdb.tagks.getName(k))!] = (await tsdb.tagvs.getName(v))!;
    out.push(seriesText((await tsdb.metrics.getName(t.subarray(0, tsdb.widths.metric)))!, tags));
  }
  return out.sort();
}

describe('index cleanup', () => {
  for (const seed of [1, 2, 3]) {
    it(`keeps the index and the names to the series with data kept, never reusing an id (seed ${seed})`, async () => {
      const rnd = new Random(seed);
      const clock = { now: T0 };
      const tsdb = await openTsdb(clock);
      const model: Model = new Map();
      /** Every id handed out so far, per kind (hex → name), and the largest. */
      const seen: Record<UidKind, Map<string, string>> = { metric: new Map(), tagk: new Map(), tagv: new Map() };
      const maxId: Record<UidKind, number> = { metric: 0, tagk: 0, tagv: 0 };
      let removedSome = false;
      let reused = 0;
      try {
        for (let round = 0; round < 24; round++) {
          clock.now += rnd.range(HOUR / 2, 2 * HOUR);
          const pts = [];
          for (let i = rnd.int(12); i >= 0; i--) {
            const metric = METRICS[rnd.int(METRICS.length)]!;
            const tags: Record<string, string> = { host: HOSTS[rnd.int(HOSTS.length)]! };
            if (rnd.chance(0.5)) tags.dc = DCS[rnd.int(DCS.length)]!;
            // Mostly now; sometimes late, into an hour that may have expired already.
            const ms = Math.floor((rnd.chance(0.8) ? clock.now - rnd.int(600_000) : clock.now - rnd.int(5 * HOUR)) / 1000) * 1000;
            const value = rnd.int(1000);
            const text = seriesText(metric, tags);
            let m = model.get(text);
            if (m === undefined) model.set(text, (m = new Map()));
            m.set(ms, value);
            pts.push(pt(metric, ms, value, tags));
          }
          await tsdb.ingest.write(pts);
          if (!rnd.chance(0.4)) continue;
          await tsdb.retentionSweeper!.runOnce();
          const before = tsdb.indexCleanup!.stats().seriesRemoved;
          await tsdb.indexCleanup!.runOnce();
          if (tsdb.indexCleanup!.stats().seriesRemoved > before) removedSome = true;
          expect(tsdb.indexCleanup!.stats().errors).toBe(0);

          // The index: exactly the series with a row in the hours kept.
          const live = [...model].filter(([text, pts2]) => {
            const from = firstKeptMs(parseText(text).metric, clock.now);
            return [...pts2.keys()].some((ms) => ms >= from);
          }).map(([text]) => text).sort();
          expect(await indexSeries(tsdb)).toEqual(live);

          // The names: exactly those the live series carry; ids unique and never reused.
          const want: Record<UidKind, Set<string>> = { metric: new Set(), tagk: new Set(), tagv: new Set() };
          for (const text of live) {
            const { metric, tags } = parseText(text);
            want.metric.add(metric);
            for (const [k, v] of Object.entries(tags)) {
              want.tagk.add(k);
              want.tagv.add(v);
            }
          }
          for (const kind of ['metric', 'tagk', 'tagv'] as const) {
            const names = await tsdb.uidTable(kind).allNames();
            expect(names.map(([, n]) => n).sort(), kind).toEqual([...want[kind]].sort());
            let newMax = maxId[kind];
            for (const [id, name] of names) {
              const hex = Buffer.from(id).toString('hex');
              const had = seen[kind].get(hex);
              if (had !== undefined) {
                expect(had, `${kind} ${hex}`).toBe(name);
                continue;
              }
              const n = parseInt(hex, 16);
              expect(n, `${kind} ${name}: a new id above every earlier one`).toBeGreaterThan(maxId[kind]);
              if ([...seen[kind].values()].includes(name)) reused++;
              seen[kind].set(hex, name);
              newMax = Math.max(newMax, n);
            }
            maxId[kind] = newMax;
          }

          // Every point kept reads exactly.
          for (const text of live) {
            const { metric, tags } = parseText(text);
            const from = Math.max(firstKeptMs(metric, clock.now) + HOUR, T0 - 6 * HOUR);
            const got = await readSeries(tsdb, metric, tags, from, clock.now + HOUR);
            const exp = [...model.get(text)!].filter(([ms]) => ms >= from).sort((a, b) => a[0] - b[0]);
            expect(got.map((p) => [p.ts, p.value]), text).toEqual(exp);
          }
        }
        expect(removedSome).toBe(true);
        expect(reused).toBeGreaterThan(0);
      } finally {
        await tsdb.close();
      }
    });
  }

  it('keeps a series written while a pass retires it, and removes the one left alone', async () => {
    const clock = { now: T0 };
    const tsdb = await openTsdb(clock);
    try {
      await tsdb.ingest.write([pt('m.a', T0, 1, { host: 'h0' }), pt('m.b', T0, 2, { host: 'h1' })]);
      clock.now = T0 + 6 * HOUR;
      await tsdb.retentionSweeper!.runOnce();
      // The write of m.a{host=h0} starts as the pass drops the series' writer entries.
      const series = tsdb.catalog.series;
      const drop = series.drop.bind(series);
      let write: Promise<unknown> | undefined;
      series.drop = (key) => {
        drop(key);
        write ??= tsdb.ingest.write([pt('m.a', clock.now, 7, { host: 'h0' })]);
      };
      await tsdb.indexCleanup!.runOnce();
      await write;
      expect(write).toBeDefined();
      expect(await indexSeries(tsdb)).toEqual(['m.a{host=h0}']);
      expect((await readSeries(tsdb, 'm.a', { host: 'h0' }, T0, clock.now)).map((p) => [p.ts, p.value])).toEqual([[clock.now, 7]]);
      expect((await tsdb.uidTable('metric').allNames()).map(([, n]) => n)).toEqual(['m.a']);
      expect((await tsdb.uidTable('tagv').allNames()).map(([, n]) => n)).toEqual(['h0']);
    } finally {
      await tsdb.close();
    }
  });

  it('refuses to record a series carrying a removed UID, and gives the name a new one when written again', async () => {
    const clock = { now: T0 };
    const tsdb = await openTsdb(clock);
    try {
      await tsdb.ingest.write([pt('m.b', T0, 2, { host: 'gone' })]);
      const [old] = await tsdb.index.tsuids(new Uint8Array(0), 10);
      clock.now = T0 + 6 * HOUR;
      await tsdb.indexCleanup!.runOnce();
      expect(await tsdb.metrics.getId('m.b')).toBeUndefined();
      // A series built from names resolved before the removal (a stale cache): refused, retryable.
      const [verdict] = await tsdb.catalog.recordSeries([old!], clock.now);
      expect(verdict).toMatchObject({ code: 'TSDB_OVERLOADED' });
      expect(await tsdb.index.tsuids(new Uint8Array(0), 10)).toEqual([]);
      // Written again: new ids, above the old ones.
      await tsdb.ingest.write([pt('m.b', clock.now, 3, { host: 'gone' })]);
      const [again] = await tsdb.index.tsuids(new Uint8Array(0), 10);
      const w = tsdb.widths;
      expect(Buffer.compare(again!.subarray(0, w.metric), old!.subarray(0, w.metric))).toBe(1);
      expect(Buffer.compare(again!.subarray(again!.length - w.tagv), old!.subarray(old!.length - w.tagv))).toBe(1);
      expect((await readSeries(tsdb, 'm.b', { host: 'gone' }, T0, clock.now)).map((p) => p.value)).toEqual([3]);
    } finally {
      await tsdb.close();
    }
  });
});
