/**
 * A log deletion that waits on the disk must not delete the log a roll made meanwhile.
 *
 * Found by a CI run of test/reliability/durability-lazy.test.ts (10,995 acknowledged
 * points of one server life lost, in every series at once): the engine's obsolete-log
 * sweep walked the live list of logs while it awaited each unlink, compared each against
 * the log that was current when the sweep began, and so, when a roll pushed a new log
 * (no entry yet: its newest sequence number 0) during one of those awaits, unlinked the
 * new current log. Writes then went on into the unlinked file, acknowledged after their
 * fsync, and a crash lost every one not yet flushed.
 *
 * Here the first unlink of a log is held, a roll happens while it waits, the unlink is let
 * through, then writes are acknowledged and the power is cut: every acknowledged row must
 * be there after the reopen, and the current log must still be on disk.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import type { Table } from '../../core/api/store.js';

/** Holds the first unlink of a log until release() (the disk is slow just then). */
class HeldUnlinkFs extends ErrorFileSystem {
  private held: (() => void) | undefined;
  private armed = false;
  /** Resolves once the held unlink was called. */
  reached!: Promise<void>;
  private onReach!: () => void;

  arm(): void {
    this.armed = true;
    this.reached = new Promise((res) => { this.onReach = res; });
  }

  release(): void {
    this.held?.();
  }

  override async remove(path: string): Promise<void> {
    if (this.armed && path.endsWith('.log')) {
      this.armed = false;
      const wait = new Promise<void>((res) => { this.held = res; });
      this.onReach();
      await wait;
    }
    return super.remove(path);
  }
}

const value = new Uint8Array(1000).fill(7);

function rows(prefix: string, from: number, n: number): Parameters<Table['mutate']>[0] {
  return Array.from({ length: n }, (_, i) => ({
    key: utf8(`${prefix}${String(from + i).padStart(6, '0')}`),
    mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('q'), value }],
  }));
}

async function logs(fs: MemFileSystem): Promise<string[]> {
  return (await fs.list('/db')).filter((n) => n.endsWith('.log')).sort();
}

describe('obsolete-log sweep against a log roll', () => {
  it('never unlinks the current log: rows acknowledged after a roll during a slow unlink survive a power cut', async () => {
    const mem = new MemFileSystem();
    const fs = new HeldUnlinkFs(mem);
    // Logs roll every 64 KiB; memstores flush only when asked (or at 64 MiB).
    const store = await openEmbeddedStore({ dir: '/db', fs, walFileBytes: 64 * 1024, memstoreFlushBytes: 64 << 20, maintenanceIntervalMs: 0 });
    const t = await store.createTable({ name: 't', families: [{ name: 'f' }] });
    // Enough for a roll: the first log holds these rows.
    for (let b = 0; b < 10; b++) await t.mutate(rows('a', b * 10, 10));
    expect((await logs(mem)).length).toBeGreaterThanOrEqual(2);

    // A flush makes the older logs obsolete; their unlink is held.
    fs.arm();
    const flushed = t.flush();
    await fs.reached;

    // While it waits, writes roll the log once more.
    const before = await logs(mem);
    for (let b = 0; b < 200 && (await logs(mem)).join() === before.join(); b++) await t.mutate(rows('b', b * 10, 10));
    // The roll has created its file; let it finish (sync, directory sync, the switch).
    await new Promise((res) => setTimeout(res, 20));
    const current = (await logs(mem)).at(-1)!;
    expect(before).not.toContain(current);

    // The held unlink goes through; nothing has been written into the new log yet.
    fs.release();
    await flushed;
    expect(await logs(mem)).toContain(current);

    // Acknowledged (synced) writes after the roll, then the power is cut.
    await t.mutate(rows('c', 0, 20));
    // A manifest write syncs the directory (so an unlink before it is durable), and leaves
    // the memstores alone.
    await store.createTable({ name: 'u', families: [{ name: 'f' }] });
    mem.crash();
    const reopened = await openEmbeddedStore({ dir: '/db', fs: mem, maintenanceIntervalMs: 0 });
    const t2 = await reopened.openTable('t');
    const got = await t2.get(rows('c', 0, 20).map((r) => r.key));
    expect(got.filter((r) => r !== undefined).length).toBe(20);
    let n = 0;
    for await (const batch of t2.scan({})) n += batch.length;
    expect(n).toBeGreaterThanOrEqual(100 + 20);
    expect(fromUtf8(got[0]!.key)).toBe('c000000');
    await reopened.close();
  });
});
