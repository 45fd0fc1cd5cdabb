/**
 * WalWriter: appends records to a WAL file with leveldb framing and group commit.
 * Format: core/FORMAT.md, "WAL"; constants in wal-format.ts. In short, 32 KiB blocks of
 * `[masked crc32c <u32>][len <u16>][type <u8>][data]`, a record that does not fit is split
 * FIRST/MIDDLE.../LAST, fewer than 7 bytes left in a block are zero-filled, and the file
 * begins with a META record (magic, format version, log number).
 *
 * Invariants:
 *  1. A record's place in the log is fixed when append() is called: the payload is framed
 *     (copied) into the pending buffer synchronously, so call order is log order and the
 *     caller may reuse the payload as soon as append() returns.
 *  2. At most one round (one file.append of everything pending, then at most one
 *     file.sync, issued together) is in flight. Records appended meanwhile wait in the
 *     pending buffer and go out together in the next round: N concurrent sync appends
 *     cost ~2 fsyncs, not N. A round starts at the end of the synchronous run that
 *     appended (a microtask), or at once on startRound().
 *  3. A sync=true append resolves only after an fsync that covers its bytes; a sync=false
 *     append resolves once its bytes were handed to the OS, and a timer forces an fsync
 *     within `bufferedWindowMs` of it.
 *  4. A writer made to follow another (`follow`: the next segment of a log) writes
 *     nothing until the other is durable whole: bytes of a later segment never reach the
 *     disk before the earlier segment's, so after a power loss the log is a prefix of what
 *     was appended (a write that went out as `buffered` cannot be lost while a later one,
 *     of any durability, survives).
 *  5. Errors are sticky: after a failed write or fsync nothing is acknowledged again (an
 *     fsync failure may have dropped dirty pages; retrying it could falsely succeed, the
 *     PostgreSQL "fsyncgate" lesson). That round's and every later append/sync/close
 *     reject with the same StoreError (STORE_NO_SPACE for ENOSPC/EDQUOT, else STORE_IO),
 *     which `error` exposes.
 *
 * Concurrency: single-threaded (one event loop); append/sync may be called any time
 * without awaiting earlier calls.
 */
import { ioError, StoreError } from '../api/errors.js';
import { crc32c, maskCrc } from '../util/crc32c.js';
import type { FileSystem, WritableFile } from '../fs/fs.js';
import { dirName } from '../fs/fs.js';
import {
  WAL_BLOCK_SIZE,
  WAL_FORMAT_VERSION,
  WAL_HEADER_SIZE,
  WAL_MAGIC,
  WAL_META_PAYLOAD_SIZE,
  WalRecordType,
} from './wal-format.js';

export interface WalWriterOptions {
  /**
   * Longest time, in ms, a buffered (sync=false) append may stay without an fsync. Smaller
   * means less data lost on power failure and more fsyncs under buffered load. 0 syncs on
   * the next timer tick.
   */
  readonly bufferedWindowMs: number;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The records of one write(+sync) round. Deferreds are made only when someone waits. */
class Round {
  needSync = false;
  /** Log size covered once this round's bytes are written. Set when the round starts. */
  endOffset = 0;
  written: Deferred | undefined;
  synced: Deferred | undefined;
}

const INITIAL_BUFFER_BYTES = 64 * 1024;
/** Larger pending buffers are dropped after use instead of being kept for the next round. */
const MAX_SPARE_BUFFER_BYTES = 4 * 1024 * 1024;
const MAX_FRAGMENT = WAL_BLOCK_SIZE - WAL_HEADER_SIZE;

/** Writes one WAL file. Create with WalWriter.open(). */
export class WalWriter {
  private readonly path: string;
  private readonly file: WritableFile;
  private readonly logNum: number;
  private readonly windowMs: number;

  /** Framed bytes not yet handed to a round: buf[0, len). */
  private buf: Uint8Array = new Uint8Array(INITIAL_BUFFER_BYTES);
  private len = 0;
  /** The previous round's buffer, reusable once that round's write resolved. */
  private spare: Uint8Array | undefined;
  /** Logical bytes framed so far (the file offset after the last framed record). */
  private framedBytes = 0;
  /** Logical bytes covered by a successful fsync. */
  private syncedBytes = 0;

  private pending = new Round();
  private running = false;
  /** A microtask will start the rounds (kick). */
  private scheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private err: StoreError | undefined;
  private closing: Promise<void> | undefined;
  /** Resolves when the segment this one follows is durable whole (invariant 4); rounds wait for it. */
  private gate: Promise<void> | undefined;

  private constructor(path: string, file: WritableFile, logNumber: number, windowMs: number) {
    this.path = path;
    this.file = file;
    this.logNum = logNumber;
    this.windowMs = windowMs;
  }

