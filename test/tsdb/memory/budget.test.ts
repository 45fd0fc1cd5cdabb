/**
 * The memory budget's shares (tsdb/memory/budget.ts): a small budget lowers every bound
 * with it, a big one leaves the defaults; a bound set on its own stays as set.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, DEFAULT_TSDB_CONFIG } from '../../../tsdb/config.js';
import { applyMemoryBudget, heapLimitMb, memoryShares } from '../../../tsdb/memory/budget.js';

const MiB = 1024 * 1024;

describe('memory budget', () => {
  it('gives a small budget small bounds, each a fixed share', () => {
    const s = memoryShares(256 * MiB);
    expect(s.heapBytes).toBe(192 * MiB);
    expect(heapLimitMb(256 * MiB)).toBe(192);
    expect(s.blockCacheBytes).toBe(32 * MiB);
    expect(s.memstoreTotalBytes).toBe(32 * MiB);
    expect(s.catalogMemoryBytes).toBe(64 * MiB); // a quarter: every per-series structure together
    expect(s.maxInflightPoints).toBe(65536); // 16 MiB / 256 B
    expect(s.maxBodyBytes).toBe(4 * MiB);
    // A quarter of the budget for the points of the queries that may run at once.
    expect(s.queryMaxConcurrent).toBe(8); // 256 MiB / 24 MiB, at most the default 8
    expect(s.queryMaxPoints).toBe(131072); // 64 MiB / 8 queries / 64 B
    expect(memoryShares(256 * MiB, 2).queryMaxPoints).toBe(524288);
    expect(memoryShares(64 * MiB)).toMatchObject({ queryMaxConcurrent: 2, queryMaxPoints: 131072 });
  });

  it('never raises a bound past its default, nor below its minimum; the per-series state is a quarter of any budget', () => {
    const big = memoryShares(1024 * 1024 * MiB);
    expect(big.catalogMemoryBytes).toBe(256 * 1024 * MiB); // grows with the budget: a fleet's series are not capped at a fixed 1 GiB
    expect(memoryShares(12 * 1024 * MiB).catalogMemoryBytes).toBe(3 * 1024 * MiB);
    expect(big.blockCacheBytes).toBe(CONFIG_KEYS.blockCacheBytes.default);
    expect(big.queryMaxPoints).toBe(CONFIG_KEYS.queryMaxPoints.default);
    expect(big.maxBodyBytes).toBe(CONFIG_KEYS.maxBodyBytes.default);
    const tiny = memoryShares(CONFIG_KEYS.memoryBudgetBytes.min);
    expect(tiny.maxInflightPoints).toBeGreaterThanOrEqual(CONFIG_KEYS.maxInflightPoints.min);
    expect(tiny.memstoreTotalBytes).toBeGreaterThanOrEqual(CONFIG_KEYS.memstoreTotalBytes.min);
  });

  it('fills only the bounds that were not set on their own', () => {
    const store: { blockCacheBytes?: number; memstoreTotalBytes?: number } = { blockCacheBytes: 5 * MiB };
    const tsdb: { catalogMemoryBytes?: number; maxBodyBytes?: number } = { maxBodyBytes: 77 * 1024 };
    applyMemoryBudget(256 * MiB, store, tsdb);
    expect(store).toEqual({ blockCacheBytes: 5 * MiB, memstoreTotalBytes: 32 * MiB });
    expect(tsdb).toMatchObject({ maxBodyBytes: 77 * 1024, catalogMemoryBytes: 64 * MiB, maxInflightPoints: 65536 });
  });

  it('defaults to half the machine, at least the minimum', () => {
    expect(DEFAULT_TSDB_CONFIG.memoryBudgetBytes).toBeGreaterThanOrEqual(CONFIG_KEYS.memoryBudgetBytes.min);
  });
});
