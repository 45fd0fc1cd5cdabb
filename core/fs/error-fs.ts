/**
 * ErrorFileSystem: wraps another FileSystem and fails chosen operations with Node-style
 * system errors (Pebble's errorfs). Tests use it to prove that every I/O failure surfaces
 * as a StoreError and that nothing is acknowledged after a failed write or fsync.
 *
 * A rule names op kinds, optionally a path (substring or predicate; rename matches either
 * path), an errno code, how many matching calls to let through first (`after`) and how
 * many to fail (`times`, default forever). Rules are checked in insertion order; the first
 * rule that matches and is still armed fires. A failed call does not reach the wrapped
 * file system, so a failed append writes nothing and a failed sync makes nothing durable.
 *
 * Counters record every call seen and every error injected, per op kind, which also makes
 * this wrapper a convenient way to count syncs. exists(), size() and close() pass through
 * unchecked and uncounted.
 *
 * Concurrency: single-threaded; the check happens synchronously when the method is called.
 */
import type { FileLock, FileSystem, RandomAccessFile, WritableFile } from './fs.js';

/** Operation kinds a rule can target. `read` covers readSync and readFile. */
export const FS_OP_KINDS = [
  'openAppend',
  'append',
  'sync',
  'syncDir',
  'rename',
  'remove',
  'removeDir',
  'read',
  'openRead',
  'list',
  'mkdir',
  'lock',
] as const;
export type FsOpKind = (typeof FS_OP_KINDS)[number];

/** errno codes a rule may inject. */
export type InjectedErrno = 'EIO' | 'ENOSPC' | 'EDQUOT' | 'EACCES' | 'EPERM' | 'EROFS' | 'EMFILE' | 'ENOENT' | 'EBADF';

const ERRNO_TEXT: Readonly<Record<InjectedErrno, string>> = {
  EIO: 'i/o error',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENOENT: 'no such file or directory',
  EBADF: 'bad file descriptor',
};

const SYSCALL: Readonly<Record<FsOpKind, string>> = {
  openAppend: 'open',
  append: 'write',
  sync: 'fdatasync',
  syncDir: 'fsync',
  rename: 'rename',
  remove: 'unlink',
  removeDir: 'rm',
  read: 'read',
  openRead: 'open',
  list: 'scandir',
  mkdir: 'mkdir',
  lock: 'open',
};

export interface ErrorRule {
  /** The op kinds this rule fails. */
  readonly ops: FsOpKind | readonly FsOpKind[];
  /** Only calls whose path contains this substring, or for which it returns true. Default: all. */
  readonly path?: string | ((path: string) => boolean);
  /** The errno code of the injected error. */
  readonly code: InjectedErrno;
  /** Matching calls to let through before the first failure. Default 0. */
  readonly after?: number;
  /** Failures to inject before the rule disarms itself. Default Infinity. */
  readonly times?: number;
}

/** The handle inject() returns. */
export interface InjectedRule {
  /** Errors this rule has injected. */
  readonly fired: number;
  /** Stops the rule from firing again. */
  remove(): void;
}

/** An injected error: looks like a Node system error, plus `injected: true`. */
export interface InjectedFsError extends Error {
  readonly code: InjectedErrno;
  readonly syscall: string;
  readonly path: string;
  readonly injected: true;
}

class RuleState implements InjectedRule {
  readonly rule: ErrorRule;
  readonly ops: ReadonlySet<FsOpKind>;
  seen = 0;
  fired = 0;
  removed = false;

  constructor(rule: ErrorRule) {
    this.rule = rule;
    this.ops = new Set(typeof rule.ops === 'string' ? [rule.ops] : rule.ops);
  }

  remove(): void {
    this.removed = true;
  }

  matches(op: FsOpKind, paths: readonly string[]): boolean {
    if (this.removed || !this.ops.has(op)) return false;
    const p = this.rule.path;
    if (p === undefined) return true;
    return paths.some((x) => (typeof p === 'string' ? x.includes(p) : p(x)));
  }
}

function zeroCounts(): Record<FsOpKind, number> {
  const c = {} as Record<FsOpKind, number>;
  for (const k of FS_OP_KINDS) c[k] = 0;
  return c;
}

/** A FileSystem that forwards to `inner` except where a rule injects an error. */
export class ErrorFileSystem implements FileSystem {
  readonly inner: FileSystem;
  private rules: RuleState[] = [];
  private callCounts = zeroCounts();
  private injectedCounts = zeroCounts();
  /** Calls checked since construction (not reset): beforeCall counts from it. */
  private totalCalls = 0;
  private trigger: { at: number; fn: () => void } | undefined;

  constructor(inner: FileSystem) {
    this.inner = inner;
  }

  /** Adds a rule; see ErrorRule. */
  inject(rule: ErrorRule): InjectedRule {
    const st = new RuleState(rule);
    this.rules.push(st);
    return st;
  }