  /**
   * Creates (or truncates) `path`, writes and syncs the META record, and syncs the
   * directory so the new file survives a crash. Rejects with a StoreError on I/O failure,
   * having closed the file.
   */
  static async open(fs: FileSystem, path: string, logNumber: number, opts: WalWriterOptions): Promise<WalWriter> {
    if (!Number.isSafeInteger(logNumber) || logNumber < 0) {
      throw new RangeError(`WalWriter.open: log number must be a non-negative safe integer, got ${logNumber}`);
    }
    const windowMs = opts.bufferedWindowMs;
    if (!Number.isFinite(windowMs) || windowMs < 0) {
      throw new RangeError(`WalWriter.open: bufferedWindowMs must be finite and >= 0, got ${windowMs}`);
    }
    let file: WritableFile;
    try {
      file = await fs.openAppend(path, { truncate: true });
    } catch (err) {
      throw ioError(`wal ${path}: create failed`, err);
    }
    const w = new WalWriter(path, file, logNumber, windowMs);
    w.frame(encodeWalMeta(logNumber), WalRecordType.Meta);
    try {
      await w.sync();
      await fs.syncDir(dirName(path));
    } catch (err) {
      await file.close().catch(() => undefined);
      throw ioError(`wal ${path}: syncing the new file failed`, err);
    }
    return w;
  }

  /** The log number recorded in this file's META record. */
  get logNumber(): number {
    return this.logNum;
  }

  /** Logical bytes framed so far, META and block padding included (= file size once written). */
  get sizeBytes(): number {
    return this.framedBytes;
  }

  /** The sticky error, once a write or fsync has failed. */
  get error(): StoreError | undefined {
    return this.err;
  }

  /**
   * Appends one record. Its position in the log is fixed now, and `payload` is copied
   * before this returns (the caller may reuse it at once). With `sync`, resolves after an
   * fsync covering the record; otherwise once the bytes reached the OS (an fsync follows
   * within bufferedWindowMs). Rejects with the sticky StoreError after any I/O failure and
   * with STORE_CLOSED once close() was called.
   */
  append(payload: Uint8Array, sync: boolean): Promise<void> {
    if (this.err !== undefined) return Promise.reject(this.err);
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    this.frame(payload, -1);
    const r = this.pending;
    this.kick();
    if (sync) {
      r.needSync = true;
      return (r.synced ??= deferred()).promise;
    }
    if (this.timer === undefined) this.armTimer();
    return (r.written ??= deferred()).promise;
  }

  /**
   * Holds this writer's rounds until `earlier` resolves (the previous segment synced and
   * closed: invariant 4); if it rejects, this writer fails with that error.
   */
  follow(earlier: Promise<void>): void {
    const gate = earlier.then(() => {
      if (this.gate === gate) this.gate = undefined;
    });
    gate.catch(() => undefined);
    this.gate = gate;
  }

  /**
   * Resolves when every record appended so far is durable. Rejects like append(), and
   * with STORE_CLOSED after close().
   */
  sync(): Promise<void> {
    if (this.err !== undefined) return Promise.reject(this.err);
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    return this.syncInternal();
  }

  /**
   * Waits for pending rounds, syncs, and closes the file. Idempotent: later calls return
   * the same promise. Rejects with the sticky error when one occurred (the file is closed
   * anyway), so a clean close means every appended record is durable.
   */
  close(): Promise<void> {
    this.closing ??= this.closeInternal();
    return this.closing;
  }

  private async closeInternal(): Promise<void> {
    try {
      if (this.err === undefined) await this.syncInternal();
    } catch {
      // this.err is set; reported below
    } finally {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
      await this.file.close().catch(() => undefined);
    }
    if (this.err !== undefined) throw this.err;
  }

  private syncInternal(): Promise<void> {
    if (this.err !== undefined) return Promise.reject(this.err);
    if (this.syncedBytes >= this.framedBytes) return Promise.resolve();
    const r = this.pending;
    r.needSync = true;
    this.kick();
    return (r.synced ??= deferred()).promise;
  }

  private closedError(): StoreError {
    return new StoreError('STORE_CLOSED', `wal ${this.path}: writer is closed`);
  }

