/**
 * /api/put (routes/put.ts) with the JSON fast path: datapoints of series seen before go
 * from their bytes (series byte cache), the others through JSON.parse. Of two datapoints
 * of one series and timestamp in one body, the later one wins whichever path each took.
 */
import { describe, expect, it } from 'vitest';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;

describe('POST /api/put, fast and general path in one body', () => {
  it('keeps body order for a repeated timestamp', async () => {
    const { tsdb } = await openFixture();
    const app = await buildServer({ tsdb });
    try {
      const put = async (body: string): Promise<void> => {
        const r = await app.inject({ method: 'POST', url: '/api/put', payload: body, headers: { 'content-type': 'application/json' } });
        expect(r.statusCode, r.body).toBe(204);
      };
      const known = (ts: number, v: number): string => `{"metric":"m","timestamp":${ts},"value":${v},"tags":{"host":"a","dc":"b"}}`;
      // The same series with its tags in another order: other bytes, the general path.
      const other = (ts: number, v: number): string => `{"metric":"m","timestamp":${ts},"value":${v},"tags":{"dc":"b","host":"a"}}`;
      await put(`[${known(T0, 1)}]`);
      await put(`[${other(T0 + 10, 7)},${known(T0 + 10, 5)}]`);
      await put(`[${known(T0 + 20, 5)},${other(T0 + 20, 8)}]`);
      const got = await readSeries(tsdb, 'm', { host: 'a', dc: 'b' }, T0 * 1000, (T0 + 60) * 1000);
      expect(got.map((p) => [p.ts / 1000 - T0, p.value])).toEqual([[0, 1], [10, 5], [20, 8]]);
    } finally {
      await app.close();
    }
  });
});
