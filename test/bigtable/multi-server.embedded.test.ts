/**
 * The multi-server scenario (multi-server/scenario.ts) on the embedded store, with its one
 * server: the same phases and checks as on Bigtable, so both stores keep one semantics.
 */
import { describe, it } from 'vitest';
import { join } from 'node:path';
import { tempDir } from '../tsdb/e2e/e2e-helpers.js';
import { HoraeProcess, configPathOf } from './multi-server/horae-process.js';
import { SUITE_CONFIG, runScenario } from './multi-server/scenario.js';

describe('one server on the embedded store', () => {
  it('answers every acknowledged point through every phase', async () => {
    const dir = tempDir('horae-multi-emb-');
    const server = new HoraeProcess('server 0', { storeArgs: ['--data-dir', join(dir.dir, 'data')], config: SUITE_CONFIG, configPath: configPathOf(dir.dir, 0) });
    try {
      await server.start();
      const hour0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3 * 3600;
      await runScenario({ servers: [server], restart: () => server.kill9().then(() => server.start()), readBackCompactor: false }, { newSeriesMs: 0, renameMs: 0, deleteMs: 0, writtenMs: 0 }, hour0);
    } finally {
      await server.stop();
      dir.remove();
    }
  }, 120_000);
});