  private armTimer(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.err === undefined && this.syncedBytes < this.framedBytes) {
        this.pending.needSync = true;
        this.kick();
      }
    }, this.windowMs);
    this.timer.unref?.();
  }

  private kick(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    // A microtask, so every append made in the current synchronous run joins the round.
    queueMicrotask(() => {
      this.scheduled = false;
      if (!this.running) this.startRounds();
    });
  }

  /**
   * Starts the round of everything appended so far now, instead of at the end of the
   * current synchronous run, unless a round is in flight: the bytes are written and
   * their fsync issued before this returns, so the caller's next work (filling memstores)
   * overlaps the disk. Records appended later in this run go in the next round.
   */
  startRound(): void {
    if (!this.running && this.err === undefined) this.startRounds();
  }

  private startRounds(): void {
    this.running = true;
    void this.runRounds();
  }

  /**
   * The group-commit loop: one round at a time until nothing is pending. A round hands
   * its bytes to the file and issues the fsync without waiting in between (the file
   * orders them; NodeFileSystem writes at once and starts the fdatasync at once).
   */
  private async runRounds(): Promise<void> {
    let r: Round | undefined;
    let op = 'write';
    try {
      if (this.gate !== undefined) {
        op = 'write (the previous log segment did not close)';
        await this.gate;
        op = 'write';
      }
      while (this.err === undefined && (this.len > 0 || this.pending.needSync)) {
        r = this.pending;
        this.pending = new Round();
        r.endOffset = this.framedBytes;
        const out = this.buf;
        const n = this.len;
        this.buf = this.spare ?? new Uint8Array(INITIAL_BUFFER_BYTES);
        this.spare = undefined;
        this.len = 0;
        const written = n > 0 ? this.file.append(out.subarray(0, n)) : undefined;
        let synced: Promise<void> | undefined;
        if (r.needSync && this.syncedBytes < r.endOffset) {
          synced = this.file.sync();
          // Awaited below unless the write failed first.
          synced.catch(() => undefined);
        }
        if (written !== undefined) {
          op = 'write';
          await written;
        }
        if (out.length <= MAX_SPARE_BUFFER_BYTES) this.spare = out;
        r.written?.resolve();
        if (synced !== undefined) {
          op = 'fsync';
          await synced;
          if (r.endOffset > this.syncedBytes) this.syncedBytes = r.endOffset;
          if (this.syncedBytes >= this.framedBytes && this.timer !== undefined) {
            clearTimeout(this.timer);
            this.timer = undefined;
          }
        }
        r.synced?.resolve();
        r = undefined;
      }
    } catch (err) {
      this.fail(op, err, r);
    } finally {
      this.running = false;
    }
  }

  private fail(op: string, cause: unknown, r: Round | undefined): void {
    const err = ioError(`wal ${this.path}: ${op} failed`, cause);
    this.err = err;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const round of [r, this.pending]) {
      // Rejecting an already resolved deferred is a no-op.
      round?.written?.reject(err);
      round?.synced?.reject(err);
    }
    this.pending = new Round();
    this.len = 0;
  }

  /**
   * Frames `payload` into the pending buffer: FULL, or FIRST/MIDDLE.../LAST when it does
   * not fit the current block; `metaType` >= 0 forces that type (META, single fragment).
   */
  private frame(payload: Uint8Array, metaType: number): void {
    let left = payload.length;
    // Upper bound: data + a header and up to 6 padding bytes per fragment.
    this.ensure(left + (Math.floor(left / MAX_FRAGMENT) + 2) * (WAL_HEADER_SIZE + 6));
    const buf = this.buf;
    let pos = this.len;
    let blockOffset = this.framedBytes % WAL_BLOCK_SIZE;
    let p = 0;
    let begin = true;
    do {
      const leftover = WAL_BLOCK_SIZE - blockOffset;
      if (leftover < WAL_HEADER_SIZE) {
        // Too small for a header: zero-fill (the buffer is reused, so write the zeros).
        for (let i = 0; i < leftover; i++) buf[pos + i] = 0;
        pos += leftover;
        blockOffset = 0;
      }
      const avail = WAL_BLOCK_SIZE - blockOffset - WAL_HEADER_SIZE;
      const n = left < avail ? left : avail;
      const end = n === left;
      const type =
        metaType >= 0 ? metaType
        : begin ? (end ? WalRecordType.Full : WalRecordType.First)
        : end ? WalRecordType.Last : WalRecordType.Middle;
      const d = pos + WAL_HEADER_SIZE;
      buf[pos + 4] = n >>> 8;
      buf[pos + 5] = n & 0xff;
      buf[pos + 6] = type;
      if (n < 64) {
        for (let i = 0; i < n; i++) buf[d + i] = payload[p + i]!;
      } else if (p === 0 && n === payload.length) {
        buf.set(payload, d);
      } else {
        buf.set(payload.subarray(p, p + n), d);
      }
      const crc = maskCrc(crc32c(buf, pos + 6, d + n));
      buf[pos] = crc >>> 24;
      buf[pos + 1] = crc >>> 16;
      buf[pos + 2] = crc >>> 8;
      buf[pos + 3] = crc;
      pos = d + n;
      blockOffset += WAL_HEADER_SIZE + n;
      p += n;
      left -= n;
      begin = false;
    } while (left > 0);
    this.framedBytes += pos - this.len;
    this.len = pos;
  }

  private ensure(n: number): void {
    const need = this.len + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}

/** The META payload: magic, format version, log number (see wal-format.ts). */
export function encodeWalMeta(logNumber: number, formatVersion: number = WAL_FORMAT_VERSION): Uint8Array {
  const out = new Uint8Array(WAL_META_PAYLOAD_SIZE);
  out.set(WAL_MAGIC, 0);
  const dv = new DataView(out.buffer);
  dv.setUint32(8, formatVersion);
  dv.setUint32(12, Math.floor(logNumber / 0x100000000));
  dv.setUint32(16, logNumber >>> 0);
  return out;
}
