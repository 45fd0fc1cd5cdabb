/**
 * Damaged files at rest (docs/SECURITY.md "Corruption at rest"): the server checks its
 * data directory's files and says which file and offset are bad, on stderr, in
 * /api/status (status `partial` plus the list) and in /api/stats
 * (horae.store.damaged_files); `horae fsck` reports the same lines.
 *
 *  - Before the store opens (tsdb/main.ts): the MANIFEST. A damaged MANIFEST stops the
 *    start: without the list of live files the store cannot tell what it holds, and
 *    guessing could serve deleted data or lose live data (LevelDB and RocksDB refuse too).
 *  - As the store opens: the WAL, read once, by recovery (not once more before it: after a
 *    kill -9 that is the largest read of a start, up to the whole log). Recovery keeps the
 *    records before a damaged one, counts what it dropped and names each damaged record
 *    (StoreStats.walDamage, in `horae fsck`'s words), which the server reports before it
 *    listens (`walProblems`).
 *  - Once the server listens: nothing reads the SSTs as a whole (a start costs no read of
 *    the dataset). Every read verifies the checksum of each block it reads; a read or a
 *    compaction that meets damage fails with STORE_CORRUPTION naming the file and offset
 *    (a query gets a 500) and the store lists the file (StoreStats.damagedFiles), which
 *    the server takes in here (refresh: on /api/status and /api/stats, and every
 *    HEALTH_REFRESH_MS for the log and telnet `status`). Every other read is answered. A full check
 *    of every file is `horae fsck`, with the server stopped.
 */
import { formatStoreFileProblem, verifyStoreFiles } from '../../core/index.js';
import type { DamagedFile, Store, StoreFileProblem } from '../../core/index.js';

export type { StoreFileProblem };

/** How often the server takes in the files the store found damaged (for the log and telnet). */
export const HEALTH_REFRESH_MS = 5000;

/** What the server knows about damaged files; shared by status, stats and the log. */
export class StoreHealth {
  private readonly list: StoreFileProblem[] = [];
  private readonly seen = new Set<string>();

  get problems(): readonly StoreFileProblem[] {
    return this.list;
  }

  /** Records new problems (once each) and logs them. */
  add(problems: readonly StoreFileProblem[], log?: (msg: string) => void): void {
    for (const p of problems) {
      const key = `${p.file}\0${p.message}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.list.push(p);
      log?.(`store: damaged file ${formatStoreFileProblem(p)}`);
    }
  }

  /** Takes in the files the store found damaged since the last call (never rejects). */
  async refresh(store: Store, log?: (msg: string) => void): Promise<void> {
    let damaged: readonly DamagedFile[];
    try {
      damaged = (await store.stats()).damagedFiles ?? [];
    } catch {
      return; // closed or unreachable: nothing new to learn
    }
    if (damaged.length > 0) this.add(damaged.map((d) => ({ ...d, kind: 'sst' as const })), log);
  }
}

/**
 * The check before the store opens. `fatal` is set when the store must not be opened
 * (a damaged MANIFEST), with the message to print.
 */
export async function checkBeforeOpen(dir: string): Promise<{ problems: readonly StoreFileProblem[]; fatal: string | undefined }> {
  const { problems } = await verifyStoreFiles(dir, { kinds: ['manifest'] });
  const manifest = problems.find((p) => p.kind === 'manifest');
  const fatal = manifest === undefined ? undefined
    : `refusing to open the store: its MANIFEST is damaged (${formatStoreFileProblem(manifest)}). ` +
      'The files are left untouched; run `horae fsck` for every damaged file and restore the data directory from a backup.';
  return { problems, fatal };
}

/** The damaged WAL records the store's recovery skipped at open (StoreStats.walDamage). */
export async function walProblems(store: Store): Promise<StoreFileProblem[]> {
  const damage = (await store.stats()).walDamage ?? [];
  return damage.map((d) => ({ ...d, kind: 'wal' as const }));
}
