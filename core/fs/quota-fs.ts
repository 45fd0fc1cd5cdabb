/**
 * QuotaFileSystem: TEST ONLY. Wraps another FileSystem and makes appends fail with ENOSPC
 * once the files written through it would use more than a byte budget: a disk that fills
 * up, on any machine, without root or a size-limited tmpfs. The budget lives in a control
 * file that the test rewrites while the process runs, so space can run out at a chosen
 * moment and come back later:
 *
 *   unlimited                 no limit (also: control file absent or empty)
 *   full [SUBSTR...]          no byte more from now on
 *   <bytes> [SUBSTR...]       the files may use this many bytes in total
 *   fsync-eio [SUBSTR...]     no limit, but every sync() fails with EIO (a dying disk)
 *
 * With SUBSTRs only appends to paths containing one of them can fail (`full .log` fills
 * the disk for the WAL only, `full .sst` for flushes and compactions, `full MANIFEST` for
 * the manifest); every file still counts towards the usage.
 *
 * An append that does not fit writes the part that fits (as write(2) does at ENOSPC), then
 * rejects with a Node-style ENOSPC error; so a torn record at the end of a file is part of
 * what this layer tests. Usage is the sum of the sizes of the files under `root` (counted
 * once, at the first write) plus what was appended since, minus removed files.
 *
 * Selected by the server only when HORAE_TEST_FS includes `quota` (test-fs.ts); the
 * control file is re-read at most every `refreshMs` (default 20 ms).
 *
 * Concurrency: single-threaded; usage is updated synchronously when an append is admitted.
 */
import type { FileLock, FileSystem, RandomAccessFile, WritableFile } from './fs.js';
import { fsError, joinPath } from './fs.js';

export interface QuotaOptions {
  /** The directory whose existing files count towards the usage (the store's). */
  readonly root: string;
  /** The control file (see the header). */
  readonly controlPath: string;
  /** Least ms between two reads of the control file. Default 20. */
  readonly refreshMs?: number;
  /** Clock for the refresh period. Default Date.now. */
  readonly now?: () => number;
}

/** The parsed control file. */
export interface QuotaRule {
  /** Total bytes allowed; Infinity when unlimited. 'full' means: the usage when it was read. */
  readonly limit: number | 'full';
  /** Paths an append (or, with failSync, a sync) may fail on (empty: all). */
  readonly only: readonly string[];
  /** sync() fails with EIO and syncs nothing. */
  readonly failSync?: boolean;
}

export interface QuotaStats {
  usedBytes: number;
  /** Appends refused (partly or wholly) with ENOSPC. */
  enospc: number;
  /** Syncs failed with EIO. */
  eio: number;
}

/** Parses the control file's text; throws a RangeError naming the problem. */
export function parseQuotaRule(text: string): QuotaRule {
  const words = text.trim().split(/\s+/).filter((w) => w.length > 0);
  if (words.length === 0 || words[0] === 'unlimited') return { limit: Infinity, only: [] };
  const head = words[0]!;
  const only = words.slice(1);
  if (head === 'full') return { limit: 'full', only };
  if (head === 'fsync-eio') return { limit: Infinity, only, failSync: true };
  if (!/^\d+$/.test(head)) throw new RangeError(`quota control file: expected unlimited, full, fsync-eio or a byte count, got '${head}'`);
  return { limit: Number(head), only };
}

export class QuotaFileSystem implements FileSystem {
  readonly inner: FileSystem;
  readonly stats: QuotaStats = { usedBytes: 0, enospc: 0, eio: 0 };
  private readonly opts: Required<QuotaOptions>;
  private rule: QuotaRule = { limit: Infinity, only: [] };
  /** The byte limit in force: a number, resolved from 'full' when the rule was read. */
  private limitBytes = Infinity;
  private ruleText = '';
  private lastRead = -Infinity;
  /** Sizes of the files counted in usedBytes. */
  private readonly sizes = new Map<string, number>();
  private counted: Promise<void> | undefined;

  constructor(inner: FileSystem, opts: QuotaOptions) {
    this.inner = inner;
    this.opts = { refreshMs: 20, now: Date.now, ...opts };
  }

  /** The rule in force (after the last read of the control file). */
  get currentRule(): QuotaRule {
    return this.rule;
  }

  mkdir(dir: string): Promise<void> {
    return this.inner.mkdir(dir);
  }

  list(dir: string): Promise<string[]> {
    return this.inner.list(dir);
  }

  exists(path: string): Promise<boolean> {
    return this.inner.exists(path);
  }

  size(path: string): Promise<number> {
    return this.inner.size(path);
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.inner.readFile(path);
  }

