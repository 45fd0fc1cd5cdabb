/**
 * The dump tool (core/tools/dump.ts, dump-cli.ts): WAL, SST, MANIFEST and directory dumps
 * of a real store on the in-memory file system, problem reports naming file and offset,
 * type detection, a golden dump of a fixed WAL + MANIFEST, and the CLI's exit codes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex, utf8 } from '../../core/api/bytes.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { KeyKind, encodeInternalKey } from '../../core/lsm/internal-key.js';
import { Random } from '../../core/util/random.js';
import { writeManifest } from '../../core/lsm/manifest.js';
import type { ManifestState } from '../../core/lsm/manifest.js';
import { encodeBatch } from '../../core/lsm/write-batch.js';
import {
  detectFileType, dumpDirectory, dumpManifestFile, dumpPath, dumpSstFile, dumpWalFile, formatBytes,
  formatInternalKey, formatTimestamp, formatValue, kindName,
} from '../../core/tools/dump.js';
import { WalWriter } from '../../core/wal/wal-writer.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NOW = 1_700_000_000_000; // 2023-11-14T22:13:20.000Z
const ISO_NOW = '2023-11-14T22:13:20.000Z';

interface Built {
  readonly mem: MemFileSystem;
  readonly wal: string;
  readonly sst: string;
  readonly sstNumber: number;
}

/**
 * A store with one flushed SST (k1, k2 with two cells, a binary row, a row delete of k3
 * and a cell delete on k2) and a WAL that also holds two later rows (k4, k5) never flushed.
 */
async function buildStore(): Promise<Built> {
  const mem = new MemFileSystem();
  const store = await openEmbeddedStore({ dir: '/db', fs: mem, clock: () => NOW, maintenanceIntervalMs: 0, flushOnClose: false });
  const t = await store.createTable({ name: 'metrics', families: [{ name: 'f' }, { name: 'g', maxVersions: 2 }] });
  const put = (q: string, v: string, family = 'f') => ({ type: 'put' as const, family, qualifier: utf8(q), value: utf8(v) });
  await t.mutate([
    { key: utf8('k1'), mutations: [put('a', 'value-one')] },
    { key: utf8('k2'), mutations: [put('a', 'two-a'), put('b', 'two-b', 'g')] },
    { key: new Uint8Array([0x00, 0xff, 0x41]), mutations: [put('z', 'binary')] },
    { key: utf8('k3'), mutations: [put('a', 'three')] },
  ]);
  await t.mutate([{ key: utf8('k3'), mutations: [{ type: 'deleteRow' }] }]);
  await t.mutate([{ key: utf8('k2'), mutations: [{ type: 'deleteCell', family: 'g', qualifier: utf8('b') }] }]);
  await t.flush();
  await t.mutate([{ key: utf8('k4'), mutations: [put('a', 'four-in-wal')] }]);
  await t.mutate([{ key: utf8('k5'), mutations: [put('a', 'x'.repeat(100))] }]);
  await store.close();
  const names = await mem.list('/db');
  const wals = names.filter((n) => n.endsWith('.log'));
  const ssts = names.filter((n) => n.endsWith('.sst'));
  expect(wals).toHaveLength(1);
  expect(ssts).toHaveLength(1);
  return { mem, wal: `/db/${wals[0]}`, sst: `/db/${ssts[0]}`, sstNumber: Number(ssts[0]!.slice(0, 6)) };
}

