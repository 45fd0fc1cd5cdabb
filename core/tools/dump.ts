/**
 * Human-readable dumps of the files in a store directory, for the dump CLI (dump-cli.ts),
 * golden tests and debugging: WAL files record by record with every write-batch entry's
 * internal key parsed, SSTs through core/sst/dump.ts with parsed keys, and the MANIFEST
 * header plus its decoded state. Formats: core/FORMAT.md ("WAL", "Write batch", "SST",
 * "Manifest", "Internal key").
 *
 * The dumpXxx functions read through a FileSystem and never throw for a damaged file:
 * they print what they can, mark each problem inline with a line starting "!!", and
 * return the problems (the StoreError messages, which name file and offset) in `errors`.
 * They throw only for programmer errors. The formatXxx functions are pure. Output has no
 * wall-clock times or other nondeterminism, so it can be snapshotted.
 */
import { isStoreError } from '../api/errors.js';
import { toHex } from '../api/bytes.js';
import type { FileSystem, RandomAccessFile } from '../fs/fs.js';
import { joinPath } from '../fs/fs.js';
import { parseName } from '../lsm/filenames.js';
import { KeyKind, MAX_TS, TRAILER_BYTES, parseInternalKey } from '../lsm/internal-key.js';
import { MANIFEST_MAGIC, decodeManifest } from '../lsm/manifest.js';
import type { ManifestState } from '../lsm/manifest.js';
import { bloomKey, compare } from '../lsm/sst-options.js';
import { decodeBatch } from '../lsm/write-batch.js';
import { dumpSst } from '../sst/dump.js';
import { SstReader } from '../sst/sst-reader.js';
import { unmaskCrc } from '../util/crc32c.js';
import { manifestCrc } from '../lsm/manifest.js';
import { WalReader } from '../wal/wal-reader.js';
import { WAL_HEADER_SIZE, WAL_MAGIC, WAL_META_RECORD_SIZE, WalRecordType } from '../wal/wal-format.js';

/** What a dump printed and the problems it found (empty when the file is sound). */
export interface DumpResult {
  /** The dump, one fact per line, ending in "\n". */
  readonly text: string;
  /** One message per problem; StoreError messages name the file and the offset. */
  readonly errors: readonly string[];
}

export interface DumpFileOptions {
  /** Stop listing entries (WAL batch entries, SST data entries) after this many. */
  readonly maxEntries?: number;
  /** Value bytes shown in hex before truncating. Default 32. */
  readonly maxValueBytes?: number;
}

/** Kinds of file in a store directory ('tmp': MANIFEST.tmp or NNNNNN.sst.tmp). */
export type StoreFileType = 'wal' | 'sst' | 'manifest' | 'lock' | 'tmp' | 'unknown';

const DEFAULT_VALUE_BYTES = 32;
/** Row and qualifier bytes shown before truncating. */
const MAX_KEY_PART_BYTES = 64;
/** Bytes of a file read to recognize it by magic: the WAL META header + magic. */
const SNIFF_HEAD_BYTES = WAL_HEADER_SIZE + WAL_MAGIC.length;
const SST_MAGIC_BYTES = new Uint8Array([0x48, 0x4f, 0x52, 0x41, 0x45, 0x53, 0x53, 0x54]); // "HORAESST"
/** Largest |ms| a JavaScript Date accepts. */
const MAX_DATE_MS = 8.64e15;

// -------------------------------------------------------------------------------------
// Pure formatting

/** The name of an internal-key kind byte, e.g. "Put", "DeleteRow", or "unknown(9)". */
export function kindName(kind: number): string {
  for (const [name, value] of Object.entries(KeyKind)) if (value === kind) return name;
  return `unknown(${kind})`;
}

function isPrintable(b: number): boolean {
  return b >= 0x20 && b < 0x7f;
}

/** Bytes as a quoted string: printable ASCII as is, `"` and `\` escaped, other bytes as \xNN. */
function quoted(b: Uint8Array): string {
  let s = '"';
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x22 || c === 0x5c) s += `\\${String.fromCharCode(c)}`;
    else if (isPrintable(c)) s += String.fromCharCode(c);
    else s += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return `${s}"`;
}

