/**
 * The time-series model test (test/model/tsdb-model.test.ts, test/tsdb/helpers/
 * tsdb-model.ts) on the Bigtable emulator: the server on a Bigtable store under a fresh
 * table prefix, restarts as a new client on the same tables, against the same plain
 * OpenTSDB reference. TEST_SEED, TSDB_MODEL_SEEDS and TSDB_MODEL_STEPS as there.
 */
import { describe, expect, it } from 'vitest';
import { EAGER_HOURS, QUIET_HOURS, modelSeeds, modelSteps, runTsdbModel } from '../tsdb/helpers/tsdb-model.js';
import type { Deployment } from '../tsdb/helpers/tsdb-model.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

function bigtable(name: string, config: string): Deployment {
  const prefix = freshPrefix();
  return {
    name, config, persistent: true,
    open: (clock) => openTestStore(prefix, { clock, ttlGarbageCollection: false }),
    close: (s) => s.close(),
    async destroy() {},
  };
}

const DEPLOYMENTS: Array<[string, (name: string) => Deployment]> = [
  ['bigtable, defaults, no background hour compaction', (n) => bigtable(n, QUIET_HOURS)],
  ['bigtable, scans only, decode workers on every scan, 4 salt buckets, eager hour compaction',
    (n) => bigtable(n, `horae.query.exact_max_rows = 0\nhorae.query.decode_threads = 1\nhorae.query.parallel_min_rows = 1\nhorae.salt.buckets = 4\n${EAGER_HOURS}`)],
];

describe('the time-series layer on Bigtable vs a plain OpenTSDB reference (randomized, emulator)', () => {
  DEPLOYMENTS.forEach(([name, make], i) => {
    for (const seed of modelSeeds(5000 + i * 7919)) {
      it(`${name}, seed ${seed}`, async () => {
        const stats = await runTsdbModel({ seed, steps: modelSteps(), deployment: make(name) });
        if (process.env.TSDB_MODEL_VERBOSE !== undefined) console.log(name, seed, JSON.stringify(stats));
        expect(stats.points).toBeGreaterThan(0);
      }, 180_000);
    }
  });
});