describe('dump of a store built on the in-memory file system', () => {
  let b: Built;
  beforeAll(async () => {
    b = await buildStore();
  });

  it('dumps the WAL: META, every record as a batch with parsed keys, kinds and values', async () => {
    const { text, errors } = await dumpWalFile(b.mem, b.wal);
    expect(errors).toEqual([]);
    expect(text).toContain(`wal ${b.wal} (`);
    expect(text).toMatch(/meta @0: crc 0x[0-9a-f]{8} len 20 type 5 \(META\)/);
    expect(text).toContain('  magic    484f52414557414c "HORAEWAL"');
    expect(text).toMatch(/\n {2}version {2}1\n/);
    expect(text).toContain(`  log      ${Number(b.wal.slice(4, 10))}\n`);
    // Flushed and unflushed records are both still in the log.
    expect(text).toContain(`row=6b31 "k1" family=f qualifier=61 "a" ts=${NOW} (${ISO_NOW}) seq=1 Put = ${toHex(utf8('value-one'))} "value-one"`);
    expect(text).toContain(`row=6b32 "k2" family=g qualifier=62 "b" ts=${NOW} (${ISO_NOW}) seq=3 Put = ${toHex(utf8('two-b'))} "two-b"`);
    expect(text).toContain('row=00ff41 "\\x00\\xffA" family=f qualifier=7a "z"');
    expect(text).toContain('row=6b33 "k3" family=(none) qualifier=(empty) ts=9007199254740991 (max) seq=6 DeleteRow = (empty)');
    expect(text).toContain('row=6b32 "k2" family=g qualifier=62 "b" ts=9007199254740991 (max) seq=7 DeleteCell = (empty)');
    expect(text).toContain(`row=6b34 "k4" family=f qualifier=61 "a" ts=${NOW} (${ISO_NOW}) seq=8 Put = ${toHex(utf8('four-in-wal'))} "four-in-wal"`);
    // Long values are truncated to 32 bytes of hex with the full length.
    expect(text).toContain(`seq=9 Put = ${'78'.repeat(32)}…(100 bytes)\n`);
    expect(text).toMatch(/record #0 \(\d+ bytes\)\n {2}batch table 1, 5 entries\n/);
    expect(text).toContain('end: 5 records, 9 entries; dropped 0 bytes; torn tail: no\n');
  });

  it('limits WAL entries with maxEntries and reports a torn tail', async () => {
    const mem = b.mem.clone();
    mem.truncate(b.wal, (await mem.size(b.wal)) - 10);
    const { text, errors } = await dumpWalFile(mem, b.wal, { maxEntries: 2 });
    expect(errors).toEqual([]); // a torn tail is what a crash leaves, not corruption
    expect(text).toContain('  ... 3 entries elided (maxEntries)');
    expect(text).toMatch(/end: 4 records, 8 entries; dropped \d+ bytes; torn tail: yes, \d+ bytes\n/);
    expect(text).not.toContain('k4" family=f qualifier=61 "a" ts=');
  });

  it('dumps the SST with parsed internal keys and verifies it through the reader', async () => {
    const { text, errors } = await dumpSstFile(b.mem, b.sst);
    expect(errors).toEqual([]);
    expect(text).toContain(`sst ${b.sst}\n`);
    expect(text).toContain('magic       0x484f524145535354 "HORAESST"');
    expect(text).toMatch(/ {2}entries {10}7\n/);
    expect(text).toContain(`row=6b31 "k1" family=f qualifier=61 "a" ts=${NOW} (${ISO_NOW}) seq=1 Put = ${toHex(utf8('value-one'))} "value-one"`);
    expect(text).toContain('row=6b33 "k3" family=(none) qualifier=(empty) ts=9007199254740991 (max) seq=6 DeleteRow = (empty)');
    expect(text).toContain('seq=7 DeleteCell = (empty)');
    expect(text).not.toContain('"k4"'); // only in the WAL
    expect(text).toContain('verify: 7 entries in order, every block checksum ok');
    const limited = await dumpSstFile(b.mem, b.sst, { maxEntries: 2 });
    expect(limited.text).toContain('... entries elided (maxEntries)');
    expect(limited.text.match(/ shared \d+ unshared \d+ value /g)).toHaveLength(2);
  });

  it('dumps the MANIFEST header and its tables, regions and files', async () => {
    const { text, errors } = await dumpManifestFile(b.mem, '/db/MANIFEST');
    expect(errors).toEqual([]);
    expect(text).toContain('  magic    484f5241454d414e "HORAEMAN" (ok)');
    expect(text).toMatch(/ {2}length {3}\d+ \(ok\)/);
    expect(text).toMatch(/ {2}crc {6}stored 0x([0-9a-f]{8}), computed 0x\1 \(ok\)/);
    expect(text).toContain('  table 1 "metrics": families f, g (maxVersions 2)');
    expect(text).toContain('  region 1 table 1 (metrics)\n    start      (start of table)\n    end        (end of table)\n    flushedSeq 7\n');
    expect(text).toContain(`    files      [${b.sstNumber}]`);
    expect(text).toMatch(new RegExp(`  file ${b.sstNumber}: \\d+ bytes, 7 entries, 2 deletions\\n`));
    expect(text).toContain('    smallest row=00ff41 "\\x00\\xffA" family=f qualifier=7a "z"');
    expect(text).toContain('    largest  row=6b33 "k3" family=f qualifier=61 "a"');
    expect(text).toContain(`    ts       ${NOW} (${ISO_NOW}) .. 9007199254740991 (max)`);
    expect(text).toContain('    seq      1 .. 7');
  });

  it('dumps a directory: every file with its type and size, then the MANIFEST', async () => {
    const { text, errors } = await dumpPath(b.mem, '/db');
    expect(errors).toEqual([]);
    const walName = b.wal.slice(4);
    const sstName = b.sst.slice(4);
    expect(text).toContain(`directory /db\n`);
    expect(text).toMatch(new RegExp(`  ${walName}\\s+wal\\s+${await b.mem.size(b.wal)} bytes\\n`));
    expect(text).toMatch(new RegExp(`  ${sstName}\\s+sst\\s+${await b.mem.size(b.sst)} bytes\\n`));
    expect(text).toMatch(new RegExp(`  MANIFEST\\s+manifest\\s+${await b.mem.size('/db/MANIFEST')} bytes\\n`));
    expect(text).toContain('manifest /db/MANIFEST (');
    expect(text).toContain('  table 1 "metrics"');
  });

  it('dumps each file type through dumpPath, by magic when the name says nothing', async () => {
    const mem = b.mem.clone();
    expect((await dumpPath(mem, b.wal)).text).toContain('batch table 1, 5 entries');
    expect((await dumpPath(mem, b.sst)).text).toContain('verify: 7 entries');
    const copy = await mem.openAppend('/db/copy-of-sst.bin');
    await copy.append(await mem.readFile(b.sst));
    await copy.close();
    expect((await dumpPath(mem, '/db/copy-of-sst.bin')).text).toContain('verify: 7 entries');
    const junk = await mem.openAppend('/db/junk.bin');
    await junk.append(utf8('not a store file at all'));
    await junk.close();
    const res = await dumpPath(mem, '/db/junk.bin');
    expect(res.errors).toEqual(['/db/junk.bin: not a WAL, SST or MANIFEST (by name and by magic)']);
  });

  it('reports a corrupt MANIFEST with its name and offset', async () => {
    const mem = b.mem.clone();
    mem.corrupt('/db/MANIFEST', 40, 0x10);
    const { text, errors } = await dumpManifestFile(mem, '/db/MANIFEST');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^manifest \/db\/MANIFEST: checksum mismatch at offset 16: /);
    expect(text).toMatch(/crc {6}stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8} \(MISMATCH\)/);
    expect(text).not.toContain('\nstate\n');
    // The directory dump carries the manifest's problem.
    expect((await dumpDirectory(mem, '/db')).errors).toEqual(errors);
  });

  it('reports a corrupt SST block with its name and offset, and still dumps the rest', async () => {
    const mem = b.mem.clone();
    mem.corrupt(b.sst, 3, 0x01); // inside data block #0
    const { text, errors } = await dumpSstFile(mem, b.sst);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^sst ${b.sst}: block @0: checksum mismatch`));
    expect(text).toMatch(/block #0 @0 size \d+ compression \w+ checksum 0x[0-9a-f]{8} \(MISMATCH, computed/);
    expect(text).toContain('!! verify: ');
    expect(text).toContain('properties @'); // the intact parts are still shown
  });

  it('reports a corrupt WAL record with the offset and dropped bytes, keeping records before it', async () => {
    const mem = b.mem.clone();
    const size = await mem.size(b.wal);
    mem.corrupt(b.wal, size - 3, 0x20); // inside the last record
    const { text, errors } = await dumpWalFile(mem, b.wal);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^wal ${b.wal}: offset \\d+: checksum mismatch: .* \\(\\d+ bytes dropped\\)$`));
    expect(text).toMatch(/!! corruption @\d+: checksum mismatch/);
    expect(text).toContain('four-in-wal');
    expect(text).toMatch(/end: 4 records, 8 entries; dropped \d+ bytes; torn tail: no/);
  });

  it('never throws on a damaged file; every damaged SST is reported', async () => {
    const r = new Random(7);
    for (const path of [b.wal, b.sst, '/db/MANIFEST']) {
      const size = await b.mem.size(path);
      for (let i = 0; i < 60; i++) {
        const offset = i < 30 ? Math.floor((i * size) / 30) : r.int(size);
        const mem = b.mem.clone();
        mem.corrupt(path, offset, r.range(1, 255));
        const res = await dumpPath(mem, path);
        expect(res.text.length, `${path} @${offset}`).toBeGreaterThan(0);
        if (path === b.sst) expect(res.errors.length, `${path} @${offset}: ${res.text}`).toBeGreaterThan(0);
      }
    }
  });

  it('reports a damaged META record as the reader does', async () => {
    const mem = b.mem.clone();
    mem.corrupt(b.wal, 10, 0x01); // in the magic
    const { text, errors } = await dumpWalFile(mem, b.wal);
    expect(errors).toEqual([expect.stringMatching(new RegExp(`^wal ${b.wal}: no valid META record at offset 0: checksum mismatch`))]);
    expect(text).toContain('magic    484f52'); // raw fields are shown before the check
    expect(text).not.toContain('record #0');
  });
});