/**
 * Bytes as hex, followed by the quoted text when any byte is printable ASCII (bytes that
 * are not appear as \xNN): `6b31 "k1"`, `00ff`, `(empty)`. Longer than `maxBytes`: the
 * first maxBytes, then "…(N bytes)".
 */
export function formatBytes(b: Uint8Array, maxBytes = MAX_KEY_PART_BYTES): string {
  if (b.length === 0) return '(empty)';
  const shown = b.length > maxBytes ? b.subarray(0, maxBytes) : b;
  const more = b.length > maxBytes ? `…(${b.length} bytes)` : '';
  const text = shown.some(isPrintable) ? ` ${quoted(shown)}${more === '' ? '' : '…'}` : '';
  return `${toHex(shown)}${more}${text}`;
}

/** A cell value: hex (truncated after maxBytes) and its text when all of it is printable. */
export function formatValue(v: Uint8Array, maxBytes = DEFAULT_VALUE_BYTES): string {
  if (v.length === 0) return '(empty)';
  const shown = v.length > maxBytes ? v.subarray(0, maxBytes) : v;
  const hex = v.length > maxBytes ? `${toHex(shown)}…(${v.length} bytes)` : toHex(v);
  return v.length <= maxBytes && v.every(isPrintable) ? `${hex} ${quoted(v)}` : hex;
}

/** Milliseconds with their UTC ISO form: `1700000000000 (2023-11-14T22:13:20.000Z)`. */
export function formatTimestamp(ms: number): string {
  if (ms === MAX_TS) return `${ms} (max)`;
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) > MAX_DATE_MS) return `${ms} (out of Date range)`;
  return `${ms} (${new Date(ms).toISOString()})`;
}

/** Why `key` is not a well-formed internal key, or undefined when it is. */
function internalKeyProblem(key: Uint8Array): string | undefined {
  if (key.length < 3 + TRAILER_BYTES) return `${key.length} bytes, shorter than the smallest key`;
  const rowLen = (key[0]! << 8) | key[1]!;
  const famAt = 2 + rowLen;
  if (famAt + 1 + TRAILER_BYTES > key.length) return `row length ${rowLen} runs past the key (${key.length} bytes)`;
  const famLen = key[famAt]!;
  if (famAt + 1 + famLen + TRAILER_BYTES > key.length) return `family length ${famLen} runs past the key (${key.length} bytes)`;
  return undefined;
}

/**
 * An internal key parsed into its parts:
 * `row=6b31 "k1" family=f qualifier=71 "q" ts=1000 (1970-01-01T00:00:01.000Z) seq=7 Put`.
 * A malformed key prints as `!! malformed internal key (why): <hex>`.
 */
export function formatInternalKey(key: Uint8Array): string {
  const problem = internalKeyProblem(key);
  if (problem !== undefined) return `!! malformed internal key (${problem}): ${toHex(key)}`;
  const k = parseInternalKey(key);
  const family = k.family === '' ? '(none)' : k.family;
  return `row=${formatBytes(k.row)} family=${family} qualifier=${formatBytes(k.qualifier)} ts=${formatTimestamp(k.timestamp)} seq=${k.seq} ${kindName(k.kind)}`;
}

/** One write batch (a WAL record payload): header line, then one line per entry. */
export function formatBatch(payload: Uint8Array, where: string, opts: DumpFileOptions = {}): { lines: string[]; entries: number; error?: string } {
  let batch;
  try {
    batch = decodeBatch(payload, where);
  } catch (err) {
    return { lines: [`  !! ${messageOf(err)}`], entries: 0, error: messageOf(err) };
  }
  const lines = [`  batch table ${batch.tableId}, ${batch.keys.length} entries`];
  const max = opts.maxEntries ?? Infinity;
  for (let i = 0; i < batch.keys.length; i++) {
    if (i >= max) {
      lines.push(`  ... ${batch.keys.length - i} entries elided (maxEntries)`);
      break;
    }
    lines.push(`  [${i}] ${formatInternalKey(batch.keys[i]!)} = ${formatValue(batch.values[i]!, opts.maxValueBytes)}`);
  }
  return { lines, entries: batch.keys.length };
}

