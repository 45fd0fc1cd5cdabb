/**
 * Power-loss simulation (leveldb fault_injection_test): the engine runs on the in-memory
 * file system while concurrent writers (synced and buffered), flushes, compactions and
 * splits run; at a random moment (a timer, or just before a random file-system call) the
 * file system drops every unsynced byte (or keeps a random prefix of it) and undoes
 * unsynced directory changes, and the old engine is cut off from the disk as a dead
 * process would be. Every write in flight must then settle (fail or succeed, never hang).
 * Reopening must succeed, and:
 *   - every write acknowledged with durability 'sync' is there, with its value;
 *   - every delete acknowledged with 'sync' is still in effect;
 *   - nothing is invented: every cell read back was written by some attempted write.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import type { CrashMode } from '../../core/fs/mem-fs.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { FS_OP_KINDS } from '../../core/fs/error-fs.js';
import { Random } from '../../core/util/random.js';
import { fromUtf8 } from '../../core/api/bytes.js';
import type { Store } from '../../core/api/store.js';
import { OPTS, TABLE, readAll, startWorkload } from './busy-store.js';
import type { Ledger } from './busy-store.js';
import { seeds } from '../helpers/store-model.js';
import type { Engine } from '../../core/lsm/engine.js';
import { rowOf } from '../../core/lsm/internal-key.js';

/** When the power goes: after a random delay, or just before a random file-system call. */
type Trigger = 'timer' | 'call';

async function crashRun(seed: number, mode: CrashMode, trigger: Trigger): Promise<void> {
  const r = new Random(seed);
  const mem = new MemFileSystem();
  const attempted = new Map<string, Set<string>>();
  const ledger: Ledger = { acked: new Map(), deleted: new Set(), attempted };
  for (let round = 0; round < 3; round++) {
    // Each "process" sees the disk through its own wrapper, cut off when it dies.
    const proc = new ErrorFileSystem(mem);
    const store = await openEmbeddedStore({ ...OPTS, fs: proc });
    const t = await store.createTable(TABLE, { ifNotExists: true });
    const work = startWorkload(t, r, round, ledger);
    // Power loss: the disk forgets what was not synced; the process is gone.
    let crashed = false;
    const crash = (): void => {
      if (crashed) return;
      crashed = true;
      mem.crash({ mode, random: () => r.next() });
      proc.inject({ ops: [...FS_OP_KINDS], code: 'EIO' });
      work.stop();
    };
    if (trigger === 'call') {
      proc.beforeCall(1 + r.int(3000), crash);
      for (let waited = 0; !crashed && waited < 3000; waited += 5) await new Promise((res) => setTimeout(res, 5));
    } else {
      await new Promise((res) => setTimeout(res, 40 + r.int(120)));
    }
    crash();
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      work.done.then(() => true),
      new Promise<false>((res) => (timer = setTimeout(() => res(false), 5000))),
    ]);
    clearTimeout(timer);
    expect(settled, `seed ${seed} round ${round}: every write and flush in flight settles after the crash`).toBe(true);
  }
  const store = await openEmbeddedStore({ ...OPTS, fs: new ErrorFileSystem(mem) });
  try {
    const got = await readAll(store);
    expect(ledger.acked.size, `seed ${seed}: the run acknowledged writes`).toBeGreaterThan(20);
    const lost = [...ledger.acked].filter(([cell, value]) => got.get(cell) !== value).map(([cell]) => cell);
    if (lost.length > 0) {
      // The crash moment depends on timers, so a seed may not fail again: say what is left.
      expect.fail(`seed ${seed} (TEST_SEED=${seed}), ${mode}: ${lost.length} acknowledged writes lost: ${lost.slice(0, 5).join(', ')}\n${await whereRowsAre(store, mem, lost.map((c) => c.split('/')[0]!))}`);
    }
    for (const cell of ledger.deleted) {
      expect(got.has(cell), `seed ${seed}: acknowledged delete of ${cell}`).toBe(false);
    }
    for (const [cell, value] of got) {
      expect(attempted.get(cell)?.has(value), `seed ${seed}: invented ${cell}=${value}`).toBe(true);
    }
  } finally {
    await store.close();
  }
}

/**
 * For a failure report: the regions (range, flushed seq, files), the log files left, and
 * which SST files and memstores still hold entries of `rows`.
 */
async function whereRowsAre(store: Store, mem: MemFileSystem, rows: readonly string[]): Promise<string> {
  const engine = (store as unknown as { engine: Engine }).engine;
  const wanted = new Set(rows);
  const rowText = (k: Uint8Array): string => fromUtf8(rowOf(k));
  const holds = (it: { seekToFirst(): void; readonly valid: boolean; next(): void; key(): Uint8Array }): number => {
    let n = 0;
    for (it.seekToFirst(); it.valid; it.next()) if (wanted.has(rowText(it.key()))) n++;
    return n;
  };
  const out: string[] = [];
  const referenced = new Set<number>();
  for (const t of engine.tables.values()) {
    for (const r of t.regions) {
      for (const f of r.files) referenced.add(f.number);
      const inMemory = [r.active, ...r.immutables].reduce((n, m) => n + holds(m.iterator()), 0);
      out.push(`region [${fromUtf8(r.start)}, ${fromUtf8(r.end)}) flushedSeq ${r.flushedSeq} files ${r.files.map((f) => f.number).join(',')}${inMemory > 0 ? `, ${inMemory} lost entries in memory` : ''}`);
    }
  }
  for (const name of (await mem.list('/db')).sort()) {
    const number = Number.parseInt(name, 10);
    if (!name.endsWith('.sst')) {
      if (name.endsWith('.log')) out.push(`log ${name}`);
      continue;
    }
    await engine.readers.acquire(number);
    try {
      const n = engine.readers.use(number, (reader) => holds(reader.iterator()));
      out.push(`sst ${name}${referenced.has(number) ? '' : ' (no region refers to it)'}: ${n ?? '?'} lost entries`);
    } finally {
      engine.readers.release(number);
    }
  }
  return out.join('\n');
}

describe('crash recovery (simulated power loss)', () => {
  for (const mode of ['drop-unsynced', 'random-prefix'] as const) {
    for (const seed of seeds(mode.length * 31, 8)) {
      it(`${mode}, seed ${seed}`, async () => {
        await crashRun(seed, mode, 'timer');
      });
    }
    for (const seed of seeds(mode.length * 37, 6)) {
      it(`${mode}, crash before a random call, seed ${seed}`, async () => {
        await crashRun(seed, mode, 'call');
      });
    }
  }
});