describe('formatting helpers', () => {
  it('formats an internal key with every part', () => {
    const k = encodeInternalKey(utf8('row\n1'), 'fam', new Uint8Array([0x00, 0x41]), 1000, 42, KeyKind.DeleteVersion);
    expect(formatInternalKey(k)).toBe('row=726f770a31 "row\\x0a1" family=fam qualifier=0041 "\\x00A" ts=1000 (1970-01-01T00:00:01.000Z) seq=42 DeleteVersion');
  });

  it('flags malformed keys instead of throwing', () => {
    expect(formatInternalKey(new Uint8Array([0, 200, 1, 2]))).toBe('!! malformed internal key (4 bytes, shorter than the smallest key): 00c80102');
    const k = encodeInternalKey(utf8('r'), 'f', utf8('q'), 1, 1, KeyKind.Put);
    k[1] = 99;
    expect(formatInternalKey(k)).toMatch(/^!! malformed internal key \(row length 99 runs past the key \(\d+ bytes\)\): /);
  });

  it('formats kinds, bytes, values and timestamps', () => {
    expect([1, 2, 3, 4, 5, 9].map(kindName)).toEqual(['Put', 'DeleteVersion', 'DeleteCell', 'DeleteFamily', 'DeleteRow', 'unknown(9)']);
    expect(formatBytes(new Uint8Array(0))).toBe('(empty)');
    expect(formatBytes(new Uint8Array([1, 2]))).toBe('0102');
    expect(formatBytes(utf8('a"b'))).toBe('612262 "a\\"b"');
    expect(formatBytes(utf8('abcdef'), 2)).toBe('6162…(6 bytes) "ab"…');
    expect(formatValue(utf8('hi'))).toBe('6869 "hi"');
    expect(formatValue(new Uint8Array([0, 1]))).toBe('0001');
    expect(formatValue(utf8('abcdef'), 4)).toBe('61626364…(6 bytes)');
    expect(formatTimestamp(0)).toBe('0 (1970-01-01T00:00:00.000Z)');
    expect(formatTimestamp(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991 (max)');
    expect(formatTimestamp(8.7e15)).toBe('8700000000000000 (out of Date range)');
  });

  it('detects file types by magic first, then by name', () => {
    const walHead = new Uint8Array([0, 0, 0, 0, 0, 20, 5, ...utf8('HORAEWAL')]);
    const none = new Uint8Array(0);
    expect(detectFileType('x', walHead, none)).toBe('wal');
    expect(detectFileType('x', utf8('HORAEMAN1234567'), none)).toBe('manifest');
    expect(detectFileType('x', utf8('anything'), utf8('..HORAESST'))).toBe('sst');
    expect(detectFileType('000012.log', utf8('garbage'), none)).toBe('wal');
    expect(detectFileType('000012.sst', utf8('garbage'), none)).toBe('sst');
    expect(detectFileType('MANIFEST', none, none)).toBe('manifest');
    expect(detectFileType('LOCK', utf8('123\n'), none)).toBe('lock');
    expect(detectFileType('notes.txt', utf8('hello'), none)).toBe('unknown');
  });
});

/** A fixed WAL (three batches, the last one torn) and a fixed MANIFEST. */
async function goldenFiles(): Promise<MemFileSystem> {
  const mem = new MemFileSystem();
  await mem.mkdir('/golden');
  const w = await WalWriter.open(mem, '/golden/000007.log', 7, { bufferedWindowMs: 5 });
  const key = (s: string) => utf8(s);
  const batches = [
    encodeBatch(1, [
      { key: key('sys.cpu'), mutations: [{ type: 'put', family: 't', qualifier: new Uint8Array([0x00, 0x10]), value: new Uint8Array([0x40, 0x09, 0x21, 0xfb]), timestamp: 1_600_000_000_000 }] },
      { key: new Uint8Array([0x01, 0x00, 0x00, 0x01, 0x5f]), mutations: [{ type: 'put', family: 't', qualifier: utf8('q'), value: utf8('v') }] },
    ], 11, 1_600_000_000_500),
    encodeBatch(1, [
      { key: key('sys.cpu'), mutations: [{ type: 'deleteVersion', family: 't', qualifier: new Uint8Array([0x00, 0x10]), timestamp: 1_600_000_000_000 }] },
      { key: key('sys.mem'), mutations: [{ type: 'deleteFamily', family: 'm', upTo: 1_600_000_001_000 }, { type: 'deleteRow' }] },
    ], 13, 1_600_000_000_600),
    encodeBatch(2, [{ key: key('torn'), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8('lost in the crash') }] }], 16, 1_600_000_000_700),
  ];
  for (const b of batches) await w.append(b.payload, true);
  await w.close();
  mem.truncate('/golden/000007.log', (await mem.size('/golden/000007.log')) - 6);

  const fileKey = (row: string, seq: number, kind: number = KeyKind.Put) => encodeInternalKey(utf8(row), 't', new Uint8Array([0x00, 0x10]), 1_600_000_000_000, seq, kind);
  const state: ManifestState = {
    nextFileNumber: 9, nextTableId: 3, nextRegionId: 4, lastSeq: 15,
    tables: [
      { id: 1, name: 'tsdb', families: [{ name: 't', maxVersions: 3 }, { name: 'm', ttlMs: 86_400_000 }], splitPoints: [new Uint8Array([0x80])] },
      { id: 2, name: 'tsdb-uid', families: [{ name: 'id' }, { name: 'name' }] },
    ],
    regions: [
      { id: 1, tableId: 1, start: new Uint8Array(0), end: new Uint8Array([0x80]), flushedSeq: 10, files: [8, 5] },
      { id: 2, tableId: 1, start: new Uint8Array([0x80]), end: new Uint8Array(0), flushedSeq: 4, files: [] },
      { id: 3, tableId: 2, start: new Uint8Array(0), end: new Uint8Array(0), flushedSeq: 0, files: [] },
    ],
    files: [
      { number: 8, sizeBytes: 4096, entries: 12, smallest: fileKey('sys.cpu', 10), largest: fileKey('sys.mem', 6, KeyKind.DeleteCell), minTs: 1_600_000_000_000, maxTs: 1_600_000_000_000, minSeq: 6, maxSeq: 10, deletions: 1 },
      { number: 5, sizeBytes: 1024, entries: 3, smallest: fileKey('a', 1), largest: fileKey('b', 3), minTs: 0, maxTs: 1_600_000_000_000, minSeq: 1, maxSeq: 3, deletions: 0 },
    ],
  };
  await writeManifest(mem, '/golden', state);
  return mem;
}