function startsWithBytes(b: Uint8Array, at: number, magic: Uint8Array): boolean {
  if (b.length < at + magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (b[at + i] !== magic[i]) return false;
  return true;
}

/** The type a file's name says it is (parseName). */
export function typeFromName(name: string): StoreFileType {
  const p = parseName(name);
  return p.type === 'other' ? 'unknown' : p.type;
}

/** The type a file's first bytes (>= 15) or last 8 bytes show, or 'unknown'. */
export function typeFromMagic(head: Uint8Array, tail: Uint8Array): StoreFileType {
  if (head[6] === WalRecordType.Meta && startsWithBytes(head, WAL_HEADER_SIZE, WAL_MAGIC)) return 'wal';
  if (startsWithBytes(head, 0, MANIFEST_MAGIC)) return 'manifest';
  if (tail.length >= 8 && startsWithBytes(tail, tail.length - 8, SST_MAGIC_BYTES)) return 'sst';
  return 'unknown';
}

/**
 * The type to dump a file as: what its magic says, else what its name says (so a file
 * whose magic is damaged is still dumped, and the damage reported, as its name's type).
 */
export function detectFileType(name: string, head: Uint8Array, tail: Uint8Array): StoreFileType {
  const byMagic = typeFromMagic(head, tail);
  return byMagic !== 'unknown' ? byMagic : typeFromName(name);
}

/** A row-range bound: `(start)` / `(end)` for the empty key, else formatBytes. */
function bound(b: Uint8Array, empty: string): string {
  return b.length === 0 ? empty : formatBytes(b);
}

/** The header fields of a MANIFEST file, checked against the bytes that follow. */
export function formatManifestHeader(bytes: Uint8Array): string[] {
  if (bytes.length < 20) return [`  !! ${bytes.length} bytes, shorter than the 20-byte header`];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = bytes.subarray(0, 8);
  const len = dv.getUint32(12);
  const stored = unmaskCrc(dv.getUint32(16));
  const lenOk = 20 + len === bytes.length;
  const computed = manifestCrc(bytes);
  return [
    `  magic    ${toHex(magic)} ${quoted(magic)} (${startsWithBytes(bytes, 0, MANIFEST_MAGIC) ? 'ok' : `want ${toHex(MANIFEST_MAGIC)}`})`,
    `  version  ${dv.getUint32(8)}`,
    `  length   ${len} (${lenOk ? 'ok' : `MISMATCH: the file holds ${bytes.length - 20} payload bytes`})`,
    `  crc      stored 0x${hex8(stored)}, computed 0x${hex8(computed)} (${stored === computed ? 'ok' : 'MISMATCH'})`,
  ];
}

/** The decoded manifest: counters, then tables, regions and files, one per line or block. */
export function formatManifestState(s: ManifestState): string[] {
  const out: string[] = [];
  out.push(`  nextFileNumber ${s.nextFileNumber}`);
  out.push(`  nextTableId    ${s.nextTableId}`);
  out.push(`  nextRegionId   ${s.nextRegionId}`);
  out.push(`  lastSeq        ${s.lastSeq}`);
  const names = new Map<number, string>();
  out.push(`tables (${s.tables.length})`);
  for (const t of s.tables) {
    names.set(t.id, t.name);
    const fams = t.families.map((f) => {
      const opts = [
        ...(f.maxVersions !== undefined ? [`maxVersions ${f.maxVersions}`] : []),
        ...(f.ttlMs !== undefined ? [`ttlMs ${f.ttlMs}`] : []),
      ];
      return opts.length === 0 ? f.name : `${f.name} (${opts.join(', ')})`;
    });
    out.push(`  table ${t.id} ${JSON.stringify(t.name)}: families ${fams.join(', ')}`);
    if (t.splitPoints !== undefined && t.splitPoints.length > 0) {
      out.push(`    splitPoints ${t.splitPoints.map((p) => formatBytes(p)).join(', ')}`);
    }
  }
  out.push(`regions (${s.regions.length})`);
  for (const r of s.regions) {
    const table = names.get(r.tableId);
    out.push(`  region ${r.id} table ${r.tableId}${table === undefined ? ' (!! unknown table)' : ` (${table})`}`);
    out.push(`    start      ${bound(r.start, '(start of table)')}`);
    out.push(`    end        ${bound(r.end, '(end of table)')}`);
    out.push(`    flushedSeq ${r.flushedSeq}`);
    out.push(`    files      [${r.files.join(', ')}]`);
  }
  out.push(`files (${s.files.length})`);
  for (const f of s.files) {
    out.push(`  file ${f.number}: ${f.sizeBytes} bytes, ${f.entries} entries, ${f.deletions} deletions`);
    out.push(`    smallest ${formatInternalKey(f.smallest)}`);
    out.push(`    largest  ${formatInternalKey(f.largest)}`);
    out.push(`    ts       ${formatTimestamp(f.minTs)} .. ${formatTimestamp(f.maxTs)}`);
    out.push(`    seq      ${f.minSeq} .. ${f.maxSeq}`);
  }
  return out;
}

function hex8(v: number): string {
  return v.toString(16).padStart(8, '0');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function result(lines: string[], errors: string[]): DumpResult {
  return { text: `${lines.join('\n')}\n`, errors };
}

// -------------------------------------------------------------------------------------
// Dumps of files

/** Reads the first and last bytes of a file (enough to recognize it by magic). */
async function sniff(fs: FileSystem, path: string): Promise<{ size: number; head: Uint8Array; tail: Uint8Array }> {
  const f = await fs.openRead(path);
  try {
    const size = f.size;
    const head = f.readSync(0, Math.min(SNIFF_HEAD_BYTES, size));
    const tail = f.readSync(Math.max(0, size - 8), Math.min(8, size));
    return { size, head, tail };
  } finally {
    await f.close();
  }
}

/** The META record's raw fields, printed before the reader validates them. */
function formatWalMeta(head: Uint8Array): string[] {
  if (head.length < WAL_HEADER_SIZE) return [`meta @0: !! only ${head.length} bytes`];
  const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const type = head[6]!;
  const out = [`meta @0: crc 0x${hex8(unmaskCrc(dv.getUint32(0)))} len ${dv.getUint16(4)} type ${type}${type === WalRecordType.Meta ? ' (META)' : ''}`];
  if (head.length >= WAL_META_RECORD_SIZE) {
    const magic = head.subarray(WAL_HEADER_SIZE, WAL_HEADER_SIZE + 8);
    out.push(`  magic    ${toHex(magic)} ${quoted(magic)}`);
    out.push(`  version  ${dv.getUint32(WAL_HEADER_SIZE + 8)}`);
    out.push(`  log      ${dv.getUint32(WAL_HEADER_SIZE + 12) * 0x100000000 + dv.getUint32(WAL_HEADER_SIZE + 16)}`);
  }
  return out;
}

/**
 * A WAL file: the META record, then every record the reader returns decoded as a write
 * batch, the reader's corruption reports where they happen, and a summary with the
 * dropped bytes and torn tail.
 */
export async function dumpWalFile(fs: FileSystem, path: string, opts: DumpFileOptions = {}): Promise<DumpResult> {
  const lines: string[] = [];
  const errors: string[] = [];
  let size: number;
  let head: Uint8Array;
  try {
    const f = await fs.openRead(path);
    try {
      size = f.size;
      head = f.readSync(0, Math.min(WAL_META_RECORD_SIZE, size));
    } finally {
      await f.close();
    }
  } catch (err) {
    errors.push(`wal ${path}: ${messageOf(err)}`);
    return result([`wal ${path}`, `!! ${errors[0]}`], errors);
  }
  lines.push(`wal ${path} (${size} bytes)`);
  lines.push(...formatWalMeta(head));
  let reader: WalReader;
  try {
    reader = await WalReader.open(fs, path, {
      onCorruption: (c) => {
        const msg = `wal ${c.path}: offset ${c.offset}: ${c.reason} (${c.bytes} bytes dropped)`;
        lines.push(`!! corruption @${c.offset}: ${c.reason} (${c.bytes} bytes dropped)`);
        errors.push(msg);
      },
    });
  } catch (err) {
    lines.push(`!! ${messageOf(err)}`);
    errors.push(messageOf(err));
    return result(lines, errors);
  }
  let records = 0;
  let entries = 0;
  let budget = opts.maxEntries ?? Infinity;
  try {
    for (let rec = reader.next(); rec !== undefined; rec = reader.next()) {
      const where = `wal ${path}: record #${records}`;
      lines.push(`record #${records} (${rec.length} bytes)`);
      const b = formatBatch(rec, where, { ...opts, maxEntries: budget });
      lines.push(...b.lines);
      if (b.error !== undefined) errors.push(b.error);
      entries += b.entries;
      budget = Math.max(0, budget - b.entries);
      records++;
    }
  } catch (err) {
    lines.push(`!! ${messageOf(err)}`);
    errors.push(messageOf(err));
  } finally {
    await reader.close().catch(() => undefined);
  }
  const torn = reader.tornTail ? `yes, ${reader.tornTailBytes} bytes` : 'no';
  lines.push(`end: ${records} records, ${entries} entries; dropped ${reader.droppedBytes} bytes; torn tail: ${torn}`);
  return result(lines, errors);
}

/**
 * An SST: dumpSst's annotated tree with parsed internal keys, then a check through the
 * real reader (footer, meta blocks, every data block's checksum, key order).
 */
export async function dumpSstFile(fs: FileSystem, path: string, opts: DumpFileOptions = {}): Promise<DumpResult> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(path);
  } catch (err) {
    const msg = `sst ${path}: ${messageOf(err)}`;
    return result([`sst ${path}`, `!! ${msg}`], [msg]);
  }
  const valueBytes = opts.maxValueBytes ?? DEFAULT_VALUE_BYTES;
  const text = dumpSst(bytes, {
    formatKey: formatInternalKey,
    formatValue: (v) => formatValue(v, valueBytes),
    path,
    ...(opts.maxEntries !== undefined ? { maxEntries: opts.maxEntries } : {}),
  });
  const lines = [`sst ${path}`, ...text.trimEnd().split('\n')];
  const errors: string[] = [];
  const check = await verifySst(fs, path);
  if (check.error !== undefined) {
    lines.push(`!! verify: ${check.error}`);
    errors.push(check.error);
  } else {
    lines.push(`verify: ${check.entries} entries in order, every block checksum ok`);
    // The reader accepted what the dump flagged: report it anyway.
    for (const l of lines) if (/^\s*!!/.test(l) && !l.startsWith('!! verify')) errors.push(`sst ${path}: ${l.trim().slice(3)}`);
  }
  return result(lines, errors);
}

