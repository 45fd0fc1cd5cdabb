/**
 * Three `horae serve --store bigtable://…` processes on one emulator table behave as one
 * database (issue 34): the scenario of multi-server/scenario.ts, checked through every
 * server after each phase. multi-server.embedded.test.ts runs it on the embedded store.
 */
import { describe, it } from 'vitest';
import { tempDir } from '../tsdb/e2e/e2e-helpers.js';
import { HoraeProcess, configPathOf } from './multi-server/horae-process.js';
import { SUITE_CONFIG, runScenario } from './multi-server/scenario.js';
import type { Bounds } from './multi-server/scenario.js';
import { freshPrefix, useEmulator } from './setup.js';

const emulator = useEmulator();

/** What docs/SCALING.md promises for changes made through another server. */
const BOUNDS: Bounds = { newSeriesMs: 1000, renameMs: 1000, deleteMs: 1000, writtenMs: 1000 };

describe('three servers on one Bigtable table', () => {
  it('answer every acknowledged point, byte for byte alike, through every phase', async () => {
    const dir = tempDir('horae-multi-bt-');
    const url = `bigtable://horae-multi/instance?prefix=${freshPrefix()}`;
    const env = { BIGTABLE_EMULATOR_HOST: emulator().host, METADATA_SERVER_DETECTION: 'none' };
    const servers = [0, 1, 2].map((i) => new HoraeProcess(`server ${i}`, { storeArgs: ['--store', url], env, config: SUITE_CONFIG, configPath: configPathOf(dir.dir, i) }));
    try {
      // The first opens the tables; the others join.
      await servers[0]!.start();
      await Promise.all(servers.slice(1).map((s) => s.start()));
      const hour0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3 * 3600;
      await runScenario({ servers, restart: (i) => servers[i]!.kill9().then(() => servers[i]!.start()), readBackCompactor: true }, BOUNDS, hour0);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      dir.remove();
    }
  }, 240_000);
});
