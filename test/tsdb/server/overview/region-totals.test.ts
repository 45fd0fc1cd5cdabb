import { describe, expect, it } from 'vitest';
import type { RegionInfo } from '../../../../core/api/store.js';
import { RegionTotals } from '../../../../tsdb/server/overview/region-totals.js';

function region(id: string, cellsWritten: number, rowsRead = 0): RegionInfo {
  const empty = new Uint8Array(0);
  return { id, start: empty, end: empty, stats: { sizeBytes: 0, memstoreBytes: 0, files: 0, cellsWritten, rowsRead, readRequests: 0, writeRequests: 0 } };
}

describe('RegionTotals', () => {
  it('starts from the sums and adds each region’s growth', () => {
    const t = new RegionTotals();
    expect(t.update([{ name: 'a', regions: [region('1', 10, 2), region('2', 5)] }])).toEqual({ cellsWritten: 15, rowsRead: 2 });
    expect(t.update([{ name: 'a', regions: [region('1', 12, 3), region('2', 9)] }])).toEqual({ cellsWritten: 21, rowsRead: 3 });
  });

  it('keeps growing across a split: the children count from zero, the parent’s counts stay', () => {
    const t = new RegionTotals();
    t.update([{ name: 'a', regions: [region('1', 100)] }]);
    // Region 1 split into 7 and 8 after 20 more cells, then each child took some.
    expect(t.update([{ name: 'a', regions: [region('7', 3), region('8', 4)] }])).toEqual({ cellsWritten: 107, rowsRead: 0 });
    expect(t.update([{ name: 'a', regions: [region('7', 5), region('8', 4)] }])).toEqual({ cellsWritten: 109, rowsRead: 0 });
  });

  it('tells tables apart and counts a reset counter from zero', () => {
    const t = new RegionTotals();
    t.update([{ name: 'a', regions: [region('1', 10)] }, { name: 'b', regions: [region('1', 1)] }]);
    expect(t.update([{ name: 'a', regions: [region('1', 4)] }, { name: 'b', regions: [region('1', 3)] }])).toEqual({ cellsWritten: 17, rowsRead: 0 });
  });
});
