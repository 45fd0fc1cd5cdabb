/**
 * NodeFileSystem: the FileSystem on node:fs, the only file in core/ that imports it.
 *
 * - Positional reads are synchronous (fs.readSync on the handle's fd); see fs.ts for why.
 * - A WritableFile serializes its appends and syncs on an internal promise chain, so
 *   calls issued without awaiting still reach the file in call order (libuv would
 *   otherwise run concurrent writes on its thread pool in any order). sync() covers every
 *   append called before it, and uses fdatasync on the thread pool. An operation called
 *   while nothing queued is unfinished starts at once, not a microtask later: the WAL
 *   issues its round's write and fdatasync, then fills memstores while the disk works.
 * - An append is a synchronous write(2) when its turn comes: it only copies into the
 *   page cache (~0.2 ms for a 490 KB WAL round), while a thread-pool write finishes only
 *   when the event loop next gets to its completion, 8-12 ms later under telnet ingest,
 *   and only then could the round's fdatasync start (measured at 58337ab).
 * - syncDir opens the directory and fsyncs it (the POSIX way to make entries durable).
 * - lock() writes our pid into a lock file created atomically (hard link of a complete
 *   temp file, so a reader never sees a half-written pid). A lock file naming a live
 *   process other than ours is respected; a dead pid (or our own pid, left over from a
 *   previous life of a container that reuses pids) is stale and taken over. Locks held in
 *   this process are tracked in memory, so a second open in the same process is refused.
 *   NB: this is advisory and has a small window in which two processes taking over the
 *   same stale lock can both succeed; Node has no flock().
 *
 * Errors are Node system errors with `code`, `syscall` and `path` intact; callers map them
 * to StoreError with ioError(). Our own errors follow the same shape: ESHORT (short read),
 * EBADF (use after close), ELOCKED (lock held elsewhere).
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { FileLock, FileSystem, RandomAccessFile, WritableFile } from './fs.js';
import { fsError } from './fs.js';


/** Adds the path to errors from FileHandle calls, which Node reports without one. */
function withPath(err: unknown, path: string): unknown {
  if (err instanceof Error && (err as { path?: string }).path === undefined) {
    (err as Error & { path?: string }).path = path;
    err.message = `${err.message}, '${path}'`;
  }
  return err;
}

function codeOf(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

/** Resolved paths of locks held by this process, across NodeFileSystem instances. */
const heldLocks = new Set<string>();

/** The FileSystem on the local disk through node:fs. Stateless; one instance may be shared. */
export class NodeFileSystem implements FileSystem {
  async mkdir(dir: string): Promise<void> {
    await fsp.mkdir(dir, { recursive: true });
  }

  async list(dir: string): Promise<string[]> {
    return (await fsp.readdir(dir)).sort();
  }

  async exists(path: string): Promise<boolean> {
    try {
      await fsp.stat(path);
      return true;
    } catch (err) {
      if (codeOf(err) === 'ENOENT' || codeOf(err) === 'ENOTDIR') return false;
      throw err;
    }
  }

  async size(path: string): Promise<number> {
    return (await fsp.stat(path)).size;
  }

  async readFile(path: string): Promise<Uint8Array> {
    const b = await fsp.readFile(path);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  async openRead(path: string): Promise<RandomAccessFile> {
    const fh = await fsp.open(path, 'r');
    try {
      const st = await fh.stat();
      return new NodeReadFile(path, fh, st.size);
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
  }

  async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    // 'a' is O_APPEND|O_CREAT; 'w' is O_TRUNC|O_CREAT. Both write at the end.
    const fh = await fsp.open(path, opts?.truncate === true ? 'w' : 'a');
    try {
      const st = await fh.stat();
      return new NodeWritableFile(path, fh, st.size);
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
  }

  async rename(from: string, to: string): Promise<void> {
    await fsp.rename(from, to);
  }

  async remove(path: string): Promise<void> {
    try {
      await fsp.unlink(path);
    } catch (err) {
      if (codeOf(err) !== 'ENOENT') throw err;
    }
  }

  async removeDir(dir: string): Promise<void> {
    await fsp.rm(dir, { recursive: true, force: true });
  }

  async syncDir(dir: string): Promise<void> {
    const fh = await fsp.open(dir, 'r');
    try {
      await fh.sync();
    } catch (err) {
      // Windows cannot fsync a directory handle; its metadata is journaled anyway.
      if (!(process.platform === 'win32' && (codeOf(err) === 'EPERM' || codeOf(err) === 'EISDIR'))) throw err;
    } finally {
      await fh.close();
    }
  }

  async lock(path: string): Promise<FileLock> {
    const key = await resolveLockKey(path);
    if (heldLocks.has(key)) {
      throw fsError('ELOCKED', 'lock', path, `lock is already held by this process (pid ${process.pid})`);
    }
    heldLocks.add(key);
    try {
      await acquireLockFile(path);
    } catch (err) {
      heldLocks.delete(key);
      throw err;
    }
    let released = false;
    return {
      release: async (): Promise<void> => {
        if (released) return;
        released = true;
        heldLocks.delete(key);
        // Only remove the file while it still names us.
        if ((await readLockPid(path)) === process.pid) await fsp.unlink(path).catch(() => undefined);
      },
    };
  }
}

async function resolveLockKey(path: string): Promise<string> {
  // The lock file may not exist yet; resolve its directory.
  const slash = path.lastIndexOf('/');
  const dir = slash < 0 ? '.' : slash === 0 ? '/' : path.slice(0, slash);
  try {
    return `${await fsp.realpath(dir)}/${path.slice(slash + 1)}`;
  } catch {
    return path;
  }
}

/** The pid in a lock file; undefined when absent or unreadable. */
async function readLockPid(path: string): Promise<number | undefined> {
  try {
    const text = (await fsp.readFile(path, 'utf8')).trim();
    const pid = Number(text);
    return /^\d+$/.test(text) && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return codeOf(err) === 'EPERM'; // exists, owned by someone else
  }
}

async function acquireLockFile(path: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await fsp.writeFile(tmp, `${process.pid}\n`);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await fsp.link(tmp, path); // atomic create-with-content; EEXIST when present
        return;
      } catch (err) {
        const code = codeOf(err);
        if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
          // No hard links on this file system: exclusive create, then write.
          try {
            await fsp.writeFile(path, `${process.pid}\n`, { flag: 'wx' });
            return;
          } catch (e2) {
            if (codeOf(e2) !== 'EEXIST') throw e2;
          }
        } else if (code !== 'EEXIST') {
          throw err;
        }
      }
      const pid = await readLockPid(path);
      if (pid !== undefined && pid !== process.pid && isAlive(pid)) {
        throw fsError('ELOCKED', 'lock', path, `lock is held by running process ${pid} (another store instance uses this directory)`);
      }
      // Stale (dead pid, our own pid from an earlier life, or unreadable): take it over.
      await fsp.unlink(path).catch((e: unknown) => {
        if (codeOf(e) !== 'ENOENT') throw e;
      });
    }
    throw fsError('ELOCKED', 'lock', path, 'could not take over a stale lock (contended)');
  } finally {
    await fsp.unlink(tmp).catch(() => undefined);
  }
}

