/**
 * The file-system seam (leveldb Env, Pebble vfs.FS). Nothing in core/ touches node:fs
 * except node-fs.ts; tests swap in mem-fs.ts (which can simulate a crash by dropping
 * unsynced bytes) or error-fs.ts (which injects I/O errors).
 *
 * Reads are synchronous on purpose: SST blocks are read by synchronous iterators, and a
 * positional read of a cached page costs microseconds, far less than a trip through the
 * libuv thread pool. Writes and syncs are asynchronous so that group commit can overlap
 * an fsync with the next batch.
 *
 * Paths are '/'-separated; every method takes full paths.
 */

export interface FileSystem {
  /** Creates the directory and its parents; no error when it exists. */
  mkdir(dir: string): Promise<void>;
  /** File names (not paths) in `dir`, sorted. Rejects when `dir` does not exist. */
  list(dir: string): Promise<string[]>;
  exists(path: string): Promise<boolean>;
  /** Size in bytes; rejects with an ENOENT-coded error when absent. */
  size(path: string): Promise<number>;
  /** The whole file. */
  readFile(path: string): Promise<Uint8Array>;
  /** Opens a file for positional reads. */
  openRead(path: string): Promise<RandomAccessFile>;
  /**
   * Opens a file for appending, creating it when absent (truncating it to zero first when
   * `truncate` is set). The new file's directory entry is durable only after syncDir().
   */
  openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile>;
  /** Atomically replaces `to` with `from`. Durable only after syncDir() of the directory. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; no error when it is absent. */
  remove(path: string): Promise<void>;
  /** Removes a directory and everything in it; no error when it is absent. */
  removeDir(dir: string): Promise<void>;
  /** Makes created, renamed and removed directory entries in `dir` durable. */
  syncDir(dir: string): Promise<void>;
  /**
   * Takes an exclusive lock on `path` (creating it) against other processes opening the
   * same store. Rejects when another holder has it.
   */
  lock(path: string): Promise<FileLock>;
}

export interface RandomAccessFile {
  readonly path: string;
  /** Size when opened (files read this way are immutable). */
  readonly size: number;
  /**
   * Reads exactly `length` bytes at `position` into a new buffer. Throws an Error with
   * code 'ESHORT' when the file has fewer bytes there.
   */
  readSync(position: number, length: number): Uint8Array;
  close(): Promise<void>;
}

export interface WritableFile {
  readonly path: string;
  /** Bytes appended so far, including those written before opening. */
  readonly size: number;
  /** Appends bytes. The caller may reuse `data` once the promise resolves. */
  append(data: Uint8Array): Promise<void>;
  /** Makes every appended byte durable (fdatasync). */
  sync(): Promise<void>;
  /** Closes without syncing. Idempotent. */
  close(): Promise<void>;
}

export interface FileLock {
  release(): Promise<void>;
}

export function joinPath(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

export function dirName(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? (i === 0 ? '/' : '.') : path.slice(0, i);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A Node-style system error (`code`, `syscall`, `path`), for file systems that make their own. */
export function fsError(code: string, syscall: string, path: string, detail: string): Error {
  const err = new Error(`${code}: ${detail}, ${syscall} '${path}'`) as Error & {
    code: string;
    syscall: string;
    path: string;
  };
  err.code = code;
  err.syscall = syscall;
  err.path = path;
  return err;
}
