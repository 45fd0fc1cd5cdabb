/**
 * Every file name in a store directory, built and parsed in one place.
 *   MANIFEST            the live manifest (manifest.ts)
 *   MANIFEST.tmp        a manifest being written; removed or renamed over MANIFEST
 *   NNNNNN.log          a WAL file, NNNNNN = log number (6+ decimal digits)
 *   NNNNNN.sst          an SST file, NNNNNN = file number
 *   NNNNNN.sst.tmp      an SST being written by a flush or compaction
 *   LOCK                the process lock
 */
export const MANIFEST_NAME = 'MANIFEST';
export const MANIFEST_TMP_NAME = 'MANIFEST.tmp';
export const LOCK_NAME = 'LOCK';

export function walName(n: number): string {
  return `${String(n).padStart(6, '0')}.log`;
}

export function sstName(n: number): string {
  return `${String(n).padStart(6, '0')}.sst`;
}

export type ParsedName =
  | { readonly type: 'wal'; readonly number: number }
  | { readonly type: 'sst'; readonly number: number }
  | { readonly type: 'tmp' }
  | { readonly type: 'manifest' }
  | { readonly type: 'lock' }
  | { readonly type: 'other' };

export function parseName(name: string): ParsedName {
  if (name === MANIFEST_NAME) return { type: 'manifest' };
  if (name === LOCK_NAME) return { type: 'lock' };
  if (name.endsWith('.tmp')) return { type: 'tmp' };
  const m = /^(\d{6,})\.(log|sst)$/.exec(name);
  if (m === null) return { type: 'other' };
  return { type: m[2] === 'log' ? 'wal' : 'sst', number: Number(m[1]) };
}