export async function verifySst(fs: FileSystem, path: string): Promise<{ entries: number; error?: string }> {
  let file: RandomAccessFile;
  try {
    file = await fs.openRead(path);
  } catch (err) {
    return { entries: 0, error: `sst ${path}: open: ${messageOf(err)}` };
  }
  let reader: SstReader | undefined;
  try {
    reader = SstReader.open(file, { compare, bloomKey, cacheId: 0, verifyChecksums: true });
    const it = reader.iterator();
    let n = 0;
    let prev: Uint8Array | undefined;
    for (it.seekToFirst(); it.valid; it.next()) {
      const k = it.key();
      if (prev !== undefined && compare(prev, k) >= 0) return { entries: n, error: `sst ${path}: entry ${n} is out of order` };
      prev = k.slice();
      n++;
    }
    const err = it.error();
    if (err !== undefined) return { entries: n, error: messageOf(err) };
    if (n !== reader.entries) return { entries: n, error: `sst ${path}: ${n} entries read, properties say ${reader.entries}` };
    return { entries: n };
  } catch (err) {
    return { entries: 0, error: isStoreError(err) ? err.message : `sst ${path}: ${messageOf(err)}` };
  } finally {
    if (reader !== undefined) await reader.close().catch(() => undefined);
    else await file.close().catch(() => undefined);
  }
}

