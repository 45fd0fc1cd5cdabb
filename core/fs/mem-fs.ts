/**
 * MemFileSystem: a FileSystem held entirely in memory that can simulate power loss, after
 * leveldb's FaultInjectionTestEnv. Tests run the engine on it, call crash() at any point,
 * and reopen: whatever survives is exactly what a real disk guarantees to keep.
 *
 * Model. A file is an inode (growable buffer, `length`, `syncedLength`); a directory maps
 * names to inodes twice: `files` (what list/open see now) and `durable` (the entries as of
 * the last syncDir). crash() then:
 *   1. resets every directory's entries to its durable map, which undoes unsynced creates,
 *      renames (a rename over an existing file brings the old target back) and removes;
 *   2. cuts every surviving inode to its synced length ('drop-unsynced'), or to the synced
 *      length plus a random prefix of the unsynced tail ('random-prefix');
 *   3. invalidates every open handle (later calls throw EBADF) and releases every lock.
 *
 * Invariants: 0 <= syncedLength <= length <= data.length for every inode. Directories are
 * created and removed durably at once (mkdir/removeDir are not crash-tested; the engine
 * creates its directory once, before writing anything).
 *
 * Concurrency: single-threaded. Every mutation takes effect synchronously when the method
 * is called (before its promise settles), so call order is the order of effects. Like a
 * real disk, completions arrive on a later event-loop turn: sync() and syncDir() always
 * settle after a macrotask (setImmediate), and every 64th other operation does too. NB:
 * without this, a loop such as `while (!stop) await wal.append(x, true)` would run on
 * microtasks alone and starve timers, so the test that should stop it could never fire.
 * The real setImmediate is captured at load, so fake timers do not stall the file system.
 */
import type { FileLock, FileSystem, RandomAccessFile, WritableFile } from './fs.js';
import { baseName, dirName, fsError } from './fs.js';

/** How crash() treats bytes written but not covered by a sync(). */
export type CrashMode = 'drop-unsynced' | 'random-prefix';

export interface CrashOptions {
  /** Default 'drop-unsynced': every unsynced byte is lost. */
  readonly mode?: CrashMode;
  /** Source of randomness for 'random-prefix', in [0, 1). Default Math.random. */
  readonly random?: () => number;
}


const ENOENT = 'no such file or directory';

/** Operations between forced macrotask yields (see the header). */
const YIELD_EVERY = 64;
const realSetImmediate = globalThis.setImmediate;

function macrotask(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

class Inode {
  data: Uint8Array;
  length = 0;
  syncedLength = 0;

  constructor(data: Uint8Array = new Uint8Array(0), length = 0) {
    this.data = data;
    this.length = length;
  }

  append(src: Uint8Array): void {
    const need = this.length + src.length;
    if (need > this.data.length) {
      let cap = Math.max(this.data.length * 2, 4096);
      while (cap < need) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.data.subarray(0, this.length));
      this.data = next;
    }
    this.data.set(src, this.length);
    this.length = need;
  }

  /** Sets the length; bytes past the old length read as zero. */
  resize(len: number): void {
    if (len > this.data.length) {
      const next = new Uint8Array(len);
      next.set(this.data.subarray(0, this.length));
      this.data = next;
    } else if (len > this.length) {
      this.data.fill(0, this.length, len);
    }
    this.length = len;
    if (this.syncedLength > len) this.syncedLength = len;
  }
}

class MemDir {
  /** Entries visible now. */
  files = new Map<string, Inode>();
  /** Entries as of the last syncDir: what a crash restores. */
  durable = new Map<string, Inode>();
  readonly subdirs = new Set<string>();
}

function normalize(path: string): string {
  let p = path.replace(/\/{2,}/g, '/');
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p === '' ? '.' : p;
}

/** In-memory FileSystem with crash simulation and byte-level corruption helpers. */
export class MemFileSystem implements FileSystem {
  private dirs = new Map<string, MemDir>();
  private locks = new Set<string>();
  /** Bumped by crash(); handles from an older generation are dead. */
  private generation = 0;
  private opCount = 0;

  constructor() {
    this.dirs.set('/', new MemDir());
    this.dirs.set('.', new MemDir());
  }

  // ---- FileSystem ----

  async mkdir(dir: string): Promise<void> {
    this.mkdirSync(normalize(dir));
    await this.pace();
  }

  async list(dir: string): Promise<string[]> {
    const d = this.dirs.get(normalize(dir));
    if (d === undefined) throw fsError('ENOENT', 'scandir', dir, ENOENT);
    const result = [...d.files.keys(), ...d.subdirs].sort();
    await this.pace();
    return result;
  }

  async exists(path: string): Promise<boolean> {
    const p = normalize(path);
    const result = this.dirs.has(p) || this.lookup(p) !== undefined;
    await this.pace();
    return result;
  }

