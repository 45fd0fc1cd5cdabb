/**
 * LazyFileSystem: TEST ONLY. Wraps another FileSystem and holds every appended byte in
 * process memory until its file is synced (Jepsen's LazyFS, leveldb's
 * FaultInjectionTestEnv, done in-process). Only sync() hands the bytes to the wrapped file
 * system (append, then its fdatasync). A process killed with SIGKILL therefore loses
 * exactly the bytes it never synced, as a power loss would; a plain `kill -9` on the real
 * file system cannot show a missing fsync, because the OS page cache keeps those bytes.
 *
 * What it models and what it does not: file DATA is held back; directory entries
 * (create, truncate, rename, remove) go to the wrapped file system at once, so a crash
 * keeps them (a created file survives, empty or short). Reads in this process see the
 * unsynced bytes (readFile, openRead, size), as reads through a page cache would.
 *
 * Selected by the server only when HORAE_TEST_FS=lazy (tsdb/main.ts, test-fs.ts); never
 * in production: a process that buffers whole files in memory is not a database.
 *
 * Concurrency: single-threaded. Each WritableFile serializes its own appends and syncs;
 * pending bytes are registered per path so reads, renames and removes see them.
 */
import type { FileLock, FileSystem, RandomAccessFile, WritableFile } from './fs.js';
import { fsError } from './fs.js';

/** Counters a test (or /api/stats/store) can read. */
export interface LazyFsStats {
  /** Bytes appended and not yet synced, across all open files. */
  unsyncedBytes: number;
  /** Bytes handed to the wrapped file system by sync(). */
  syncedBytes: number;
  syncs: number;
}

/** The unsynced bytes of one file (its dirty pages), shared by every handle of the path. */
class Dirty {
  chunks: Uint8Array[] = [];
  bytes = 0;

  copy(): Uint8Array {
    const out = new Uint8Array(this.bytes);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export class LazyFileSystem implements FileSystem {
  readonly inner: FileSystem;
  readonly stats: LazyFsStats = { unsyncedBytes: 0, syncedBytes: 0, syncs: 0 };
  /** Unsynced bytes by path; kept after close (a close does not fsync). */
  private readonly dirty = new Map<string, Dirty>();

  constructor(inner: FileSystem) {
    this.inner = inner;
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

  async size(path: string): Promise<number> {
    return (await this.inner.size(path)) + (this.dirty.get(path)?.bytes ?? 0);
  }

  async readFile(path: string): Promise<Uint8Array> {
    const base = await this.inner.readFile(path);
    const d = this.dirty.get(path);
    if (d === undefined || d.bytes === 0) return base;
    const out = new Uint8Array(base.length + d.bytes);
    out.set(base);
    out.set(d.copy(), base.length);
    return out;
  }

  async openRead(path: string): Promise<RandomAccessFile> {
    const file = await this.inner.openRead(path);
    const d = this.dirty.get(path);
    if (d === undefined || d.bytes === 0) return file;
    return new MergedReadFile(file, d.copy());
  }

  async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    const file = await this.inner.openAppend(path, opts);
    if (opts?.truncate === true) this.drop(path);
    let d = this.dirty.get(path);
    if (d === undefined) {
      d = new Dirty();
      this.dirty.set(path, d);
    }
    return new LazyWritableFile(this, file, d);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.inner.rename(from, to);
    const d = this.dirty.get(from);
    this.drop(to);
    if (d !== undefined) {
      this.dirty.delete(from);
      this.dirty.set(to, d);
    }
  }

  async remove(path: string): Promise<void> {
    await this.inner.remove(path);
    this.drop(path);
  }

  async removeDir(dir: string): Promise<void> {
    await this.inner.removeDir(dir);
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const p of [...this.dirty.keys()]) if (p.startsWith(prefix)) this.drop(p);
  }

  syncDir(dir: string): Promise<void> {
    return this.inner.syncDir(dir);
  }

  lock(path: string): Promise<FileLock> {
    return this.inner.lock(path);
  }

  /** Forgets a path's unsynced bytes (its inode is gone or truncated). */
  private drop(path: string): void {
    const d = this.dirty.get(path);
    if (d === undefined) return;
    this.stats.unsyncedBytes -= d.bytes;
    d.chunks = [];
    d.bytes = 0;
    this.dirty.delete(path);
  }
}

class LazyWritableFile implements WritableFile {
  private readonly lfs: LazyFileSystem;
  private readonly file: WritableFile;
  private readonly dirty: Dirty;
  private closed = false;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(lfs: LazyFileSystem, file: WritableFile, dirty: Dirty) {
    this.lfs = lfs;
    this.file = file;
    this.dirty = dirty;
  }

  get path(): string {
    return this.file.path;
  }

  get size(): number {
    return this.file.size + this.dirty.bytes;
  }

  async append(data: Uint8Array): Promise<void> {
    if (this.closed) throw fsError('EBADF', 'write', this.path, 'bad file descriptor (closed)');
    // Copied: the caller may reuse `data` once this resolves.
    this.dirty.chunks.push(data.slice());
    this.dirty.bytes += data.length;
    this.lfs.stats.unsyncedBytes += data.length;
  }

  sync(): Promise<void> {
    if (this.closed) return Promise.reject(fsError('EBADF', 'fdatasync', this.path, 'bad file descriptor (closed)'));
    const run = this.tail.then(() => this.writeBack());
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Hands the dirty bytes to the wrapped file, then fsyncs it. */
  private async writeBack(): Promise<void> {
    const d = this.dirty;
    if (d.bytes > 0) {
      const data = d.copy();
      const n = d.bytes;
      d.chunks = [];
      d.bytes = 0;
      this.lfs.stats.unsyncedBytes -= n;
      // Bytes that fail to reach the file are lost, as dirty pages after a failed write-back.
      await this.file.append(data);
      this.lfs.stats.syncedBytes += n;
    }
    await this.file.sync();
    this.lfs.stats.syncs++;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Unsynced bytes stay pending (in this process) after close: close() does not fsync.
    await this.tail;
    await this.file.close();
  }
}

/** A file opened for reading while some of its bytes are still pending in this process. */
class MergedReadFile implements RandomAccessFile {
  private readonly file: RandomAccessFile;
  private readonly tail: Uint8Array;

  constructor(file: RandomAccessFile, tail: Uint8Array) {
    this.file = file;
    this.tail = tail;
  }

  get path(): string {
    return this.file.path;
  }

  get size(): number {
    return this.file.size + this.tail.length;
  }

  readSync(position: number, length: number): Uint8Array {
    const base = this.file.size;
    if (position + length > this.size) {
      throw fsError('ESHORT', 'read', this.path, `short read: wanted ${length} bytes at ${position}, got ${Math.max(0, this.size - position)}`);
    }
    if (position + length <= base) return this.file.readSync(position, length);
    const out = new Uint8Array(length);
    const fromBase = Math.max(0, base - position);
    if (fromBase > 0) out.set(this.file.readSync(position, fromBase));
    const tailStart = Math.max(0, position - base);
    out.set(this.tail.subarray(tailStart, tailStart + length - fromBase), fromBase);
    return out;
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
