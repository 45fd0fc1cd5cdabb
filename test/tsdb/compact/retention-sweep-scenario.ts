/**
 * The retention sweep's scenario (tsdb/compact/retention-sweep.ts), run on the memory store
 * (retention-sweep.test.ts) and the Bigtable emulator (test/bigtable/retention.bigtable.test.ts):
 * one or two servers on one store, three metrics with different rules (one of them created
 * through the second server under a prefix rule), points every hour over 4 days. After a
 * sweep the data table holds exactly the rows of unexpired hours, each with every point
 * written to it; each bucket is swept once per clock hour across servers; a point written
 * into an expired hour afterwards goes at the next hour's sweep.
 */
import { expect } from 'vitest';
import type { Store } from '../../../core/api/store.js';
import { mergeRowCells } from '../../../tsdb/query/row-merge.js';
import { baseTimeOfKey } from '../../../tsdb/schema/row-key.js';
import { DATA_FAMILY } from '../../../tsdb/tables.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const HOUR = 3600;
/** The clock: 2026-01-10T12:30Z. */
const NOW_S = Date.UTC(2026, 0, 10, 12, 30) / 1000;
const RETENTION = { retention: '2d', retentionMetrics: 'keep.*=forever, short=1d' } as const;
const KEEP_S: Record<string, number | undefined> = { 'm.default': 2 * 86_400, 'keep.audit': undefined, 'keep.other': undefined, short: 86_400 };

/** Row → points, as "metric base-hour" → count, read from the data table. */
async function rowsOf(t: Tsdb): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const names = new Map<string, string>();
  for await (const rows of t.data.scan({ families: [DATA_FAMILY] })) {
    for (const r of rows) {
      const uid = r.key.subarray(t.widths.saltWidth, t.widths.saltWidth + t.widths.metric);
      const id = Buffer.from(uid).toString('hex');
      if (!names.has(id)) names.set(id, (await t.metrics.getName(uid))!);
      const k = `${names.get(id)} ${baseTimeOfKey(t.widths, r.key)} ${Buffer.from(r.key.subarray(t.widths.saltWidth + t.widths.metric + 4)).toString('hex')}`;
      out.set(k, mergeRowCells(r.cells).count);
    }
  }
  return out;
}

/**
 * `stores`: one store per server (the same store, or views of one); `shared`: they declare
 * other writers (claims in the store).
 */
export async function runRetentionScenario(stores: readonly Store[]): Promise<void> {
  let nowMs = NOW_S * 1000;
  const now = (): number => nowMs;
  const servers: Tsdb[] = [];
  for (const s of stores) servers.push(await Tsdb.open(s, { background: false, now, config: RETENTION }));
  const [a] = servers;
  const b = servers.at(-1)!;
  try {
    for (const t of servers) expect(t.retentionSweeper, 'a sweeper where the store has no row transform').toBeDefined();
    // Points every hour over 4 days, two series a metric, each written through one server.
    const written = new Map<string, number>();
    const expected = new Map<string, number>();
    for (const metric of Object.keys(KEEP_S)) {
      for (const host of ['a', 'b']) {
        const t = metric === 'keep.other' || host === 'b' ? b : a!;
        const points = [];
        for (let ts = NOW_S - 4 * 86_400; ts <= NOW_S; ts += HOUR) points.push(pt(metric, ts, ts % 1000, { host }), pt(metric, ts + 60, 1.5, { host }));
        expect((await t.ingest.write(points)).every((o) => o === undefined)).toBe(true);
      }
    }
    for (const [k, n] of await rowsOf(a!)) {
      written.set(k, n);
      const [metric, base] = k.split(' ');
      const keep = KEEP_S[metric!];
      if (keep === undefined || Number(base) + HOUR > NOW_S - keep) expected.set(k, n);
    }
    expect(expected.size).toBeLessThan(written.size);
    expect([...written.keys()].some((k) => k.startsWith('keep.other '))).toBe(true);

    await Promise.all(servers.map((t) => t.retentionSweeper!.runOnce()));
    const after = await rowsOf(a!);
    expect(after).toEqual(expected); // expired rows gone; every other row with all its points
    const buckets = a!.widths.saltWidth === 0 ? 1 : a!.widths.saltBuckets;
    const swept = servers.reduce((n, t) => n + t.retentionSweeper!.stats().bucketsSwept, 0);
    expect(swept).toBe(buckets); // each bucket once, across servers
    for (const t of servers) expect(t.retentionSweeper!.stats().errors).toBe(0);

    // The same clock hour: nothing swept again. A point into an expired hour stays until
    // the next hour's sweep takes it.
    const late = NOW_S - 3 * 86_400;
    expect(await a!.ingest.write([pt('m.default', late, 7, { host: 'a' })])).toEqual([undefined]);
    await Promise.all(servers.map((t) => t.retentionSweeper!.runOnce()));
    expect(servers.reduce((n, t) => n + t.retentionSweeper!.stats().bucketsSwept, 0)).toBe(buckets);
    expect((await rowsOf(a!)).size).toBe(expected.size + 1);
    nowMs += HOUR * 1000;
    await Promise.all(servers.map((t) => t.retentionSweeper!.runOnce()));
    expect(servers.reduce((n, t) => n + t.retentionSweeper!.stats().bucketsSwept, 0)).toBe(2 * buckets);
    // An hour later: the late point is gone, and so are the rows whose hour expired meanwhile.
    const stillKept = new Map([...expected].filter(([k]) => {
      const [metric, base] = k.split(' ');
      const keep = KEEP_S[metric!];
      return keep === undefined || Number(base) + HOUR > NOW_S + HOUR - keep;
    }));
    expect(stillKept.size).toBeLessThan(expected.size);
    expect(await rowsOf(a!)).toEqual(stillKept);
  } finally {
    for (const t of servers) await t.close();
  }
}