  async size(path: string): Promise<number> {
    const result = this.mustLookup(path, 'stat').length;
    await this.pace();
    return result;
  }

  async readFile(path: string): Promise<Uint8Array> {
    const f = this.mustLookup(path, 'open');
    const result = f.data.slice(0, f.length);
    await this.pace();
    return result;
  }

  async openRead(path: string): Promise<RandomAccessFile> {
    const f = this.mustLookup(path, 'open');
    const result = new MemReadFile(this, path, f, this.generation);
    await this.pace();
    return result;
  }

  async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    const p = normalize(path);
    const d = this.dirOf(p, 'open');
    const name = baseName(p);
    if (this.dirs.has(p)) throw fsError('EISDIR', 'open', path, 'illegal operation on a directory');
    let f = d.files.get(name);
    if (f === undefined) {
      f = new Inode();
      d.files.set(name, f);
    } else if (opts?.truncate === true) {
      f.resize(0);
    }
    const result = new MemWritableFile(this, path, f, this.generation);
    await this.pace();
    return result;
  }

  async rename(from: string, to: string): Promise<void> {
    const pf = normalize(from);
    const pt = normalize(to);
    const df = this.dirOf(pf, 'rename');
    const f = df.files.get(baseName(pf));
    if (f === undefined) throw fsError('ENOENT', 'rename', from, ENOENT);
    const dt = this.dirOf(pt, 'rename');
    if (this.dirs.has(pt)) throw fsError('EISDIR', 'rename', to, 'illegal operation on a directory');
    df.files.delete(baseName(pf));
    dt.files.set(baseName(pt), f);
    await this.pace();
  }

  async remove(path: string): Promise<void> {
    const p = normalize(path);
    this.dirs.get(dirName(p))?.files.delete(baseName(p));
    await this.pace();
  }

  async removeDir(dir: string): Promise<void> {
    const p = normalize(dir);
    if (!this.dirs.has(p)) return;
    const prefix = p.endsWith('/') ? p : `${p}/`;
    for (const key of [...this.dirs.keys()]) {
      if (key === p || key.startsWith(prefix)) this.dirs.delete(key);
    }
    this.dirs.get(dirName(p))?.subdirs.delete(baseName(p));
  }

  async syncDir(dir: string): Promise<void> {
    const d = this.dirs.get(normalize(dir));
    if (d === undefined) throw fsError('ENOENT', 'open', dir, ENOENT);
    d.durable = new Map(d.files);
    await this.pace(true);
  }

  async lock(path: string): Promise<FileLock> {
    const p = normalize(path);
    if (this.locks.has(p)) {
      throw fsError('ELOCKED', 'lock', path, 'lock is already held (another store instance is open on it)');
    }
    const w = await this.openAppend(p, { truncate: true });
    await w.append(new TextEncoder().encode(`${process.pid}\n`));
    await w.close();
    this.locks.add(p);
    const gen = this.generation;
    let released = false;
    return {
      release: async (): Promise<void> => {
        if (released || gen !== this.generation) return;
        released = true;
        this.locks.delete(p);
        await this.remove(p);
      },
    };
  }

  // ---- test helpers ----

  /**
   * Simulates power loss; see the file header for what survives. Handles opened before the
   * crash throw EBADF from then on; locks are released.
   */
  crash(opts: CrashOptions = {}): void {
    const mode = opts.mode ?? 'drop-unsynced';
    const random = opts.random ?? Math.random;
    const survivors = new Set<Inode>();
    for (const d of this.dirs.values()) {
      d.files = new Map(d.durable);
      for (const f of d.files.values()) survivors.add(f);
    }
    for (const f of survivors) {
      let keep = f.syncedLength;
      if (mode === 'random-prefix') {
        const unsynced = f.length - f.syncedLength;
        keep += Math.min(unsynced, Math.floor(random() * (unsynced + 1)));
      }
      f.resize(keep);
      f.syncedLength = keep;
    }
    this.locks.clear();
    this.generation++;
  }

  /** Sum of the lengths of all visible files. */
  totalBytes(): number {
    let n = 0;
    for (const d of this.dirs.values()) for (const f of d.files.values()) n += f.length;
    return n;
  }

  /**
   * A deep copy: same directories, entries (visible and durable), bytes and synced lengths,
   * with inode sharing preserved. Open handles and locks are not carried over.
   */
  clone(): MemFileSystem {
    const copy = new MemFileSystem();
    const inodes = new Map<Inode, Inode>();
    const dup = (f: Inode): Inode => {
      let c = inodes.get(f);
      if (c === undefined) {
        c = new Inode(f.data.slice(0, f.length), f.length);
        c.syncedLength = f.syncedLength;
        inodes.set(f, c);
      }
      return c;
    };
    copy.dirs.clear();
    for (const [path, d] of this.dirs) {
      const nd = new MemDir();
      for (const [name, f] of d.files) nd.files.set(name, dup(f));
      for (const [name, f] of d.durable) nd.durable.set(name, dup(f));
      for (const s of d.subdirs) nd.subdirs.add(s);
      copy.dirs.set(path, nd);
    }
    return copy;
  }

  /** XORs the byte at `offset` with `xorMask` (flips bits in place, synced or not). */
  corrupt(path: string, offset: number, xorMask: number): void {
    const f = this.mustLookup(path, 'corrupt');
    if (!Number.isInteger(offset) || offset < 0 || offset >= f.length) {
      throw new RangeError(`corrupt ${path}: offset ${offset} outside [0, ${f.length})`);
    }
    f.data[offset] ^= xorMask & 0xff;
  }

  /**
   * Sets the file's length (cutting it, or extending it with zeros), as a direct edit of
   * the disk image: the new length counts as synced.
   */
  truncate(path: string, len: number): void {
    const f = this.mustLookup(path, 'truncate');
    if (!Number.isInteger(len) || len < 0) throw new RangeError(`truncate ${path}: bad length ${len}`);
    f.resize(len);
    f.syncedLength = len;
  }

  /** Bytes of `path` covered by a sync() (what drop-unsynced crash() would keep). */
  syncedSize(path: string): number {
    return this.mustLookup(path, 'stat').syncedLength;
  }

  // ---- internals ----

  /** @internal Resolves after a macrotask when `always` or every YIELD_EVERY calls; else at once. */
  pace(always = false): Promise<void> | undefined {
    if (always || ++this.opCount % YIELD_EVERY === 0) return macrotask();
    return undefined;
  }

  /** @internal Throws EBADF when `gen` predates the last crash(). */
  checkGeneration(gen: number, path: string, syscall: string): void {
    if (gen !== this.generation) {
      throw fsError('EBADF', syscall, path, 'bad file descriptor (handle invalidated by crash())');
    }
  }

  private mkdirSync(p: string): void {
    if (this.dirs.has(p)) return;
    if (this.lookup(p) !== undefined) throw fsError('EEXIST', 'mkdir', p, 'file already exists');
    const parent = dirName(p);
    if (parent !== p) this.mkdirSync(parent);
    this.dirs.set(p, new MemDir());
    this.dirs.get(parent)?.subdirs.add(baseName(p));
  }

  private lookup(p: string): Inode | undefined {
    return this.dirs.get(dirName(p))?.files.get(baseName(p));
  }

  private mustLookup(path: string, syscall: string): Inode {
    const f = this.lookup(normalize(path));
    if (f === undefined) throw fsError('ENOENT', syscall, path, ENOENT);
    return f;
  }

  private dirOf(p: string, syscall: string): MemDir {
    const d = this.dirs.get(dirName(p));
    if (d === undefined) throw fsError('ENOENT', syscall, p, ENOENT);
    return d;
  }
}

