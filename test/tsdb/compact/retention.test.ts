/**
 * Retention (tsdb/compact/retention.ts, tsdb/SCHEMA.md "Retention"): the rules parse and
 * match as documented; on the embedded store expired hours disappear — whole files dropped
 * with nothing rewritten, the rest dropped at compaction — and disk use shrinks.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../../core/fs/mem-fs.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { parseRetention, ruleFor, longestRetention } from '../../../tsdb/compact/retention.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const H = 3_600_000;
const T0 = 1356998400 * 1000;

describe('retention rules', () => {
  it('parse durations and rules; an exact name beats a prefix, the longest prefix beats a shorter one', () => {
    const c = parseRetention('30d', 'sys.*=7d, sys.cpu.*=1h, sys.cpu.user=forever, audit=1y');
    expect(c.defaultMs).toBe(30 * 86_400_000);
    expect(ruleFor(c, 'sys.mem')?.ms).toBe(7 * 86_400_000);
    expect(ruleFor(c, 'sys.cpu.idle')?.ms).toBe(H);
    expect(ruleFor(c, 'sys.cpu.user')?.ms).toBe(0);
    expect(ruleFor(c, 'other')).toBeUndefined();
    expect(longestRetention(c)).toBeUndefined(); // a metric is kept forever
    expect(longestRetention(parseRetention('30d', 'audit=1y'))).toBe(365 * 86_400_000);
    expect(parseRetention('', '').defaultMs).toBeUndefined();
  });

  it('reject what they cannot read, with the key and the text', () => {
    expect(() => parseRetention('30 days', '')).toThrow(/horae.retention: invalid duration "30 days"/);
    expect(() => parseRetention('10m', '')).toThrow(/at least 1h/);
    expect(() => parseRetention('', 'sys.cpu')).toThrow(/"sys.cpu" is not metric=duration/);
    expect(() => parseRetention('', 'a*b=1d')).toThrow(/only a trailing \*/);
  });
});

async function openAt(clock: { now: number }, config: Partial<TsdbConfig>) {
  const store = await openEmbeddedStore({ dir: '/db', fs: new MemFileSystem(), clock: () => clock.now, maintenanceIntervalMs: 10, compactionMinFiles: 100, memstoreMaxAgeMs: 1e9 });
  const tsdb = await Tsdb.open(store, { config, now: () => clock.now, background: false });
  return { store, tsdb };
}

/** Six hours of one point every 10 s for `metric`, each hour flushed into its own files. */
async function writeHours(tsdb: Tsdb, metric: string): Promise<void> {
  for (let h = 0; h < 6; h++) {
    await tsdb.ingest.write(Array.from({ length: 360 }, (_, i) => pt(metric, (T0 + h * H) / 1000 + i * 10, (i * 37) % 1000)));
    await tsdb.data.flush();
  }
}

/** The data table's files and bytes (the UID and index tables flush too, on their own). */
async function dataFiles(tsdb: Tsdb): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const r of await tsdb.data.regions()) {
    files += r.stats.files;
    bytes += r.stats.sizeBytes;
  }
  return { files, bytes };
}

const until = async (cond: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 300 && !(await cond()); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('retention on the embedded store', () => {
  it('drops whole files of expired hours, rewriting nothing, and disk use shrinks', async () => {
    const clock = { now: T0 + 6 * H };
    const { store, tsdb } = await openAt(clock, { retention: '6h' });
    await writeHours(tsdb, 'cpu');
    const before = await dataFiles(tsdb);
    const compactions = (await store.stats()).compactionsDone;
    expect(before.files).toBe(6);
    clock.now = T0 + 12 * H + 1; // hours 0..5 end at 1..6 h: past 6 h at 12 h
    await until(async () => (await dataFiles(tsdb)).files === 0);
    const after = await dataFiles(tsdb);
    expect((await store.stats()).compactionsDone).toBe(compactions);
    expect(after).toEqual({ files: 0, bytes: 0 });
    expect(before.bytes).toBeGreaterThan(6 * 300);
    expect(await readSeries(tsdb, 'cpu', { host: 'a' }, T0, T0 + 7 * H)).toEqual([]);
    await tsdb.close();
    await store.close();
  });

  it('drops the rest at compaction, by metric, and keeps what a rule keeps', async () => {
    const clock = { now: T0 + 6 * H };
    const clockAtWrite = T0 + 6 * H;
    clock.now = clockAtWrite - 5 * H; // nothing expired while written
    const { store, tsdb } = await openAt(clock, { retention: '4h', retentionMetrics: 'short.*=2h, keep=forever' });
    await writeHours(tsdb, 'cpu');
    await writeHours(tsdb, 'short.x');
    await writeHours(tsdb, 'keep');
    const before = await dataFiles(tsdb);
    clock.now = T0 + 7 * H; // cpu: hours ending by 3 h expire (0..2); short.x: by 5 h (0..4); keep: none
    await tsdb.compactor.runOnce({ force: true });
    const after = await dataFiles(tsdb);
    expect(after.bytes).toBeLessThan(before.bytes * 0.75);
    const hours = async (m: string) => [...new Set((await readSeries(tsdb, m, { host: 'a' }, T0, T0 + 7 * H)).map((p) => Math.floor((p.ts - T0) / H)))];
    expect(await hours('cpu')).toEqual([3, 4, 5]);
    expect(await hours('short.x')).toEqual([5]);
    expect(await hours('keep')).toEqual([0, 1, 2, 3, 4, 5]);
    await tsdb.close();
    await store.close();
  });
});
