/**
 * The version set (leveldb's VersionSet): which tables, regions and files are live, the
 * edits that change them (a flush or compaction installed, files dropped, a table created
 * or dropped, range tombstones recorded and pruned), the manifest that records them, and
 * the deletion of files nothing uses any more.
 *
 * Owns: tables and their regions' file lists and flushedSeq, the metadata of every live
 * file, file/table/region numbering, reader pins, the outputs of running jobs, the chain
 * of manifest writes and the regions of the last one on disk.
 *
 * A file leaves in three steps: no live region uses it (obsolete), a manifest without it
 * is on disk, and no reader pins it; then it is deleted (deleteObsoleteFiles).
 */
import type { TableSpec } from '../api/store.js';
import { StoreError } from '../api/errors.js';
import { compareBytes } from '../api/bytes.js';
import type { FileSystem } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import type { LruCache } from '../cache/lru-cache.js';
import type { Background } from './background.js';
import type { FileMeta } from './file-meta.js';
import { sstName } from './filenames.js';
import type { ManifestState, RegionMeta, TableMeta } from './manifest.js';
import { writeManifest } from './manifest.js';
import { fileMeets, rangesMeet } from './range-deletes.js';
import type { RangeDelete } from './range-deletes.js';
import type { ReaderPool } from './reader-pool.js';
import { Region, TableState } from './region.js';

export interface VersionSetDeps {
  readonly fs: FileSystem;
  readonly dir: string;
  readonly readers: ReaderPool;
  readonly blockCache: LruCache<unknown>;
  readonly background: Background;
  /** The last sequence number assigned (recorded as a lower bound of the next). */
  readonly lastSeq: () => number;
  /** A manifest write failed: the state in memory can no longer be recorded. */
  readonly onManifestError: (err: unknown) => void;
}

export class VersionSet {
  readonly tables = new Map<string, TableState>();
  readonly tablesById = new Map<number, TableState>();
  /** Set at a graceful close once the WAL is synced and closed (see ManifestState.cleanLog). */
  cleanLog: number | undefined;
  private readonly deps: VersionSetDeps;
  private nextFileNumber = 1;
  private nextTableId = 1;
  private nextRegionId = 1;
  /** File metadata of every file some region uses. */
  private readonly files = new Map<number, FileMeta>();
  /** Files no region uses any more, deleted once unpinned and out of the manifest. */
  private readonly obsolete = new Set<number>();
  /** Outputs of running jobs (never deleted as strays). */
  private readonly pendingOutputs = new Set<number>();
  /** Reader pins per file number (0 once unpinned, until the file is deleted). */
  private readonly pins = new Map<number, number>();
  private manifestChain: Promise<void> = Promise.resolve();
  private manifestQueued: Promise<void> | undefined;
  /** The regions of the last manifest written to disk (what recovery would start from). */
  private durable: readonly RegionMeta[] = [];

  constructor(deps: VersionSetDeps) {
    this.deps = deps;
  }

