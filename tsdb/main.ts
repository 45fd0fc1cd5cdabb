/**
 * Composition root: parses the command line, opens the embedded store and serves it.
 * Until the time-series write path lands, the server answers /api/version, /api/stats and
 * /api/regions over HTTP on the one port.
 */
import { resolve } from 'node:path';
import Fastify from 'fastify';
import { openEmbeddedStore } from '../core/index.js';
import type { Store } from '../core/index.js';
import { ArgsError, USAGE, parseArgs } from './cli-args.js';
import { VERSION } from './version.js';

export async function buildServer(store: Store) {
  const app = Fastify({ logger: false });
  app.get('/api/version', async () => ({ version: VERSION, short_revision: '', repo: 'horae', host: '' }));
  app.get('/api/stats', async () => store.stats());
  app.get('/api/regions', async () => {
    const out: Record<string, unknown> = {};
    for (const name of await store.listTables()) {
      const regions = await (await store.openTable(name)).regions();
      out[name] = regions.map((r) => ({ ...r, start: Buffer.from(r.start).toString('hex'), end: Buffer.from(r.end).toString('hex') }));
    }
    return out;
  });
  return app;
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof ArgsError) {
      process.stderr.write(`horae: ${e.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw e;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  const store = await openEmbeddedStore({ dir: resolve(args.dataDir) });
  const app = await buildServer(store);
  await app.listen({ port: args.port, host: args.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : args.port;
  console.log(`horae ${VERSION} listening on ${args.host}:${port}, data in ${resolve(args.dataDir)}`);
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${resolve(process.argv[1])}`).href) {
  main().catch((err: unknown) => {
    console.error(`horae: ${(err as Error).message}`);
    process.exit(1);
  });
}
