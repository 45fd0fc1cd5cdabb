import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { toHex } from '../../../core/api/bytes.js';
import { annotationQualifier, annotationRow } from '../../../tsdb/meta/annotations.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { hexExample, readFormatDoc } from '../../helpers/format-doc.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const T0 = 1356998400;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('/api/annotation', () => {
  it('stores annotations where tsdb/SCHEMA.md says, next to the points, and never as points', async () => {
    const { tsdb, clock } = await openFixture({}, (T0 + 100) * 1000);
    app = await buildServer({ tsdb });
    const doc = hexExample(readFormatDoc('tsdb/SCHEMA.md'), 'Annotations', 'tsdb/SCHEMA.md');
    expect(toHex(annotationRow(tsdb, undefined, (T0 + 3) * 1000)) + toHex(annotationQualifier((T0 + 3) * 1000))).toBe(toHex(doc));
    expect(toHex(annotationQualifier((T0 + 3) * 1000 + 250))).toBe('0100000cb2'); // 3250 ms = 0x0cb2

    expect((await app.inject({ method: 'POST', url: '/api/put', payload: { metric: 'm', timestamp: T0 + 1, value: 1, tags: { host: 'a' } } })).statusCode).toBe(204);
    const a = { tsuid: '000001000001000001', startTime: T0 + 3, description: 'deploy', notes: 'v1' };
    expect((await app.inject({ method: 'POST', url: '/api/annotation', payload: a })).json()).toEqual(a);
    expect((await app.inject({ method: 'POST', url: '/api/annotation', payload: a })).statusCode).toBe(304);
    const merged = await app.inject({ method: 'POST', url: '/api/annotation', payload: { tsuid: a.tsuid, startTime: a.startTime, notes: 'v2' } });
    expect(merged.json()).toEqual({ ...a, notes: 'v2' });
    const got = await app.inject({ method: 'GET', url: `/api/annotation?start_time=${T0 + 3}&tsuid=${a.tsuid}` });
    expect(got.json()).toEqual({ ...a, notes: 'v2' });
    // the hour compactor and point readers skip the annotation cell
    clock.now = (T0 + 3 * 3600) * 1000;
    await tsdb.compactor.runOnce({ force: true, sweep: true });
    expect((await readSeries(tsdb, 'm', { host: 'a' }, T0 * 1000, (T0 + 3600) * 1000)).map((p) => p.value)).toEqual([1]);
    expect((await app.inject({ method: 'GET', url: `/api/annotation?start_time=${T0 + 3}&tsuid=${a.tsuid}` })).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `/api/annotation?start_time=${T0 + 3}&tsuid=${a.tsuid}` })).statusCode).toBe(204);
    const gone = await app.inject({ method: 'GET', url: `/api/annotation?start_time=${T0 + 3}&tsuid=${a.tsuid}` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.message).toBe('Unable to locate annotation in storage');
  });

  it('writes and range-deletes in bulk, global annotations included', async () => {
    const { tsdb } = await openFixture({}, (T0 + 100) * 1000);
    app = await buildServer({ tsdb });
    const items = [
      { startTime: T0 + 10, description: 'global one' },
      { startTime: T0 + 4000, description: 'global two' },
      { tsuid: '000001000001000001', startTime: T0 + 20, description: 'local' },
    ];
    expect((await app.inject({ method: 'POST', url: '/api/annotation/bulk', payload: items })).json()).toEqual(items);
    const del = await app.inject({ method: 'DELETE', url: '/api/annotation/bulk', payload: { tsuids: ['000001000001000001'], global: true, startTime: T0, endTime: T0 + 3600 } });
    expect(del.json().totalDeleted).toBe(2);
    expect((await app.inject({ method: 'GET', url: `/api/annotation?start_time=${T0 + 4000}` })).json()).toEqual(items[1]);
    expect((await app.inject({ method: 'GET', url: `/api/annotation?start_time=${T0 + 10}` })).statusCode).toBe(404);
  });
});
