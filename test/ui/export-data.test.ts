import { describe, expect, it } from 'vitest';
import { exportFileName, toCsv, toJson } from '../../ui/src/lib/export-data.js';
import type { PanelData } from '../../ui/src/lib/to-aligned.js';

const T = Date.UTC(2026, 0, 1);
const data: PanelData = {
  data: [[T, T + 60_000], [1.5, null], [null, 7]],
  series: [
    { label: 'cpu{host=a,b}', axis: 'y', queryIndex: 0, metric: 'cpu', tags: { host: 'a,b' } },
    { label: 'say "hi"', axis: 'y2', queryIndex: 1, metric: 'm', tags: {} },
  ],
};

describe('export', () => {
  it('writes CSV with quoted headers, ISO UTC times and empty gaps', () => {
    expect(toCsv(data)).toBe('time,"cpu{host=a,b}","say ""hi"""\r\n2026-01-01T00:00:00.000Z,1.5,\r\n2026-01-01T00:01:00.000Z,,7\r\n');
  });

  it('writes JSON in the columnar shape with names', () => {
    expect(JSON.parse(toJson(data))).toEqual({
      timestamps: [T, T + 60_000],
      series: [
        { label: 'cpu{host=a,b}', metric: 'cpu', tags: { host: 'a,b' }, values: [1.5, null] },
        { label: 'say "hi"', metric: 'm', tags: {}, values: [null, 7] },
      ],
    });
  });

  it('names files after the title and range', () => {
    expect(exportFileName('CPU / Load', T, T + 3_600_000, 'csv')).toBe('cpu-load-20260101T000000Z-20260101T010000Z.csv');
    expect(exportFileName('', T, T + 1000, 'json')).toBe('panel-20260101T000000Z-20260101T000001Z.json');
  });
});
