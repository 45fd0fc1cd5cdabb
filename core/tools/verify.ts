/**
 * verifyStoreFiles(): reads a store directory's files without opening the store and
 * reports each damaged one with its file name and the offset of the damage:
 *
 *   MANIFEST  header, checksum and payload (the store refuses to open with a bad one)
 *   WAL       every record's checksum (recovery drops damaged records; this says where)
 *   SST       footer, index, every data block's checksum, key order, entry count
 *
 * The server runs it for the MANIFEST before the store opens (never for the WAL, which
 * recovery reads and reports, StoreStats.walDamage, in these words; never for the SSTs:
 * a start reads no data file; reads verify the blocks they read, lsm/damage-log.ts);
 * `horae fsck` runs all of it. Both print the same
 * problems, so an operator sees one file name and offset everywhere. Files that vanish
 * while being checked (a compaction removed them) are skipped.
 */
import { NodeFileSystem } from '../fs/node-fs.js';
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import { MANIFEST_NAME, parseName } from '../lsm/filenames.js';
import { dumpManifestFile, dumpWalFile, verifySst } from './dump.js';
import { offsetOfMessage } from '../lsm/damage-log.js';

export { offsetOfMessage };

export type StoreFileKind = 'manifest' | 'wal' | 'sst';

/** One damaged file. */
export interface StoreFileProblem {
  /** The file's name inside the data directory, e.g. `000023.sst`. */
  readonly file: string;
  readonly kind: StoreFileKind;
  /** Byte offset of the damage when known (the block, record or header field that failed). */
  readonly offset: number | undefined;
  /** What failed, as the reader reported it (names the file and offset too). */
  readonly message: string;
}

export interface VerifyStoreOptions {
  /** Which kinds to check; default all three. */
  readonly kinds?: readonly StoreFileKind[];
  readonly fs?: FileSystem;
}

export interface VerifyStoreResult {
  /** Files checked, by name. */
  readonly checked: readonly string[];
  readonly problems: readonly StoreFileProblem[];
}


/** One line for logs and fsck: `000023.sst at offset 4096: <message>`. */
export function formatStoreFileProblem(p: StoreFileProblem): string {
  return `${p.file}${p.offset === undefined ? '' : ` at offset ${p.offset}`}: ${p.message}`;
}

export async function verifyStoreFiles(dir: string, opts: VerifyStoreOptions = {}): Promise<VerifyStoreResult> {
  const fs = opts.fs ?? new NodeFileSystem();
  const kinds = new Set<StoreFileKind>(opts.kinds ?? ['manifest', 'wal', 'sst']);
  const checked: string[] = [];
  const problems: StoreFileProblem[] = [];
  let names: string[];
  try {
    names = await fs.list(dir);
  } catch {
    return { checked, problems };
  }
  for (const name of names) {
    const parsed = parseName(name);
    const kind: StoreFileKind | undefined = name === MANIFEST_NAME ? 'manifest'
      : parsed.type === 'wal' ? 'wal' : parsed.type === 'sst' ? 'sst' : undefined;
    if (kind === undefined || !kinds.has(kind)) continue;
    const path = joinPath(dir, name);
    if (!(await fs.exists(path))) continue;
    let messages: string[];
    if (kind === 'sst') {
      const r = await verifySst(fs, path);
      messages = r.error === undefined ? [] : [r.error];
    } else if (kind === 'wal') {
      messages = [...(await dumpWalFile(fs, path, { maxEntries: 0 })).errors];
    } else {
      messages = [...(await dumpManifestFile(fs, path)).errors];
    }
    // A file removed by a compaction while we read it is not damage.
    if (messages.length > 0 && !(await fs.exists(path))) continue;
    checked.push(name);
    // The same words wherever the directory is mounted: the file by name.
    for (const raw of messages) {
      const message = raw.split(path).join(name);
      problems.push({ file: name, kind, offset: offsetOfMessage(message), message });
    }
  }
  return { checked, problems };
}
