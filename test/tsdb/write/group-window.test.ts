/**
 * The group window (horae.ingest.group_window_ms, tsdb/write/ingest.ts): while writers
 * stream (the last group held STREAMING_GROUP_POINTS or more), a group smaller than the
 * biggest recent one waits for more points, up to the window after the last group
 * started, and goes as soon as it is as big. Light load, a lone writer (its next batch is as big),
 * half the in-flight bound waiting, or a writer blocked until its points are acknowledged
 * (a telnet connection at its bound): the group is written at once. Groups are counted
 * through `groupsWritten`; the window is far longer than the gap between the calls
 * (20 ms), so which calls share a group does not depend on the machine's speed.
 */
import { describe, expect, it } from 'vitest';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { tsdbTelnetBackend } from '../../../tsdb/server/telnet/tsdb-telnet-backend.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { STREAMING_GROUP_POINTS } from '../../../tsdb/write/ingest.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400; // an hour boundary
const WINDOW_MS = 500;
const GAP_MS = 20;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `n` points of series `host`, one a second from T0 + offset. */
function points(n: number, host: string, offset = 0): ReturnType<typeof pt>[] {
  return Array.from({ length: n }, (_, i) => pt('m', T0 + offset + i, i, { host }));
}

interface Run {
  /** Groups calls B and C were written in. */
  readonly groups: number;
  /** From call B to both acknowledged, ms. */
  readonly ms: number;
  readonly tsdb: Tsdb;
}

/**
 * Writes a first call of `firstPoints` and waits for it; then call B (`bPoints`) and,
 * GAP_MS later, call C (`cPoints`).
 */
async function twoCallsAfter(config: Partial<TsdbConfig>, firstPoints: number, bPoints = 1, cPoints = 1): Promise<Run> {
  const { tsdb } = await openFixture(config);
  return { ...await twoCallsOn(tsdb, firstPoints, bPoints, cPoints), tsdb };
}

/** twoCallsAfter on an open store; series `first<suffix>`, `b<suffix>` and `c<suffix>`. */
async function twoCallsOn(tsdb: Tsdb, firstPoints: number, bPoints = 1, cPoints = 1, suffix = ''): Promise<Omit<Run, 'tsdb'>> {
  // B's and C's series exist beforehand (one point each, past the hours read back), so the
  // calls time only the group window: creating a series takes store calls, and on a loaded
  // machine C could otherwise arrive while B's creation is still running and join its group.
  await tsdb.ingest.write([...points(1, `b${suffix}`, 7300), ...points(1, `c${suffix}`, 7300)]);
  await tsdb.ingest.write(points(firstPoints, `first${suffix}`));
  const before = tsdb.ingest.stats().groupsWritten;
  const t0 = performance.now();
  const b = tsdb.ingest.write(points(bPoints, `b${suffix}`, 3600));
  await sleep(GAP_MS);
  const c = tsdb.ingest.write(points(cPoints, `c${suffix}`, 3600));
  expect(await b).toEqual(new Array(bPoints).fill(undefined));
  expect(await c).toEqual(new Array(cPoints).fill(undefined));
  return { groups: tsdb.ingest.stats().groupsWritten - before, ms: performance.now() - t0 };
}

const S = STREAMING_GROUP_POINTS;

