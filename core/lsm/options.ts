/**
 * Options of the embedded engine. Every field has a default in DEFAULT_ENGINE_OPTIONS; the
 * comments give the unit and the trade-off.
 */
import type { FileSystem } from '../fs/fs.js';
import type { Compression } from './sst-options.js';

export interface EngineOptions {
  /** Directory holding the store's files (created if missing). */
  readonly dir: string;
  /** File system; default the real one (NodeFileSystem). */
  readonly fs?: FileSystem;
  /** Clock for server timestamps and TTL, ms since the epoch. Default Date.now. */
  readonly clock?: () => number;

  /** A region's active memstore is flushed when it reaches this size. Default 32 MiB.
   * Larger: fewer, bigger files and less compaction; longer recovery replay. */
  readonly memstoreFlushBytes?: number;
  /** When all memstores together pass this, the largest is flushed. Default 256 MiB. */
  readonly memstoreTotalBytes?: number;
  /** Writers wait while all memstores together exceed this (flushes fell behind).
   * Default 2 x memstoreTotalBytes. Bounds memory; never drops a write. */
  readonly memstoreStallBytes?: number;
  /** A memstore older than this is flushed, so old WAL files can go. Default 1 h. */
  readonly memstoreMaxAgeMs?: number;
  /**
   * A region's memstore that took no write for this long is flushed (checked every
   * `maintenanceIntervalMs`), so a store left alone after a load reaches its compact state
   * (every cell in files, the WAL gone) by itself. 0 turns it off. Default 30 s.
   */
  readonly memstoreIdleFlushMs?: number;

  /** The WAL rolls to a new file past this size. Default 64 MiB. */
  readonly walFileBytes?: number;
  /** Past this many WAL files, the region holding the oldest is flushed. Default 8. */
  readonly maxWalFiles?: number;
  /** Upper bound before a 'buffered' write is fsynced. Default 100 ms. */
  readonly bufferedWindowMs?: number;

  /** Uncompressed data block size target. Default 16 KiB. Smaller: faster point reads,
   * bigger index; larger: better compression and scans. */
  readonly blockSizeBytes?: number;
  /** Keys between restart points in a block. Default 16. */
  readonly restartInterval?: number;
  /** Block compression. Default 'lz4'. */
  readonly compression?: Compression;
  /** Bloom filter bits per row key; 0 disables it. Default 10 (about 1% false positives). */
  readonly bloomBitsPerKey?: number;
  /** Block cache capacity. Default 256 MiB. */
  readonly blockCacheBytes?: number;
  /** SST readers kept open. Default 500. */
  readonly maxOpenFiles?: number;
  /** Verify block checksums on every read. Default true. */
  readonly verifyChecksums?: boolean;
  /** Fail open on a corrupt WAL record in the middle of a log (default false: skip the
   * damaged block, report the dropped bytes in stats, and go on). */
  readonly paranoidChecks?: boolean;

  /** A minor compaction starts when a region has this many files. Default 4. */
  readonly compactionMinFiles?: number;
  /** At most this many files in one minor compaction. Default 10. */
  readonly compactionMaxFiles?: number;
  /** Files of a region are all merged (major) at this interval. Default 24 h; 0 = never
   * by time (tombstone-heavy regions and explicit compact() still do). */
  readonly majorCompactionIntervalMs?: number;
  /** A region whose files are this fraction delete markers gets a major compaction. Default 0.2. */
  readonly tombstoneCompactionRatio?: number;

  /**
   * Files written before a family's row transform was named (Store.setFamilyTransform) are
   * rewritten through it in the background, one compaction at a time, at most this many
   * input bytes a second on average. Default 8 MiB/s; 0: only as compactions pick them.
   */
  readonly transformMigrationBytesPerSec?: number;

  /** Regions split in two past this size. Default 1 GiB. */
  readonly regionSplitBytes?: number;
  /** Split regions automatically. Default true. */
  readonly autoSplit?: boolean;

  /** Worker threads for flushes and compactions; 0 runs them on the main thread. Default 1
   * with the real file system, 0 with any other (workers cannot see an in-memory one). */
  readonly backgroundThreads?: number;
  /** Flush memstores on close (faster next open). Default true. */
  readonly flushOnClose?: boolean;
  /** Period of the maintenance pass (aged memstores, due major compactions). Default 10 s. */
  readonly maintenanceIntervalMs?: number;
  /** Largest row key and value accepted. Defaults 4 KiB and 16 MiB. */
  readonly maxKeyBytes?: number;
  readonly maxValueBytes?: number;
}

export type ResolvedEngineOptions = Required<Omit<EngineOptions, 'fs' | 'clock'>> & {
  readonly fs: FileSystem;
  readonly clock: () => number;
};

export const DEFAULT_ENGINE_OPTIONS = {
  memstoreFlushBytes: 32 << 20,
  memstoreTotalBytes: 256 << 20,
  memstoreMaxAgeMs: 3_600_000,
  memstoreIdleFlushMs: 30_000,
  walFileBytes: 64 << 20,
  maxWalFiles: 8,
  bufferedWindowMs: 100,
  blockSizeBytes: 16 << 10,
  restartInterval: 16,
  compression: 'lz4' as Compression,
  bloomBitsPerKey: 10,
  blockCacheBytes: 256 << 20,
  maxOpenFiles: 500,
  verifyChecksums: true,
  paranoidChecks: false,
  compactionMinFiles: 4,
  compactionMaxFiles: 10,
  majorCompactionIntervalMs: 86_400_000,
  tombstoneCompactionRatio: 0.2,
  transformMigrationBytesPerSec: 8 << 20,
  regionSplitBytes: 1 << 30,
  autoSplit: true,
  flushOnClose: true,
  maintenanceIntervalMs: 10_000,
  maxKeyBytes: 4096,
  maxValueBytes: 16 << 20,
} as const;
