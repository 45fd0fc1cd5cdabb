/**
 * The time-series layer against a plain in-memory OpenTSDB (test/tsdb/helpers/
 * reference-store.ts) under seeded random operation logs (tsdb-model.ts): puts over telnet,
 * HTTP JSON and msgpack and `horae import`, queries, last points, lookups, delete queries,
 * series and metric deletes, UID renames, restarts, flushes, compactions and splits, and
 * retention expiry, on the memory store, the embedded store on the real file system and on
 * an error-injecting one, across the knobs that pick a read path (exact-row gets or scans,
 * decode workers or not, salt, durability, hour compaction). Every configuration must give
 * the reference's answers.
 *
 * TEST_SEED=<n> replays one seed; TSDB_MODEL_SEEDS=<n> runs n seeds per configuration
 * (default 1) and TSDB_MODEL_STEPS=<n> that many operations per seed (default 120).
 * The Bigtable emulator runs the same in test/bigtable/tsdb-model.bigtable.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedOptions } from '../../core/embedded/embedded-store.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { openMemoryStore } from '../../core/index.js';
import type { Store } from '../../core/api/store.js';
import { parseConfigText } from '../../tsdb/cli/config-file.js';
import { EAGER_HOURS, QUIET_HOURS, modelSeeds, modelSteps, retentionConfig, runTsdbModel } from '../tsdb/helpers/tsdb-model.js';
import type { Retention } from '../tsdb/helpers/tsdb-model.js';
import type { Deployment } from '../tsdb/helpers/tsdb-model.js';

/** Memstores, files and regions small enough that flushes, compactions and splits happen in a run. */
const TINY_STORE = 'horae.storage.memstore_flush_bytes = 4096\nhorae.storage.region_split_bytes = 16384\nhorae.storage.lsm_compaction_min_files = 2';

/** 5 h by default, sys.cpu.* 3 h, m.net forever (the runs span about 10 hours of the fake clock). */
const RETENTION: Retention = { defaultMs: 5 * 3_600_000, exact: { 'm.net': undefined }, prefixes: { 'sys.cpu.': 3 * 3_600_000 }, dropsExpired: true };

function storeOptions(config: string): Partial<EmbeddedOptions> {
  return { ...parseConfigText(config, 'model.conf').store, blockSizeBytes: 512, maintenanceIntervalMs: 0 };
}

function memory(name: string, config: string, manySeries = false): Deployment {
  let store: Store | undefined;
  return {
    name, config, persistent: false, manySeries,
    async open(clock) {
      return (store ??= await openMemoryStore({ clock }));
    },
    async close() {},
    async destroy() {
      await store?.close();
    },
  };
}

/** Regions must have split by the end when the store was configured tiny. */
async function splitCheck(store: Store, config: string): Promise<void> {
  if (!config.includes('region_split_bytes')) return;
  const data = (await store.listTables()).find((t) => t.startsWith('tsdb') && !t.includes('uid') && !t.includes('meta'));
  expect(data, 'the data table').toBeDefined();
  expect((await (await store.openTable(data!)).regions()).length, 'regions of the data table split').toBeGreaterThan(1);
}

function embedded(name: string, config: string, engine: Partial<EmbeddedOptions> = {}, retention?: Retention): Deployment {
  const dir = mkdtempSync(join(tmpdir(), 'horae-model-store-'));
  const opts = { ...storeOptions(config), ...engine, dir };
  return {
    name, config: retention === undefined ? config : `${config}\n${retentionConfig(retention)}`, persistent: true,
    ...(retention === undefined ? {} : { retention }),
    open: (clock) => openEmbeddedStore({ ...opts, clock }),
    close: (s) => s.close(),
    verify: (s) => splitCheck(s, config),
    async destroy() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function onErrorFs(name: string, config: string): Deployment {
  const errors = new ErrorFileSystem(new MemFileSystem());
  const opts = { ...storeOptions(config), dir: '/db', fs: errors };
  return {
    name, config, persistent: true, errors,
    open: (clock) => openEmbeddedStore({ ...opts, clock }),
    close: (s) => s.close(),
    verify: (s) => splitCheck(s, config),
    async destroy() {},
  };
}

/**
 * Caches far smaller than the run's ~600 series: every per-series structure in the
 * smallest catalog budget (16 KiB: a handful of series entries, UIDs and last points, the
 * series index's copy in 2 KiB), a series idle for 10 minutes out of the copy.
 */
const TINY_CACHES = 'horae.catalog.memory_bytes = 16384\nhorae.index.idle_ms = 600000';

const DEPLOYMENTS: Array<[string, (name: string) => Deployment]> = [
  ['memory, defaults, no background hour compaction', (n) => memory(n, QUIET_HOURS)],
  ['memory, scans only, no decode workers, no salt, eager hour compaction',
    (n) => memory(n, `horae.query.exact_max_rows = 0\nhorae.query.decode_threads = 0\nhorae.salt.width = 0\n${EAGER_HOURS}`)],
  ['embedded, decode workers on every scan, 4 salt buckets, buffered, flushes on the main thread, tiny store',
    (n) => embedded(n, `horae.query.decode_threads = 1\nhorae.query.parallel_min_rows = 1\nhorae.salt.buckets = 4\nhorae.write.durability = buffered\n${TINY_STORE}\n${QUIET_HOURS}`, { backgroundThreads: 0 })],
  ['embedded, scans only, eager hour compaction, flushes on a worker, retention, tiny store',
    (n) => embedded(n, `horae.query.exact_max_rows = 0\nhorae.query.decode_threads = 0\n${EAGER_HOURS}\n${TINY_STORE}`, {}, RETENTION)],
  ['embedded on an error-injecting file system, tiny store',
    (n) => onErrorFs(n, `horae.query.decode_threads = 0\n${TINY_STORE}\n${QUIET_HOURS}`)],
  ['memory, many series, tiny caches', (n) => memory(n, `${TINY_CACHES}\n${QUIET_HOURS}`, true)],
];

describe('the time-series layer vs a plain OpenTSDB reference (randomized)', () => {
  DEPLOYMENTS.forEach(([name, make], i) => {
    for (const seed of modelSeeds(1000 + i * 7919)) {
      it(`${name}, seed ${seed}`, async () => {
        const dep = make(name);
        try {
          const stats = await runTsdbModel({ seed, steps: modelSteps(), deployment: dep });
          if (process.env.TSDB_MODEL_VERBOSE !== undefined) console.log(name, seed, JSON.stringify(stats));
          expect(stats.points).toBeGreaterThan(0);
          if (dep.errors !== undefined) expect(stats.injected, 'errors injected').toBeGreaterThan(0);
          // Series left the index copy and were read from disk again (by its bytes or by age; dropcaches, deletes and restarts empty it too).
          if (dep.manySeries === true) expect(stats.indexEvicted + stats.indexAged, 'series out of the index copy').toBeGreaterThan(0);
        } finally {
          await dep.destroy();
        }
      }, 120_000);
    }
  });
});