describe('the group window', () => {
  it('holds a streaming group smaller than the last until the window ends', async () => {
    const { groups, ms, tsdb } = await twoCallsAfter({ ingestGroupWindowMs: WINDOW_MS }, S);
    expect(groups).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(GAP_MS);
    // Every point is stored all the same.
    expect(await readSeries(tsdb, 'm', { host: 'first' }, 0, (T0 + 7200) * 1000)).toHaveLength(S);
    expect((await readSeries(tsdb, 'm', { host: 'b' }, 0, (T0 + 7200) * 1000)).map((p) => p.value)).toEqual([0]);
    expect((await readSeries(tsdb, 'm', { host: 'c' }, 0, (T0 + 7200) * 1000)).map((p) => p.value)).toEqual([0]);
  });

  it('writes the group as soon as it is as big as the last', async () => {
    const window = 1000;
    const { groups, ms } = await twoCallsAfter({ ingestGroupWindowMs: window }, S, S / 2, S / 2);
    expect(groups).toBe(1);
    expect(ms).toBeLessThan(window / 2);
  });

  it('waits for as many points as the biggest of the recent groups', async () => {
    const { tsdb } = await openFixture({ ingestGroupWindowMs: WINDOW_MS });
    await tsdb.ingest.write(points(2 * S, 'first'));
    await tsdb.ingest.write(points(S, 'second')); // alone: written when the window ends
    // Groups of 2S and S: B (S) waits for C (S), as the 2S group's writers may come back.
    const before = tsdb.ingest.stats().groupsWritten;
    const b = tsdb.ingest.write(points(S, 'b', 3600));
    await sleep(GAP_MS);
    const c = tsdb.ingest.write(points(S, 'c', 3600));
    await Promise.all([b, c]);
    expect(tsdb.ingest.stats().groupsWritten - before).toBe(1);
    expect(await readSeries(tsdb, 'm', { host: 'c' }, 0, (T0 + 3600 + S) * 1000)).toHaveLength(S);
  });

  it('does not hold a lone writer whose batch is as big as its last', async () => {
    expect((await twoCallsAfter({ ingestGroupWindowMs: WINDOW_MS }, S, S)).groups).toBe(2);
  });

  it('does not wait when the window is 0', async () => {
    expect((await twoCallsAfter({ ingestGroupWindowMs: 0 }, S)).groups).toBe(2);
  });

  it('does not wait after a group below the streaming size (light load)', async () => {
    expect((await twoCallsAfter({ ingestGroupWindowMs: WINDOW_MS }, S - 1)).groups).toBe(2);
  });

  it('does not wait when half the in-flight bound is waiting', async () => {
    const max = 4 * S;
    const config = { ingestGroupWindowMs: WINDOW_MS, maxInflightPoints: max };
    // The last group was bigger than half the bound: half the bound is enough.
    expect((await twoCallsAfter(config, 3 * S, max / 2)).groups).toBe(2);
    // One point short of half the bound still waits.
    expect((await twoCallsAfter(config, 3 * S, max / 2 - 1)).groups).toBe(1);
  });

  it('writes a waiting group at once when a writer is blocked, and holds none while one is', async () => {
    const { tsdb } = await openFixture({ ingestGroupWindowMs: WINDOW_MS });
    await tsdb.ingest.write(points(S, 'first'));
    // B waits out the window (smaller than the last group) until a writer reports blocked.
    const before = tsdb.ingest.stats().groupsWritten;
    const t0 = performance.now();
    const b = tsdb.ingest.write(points(1, 'b', 3600));
    await sleep(GAP_MS);
    expect(tsdb.ingest.stats().groupsWritten - before).toBe(0);
    const unblock = tsdb.ingest.writerBlocked();
    await b;
    expect(performance.now() - t0).toBeLessThan(WINDOW_MS / 2);
    expect(tsdb.ingest.stats().groupsWritten - before).toBe(1);
    // While the writer stays blocked, a streaming group does not wait (two calls, two groups).
    expect((await twoCallsOn(tsdb, S, 1, 1, '2')).groups).toBe(2);
    // Unblocked (a second call of the release changes nothing), groups wait again.
    unblock();
    unblock();
    expect((await twoCallsOn(tsdb, S, 1, 1, '3')).groups).toBe(1);
    // One writer blocked again counts as one (the doubled release above took nothing off).
    tsdb.ingest.writerBlocked();
    expect((await twoCallsOn(tsdb, S, 1, 1, '4')).groups).toBe(2);
    for (const host of ['b', 'b2', 'c2', 'b3', 'c3', 'b4', 'c4']) {
      expect((await readSeries(tsdb, 'm', { host }, 0, (T0 + 7200) * 1000)).map((p) => p.value)).toEqual([0]);
    }
  });

  it('the telnet backend passes a blocked connection on to the writer', async () => {
    const { tsdb } = await openFixture({ ingestGroupWindowMs: WINDOW_MS });
    const backend = tsdbTelnetBackend(tsdb);
    await tsdb.ingest.write(points(S, 'first'));
    const t0 = performance.now();
    const b = tsdb.ingest.write(points(1, 'b', 3600));
    await sleep(GAP_MS);
    const unblock = backend.writerBlocked!();
    await b;
    expect(performance.now() - t0).toBeLessThan(WINDOW_MS / 2);
    unblock();
  });

  it('is 40 ms by default', async () => {
    const { tsdb } = await openFixture();
    expect(tsdb.config.ingestGroupWindowMs).toBe(40);
  });
});
