/**
 * Three `horae serve --store bigtable://…` processes on one emulator table behave as one
 * database (issue 34): the scenario of multi-server/scenario.ts, checked through every
 * server after each phase; two more servers join to be killed while they owe hour
 * compaction (multi-server/dead-server.ts), whose rows the test reads in the store itself.
 * multi-server.embedded.test.ts runs it on the embedded store.
 */
import { describe, it } from 'vitest';
import { openBigtableStore } from '../../backends/bigtable/src/index.js';
import { DEFAULT_WIDTHS } from '../../tsdb/schema/widths.js';
import { tempDir } from '../tsdb/e2e/e2e-helpers.js';
import { HoraeProcess, configPathOf } from './multi-server/horae-process.js';
import { rawRowsOf } from './multi-server/raw-rows.js';
import { SUITE_CONFIG, runScenario } from './multi-server/scenario.js';
import type { Bounds } from './multi-server/scenario.js';
import { freshPrefix, useEmulator } from './setup.js';

const emulator = useEmulator();

/** What docs/SCALING.md promises for changes made through another server. */
const BOUNDS: Bounds = { newSeriesMs: 1000, renameMs: 1000, deleteMs: 1000, writtenMs: 1000 };

describe('three servers on one Bigtable table', () => {
  it('answer every acknowledged point, byte for byte alike, through every phase', async () => {
    const dir = tempDir('horae-multi-bt-');
    const prefix = freshPrefix();
    const url = `bigtable://horae-multi/instance?prefix=${prefix}`;
    const env = { BIGTABLE_EMULATOR_HOST: emulator().host, METADATA_SERVER_DETECTION: 'none' };
    const spec = (i: number, config: Readonly<Record<string, string | number | boolean>>) => ({ storeArgs: ['--store', url], env, config, configPath: configPathOf(dir.dir, i) });
    const servers = [0, 1, 2].map((i) => new HoraeProcess(`server ${i}`, spec(i, SUITE_CONFIG)));
    const extra: HoraeProcess[] = [];
    // The test's own view of the table (the suite's servers use the default widths).
    const store = await openBigtableStore({ projectId: 'horae-multi', instanceId: 'instance', tablePrefix: prefix });
    try {
      // The first opens the tables; the others join.
      await servers[0]!.start();
      await Promise.all(servers.slice(1).map((s) => s.start()));
      const hour0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3 * 3600;
      await runScenario({
        servers,
        restart: (i) => servers[i]!.kill9().then(() => servers[i]!.start()),
        readBackCompactor: true,
        spawn: async (name, config) => {
          const s = new HoraeProcess(name, spec(servers.length + extra.length, { ...SUITE_CONFIG, ...config }));
          extra.push(s);
          await s.start();
          return s;
        },
        rawRows: (metrics, fromSec, toSec) => rawRowsOf(store, DEFAULT_WIDTHS, metrics, fromSec, toSec),
      }, BOUNDS, hour0);
    } finally {
      await Promise.all([...servers, ...extra].map((s) => s.stop()));
      await store.close();
      dir.remove();
    }
  }, 300_000);
});