  /** Recovery: the tables, regions and files of the manifest; returns the largest seq they hold. */
  load(state: ManifestState, nowMs: number): number {
    const { dir } = this.deps;
    this.nextFileNumber = state.nextFileNumber;
    this.nextTableId = state.nextTableId;
    this.nextRegionId = state.nextRegionId;
    let lastSeq = state.lastSeq;
    for (const f of state.files) {
      this.files.set(f.number, f);
      if (f.maxSeq > lastSeq) lastSeq = f.maxSeq;
    }
    for (const t of state.tables) {
      const ts = new TableState(t.id, {
        name: t.name, families: t.families,
        ...(t.splitPoints !== undefined ? { splitPoints: t.splitPoints.map((p) => new Uint8Array(p)) } : {}),
        ...(t.ttlMs !== undefined ? { ttlMs: t.ttlMs } : {}),
      });
      this.tables.set(t.name, ts);
      this.tablesById.set(t.id, ts);
      if (t.rangeDeletes !== undefined) ts.rangeDeletes = t.rangeDeletes.map((d) => ({ ...d, cleared: [...d.cleared] }));
      if (t.transformFrom !== undefined) ts.transformFrom = t.transformFrom;
    }
    for (const r of state.regions) {
      const t = this.tablesById.get(r.tableId);
      if (t === undefined) throw new StoreError('STORE_CORRUPTION', `manifest ${dir}: region ${r.id} names unknown table ${r.tableId}`);
      const files = r.files.map((n) => {
        const f = this.files.get(n);
        if (f === undefined) throw new StoreError('STORE_CORRUPTION', `manifest ${dir}: region ${r.id} names unknown file ${n}`);
        return f;
      });
      t.regions.push(new Region(r.id, t, r.start, r.end, files, r.flushedSeq, nowMs));
    }
    for (const t of this.tables.values()) t.regions.sort((a, b) => compareBytes(a.start, b.start));
    return lastSeq;
  }

  /** Numbers of the files the manifest names. */
  liveFileNumbers(): Iterable<number> {
    return this.files.keys();
  }

  isLiveFile(n: number): boolean {
    return this.files.has(n);
  }

  /** A file number seen on disk (a crashed process may have used numbers never recorded). */
  noteFileNumber(n: number): void {
    if (n >= this.nextFileNumber) this.nextFileNumber = n + 1;
  }

  newFileNumber(): number {
    return this.nextFileNumber++;
  }

  /** The number the next file gets (nothing allocated). */
  peekFileNumber(): number {
    return this.nextFileNumber;
  }

  /** A number for a job's output, kept from deletion as a stray until `outputDone`. */
  newOutput(): number {
    const n = this.nextFileNumber++;
    this.pendingOutputs.add(n);
    return n;
  }

  outputDone(n: number): void {
    this.pendingOutputs.delete(n);
  }

  // ---------------------------------------------------------------------------------
  // Edits

  addTable(spec: TableSpec, flushedSeq: number, nowMs: number): TableState {
    const id = this.nextTableId++;
    const splits = [...(spec.splitPoints ?? [])].map((s) => s.slice()).sort(compareBytes);
    const t = new TableState(id, {
      name: spec.name,
      families: spec.families.map((f) => ({
        name: f.name,
        ...(f.maxVersions !== undefined ? { maxVersions: f.maxVersions } : {}),
        ...(f.ttlMs !== undefined ? { ttlMs: f.ttlMs } : {}),
        ...(f.transform !== undefined ? { transform: f.transform } : {}),
      })),
      ...(splits.length > 0 ? { splitPoints: splits } : {}),
      ...(spec.ttlMs !== undefined ? { ttlMs: spec.ttlMs } : {}),
    });
    const bounds = [new Uint8Array(0), ...splits, new Uint8Array(0)];
    for (let i = 0; i + 1 < bounds.length; i++) {
      t.regions.push(new Region(this.nextRegionId++, t, bounds[i]!, bounds[i + 1]!, [], flushedSeq, nowMs));
    }
    this.tables.set(spec.name, t);
    this.tablesById.set(id, t);
    return t;
  }

  removeTable(t: TableState): void {
    t.dropped = true;
    this.tables.delete(t.name);
    this.tablesById.delete(t.id);
    for (const r of t.regions) {
      r.retired = true;
      for (const f of r.files) this.unrefFile(f.number);
    }
  }

  /** Replaces r by [start, key) and [key, end), sharing its files. */
  splitRegion(r: Region, key: Uint8Array, nowMs: number): [Region, Region] {
    const t = r.table;
    const left = new Region(this.nextRegionId++, t, r.start, key, r.files.slice(), r.flushedSeq, nowMs);
    const right = new Region(this.nextRegionId++, t, key, r.end, r.files.slice(), r.flushedSeq, nowMs);
    t.regions.splice(t.regions.indexOf(r), 1, left, right);
    r.retired = true;
    return [left, right];
  }

