/**
 * The SST settings the engine passes to flushes and compactions (plain data, so it can
 * cross to a worker thread), and the engine's comparator and bloom key for SSTs.
 */
import { compareInternalKeyRange, compareInternalKeys, rowOf } from './internal-key.js';

export type Compression = 'none' | 'lz4' | 'deflate';

export interface SstSettings {
  readonly blockSizeBytes: number;
  readonly restartInterval: number;
  readonly compression: Compression;
  readonly bloomBitsPerKey: number;
}

export const compare = compareInternalKeys;
/** `compare` in place (SstReaderOptions.compareRange): same results, no key views. */
export const compareRange = compareInternalKeyRange;
/** The bloom filter is on row keys, so gets of a row skip files without it. */
export const bloomKey = rowOf;
