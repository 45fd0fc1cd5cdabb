/** Helpers of the WAL tests (wal.test.ts: round trips, group commit, crash safety; wal-faults.test.ts: torn tails, corruption, sticky errors). */
import { equalBytes } from '../../core/api/bytes.js';
import type { WritableFile } from '../../core/fs/fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { crc32c, maskCrc } from '../../core/util/crc32c.js';
import { WAL_BLOCK_SIZE, WAL_HEADER_SIZE } from '../../core/wal/wal-format.js';
import { WalWriter } from '../../core/wal/wal-writer.js';

export const PATH = '/w/000001.log';
export const BLOCK = WAL_BLOCK_SIZE;
export const H = WAL_HEADER_SIZE;

/** Deterministic payload `i` of `len` bytes; the first 4 bytes carry i. */
export function payload(i: number, len: number): Uint8Array {
  const p = new Uint8Array(len);
  for (let j = 0; j < len; j++) p[j] = (i * 131 + j * 7) & 0xff;
  for (let j = 0; j < 4 && j < len; j++) p[j] = (i >>> (8 * j)) & 0xff;
  return p;
}

export async function memFs(): Promise<MemFileSystem> {
  const fs = new MemFileSystem();
  await fs.mkdir('/w');
  return fs;
}

export async function writeAll(fs: MemFileSystem, payloads: readonly Uint8Array[], logNumber = 1): Promise<WalWriter> {
  const w = await WalWriter.open(fs, PATH, logNumber, { bufferedWindowMs: 5 });
  for (const p of payloads) await w.append(p, false);
  await w.close();
  return w;
}

/** Indexes where `got` differs from `want` (empty when equal). */
export function mismatches(got: readonly Uint8Array[], want: readonly Uint8Array[]): number[] {
  const bad: number[] = [];
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    const g = got[i];
    const w = want[i];
    if (g === undefined || w === undefined || !equalBytes(g, w)) bad.push(i);
  }
  return bad;
}

/** An independent framing of one physical record, to cross-check the writer. */
export function physical(type: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(H + data.length);
  out[4] = data.length >> 8;
  out[5] = data.length & 0xff;
  out[6] = type;
  out.set(data, H);
  new DataView(out.buffer).setUint32(0, maskCrc(crc32c(out, 6)));
  return out;
}

/** Offsets of every physical record header in a well-formed file. */
export function headerOffsets(file: Uint8Array): number[] {
  const out: number[] = [];
  for (let pos = 0; pos < file.length; ) {
    if (BLOCK - (pos % BLOCK) < H) {
      pos += BLOCK - (pos % BLOCK);
      continue;
    }
    out.push(pos);
    pos += H + ((file[pos + 4]! << 8) | file[pos + 5]!);
  }
  return out;
}

/** Where the header of a record framed at logical offset `s` really starts (after any block trailer). */
export function headerStart(s: number): number {
  return BLOCK - (s % BLOCK) < H ? s + (BLOCK - (s % BLOCK)) : s;
}

export async function putFile(fs: MemFileSystem, path: string, bytes: Uint8Array): Promise<void> {
  const f = await fs.openAppend(path, { truncate: true });
  await f.append(bytes);
  await f.sync();
  await f.close();
}

/** MemFileSystem whose syncs can be held back by a gate and made to fail. */
export class ControlledFs extends MemFileSystem {
  syncGate: Promise<void> | undefined;
  failSyncWith: string | undefined;
  syncs = 0;
  appends = 0;

  override async openAppend(path: string, opts?: { readonly truncate?: boolean }): Promise<WritableFile> {
    const f = await super.openAppend(path, opts);
    const self = this;
    return {
      path: f.path,
      get size() {
        return f.size;
      },
      async append(d: Uint8Array) {
        self.appends++;
        return f.append(d);
      },
      async sync() {
        self.syncs++;
        if (self.syncGate !== undefined) await self.syncGate;
        if (self.failSyncWith !== undefined) {
          throw Object.assign(new Error(`${self.failSyncWith}: injected`), { code: self.failSyncWith, syscall: 'fdatasync' });
        }
        return f.sync();
      },
      close: () => f.close(),
    };
  }
}

export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