  /** A flush installed: its file (if any) is the region's newest; entries to maxSeq are in files. */
  installFlush(r: Region, meta: FileMeta | undefined, maxSeq: number): void {
    if (meta !== undefined) {
      this.files.set(meta.number, meta);
      r.files.unshift(meta);
    }
    if (maxSeq > r.flushedSeq) r.flushedSeq = maxSeq;
  }

  /** A flush job's file, known before it is installed (the other holders of a shared memstore may install it). */
  addFile(meta: FileMeta): void {
    this.files.set(meta.number, meta);
  }

  /** Whether another region's flush output is still live (not compacted away meanwhile). */
  isInstalled(meta: FileMeta): boolean {
    return this.files.get(meta.number) === meta && !this.obsolete.has(meta.number);
  }

  /** A compaction installed: its output takes the inputs' place (contiguous; newer flushes may precede them). */
  installCompaction(r: Region, inputs: readonly FileMeta[], meta: FileMeta | undefined): void {
    const inputSet = new Set(inputs.map((f) => f.number));
    const at = r.files.findIndex((f) => inputSet.has(f.number));
    const kept = r.files.filter((f) => !inputSet.has(f.number));
    if (meta !== undefined) {
      this.files.set(meta.number, meta);
      kept.splice(at < 0 ? kept.length : at, 0, meta);
    }
    r.files = kept;
    for (const f of inputs) this.unrefFile(f.number);
  }

  /** A job output nobody will install (its region split or was dropped). */
  discardOutput(meta: FileMeta): void {
    this.obsolete.add(meta.number);
  }

  /** Drops whole files from a region (expired or deleted; nothing rewritten). */
  removeFiles(r: Region, gone: readonly FileMeta[]): void {
    r.files = r.files.filter((f) => !gone.includes(f));
    for (const f of gone) this.unrefFile(f.number);
  }

  /** Marks a file obsolete when no live region uses it any more. */
  private unrefFile(n: number): void {
    for (const t of this.tables.values()) {
      for (const r of t.regions) {
        if (r.retired) continue;
        for (const f of r.files) if (f.number === n) return;
      }
    }
    this.obsolete.add(n);
  }

  /**
   * Removes the tombstones no region can hold an entry of any more (range-deletes.ts);
   * true when one was removed (the caller saves the manifest). `flushing`: the region has
   * a flush in flight.
   */
  pruneRangeDeletes(t: TableState, flushing: (r: Region) => boolean): boolean {
    const before = t.rangeDeletes.length;
    // A region with nothing in its memstores holds every entry in files (a crash replays
    // only entries past its flushedSeq, which would be in its memstores).
    const unflushed = (r: Region, d: RangeDelete): boolean =>
      r.flushedSeq < d.seq && (!r.active.empty || r.immutables.length > 0 || flushing(r));
    t.rangeDeletes = t.rangeDeletes.filter((d) => t.regions.some((r) => rangesMeet(r.start, r.end, d.start, d.end) &&
      !d.cleared.includes(r.id) && (unflushed(r, d) || r.files.some((f) => fileMeets(f, d) && f.minSeq <= d.seq))));
    return t.rangeDeletes.length < before;
  }

  // ---------------------------------------------------------------------------------
  // Queries

  allRegions(): Region[] {
    const out: Region[] = [];
    for (const t of this.tables.values()) for (const r of t.regions) out.push(r);
    return out;
  }

  /** The regions of the last manifest on disk (what recovery would start from). */
  get durableRegions(): readonly RegionMeta[] {
    return this.durable;
  }

  regionSizeBytes(r: Region): number {
    let n = r.memstoreBytes();
    for (const f of r.files) n += f.sizeBytes / this.fileShare(f.number);
    return n;
  }

  /** How many live regions use the file. */
  private fileShare(n: number): number {
    let c = 0;
    for (const t of this.tables.values()) for (const r of t.regions) if (!r.retired && r.files.some((f) => f.number === n)) c++;
    return Math.max(1, c);
  }