  openRead(path: string): Promise<RandomAccessFile> {
    return this.inner.openRead(path);
  }

  async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    await this.countExisting();
    const file = await this.inner.openAppend(path, opts);
    this.setSize(path, file.size);
    return new QuotaWritableFile(this, file);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.countExisting();
    await this.inner.rename(from, to);
    const n = this.sizes.get(from);
    this.setSize(to, n ?? 0);
    this.sizes.delete(from);
  }

  async remove(path: string): Promise<void> {
    await this.countExisting();
    await this.inner.remove(path);
    this.setSize(path, 0);
    this.sizes.delete(path);
  }

  async removeDir(dir: string): Promise<void> {
    await this.countExisting();
    await this.inner.removeDir(dir);
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const p of [...this.sizes.keys()]) {
      if (p.startsWith(prefix)) {
        this.setSize(p, 0);
        this.sizes.delete(p);
      }
    }
  }

  syncDir(dir: string): Promise<void> {
    return this.inner.syncDir(dir);
  }

  lock(path: string): Promise<FileLock> {
    return this.inner.lock(path);
  }

  /**
   * @internal How many of `want` bytes may be appended to `path` now (re-reading the
   * control file when due). Counts the admitted bytes as used.
   */
  async admit(path: string, want: number): Promise<number> {
    await this.countExisting();
    await this.refresh();
    const limited = this.rule.only.length === 0 || this.rule.only.some((s) => path.includes(s));
    const free = limited ? Math.max(0, this.limitBytes - this.stats.usedBytes) : Infinity;
    const n = Math.min(want, free);
    this.setSize(path, (this.sizes.get(path) ?? 0) + n);
    if (n < want) this.stats.enospc++;
    return n;
  }

  /** @internal Whether a sync of `path` must fail now (fsync-eio). */
  async syncFails(path: string): Promise<boolean> {
    await this.refresh();
    const fails = this.rule.failSync === true && (this.rule.only.length === 0 || this.rule.only.some((s) => path.includes(s)));
    if (fails) this.stats.eio++;
    return fails;
  }

  private setSize(path: string, n: number): void {
    this.stats.usedBytes += n - (this.sizes.get(path) ?? 0);
    this.sizes.set(path, n);
  }

  private countExisting(): Promise<void> {
    this.counted ??= (async () => {
      let names: string[] = [];
      try {
        names = await this.inner.list(this.opts.root);
      } catch {
        return; // not created yet: nothing to count
      }
      for (const name of names) {
        const p = joinPath(this.opts.root, name);
        if (this.sizes.has(p)) continue;
        try {
          this.setSize(p, await this.inner.size(p));
        } catch {
          // vanished meanwhile, or a directory
        }
      }
    })();
    return this.counted;
  }

  private async refresh(): Promise<void> {
    const now = this.opts.now();
    if (now - this.lastRead < this.opts.refreshMs) return;
    this.lastRead = now;
    let text = '';
    try {
      text = new TextDecoder().decode(await this.inner.readFile(this.opts.controlPath));
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw err;
    }
    if (text === this.ruleText) return;
    this.ruleText = text;
    this.rule = parseQuotaRule(text);
    this.limitBytes = this.rule.limit === 'full' ? this.stats.usedBytes : this.rule.limit;
  }
}

class QuotaWritableFile implements WritableFile {
  private readonly qfs: QuotaFileSystem;
  private readonly file: WritableFile;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(qfs: QuotaFileSystem, file: WritableFile) {
    this.qfs = qfs;
    this.file = file;
  }

  get path(): string {
    return this.file.path;
  }

  get size(): number {
    return this.file.size;
  }

  /** Appends run one at a time, in call order (admit() may await the control file). */
  append(data: Uint8Array): Promise<void> {
    const run = this.tail.then(() => this.appendNow(data));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async appendNow(data: Uint8Array): Promise<void> {
    const n = await this.qfs.admit(this.file.path, data.length);
    if (n > 0) await this.file.append(n === data.length ? data : data.subarray(0, n));
    if (n < data.length) {
      throw fsError('ENOSPC', 'write', this.file.path, `no space left on device (test quota; ${n} of ${data.length} bytes written)`);
    }
  }

  sync(): Promise<void> {
    const run = this.tail.then(async () => {
      if (await this.qfs.syncFails(this.file.path)) throw fsError('EIO', 'fdatasync', this.file.path, 'i/o error (test quota: fsync-eio)');
      await this.file.sync();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  close(): Promise<void> {
    return this.tail.then(() => this.file.close());
  }
}