/** A MANIFEST: header fields (magic, version, length, crc) and the decoded state. */
export async function dumpManifestFile(fs: FileSystem, path: string): Promise<DumpResult> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(path);
  } catch (err) {
    const msg = `manifest ${path}: ${messageOf(err)}`;
    return result([`manifest ${path}`, `!! ${msg}`], [msg]);
  }
  const lines = [`manifest ${path} (${bytes.length} bytes)`, 'header', ...formatManifestHeader(bytes)];
  const errors: string[] = [];
  let state: ManifestState;
  try {
    state = decodeManifest(bytes, path);
  } catch (err) {
    lines.push(`!! ${messageOf(err)}`);
    errors.push(messageOf(err));
    return result(lines, errors);
  }
  lines.push('state');
  try {
    lines.push(...formatManifestState(state));
  } catch (err) {
    const msg = `manifest ${path}: decoded state is malformed: ${messageOf(err)}`;
    lines.push(`!! ${msg}`);
    errors.push(msg);
  }
  return result(lines, errors);
}

/** A store directory: every file with its type and size, then the MANIFEST. */
export async function dumpDirectory(fs: FileSystem, dir: string): Promise<DumpResult> {
  const lines = [`directory ${dir}`];
  const errors: string[] = [];
  let names: string[];
  try {
    names = await fs.list(dir);
  } catch (err) {
    const msg = `directory ${dir}: ${messageOf(err)}`;
    return result([...lines, `!! ${msg}`], [msg]);
  }
  const width = Math.max(8, ...names.map((n) => n.length));
  let hasManifest = false;
  for (const name of names) {
    const path = joinPath(dir, name);
    let info;
    try {
      info = await sniff(fs, path);
    } catch {
      lines.push(`  ${name.padEnd(width)}  (directory or unreadable)`);
      continue;
    }
    const byName = typeFromName(name);
    const byMagic = typeFromMagic(info.head, info.tail);
    const note = byMagic !== 'unknown' && byMagic !== byName ? ` (content looks like ${byMagic})` : '';
    lines.push(`  ${name.padEnd(width)}  ${byName.padEnd(8)}  ${info.size} bytes${note}`);
    if (byName === 'manifest') hasManifest = true;
  }
  if (!hasManifest) {
    lines.push('no MANIFEST (an empty or new store, or not a store directory)');
    return result(lines, errors);
  }
  const m = await dumpManifestFile(fs, joinPath(dir, 'MANIFEST'));
  lines.push('', ...m.text.trimEnd().split('\n'));
  errors.push(...m.errors);
  return result(lines, errors);
}

/**
 * Dumps `path`: a directory as dumpDirectory, a file as its type (by magic, else by name).
 */
export async function dumpPath(fs: FileSystem, path: string, opts: DumpFileOptions = {}): Promise<DumpResult> {
  let isDir = false;
  try {
    await fs.list(path);
    isDir = true;
  } catch {
    isDir = false;
  }
  if (isDir) return dumpDirectory(fs, path);
  let info;
  try {
    info = await sniff(fs, path);
  } catch (err) {
    const msg = `${path}: ${messageOf(err)}`;
    return result([`!! ${msg}`], [msg]);
  }
  const type = detectFileType(path.slice(path.lastIndexOf('/') + 1), info.head, info.tail);
  switch (type) {
    case 'wal':
      return dumpWalFile(fs, path, opts);
    case 'sst':
      return dumpSstFile(fs, path, opts);
    case 'manifest':
      return dumpManifestFile(fs, path);
    case 'lock':
      return result([`lock ${path} (${info.size} bytes): the store's process lock`], []);
    default: {
      const msg = `${path}: not a WAL, SST or MANIFEST (by name and by magic)`;
      return result([`!! ${msg}`], [msg]);
    }
  }
}
