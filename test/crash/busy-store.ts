/**
 * The busy store of the power-loss tests (crash-recovery, durable-every-step): a small
 * engine configuration that flushes, compacts, splits and rolls its log often, and a
 * workload of four writers (synced and buffered puts, some deletes of acknowledged cells)
 * beside flushes and compactions, recording what was acknowledged in a ledger.
 */
import { fromUtf8, toHex, utf8 } from '../../core/api/bytes.js';
import type { Store, Table } from '../../core/api/store.js';
import type { Random } from '../../core/util/random.js';

export const TABLE = { name: 't', families: [{ name: 'f' }], splitPoints: [utf8('k4'), utf8('k8')] };
export const OPTS = {
  dir: '/db', maintenanceIntervalMs: 0, memstoreFlushBytes: 2048, compactionMinFiles: 2,
  regionSplitBytes: 24 * 1024, blockSizeBytes: 256, walFileBytes: 8 * 1024, bufferedWindowMs: 5,
};

export interface Ledger {
  /** cell id -> value, for puts acknowledged as synced. */
  readonly acked: Map<string, string>;
  /** cell ids whose delete was acknowledged as synced (after their put). */
  readonly deleted: Set<string>;
  /** every value any put attempted, by cell id (when kept). */
  readonly attempted?: Map<string, Set<string>>;
}

/** Every cell of table `t` (none when it does not exist yet), as `row/qualifier-hex` -> value. */
export async function readAll(store: Store): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!(await store.listTables()).includes('t')) return out;
  const t = await store.openTable('t');
  for await (const batch of t.scan()) {
    for (const row of batch) for (const c of row.cells) out.set(`${fromUtf8(row.key)}/${toHex(c.qualifier)}`, fromUtf8(c.value));
  }
  return out;
}

export interface Workload {
  /** Stops recording acknowledgements (the power is gone) and ends the loops. */
  stop(): void;
  /** Settles when every writer and the maintenance loop have ended (they end on an error). */
  readonly done: Promise<void>;
}

/**
 * Starts four writers and a flush/compaction loop on `t` for process life `round`. A
 * write or delete counts as acknowledged only when it resolved before stop().
 */
export function startWorkload(t: Table, r: Random, round: number, ledger: Ledger): Workload {
  let stopped = false;
  let n = 0;
  const writer = async (w: number): Promise<void> => {
    while (!stopped) {
      // The in-memory disk completes in microtasks; let timers (the crash) run.
      await new Promise((res) => setImmediate(res));
      const id = `${round}.${w}.${n++}`;
      const rowKey = `k${r.int(10)}${id}`;
      const cell = `${rowKey}/${toHex(utf8('q'))}`;
      const value = `v${id}`;
      if (ledger.attempted !== undefined) {
        let set = ledger.attempted.get(cell);
        if (set === undefined) ledger.attempted.set(cell, (set = new Set()));
        set.add(value);
      }
      const sync = r.chance(0.6);
      try {
        await t.mutate([{ key: utf8(rowKey), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(value) }] }], { durability: sync ? 'sync' : 'buffered' });
        if (sync && !stopped) ledger.acked.set(cell, value);
        // Sometimes delete an acknowledged cell again.
        if (sync && r.chance(0.15) && !stopped) {
          // Until the delete is acknowledged the cell may or may not survive a crash.
          ledger.acked.delete(cell);
          await t.mutate([{ key: utf8(rowKey), mutations: [{ type: 'deleteCell', family: 'f', qualifier: utf8('q') }] }]);
          if (!stopped) ledger.deleted.add(cell);
        }
      } catch {
        return; // the crash cut the writer off
      }
    }
  };
  const maintenance = async (): Promise<void> => {
    while (!stopped) {
      await new Promise((res) => setTimeout(res, r.int(15)));
      try {
        if (r.chance(0.3)) await t.flush();
        else if (r.chance(0.2)) await t.compact({ major: r.chance(0.5) });
      } catch {
        return;
      }
    }
  };
  const done = Promise.all([...[0, 1, 2, 3].map((w) => writer(w)), maintenance()]).then(() => undefined);
  return { stop: () => { stopped = true; }, done };
}
