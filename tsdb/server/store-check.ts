/**
 * Damaged files at rest (docs/SECURITY.md "Corruption at rest"): the server checks its
 * data directory's files and says which file and offset are bad, on stderr, in
 * /api/status (status `partial` plus the list) and in /api/stats
 * (horae.store.damaged_files); `horae fsck` reports the same lines.
 *
 *  - Before the store opens (tsdb/main.ts): the MANIFEST and the WAL files. A damaged
 *    MANIFEST stops the start: without the list of live files the store cannot tell
 *    what it holds, and guessing could serve deleted data or lose live data (LevelDB and
 *    RocksDB refuse too). WAL damage is reported; recovery keeps the records before it
 *    and counts what it dropped.
 *  - Once the server listens: every SST, in the background. The server keeps serving;
 *    reads that need a damaged block fail with STORE_CORRUPTION naming it (500), every
 *    other read is answered.
 */
import { formatStoreFileProblem, verifyStoreFiles } from '../../core/index.js';
import type { StoreFileProblem } from '../../core/index.js';

export type { StoreFileProblem };

/** What the server knows about damaged files; shared by status, stats and the log. */
export class StoreHealth {
  private readonly list: StoreFileProblem[] = [];
  private readonly seen = new Set<string>();
  /** Files the background check has read so far, and whether it is done. */
  checkedFiles = 0;
  checkDone = false;

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
}

/**
 * The check before the store opens. `fatal` is set when the store must not be opened
 * (a damaged MANIFEST), with the message to print.
 */
export async function checkBeforeOpen(dir: string): Promise<{ problems: readonly StoreFileProblem[]; fatal: string | undefined }> {
  const { problems } = await verifyStoreFiles(dir, { kinds: ['manifest', 'wal'] });
  const manifest = problems.find((p) => p.kind === 'manifest');
  const fatal = manifest === undefined ? undefined
    : `refusing to open the store: its MANIFEST is damaged (${formatStoreFileProblem(manifest)}). ` +
      'The files are left untouched; run `horae fsck` for every damaged file and restore the data directory from a backup.';
  return { problems, fatal };
}

/** Checks every SST in the background; resolves when done (never rejects). */
export async function checkSstsInBackground(dir: string, health: StoreHealth, log?: (msg: string) => void): Promise<void> {
  try {
    const r = await verifyStoreFiles(dir, { kinds: ['sst'] });
    health.checkedFiles += r.checked.length;
    health.add(r.problems, log);
    if (r.problems.length > 0) log?.(`store: ${r.problems.length} damaged of ${r.checked.length} SST files; reads of their damaged blocks fail, everything else is served (run horae fsck)`);
  } catch (err) {
    log?.(`store: the background file check failed: ${(err as Error).message}`);
  } finally {
    health.checkDone = true;
  }
}