  fileCount(): number {
    return this.files.size;
  }

  fileBytes(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.sizeBytes;
    return n;
  }

  // ---------------------------------------------------------------------------------
  // Manifest and file lifecycle

  private snapshot(): ManifestState {
    const tables: TableMeta[] = [];
    const regions: RegionMeta[] = [];
    const used = new Set<number>();
    for (const t of this.tables.values()) {
      tables.push({
        id: t.id, name: t.name, families: t.spec.families,
        ...(t.spec.splitPoints !== undefined ? { splitPoints: t.spec.splitPoints } : {}),
        ...(t.spec.ttlMs !== undefined ? { ttlMs: t.spec.ttlMs } : {}),
        ...(t.rangeDeletes.length > 0 ? { rangeDeletes: t.rangeDeletes.map((d) => ({ ...d, cleared: [...d.cleared] })) } : {}),
        ...(t.transformFrom !== undefined ? { transformFrom: t.transformFrom } : {}),
      });
      for (const r of t.regions) {
        regions.push({ id: r.id, tableId: t.id, start: r.start, end: r.end, flushedSeq: r.flushedSeq, files: r.files.map((f) => f.number) });
        for (const f of r.files) used.add(f.number);
      }
    }
    const files = [...used].map((n) => this.files.get(n)!);
    return {
      nextFileNumber: this.nextFileNumber, nextTableId: this.nextTableId, nextRegionId: this.nextRegionId,
      lastSeq: this.deps.lastSeq(), tables, regions, files,
      ...(this.cleanLog !== undefined ? { cleanLog: this.cleanLog } : {}),
    };
  }

  /**
   * Writes the current state. Calls made while a write is queued share it; a call returns
   * after a write that started after the call finished. Then deletes obsolete files.
   */
  saveManifest(): Promise<void> {
    if (this.manifestQueued !== undefined) return this.manifestQueued;
    const p = this.manifestChain.then(async () => {
      this.manifestQueued = undefined;
      const state = this.snapshot();
      await writeManifest(this.deps.fs, this.deps.dir, state);
      this.durable = state.regions;
      await this.deleteObsoleteFiles(state);
    });
    this.manifestQueued = p;
    this.manifestChain = p.catch((err: unknown) => {
      // The manifest on disk is still the previous one (atomic rename) and the WAL still
      // holds everything not in its files, but the state in memory can no longer be
      // recorded: stop writes until the store is reopened.
      this.deps.background.noteError(err);
      this.deps.onManifestError(err);
    });
    return p;
  }

  /** Resolves when no manifest write is running or queued (failed ones included). */
  settled(): Promise<void> {
    return this.manifestChain;
  }

  pin(n: number): void {
    this.pins.set(n, (this.pins.get(n) ?? 0) + 1);
  }

  unpin(n: number): void {
    // A count that reaches 0 stays (every read pins and unpins its files: deleting and
    // re-adding the entry each time churns the map); deleteObsoleteFiles drops it.
    const c = (this.pins.get(n) ?? 0) - 1;
    this.pins.set(n, Math.max(0, c));
    if (c <= 0 && this.obsolete.has(n)) this.deps.background.track(this.saveManifest());
  }

  private async deleteObsoleteFiles(written: ManifestState): Promise<void> {
    const { fs, dir, readers, blockCache, background } = this.deps;
    const live = new Set(written.files.map((f) => f.number));
    for (const n of [...this.obsolete]) {
      if (live.has(n) || (this.pins.get(n) ?? 0) > 0 || this.pendingOutputs.has(n)) continue;
      this.obsolete.delete(n);
      this.pins.delete(n);
      this.files.delete(n);
      readers.evict(n);
      blockCache.evictFile(n);
      await fs.remove(joinPath(dir, sstName(n))).catch((err: unknown) => background.noteError(err));
    }
  }
}