  /** Removes every rule (counters are kept). */
  clearRules(): void {
    for (const r of this.rules) r.removed = true;
    this.rules = [];
  }

  /** Errors injected so far, for one op kind or in total. */
  injected(op?: FsOpKind): number {
    if (op !== undefined) return this.injectedCounts[op];
    let n = 0;
    for (const k of FS_OP_KINDS) n += this.injectedCounts[k];
    return n;
  }

  /** Calls seen so far (failed or forwarded), for one op kind or in total. */
  calls(op?: FsOpKind): number {
    if (op !== undefined) return this.callCounts[op];
    let n = 0;
    for (const k of FS_OP_KINDS) n += this.callCounts[k];
    return n;
  }

  /**
   * Runs `fn` synchronously just before the `n`th call from now (n >= 1) is counted and
   * checked, so a rule `fn` injects already applies to that call. Crash tests use it for a
   * power loss between two precise operations. One at a time: a later call replaces it.
   */
  beforeCall(n: number, fn: () => void): void {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`beforeCall: n must be an integer >= 1, got ${n}`);
    this.trigger = { at: this.totalCalls + n, fn };
  }

  /** Zeroes the call and injection counters. */
  resetCounters(): void {
    this.callCounts = zeroCounts();
    this.injectedCounts = zeroCounts();
  }

  /** @internal Counts the call and throws when a rule fires. */
  check(op: FsOpKind, ...paths: string[]): void {
    if (++this.totalCalls === this.trigger?.at) {
      const { fn } = this.trigger;
      this.trigger = undefined;
      fn();
    }
    this.callCounts[op]++;
    for (const r of this.rules) {
      if (!r.matches(op, paths)) continue;
      r.seen++;
      if (r.seen <= (r.rule.after ?? 0)) continue;
      if (r.fired >= (r.rule.times ?? Infinity)) continue;
      r.fired++;
      this.injectedCounts[op]++;
      const path = paths[0] ?? '';
      const err = new Error(`${r.rule.code}: ${ERRNO_TEXT[r.rule.code]} (injected), ${SYSCALL[op]} '${path}'`);
      Object.assign(err, { code: r.rule.code, syscall: SYSCALL[op], path, injected: true });
      throw err as InjectedFsError;
    }
  }

  async mkdir(dir: string): Promise<void> {
    this.check('mkdir', dir);
    return this.inner.mkdir(dir);
  }

  async list(dir: string): Promise<string[]> {
    this.check('list', dir);
    return this.inner.list(dir);
  }

  exists(path: string): Promise<boolean> {
    return this.inner.exists(path);
  }

  size(path: string): Promise<number> {
    return this.inner.size(path);
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.check('read', path);
    return this.inner.readFile(path);
  }

  async openRead(path: string): Promise<RandomAccessFile> {
    this.check('openRead', path);
    return new ErrorReadFile(this, await this.inner.openRead(path));
  }

  async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    this.check('openAppend', path);
    return new ErrorWritableFile(this, await this.inner.openAppend(path, opts));
  }

  async rename(from: string, to: string): Promise<void> {
    this.check('rename', from, to);
    return this.inner.rename(from, to);
  }

  async remove(path: string): Promise<void> {
    this.check('remove', path);
    return this.inner.remove(path);
  }

  async removeDir(dir: string): Promise<void> {
    this.check('removeDir', dir);
    return this.inner.removeDir(dir);
  }

  async syncDir(dir: string): Promise<void> {
    this.check('syncDir', dir);
    return this.inner.syncDir(dir);
  }

  async lock(path: string): Promise<FileLock> {
    this.check('lock', path);
    return this.inner.lock(path);
  }
}

class ErrorReadFile implements RandomAccessFile {
  private readonly efs: ErrorFileSystem;
  private readonly file: RandomAccessFile;

  constructor(efs: ErrorFileSystem, file: RandomAccessFile) {
    this.efs = efs;
    this.file = file;
  }

  get path(): string {
    return this.file.path;
  }

  get size(): number {
    return this.file.size;
  }

  readSync(position: number, length: number): Uint8Array {
    this.efs.check('read', this.file.path);
    return this.file.readSync(position, length);
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

class ErrorWritableFile implements WritableFile {
  private readonly efs: ErrorFileSystem;
  private readonly file: WritableFile;

  constructor(efs: ErrorFileSystem, file: WritableFile) {
    this.efs = efs;
    this.file = file;
  }

  get path(): string {
    return this.file.path;
  }

  get size(): number {
    return this.file.size;
  }

  async append(data: Uint8Array): Promise<void> {
    this.efs.check('append', this.file.path);
    return this.file.append(data);
  }

  async sync(): Promise<void> {
    this.efs.check('sync', this.file.path);
    return this.file.sync();
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