class NodeReadFile implements RandomAccessFile {
  readonly path: string;
  readonly size: number;
  private fh: fsp.FileHandle | undefined;
  private readonly fd: number;

  constructor(path: string, fh: fsp.FileHandle, size: number) {
    this.path = path;
    this.fh = fh;
    this.fd = fh.fd;
    this.size = size;
  }

  readSync(position: number, length: number): Uint8Array {
    // NB: the closed check matters: a closed fd number may already belong to another file.
    if (this.fh === undefined) throw fsError('EBADF', 'read', this.path, 'bad file descriptor (closed)');
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = fs.readSync(this.fd, out, done, length - done, position + done);
      if (n === 0) {
        throw fsError('ESHORT', 'read', this.path, `short read: wanted ${length} bytes at ${position}, got ${done}`);
      }
      done += n;
    }
    return out;
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    if (fh !== undefined) await fh.close();
  }
}

class NodeWritableFile implements WritableFile {
  readonly path: string;
  private fh: fsp.FileHandle;
  private sizeBytes: number;
  /** Settles when the last queued operation has finished (never rejects). */
  private tail: Promise<unknown> = Promise.resolve();
  /** Operations queued or running on the thread pool (not yet settled). */
  private unfinished = 0;
  private closing: Promise<void> | undefined;

  constructor(path: string, fh: fsp.FileHandle, size: number) {
    this.path = path;
    this.fh = fh;
    this.sizeBytes = size;
  }

  get size(): number {
    return this.sizeBytes;
  }

  append(data: Uint8Array): Promise<void> {
    return this.enqueue('write', () => {
      let off = 0;
      while (off < data.length) {
        const bytesWritten = fs.writeSync(this.fh.fd, data, off, data.length - off, null);
        off += bytesWritten;
        this.sizeBytes += bytesWritten;
      }
      return undefined;
    });
  }

  sync(): Promise<void> {
    return this.enqueue('fdatasync', () => this.fh.datasync());
  }

  close(): Promise<void> {
    if (this.closing === undefined) {
      const prev = this.tail;
      this.closing = prev.then(() => this.fh.close());
    }
    return this.closing;
  }

  /**
   * Runs `op` now when nothing queued is unfinished (the write(2) is done, or the
   * fdatasync issued, before this returns), else after the last queued operation.
   * `op` returns undefined when it finished synchronously.
   */
  private enqueue(syscall: string, op: () => Promise<void> | undefined): Promise<void> {
    if (this.closing !== undefined) {
      return Promise.reject(fsError('EBADF', syscall, this.path, 'bad file descriptor (closed)'));
    }
    if (this.unfinished === 0) {
      let started: Promise<void> | undefined;
      try {
        started = op();
      } catch (err) {
        return Promise.reject(withPath(err, this.path));
      }
      if (started === undefined) return Promise.resolve();
      return this.track(started);
    }
    return this.track(this.tail.then(op));
  }

  private track(started: Promise<unknown>): Promise<void> {
    this.unfinished++;
    const run = started
      .then(
        () => undefined,
        (err: unknown) => {
          throw withPath(err, this.path);
        },
      )
      .finally(() => {
        this.unfinished--;
      });
    this.tail = run.catch(() => undefined);
    return run;
  }
}