describe('golden dump', () => {
  it('dumps a fixed WAL (with a torn tail) and MANIFEST exactly as recorded', async () => {
    const mem = await goldenFiles();
    const wal = await dumpWalFile(mem, '/golden/000007.log');
    const manifest = await dumpManifestFile(mem, '/golden/MANIFEST');
    expect(wal.errors).toEqual([]);
    expect(manifest.errors).toEqual([]);
    await expect(`${wal.text}\n${manifest.text}`).toMatchFileSnapshot('./__golden__/dump-wal-manifest.txt');
  });
});

describe('dump-cli', () => {
  let dir: string;
  let b: Built;
  beforeAll(async () => {
    b = await buildStore();
    dir = mkdtempSync(join(tmpdir(), 'horae-dump-'));
    for (const n of await b.mem.list('/db')) writeFileSync(join(dir, n), await b.mem.readFile(`/db/${n}`));
    const bad = b.mem.clone();
    bad.corrupt('/db/MANIFEST', 30, 0x04);
    writeFileSync(join(dir, 'bad-manifest'), await bad.readFile('/db/MANIFEST'));
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'core/tools/dump-cli.ts'), ...args], { cwd: ROOT }, (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      });
    });
  }

  it('dumps a directory and files (exit 0), a corrupt file (exit 1), bad usage (exit 2)', async () => {
    const [good, corrupt, usage] = await Promise.all([
      run(['--max-entries', '1', dir, join(dir, b.wal.slice(4))]),
      run([join(dir, b.sst.slice(4)), join(dir, 'bad-manifest')]),
      run(['--max-entries', 'x', dir]),
    ]);
    expect(good.stderr).toBe('');
    expect(good.code).toBe(0);
    expect(good.stdout).toContain(`==> ${dir} <==\ndirectory ${dir}\n`);
    expect(good.stdout).toContain('table 1 "metrics"');
    expect(good.stdout).toContain('  ... 4 entries elided (maxEntries)');
    expect(corrupt.code).toBe(1);
    expect(corrupt.stdout).toContain('verify: 7 entries in order'); // the good file is dumped first
    expect(corrupt.stderr).toMatch(new RegExp(`^error: manifest ${join(dir, 'bad-manifest')}: checksum mismatch at offset 16: `));
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--max-entries needs a non-negative integer');
  });
});
