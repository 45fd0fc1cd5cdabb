/**
 * The memory guard (tsdb/memory/guard.ts) on a fake heap: over past 90% of the budget's
 * heap share (or V8's limit when lower), under again below 75%; caches dropped when it
 * goes over; refusals counted with a message naming the key. An idle server is not woken
 * to sample: the timer samples every 100 ms only while over.
 */
import { describe, expect, it } from 'vitest';
import { getHeapSpaceStatistics } from 'node:v8';
import { MemoryGuard, collectAndRelease } from '../../../tsdb/memory/guard.js';

const MiB = 1024 * 1024;

describe('memory guard', () => {
  it('goes over past 90% of the heap share, frees caches, refuses, and is under again below 75%', async () => {
    let used = 10 * MiB;
    let collected = 0;
    const g = new MemoryGuard({ budgetBytes: 128 * MiB, heapUsed: () => used, v8Limit: 4096 * MiB, timer: false, collect: () => collected++ });
    expect(g.limitBytes).toBe(96 * MiB);
    let dropped = 0;
    g.onPressure(() => dropped++);
    expect(g.check()).toBe(false);
    used = 86 * MiB;
    expect(g.check()).toBe(false);
    used = 87 * MiB;
    expect(g.check()).toBe(true);
    expect([dropped, collected]).toEqual([1, 1]);
    expect(g.check()).toBe(true);
    expect([dropped, collected]).toEqual([1, 1]); // at most once per 5 s
    const err = g.refuse();
    expect(err.code).toBe('TSDB_OVERLOADED');
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/^memory over budget: heap 87 MiB in use, the limit is 86 MiB .*horae\.memory\.budget_bytes = 128 MiB/);
    let under = false;
    const w = g.whenUnder().then(() => (under = true));
    used = 73 * MiB;
    expect(g.check()).toBe(true); // between 75% and 90%: still over
    await Promise.resolve();
    expect(under).toBe(false);
    used = 71 * MiB;
    expect(g.check()).toBe(false);
    await w;
    expect(g.stats()).toMatchObject({ pressureEpisodes: 1, refusals: 1, over: false, heapLimitBytes: 96 * MiB, budgetBytes: 128 * MiB });
    g.close();
  });

  it('is under at once when the collection after the caches were dropped frees enough', () => {
    let used = 95 * MiB;
    const g = new MemoryGuard({ budgetBytes: 128 * MiB, heapUsed: () => used, v8Limit: 4096 * MiB, timer: false, collect: () => (used = 40 * MiB) });
    expect(g.check()).toBe(false);
    expect(g.stats()).toMatchObject({ pressureEpisodes: 1, over: false });
    g.close();
  });

  it('runs a real full collection by default', () => {
    const g = new MemoryGuard({ budgetBytes: 128 * MiB, heapUsed: () => 200 * MiB, timer: false });
    expect(g.check()).toBe(true);
    g.close();
  });

  it('returns the old-space pages a collection emptied (committed falls to about what is in use)', () => {
    const old = (): { committed: number; used: number } => {
      const s = getHeapSpaceStatistics().find((x) => x.space_name === 'old_space')!;
      return { committed: s.space_size, used: s.space_used_size };
    };
    // ~40 MiB of objects made old, then all but 1 in 64 dropped: their pages empty out.
    let keep: Array<{ a: number; b: string; c: number[] } | null> = [];
    for (let i = 0; i < 400_000; i++) keep.push({ a: i, b: `x${i}`, c: [i] });
    collectAndRelease();
    const full = old();
    for (let i = 0; i < keep.length; i++) if (i % 64 !== 0) keep[i] = null;
    collectAndRelease();
    const after = old();
    expect(full.used).toBeGreaterThan(after.used + 20 * MiB);
    expect(after.committed - after.used).toBeLessThan(8 * MiB);
    keep = [];
  });

  it('takes V8\'s own limit when it is lower than the budget\'s share', () => {
    const g = new MemoryGuard({ budgetBytes: 1024 * MiB, heapUsed: () => 0, v8Limit: 100 * MiB, timer: false });
    expect(g.limitBytes).toBe(100 * MiB);
    g.close();
  });

  it('samples on demand while under (no 100 ms wake-ups), every 100 ms while over', async () => {
    let used = 10 * MiB;
    let samples = 0;
    const g = new MemoryGuard({ budgetBytes: 128 * MiB, heapUsed: () => (samples++, used), v8Limit: 4096 * MiB, collect: () => undefined });
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const atStart = samples;
    await sleep(450);
    expect(samples - atStart).toBe(0); // idle and under: nothing sampled
    used = 100 * MiB;
    expect(g.over()).toBe(true); // the last sample is older than 100 ms: over() samples
    const w = g.whenUnder();
    used = 10 * MiB;
    const before = samples;
    await w; // no check(): the timer sees it go under
    expect(samples - before).toBeGreaterThanOrEqual(1);
    const under = samples;
    await sleep(450);
    expect(samples - under).toBe(0);
    expect(g.over()).toBe(false);
    g.close();
  });

  it('collects once after 4 idle ticks when the footprint grew, not while work goes on or without growth', () => {
    let used = 40 * MiB;
    let collected = 0;
    const g = new MemoryGuard({
      budgetBytes: 1024 * MiB, heapUsed: () => used, footprint: () => used, v8Limit: 4096 * MiB, timer: false,
      collect: () => { collected++; used = 42 * MiB; },
    });
    const ticks = (n: number): void => { for (let i = 0; i < n; i++) g.tick(); };
    ticks(6);
    expect(collected).toBe(0); // no growth
    g.check(); // work: the lowest footprint seen is 40 MiB
    used = 60 * MiB; // +20 MiB: past max(8 MiB, 25%)
    ticks(1); // the tick that saw the work
    ticks(3);
    expect(collected).toBe(0); // 3 idle ticks
    g.check(); // work again: the stretch starts over
    ticks(4);
    expect(collected).toBe(0);
    ticks(1); // the 4th idle tick in a row
    expect(collected).toBe(1);
    expect(g.stats().idleCollections).toBe(1);
    ticks(8);
    expect(collected).toBe(1); // once per idle stretch
    expect(g.over()).toBe(false); // telnet's over() is work too
    used = 49 * MiB; // +7 MiB over 42: under 8 MiB
    ticks(5);
    expect(collected).toBe(1);
    expect(g.over()).toBe(false);
    used = 60 * MiB;
    ticks(5);
    expect(collected).toBe(2);
    g.close();
  });
});
