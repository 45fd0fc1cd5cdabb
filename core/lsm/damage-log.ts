/**
 * The store files found damaged while the store runs. Nothing reads a whole file at open
 * (a start costs no read of the dataset): a damaged SST shows itself when a read or a
 * compaction reaches the damage (every block's checksum is verified on read), and is
 * listed here from then on, with the offset the reader named (StoreStats.damagedFiles).
 * A full check of every file is `horae fsck` (core/tools/verify.ts).
 */
import type { DamagedFile } from '../api/store.js';

/** The offset a reader's message names (`@123`, `offset 123`), if any. */
export function offsetOfMessage(message: string): number | undefined {
  const m = /(?:@|\boffset )(\d+)/.exec(message);
  return m === null ? undefined : Number(m[1]);
}

export class DamageLog {
  private readonly byFile = new Map<string, DamagedFile>();

  /**
   * Records the first damage met in `file` (its name in the data directory); `path`, the
   * file's full path, is replaced by the name in the message.
   */
  note(file: string, path: string, message: string): void {
    if (this.byFile.has(file)) return;
    const named = message.split(path).join(file);
    this.byFile.set(file, { file, offset: offsetOfMessage(named), message: named });
  }

  get files(): readonly DamagedFile[] {
    return [...this.byFile.values()];
  }
}