class MemReadFile implements RandomAccessFile {
  readonly path: string;
  readonly size: number;
  private readonly fs: MemFileSystem;
  private readonly inode: Inode;
  private readonly gen: number;
  private closed = false;

  constructor(fs: MemFileSystem, path: string, inode: Inode, gen: number) {
    this.fs = fs;
    this.path = path;
    this.inode = inode;
    this.gen = gen;
    this.size = inode.length;
  }

  readSync(position: number, length: number): Uint8Array {
    if (this.closed) throw fsError('EBADF', 'read', this.path, 'bad file descriptor (closed)');
    this.fs.checkGeneration(this.gen, this.path, 'read');
    const f = this.inode;
    if (position + length > f.length) {
      const have = Math.max(0, f.length - position);
      throw fsError('ESHORT', 'read', this.path, `short read: wanted ${length} bytes at ${position}, file has ${have}`);
    }
    return f.data.slice(position, position + length);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

class MemWritableFile implements WritableFile {
  readonly path: string;
  private readonly fs: MemFileSystem;
  private readonly inode: Inode;
  private readonly gen: number;
  private closed = false;

  constructor(fs: MemFileSystem, path: string, inode: Inode, gen: number) {
    this.fs = fs;
    this.path = path;
    this.inode = inode;
    this.gen = gen;
  }

  get size(): number {
    return this.inode.length;
  }

  async append(data: Uint8Array): Promise<void> {
    this.check('write');
    this.inode.append(data);
    await this.fs.pace();
  }

  async sync(): Promise<void> {
    this.check('fdatasync');
    this.inode.syncedLength = this.inode.length;
    await this.fs.pace(true);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private check(syscall: string): void {
    if (this.closed) throw fsError('EBADF', syscall, this.path, 'bad file descriptor (closed)');
    this.fs.checkGeneration(this.gen, this.path, syscall);
  }
}
