/**
 * A client that goes away aborts its query's reads (tsdb/server/routes/query.ts): the
 * AbortSignal the route hands to executeQuery fires once the connection is gone, so the
 * store stops scanning for nobody. Over a real socket: the data table's reads are slowed
 * and their signals recorded, the client aborts its request mid-query, and the recorded
 * signal must fire. A query that completes on a kept-alive connection is not aborted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { GetOptions, Row, ScanSpec, Table } from '../../../core/api/store.js';
import { buildServer } from '../../../tsdb/server/build-server.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1_356_998_400;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Slows the table's gets and scans by `ms` and records the signal of each. */
function slowReads(table: Table, ms: number): Array<AbortSignal | undefined> {
  const signals: Array<AbortSignal | undefined> = [];
  const get = table.get.bind(table);
  const scan = table.scan.bind(table);
  Object.assign(table, {
    get: async (keys: readonly Uint8Array[], opts?: GetOptions): Promise<(Row | undefined)[]> => {
      signals.push(opts?.signal);
      await sleep(ms);
      return get(keys, opts);
    },
    scan: (spec?: ScanSpec): AsyncIterable<readonly Row[]> => {
      signals.push(spec?.signal);
      return (async function* () {
        await sleep(ms);
        yield* scan(spec);
      })();
    },
  });
  return signals;
}

describe('/api/query: a client that goes away', () => {
  it('aborts the reads of its query; a finished query on a kept-alive connection is not aborted', async () => {
    const { tsdb } = await openFixture({}, (T0 + 7200) * 1000);
    await tsdb.ingest.write(['a', 'b', 'c'].map((h, i) => pt('m', T0 + i, i, { host: h })));
    app = await buildServer({ tsdb });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const body = JSON.stringify({ start: T0 - 60, end: T0 + 3600, queries: [{ aggregator: 'sum', metric: 'm', tags: { host: '*' } }] });
    const query = (signal?: AbortSignal): Promise<Response> =>
      fetch(`${base}/api/query`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, ...(signal === undefined ? {} : { signal }) });

    const signals = slowReads(tsdb.data, 100);
    // A query that completes (reads slowed, not aborted): answered, its signal quiet.
    const done = await query();
    expect(done.status).toBe(200);
    expect((await done.json() as Array<{ tags: Record<string, string> }>).map((s) => s.tags.host).sort()).toEqual(['a', 'b', 'c']);
    expect(signals.length).toBeGreaterThan(0);
    expect(signals.every((s) => s !== undefined && !s.aborted)).toBe(true);

    // A query whose client goes away while its reads wait.
    const before = signals.length;
    const client = new AbortController();
    const gone = query(client.signal).catch((err: unknown) => err);
    for (let i = 0; i < 200 && signals.length === before; i++) await sleep(5);
    expect(signals.length).toBeGreaterThan(before);
    client.abort();
    expect(await gone).toBeInstanceOf(Error);
    const mine = signals[before]!;
    for (let i = 0; i < 200 && !mine.aborted; i++) await sleep(5);
    expect(mine.aborted).toBe(true);
  });
});
