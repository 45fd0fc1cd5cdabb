/**
 * The app's fastify options (tsdb/server/build-server.ts fastifyOptions): no route declares
 * a JSON schema, so fastify's schema compilers (ajv, fast-json-stringify) are never loaded
 * at start; a route that declares one is refused with a message saying so.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { fastifyOptions } from '../../../tsdb/server/build-server.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

describe('fastify options', () => {
  it('stand in for the schema compilers: a route with a schema is refused at start', async () => {
    const { tsdb } = await openFixture();
    const app = Fastify(fastifyOptions(tsdb.config));
    app.post('/x', { schema: { body: { type: 'object' } } }, async () => 'ok');
    await expect(app.ready()).rejects.toThrow(/Horae routes declare no JSON schemas/);
    await app.close().catch(() => undefined);
    const plain = Fastify(fastifyOptions(tsdb.config));
    plain.post('/y', async (req) => req.body);
    await plain.ready();
    const r = await plain.inject({ method: 'POST', url: '/y', payload: { a: 1 } });
    expect(r.json()).toEqual({ a: 1 });
    await plain.close();
    await tsdb.close();
  });
});
