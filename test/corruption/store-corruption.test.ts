/**
 * Corruption (leveldb corruption_test, log_test): flip one byte of a store file, reopen,
 * read everything, and check that damage is either reported or harmless, never turned
 * into wrong data.
 *
 *  - SSTs and the MANIFEST: the open or a read fails with STORE_CORRUPTION whose message
 *    names the file and an offset (`@<n>` or `offset <n>`), or every read returns exactly
 *    the data written. Reads that succeed before or beside a failing one must be right too
 *    (a scan's rows before the error, gets of rows in undamaged blocks).
 *  - WAL files (data never flushed): with default options the store opens without the
 *    damaged records and counts them in `engine.counters.recoveryDroppedBytes`; every cell
 *    it returns holds a value that was written to that cell, and anything missing or older
 *    than written must come with dropped bytes > 0. With `paranoidChecks` the open fails
 *    with STORE_CORRUPTION naming the WAL file and the offset, or the data is exact.
 *
 * Offsets: a stride over each file, its first and last bytes, the SST footers and WAL
 * block boundaries in full, and seeded random ones. TEST_SEED=<n> replays a seed; each
 * failure prints seed, file, offset and XOR mask.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../core/api/errors.js';
import { latin1, utf8 } from '../../core/api/bytes.js';
import type { Row, RowMutation, Store, Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedOptions, EmbeddedStoreExtras } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { Random } from '../../core/util/random.js';
import { WAL_BLOCK_SIZE, WAL_HEADER_SIZE, WAL_META_RECORD_SIZE } from '../../core/wal/wal-format.js';
import { readWal } from '../../core/wal/wal-reader.js';
import { FOOTER_BYTES } from '../../core/sst/sst-format.js';

const SEED = process.env.TEST_SEED !== undefined && process.env.TEST_SEED !== '' ? Number(process.env.TEST_SEED) : 20240611;
const NOW = 1_700_000_000_000;
const DIR = '/db';
const TABLE = { name: 't', families: [{ name: 'f' }, { name: 'g', maxVersions: 2 }], splitPoints: [utf8('r060')] };
const BASE_OPTS = { dir: DIR, clock: () => NOW, maintenanceIntervalMs: 0, autoSplit: false } as const;
/** Rows per get() call. */
const GET_BATCH = 40;
/** Failures listed in one assertion message. */
const MAX_LISTED = 15;

/** `row/family/qualifier` -> every value written to the cell, oldest first. */
type History = Map<string, string[]>;
/** `row/family/qualifier` -> the value a read must return (newest version only). */
type Expected = Map<string, string>;

interface Model {
  readonly rows: string[];
  readonly history: History;
  readonly expected: Expected;
}

function cellId(row: string, family: string, qualifier: string): string {
  return `${row}/${family}/${qualifier}`;
}

/** Applies mutations to the table and to the model (puts and cell/row deletes). */
async function apply(t: Table, m: Model, muts: RowMutation[]): Promise<void> {
  await t.mutate(muts);
  for (const rm of muts) {
    const row = latin1(rm.key);
    if (!m.rows.includes(row)) m.rows.push(row);
    for (const x of rm.mutations) {
      if (x.type === 'put') {
        const id = cellId(row, x.family, latin1(x.qualifier));
        const v = latin1(x.value);
        m.history.set(id, [...(m.history.get(id) ?? []), v]);
        m.expected.set(id, v);
      } else if (x.type === 'deleteCell') {
        m.expected.delete(cellId(row, x.family, latin1(x.qualifier)));
      } else if (x.type === 'deleteRow') {
        for (const id of [...m.expected.keys()]) if (id.startsWith(`${row}/`)) m.expected.delete(id);
      } else {
        throw new Error(`model: unsupported mutation ${x.type}`);
      }
    }
  }
}

function put(r: Random, row: number, family: string, q: string, tag: string): RowMutation['mutations'][number] {
  // Distinct, partly random values: a misplaced or altered byte can never look right.
  const pad = Array.from(r.bytes(r.range(4, 40)), (b) => (b % 36).toString(36)).join('');
  return { type: 'put', family, qualifier: utf8(q), value: utf8(`${rowKey(row)}:${family}:${q}:${tag}:${pad}`) };
}

function rowKey(i: number): string {
  return `r${String(i).padStart(3, '0')}`;
}

function newModel(): Model {
  return { rows: [], history: new Map(), expected: new Map() };
}

/** Writes a few rounds of puts, overwrites and deletes into a region-split table. */
async function writeRounds(t: Table, m: Model, r: Random, rounds: number, between: (round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const muts: RowMutation[] = [];
    for (let i = 0; i < 120; i++) {
      const row = round === 0 ? i : r.int(150);
      if (round > 0 && r.chance(0.55)) continue;
      const ms = [put(r, row, 'f', 'a', `w${round}`)];
      if (r.chance(0.5)) ms.push(put(r, row, 'f', 'b', `w${round}`));
      if (r.chance(0.3)) ms.push(put(r, row, 'g', 'c', `w${round}`));
      if (round > 0 && r.chance(0.08)) ms.push({ type: 'deleteCell', family: 'f', qualifier: utf8('a') });
      muts.push({ key: utf8(rowKey(row)), mutations: ms });
    }
    // Whole-row deletes in their own mutations (a row delete after puts in one call would
    // delete those puts too, which the model does not bother to express).
    for (let i = 0; round > 0 && i < 4; i++) muts.push({ key: utf8(rowKey(r.int(150))), mutations: [{ type: 'deleteRow' }] });
    for (let i = 0; i < muts.length; i += 10) await apply(t, m, muts.slice(i, i + 10));
    await between(round);
  }
}

/** A row as `row/family/qualifier` -> value. */
function cellsOf(row: Row): [string, string][] {
  return row.cells.map((c) => [cellId(latin1(row.key), c.family, latin1(c.qualifier)), latin1(c.value)]);
}

/** The expected rows, in key order. */
function expectedRows(m: Model): [string, [string, string][]][] {
  const byRow = new Map<string, [string, string][]>();
  for (const [id, v] of [...m.expected.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const row = id.slice(0, id.indexOf('/'));
    let cells = byRow.get(row);
    if (cells === undefined) byRow.set(row, (cells = []));
    cells.push([id, v]);
  }
  return [...byRow.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
}

// -------------------------------------------------------------------------------------
// Reading a damaged store

interface ReadOutcome {
  /** Problems: wrong data or badly reported errors. Empty when the trial passed. */
  readonly problems: string[];
  /** True when some read or the open reported STORE_CORRUPTION. */
  detected: boolean;
  /** Every read completed and returned the expected data exactly. */
  exact: boolean;
}

/**
 * Recognizes a known engine bug by its exact signature (see the KNOWN BUG tests at the end),
 * so the sweeps stay strict about everything else.
 */
type Tolerate = (err: unknown) => boolean;
const NOTHING_TOLERATED: Tolerate = () => false;

/** Checks an error: STORE_CORRUPTION naming `file` and an offset. Returns a problem or undefined. */
function errorProblem(err: unknown, file: string, what: string, tolerate: Tolerate = NOTHING_TOLERATED): string | undefined {
  if (tolerate(err)) return undefined;
  if (!isStoreError(err)) return `${what}: threw a non-StoreError: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
  if (err.code !== 'STORE_CORRUPTION') return `${what}: ${err.code}, want STORE_CORRUPTION: ${err.message}`;
  if (!err.message.includes(file)) return `${what}: message does not name ${file}: ${err.message}`;
  if (!/@\d+|offset \d+/.test(err.message)) return `${what}: message names no offset: ${err.message}`;
  return undefined;
}

/**
 * How a read result may differ from the expectation. 'exact': only the expected data.
 * 'written': every cell holds some value written to it (WAL records may be dropped).
 */
type Strictness = 'exact' | 'written';

/** JSON for a failure message, cut to a readable length. */
function short(x: unknown): string {
  const s = JSON.stringify(x) ?? 'undefined';
  return s.length > 90 ? `${s.slice(0, 90)}…(${s.length} chars)` : s;
}

function compareRows(got: readonly Row[], want: [string, [string, string][]][], m: Model, strict: Strictness, what: string): { problem?: string; exact: boolean } {
  const gotCells = got.flatMap(cellsOf);
  const wantCells = want.flatMap(([, cells]) => cells);
  const exact = gotCells.length === wantCells.length && gotCells.every(([id, v], i) => wantCells[i]![0] === id && wantCells[i]![1] === v);
  if (strict === 'exact') {
    if (exact) return { exact };
    const firstBad = gotCells.findIndex(([id, v], i) => wantCells[i]?.[0] !== id || wantCells[i]?.[1] !== v);
    const at = firstBad < 0 ? gotCells.length : firstBad;
    return { exact, problem: `${what}: wrong data at cell ${at}: got ${short(gotCells[at])}, want ${short(wantCells[at])} (${gotCells.length} cells, want ${wantCells.length})` };
  }
  for (const [id, v] of gotCells) {
    const written = m.history.get(id);
    if (written === undefined || !written.includes(v)) return { exact, problem: `${what}: invented data: ${id} = ${short(v)}, written: ${short(written)}` };
  }
  return { exact };
}

/**
 * All rows of a scan (or those before its error). Stops after `maxRows`: a scan over damaged
 * data must not run forever (the caller sees the excess rows as wrong data).
 */
async function collect(t: Table, reverse: boolean, onError: (err: unknown) => void, maxRows = Infinity): Promise<Row[]> {
  const rows: Row[] = [];
  try {
    for await (const batch of t.scan({ reverse, batchRows: 16 })) {
      rows.push(...batch);
      if (rows.length > maxRows) break;
    }
  } catch (err) {
    onError(err);
  }
  return rows;
}

/**
 * Forward scan, reverse scan and gets of every row ever written. With 'exact', the rows a
 * scan returned before failing must be the expected prefix (suffix, reversed), and each
 * get batch that succeeds must be exact.
 */
async function readEverything(store: Store, m: Model, file: string, strict: Strictness, tolerate: Tolerate = NOTHING_TOLERATED): Promise<ReadOutcome> {
  const out: ReadOutcome = { problems: [], detected: false, exact: true };
  const t = await store.openTable(TABLE.name);
  const want = expectedRows(m);
  const fail = (what: string) => (err: unknown): void => {
    out.detected = true;
    out.exact = false;
    const p = errorProblem(err, file, what, tolerate);
    if (p !== undefined) out.problems.push(p);
  };
  for (const reverse of [false, true]) {
    let failed = false;
    const what = reverse ? 'reverse scan' : 'forward scan';
    const rows = await collect(t, reverse, (err) => {
      failed = true;
      fail(what)(err);
    }, 2 * m.rows.length + 10);
    if (reverse) rows.reverse();
    // A failed scan returned a prefix of its order: compare it with the same part of want.
    const part = !failed ? want : reverse ? want.slice(want.length - rows.length) : want.slice(0, rows.length);
    const c = compareRows(rows, part, m, strict, what);
    if (c.problem !== undefined) out.problems.push(c.problem);
    if (!c.exact || failed) out.exact = false;
  }
  const wantByRow = new Map(want);
  for (let i = 0; i < m.rows.length; i += GET_BATCH) {
    const keys = m.rows.slice(i, i + GET_BATCH);
    let got: (Row | undefined)[];
    try {
      got = await t.get(keys.map((k) => utf8(k)));
    } catch (err) {
      fail(`get ${keys[0]}..${keys[keys.length - 1]}`)(err);
      continue;
    }
    keys.forEach((k, j) => {
      const row = got[j];
      const w = wantByRow.get(k);
      const c = compareRows(row === undefined ? [] : [row], w === undefined ? [] : [[k, w]], m, strict, `get ${k}`);
      if (c.problem !== undefined) out.problems.push(c.problem);
      if (!c.exact) out.exact = false;
    });
  }
  return out;
}

interface Trial {
  readonly file: string;
  readonly offset: number;
  readonly mask: number;
}

function describeTrial(t: Trial, extra = ''): string {
  return `seed=${SEED} file=${t.file} offset=${t.offset} mask=0x${t.mask.toString(16).padStart(2, '0')}${extra}`;
}

/** Offsets to damage in a file of `size` bytes: ~`samples` by stride, both ends, extras, random. */
function pickOffsets(r: Random, size: number, samples: number, extra: readonly number[] = []): number[] {
  const set = new Set<number>();
  const stride = Math.max(1, Math.floor(size / samples));
  for (let o = r.int(stride); o < size; o += stride) set.add(o);
  for (let i = 0; i < 6; i++) {
    set.add(Math.min(size - 1, i));
    set.add(Math.max(0, size - 1 - i));
  }
  for (const o of extra) if (o >= 0 && o < size) set.add(o);
  for (let i = 0; i < Math.ceil(samples / 5); i++) set.add(r.int(size));
  return [...set].sort((a, b) => a - b);
}

/** A non-zero XOR mask: usually one bit, sometimes a whole random byte. */
function pickMask(r: Random): number {
  return r.chance(0.6) ? 1 << r.int(8) : r.range(1, 255);
}

async function openDamaged(fs: MemFileSystem, opts: Partial<EmbeddedOptions>): Promise<Store & EmbeddedStoreExtras> {
  return openEmbeddedStore({ ...BASE_OPTS, ...opts, fs, flushOnClose: false });
}

function failureReport(failures: readonly string[], trials: number): string {
  const listed = failures.slice(0, MAX_LISTED).join('\n  ');
  return `${failures.length} of ${trials} trials failed (replay with TEST_SEED=${SEED}):\n  ${listed}${failures.length > MAX_LISTED ? `\n  ... and ${failures.length - MAX_LISTED} more` : ''}`;
}


// -------------------------------------------------------------------------------------
// SSTs and the MANIFEST

interface SweepResult {
  readonly failures: string[];
  detected: number;
  harmless: number;
  /** Trials that hit a known bug (tolerated by signature). */
  known: number;
}

/** A store with several SSTs per region (one compacted, two flushed), written through `m`. */
async function buildSstStore(fs: MemFileSystem, m: Model): Promise<void> {
  const r = new Random(SEED);
  const store = await openEmbeddedStore({ ...BASE_OPTS, fs, memstoreFlushBytes: 1 << 20, blockSizeBytes: 512, compactionMinFiles: 100 });
  const t = await store.createTable(TABLE);
  // Rounds 0 and 1 are compacted into one file per region; rounds 2 and 3 stay as flushes,
  // so reads merge three files per region, with overwrites and delete markers across them.
  await writeRounds(t, m, r, 4, async (round) => {
    await t.flush();
    if (round === 1) await t.compact({ major: true });
  });
  await store.close();
}

/** Flips each offset of `file` in a copy of `base`, reopens with `opts`, reads everything. */
async function sweep(
  base: MemFileSystem, m: Model, file: string, offsets: readonly number[], r: Random,
  opts: Partial<EmbeddedOptions> = {}, tolerateAt: (offset: number) => Tolerate = () => NOTHING_TOLERATED,
): Promise<SweepResult> {
  const res: SweepResult = { failures: [], detected: 0, harmless: 0, known: 0 };
  for (const offset of offsets) {
    const trial: Trial = { file, offset, mask: pickMask(r) };
    const fs = base.clone();
    fs.corrupt(`${DIR}/${file}`, offset, trial.mask);
    let hitKnown = false;
    const known = tolerateAt(offset);
    const tolerate: Tolerate = (e) => (known(e) ? (hitKnown = true) : false);
    let store;
    try {
      store = await openDamaged(fs, opts);
    } catch (err) {
      const p = errorProblem(err, file, 'open', tolerate);
      if (p !== undefined) res.failures.push(describeTrial(trial, `: ${p}`));
      else if (hitKnown) res.known++;
      else res.detected++;
      continue;
    }
    try {
      const out = await readEverything(store, m, file, 'exact', tolerate);
      if (out.problems.length > 0) res.failures.push(describeTrial(trial, `: ${out.problems.join('; ')}`));
      else if (hitKnown) res.known++;
      else if (out.detected) res.detected++;
      else res.harmless++;
    } finally {
      await store.close();
    }
  }
  return res;
}

describe(`store corruption: SSTs and MANIFEST (seed ${SEED})`, () => {
  const m = newModel();
  const base = new MemFileSystem();
  let ssts: string[] = [];

  beforeAll(async () => {
    await buildSstStore(base, m);
    ssts = (await base.list(DIR)).filter((n) => n.endsWith('.sst'));
    // The setup must produce what the trials are about.
    expect(ssts.length).toBeGreaterThanOrEqual(6);
    // A graceful close after flushing everything leaves no log: the SSTs and the MANIFEST are the store.
    expect((await base.list(DIR)).filter((n) => n.endsWith('.log'))).toHaveLength(0);
    // And the undamaged store must read back exactly.
    const clean = await openDamaged(base.clone(), {});
    try {
      const res = await readEverything(clean, m, 'none', 'exact');
      expect(res.problems).toEqual([]);
      expect(res.exact).toBe(true);
    } finally {
      await clean.close();
    }
  });

  it('every flipped SST byte is reported with file and offset, or changes nothing', async () => {
    const r = new Random(SEED ^ 0x5eed);
    const failures: string[] = [];
    let trials = 0;
    let detected = 0;
    for (const name of ssts) {
      const size = await base.size(`${DIR}/${name}`);
      const footer = Array.from({ length: FOOTER_BYTES }, (_, k) => size - FOOTER_BYTES + k);
      const offsets = pickOffsets(r, size, 120, footer);
      const res = await sweep(base, m, name, offsets, r, {}, () => NOTHING_TOLERATED);
      failures.push(...res.failures);
      trials += offsets.length;
      detected += res.detected + res.known;
    }
    expect(failures, failureReport(failures, trials)).toEqual([]);
    // Every SST byte is covered by a checksum: nearly every flip must be noticed.
    expect(detected).toBeGreaterThan(trials * 0.95);
  });

  it('every flipped MANIFEST byte is reported with file and offset, or changes nothing', async () => {
    const r = new Random(SEED ^ 0x3a41);
    const size = await base.size(`${DIR}/MANIFEST`);
    // The 20-byte header in full, then the payload.
    const offsets = pickOffsets(r, size, 200, Array.from({ length: 20 }, (_, k) => k));
    const res = await sweep(base, m, 'MANIFEST', offsets, r, {}, () => NOTHING_TOLERATED);
    expect(res.failures, failureReport(res.failures, offsets.length)).toEqual([]);
    expect(res.detected + res.known).toBeGreaterThan(offsets.length * 0.9);
  });

  it('the checks catch wrong data: with verifyChecksums off, flipped data-block bytes are reported as failures', async () => {
    // The sweep above passing means something only if its oracle sees altered data.
    const r = new Random(SEED ^ 0xbad);
    const name = ssts[0]!;
    const size = await base.size(`${DIR}/${name}`);
    const offsets = pickOffsets(r, Math.floor(size / 2), 40); // the first half: data blocks
    const res = await sweep(base, m, name, offsets, r, { verifyChecksums: false }, () => NOTHING_TOLERATED);
    expect(res.failures.some((f) => /wrong data|invented data/.test(f)), failureReport(res.failures, offsets.length)).toBe(true);
  });
});

// -------------------------------------------------------------------------------------
// WAL files

/** A store whose every cell lives only in its WAL files (two logs, fragmented records). */
async function buildWalStore(fs: MemFileSystem, m: Model): Promise<void> {
  const r = new Random(SEED ^ 0x1a1);
  const store = await openEmbeddedStore({ ...BASE_OPTS, fs, walFileBytes: 40 * 1024, flushOnClose: false });
  const t = await store.createTable(TABLE);
  await writeRounds(t, m, r, 2, async (round) => {
    // One value larger than a block: FIRST/MIDDLE/LAST fragments.
    if (round === 0) {
      await apply(t, m, [{ key: utf8(rowKey(7)), mutations: [{ type: 'put', family: 'g', qualifier: utf8('big'), value: utf8('B'.repeat(40_000)) }] }]);
    }
  });
  await store.close();
}

describe(`store corruption: WAL (seed ${SEED})`, () => {
  const m = newModel();
  const base = new MemFileSystem();
  let wals: string[] = [];

  beforeAll(async () => {
    await buildWalStore(base, m);
    wals = (await base.list(DIR)).filter((n) => n.endsWith('.log'));
    expect((await base.list(DIR)).filter((n) => n.endsWith('.sst'))).toEqual([]);
    expect(wals.length).toBeGreaterThanOrEqual(2);
    for (const w of wals) expect((await readWal(base, `${DIR}/${w}`)).tornTail).toBe(false);
    const clean = await openDamaged(base.clone(), {});
    try {
      const res = await readEverything(clean, m, 'none', 'exact');
      expect(res.problems).toEqual([]);
      expect(res.exact).toBe(true);
      expect(clean.engine.counters.recoveryDroppedBytes).toBe(0);
    } finally {
      await clean.close();
    }
  });

  it('a flipped WAL byte drops records (counted), never alters them; paranoidChecks refuses to open', async () => {
    const r = new Random(SEED ^ 0x7a1);
    const failures: string[] = [];
    let trials = 0;
    let dropped = 0;
    let refused = 0;
    for (const name of wals) {
      const path = `${DIR}/${name}`;
      const size = await base.size(path);
      const boundaries = [];
      for (let b = WAL_BLOCK_SIZE; b < size; b += WAL_BLOCK_SIZE) for (let k = -8; k < 8; k++) boundaries.push(b + k);
      const offsets = pickOffsets(r, size, 200, boundaries);
      for (const offset of offsets) {
        trials++;
        const trial: Trial = { file: name, offset, mask: pickMask(r) };
        const damaged = base.clone();
        damaged.corrupt(path, offset, trial.mask);

        // Default options: skip the damage, count it, return only written data.
        let store;
        try {
          store = await openDamaged(damaged.clone(), {});
        } catch (err) {
          // Only a damaged META record (the file's first 27 bytes) may stop the open.
          const p = errorProblem(err, name, 'open');
          if (p !== undefined) failures.push(describeTrial(trial, `: ${p}`));
          store = undefined;
        }
        if (store !== undefined) {
          try {
            const res = await readEverything(store, m, name, 'written');
            const lost = store.engine.counters.recoveryDroppedBytes;
            if (lost > 0) dropped++;
            if (res.problems.length > 0) failures.push(describeTrial(trial, `: ${res.problems.join('; ')}`));
            else if (!res.exact && lost === 0) {
              failures.push(describeTrial(trial, ': data was lost or rolled back, but recoveryDroppedBytes is 0 (silent loss)'));
            }
          } finally {
            await store.close();
          }
        }

        // paranoidChecks: refuse to open, naming file and offset, unless nothing was lost.
        let paranoid;
        try {
          paranoid = await openDamaged(damaged.clone(), { paranoidChecks: true });
        } catch (err) {
          const p = errorProblem(err, name, 'paranoid open');
          if (p !== undefined) failures.push(describeTrial(trial, `: ${p}`));
          else refused++;
          continue;
        }
        try {
          const res = await readEverything(paranoid, m, name, 'exact');
          if (res.problems.length > 0) failures.push(describeTrial(trial, ` (paranoid): ${res.problems.join('; ')}`));
        } finally {
          await paranoid.close();
        }
      }
    }
    expect(failures, failureReport(failures, trials)).toEqual([]);
    // Most flips hit a record: they must have been noticed.
    expect(dropped).toBeGreaterThan(trials * 0.5);
    expect(refused).toBeGreaterThan(trials * 0.5);
  });
});

// -------------------------------------------------------------------------------------
// Known engine bugs. Each is a minimal repro asserting the right behavior, marked
// Bugs these sweeps found, each pinned by a small reproduction.

describe('store corruption: regressions', () => {
  it('regression: a flipped SST footer version byte is STORE_CORRUPTION, not STORE_NOT_SUPPORTED', async () => {
    // core/sst/sst-format.ts decodeFooter() checks `version > SST_FORMAT_VERSION` before the
    // footer checksum that covers it, so bit rot reads as "written by a newer version".
    const mem = new MemFileSystem();
    await buildSstStore(mem, newModel());
    const name = (await mem.list(DIR)).find((n) => n.endsWith('.sst'))!;
    const size = await mem.size(`${DIR}/${name}`);
    mem.corrupt(`${DIR}/${name}`, size - FOOTER_BYTES + 39, 0x02); // version 1 -> 3
    const store = await openDamaged(mem, {});
    try {
      const t = await store.openTable(TABLE.name);
      const fail = (err: unknown): never => {
        throw err;
      };
      await expect(collect(t, false, fail)).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
    } finally {
      await store.close();
    }
  });

  it('regression: a flipped MANIFEST version byte is STORE_CORRUPTION, not STORE_NOT_SUPPORTED', async () => {
    // core/lsm/manifest.ts: the crc covers only the payload; the header's version (and
    // length) are unprotected, so bit rot in the version reads as a newer format.
    const mem = new MemFileSystem();
    await buildSstStore(mem, newModel());
    mem.corrupt(`${DIR}/MANIFEST`, 11, 0x02); // version 1 -> 3
    await expect(openDamaged(mem, {})).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
  });

  it('regression: a reverse scan over a damaged block fails with STORE_CORRUPTION, not a TypeError', async () => {
    // core/lsm/read-path.ts (reverse scan) calls readRow() right after
    // `it.seek(rowStartKey(row))` without checking `it.valid`. When that seek fails on a
    // damaged block and no other source holds a key >= row, MergingIterator.key() reads an
    // empty heap. The forward scan of the same store reports STORE_CORRUPTION correctly.
    const mem = new MemFileSystem();
    const opts = { ...BASE_OPTS, blockSizeBytes: 256, compression: 'none', compactionMinFiles: 100 } as const;
    const store = await openEmbeddedStore({ ...opts, fs: mem });
    const t = await store.createTable({ name: TABLE.name, families: TABLE.families }); // one region
    const cell = (q: string) => ({ type: 'put' as const, family: 'f', qualifier: utf8(q), value: utf8('v'.repeat(30)) });
    // SST 1: row 'a' and row 'z', whose cells span several blocks; SST 2: row 'm' only.
    await t.mutate([{ key: utf8('a'), mutations: [cell('q')] }, { key: utf8('z'), mutations: Array.from({ length: 20 }, (_, i) => cell(`q${String(i).padStart(2, '0')}`)) }]);
    await t.flush();
    await t.mutate([{ key: utf8('m'), mutations: [cell('q')] }]);
    await t.flush();
    await store.close();
    const first = (await mem.list(DIR)).filter((n) => n.endsWith('.sst')).sort()[0]!;
    mem.corrupt(`${DIR}/${first}`, 0, 0x01); // data block #0: row 'a' and the first cells of 'z'
    const reopened = await openDamaged(mem, opts);
    try {
      const t2 = await reopened.openTable(TABLE.name);
      const fail = (err: unknown): never => {
        throw err;
      };
      await expect(collect(t2, false, fail)).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
      await expect(collect(t2, true, fail)).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
    } finally {
      await reopened.close();
    }
  });

  it('regression: a flipped WAL length byte that reads as a torn tail is counted, never silent', async () => {
    // core/wal/wal-reader.ts treats a record whose (damaged) length runs past EOF as a torn
    // tail, dropping it and every later record; core/lsm/engine.ts ignores tornTailBytes, so
    // recoveryDroppedBytes stays 0 and paranoidChecks does not refuse to open.
    const mem = new MemFileSystem();
    const store = await openEmbeddedStore({ ...BASE_OPTS, fs: mem, flushOnClose: false });
    const t = await store.createTable(TABLE);
    for (let i = 0; i < 10; i++) {
      await t.mutate([{ key: utf8(rowKey(i)), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(`value-${i}`) }] }]);
    }
    await store.close();
    const name = (await mem.list(DIR)).find((n) => n.endsWith('.log'))!;
    const path = `${DIR}/${name}`;
    const clean = await readWal(mem, path);
    let header = WAL_META_RECORD_SIZE;
    for (let i = 0; i < 7; i++) header += WAL_HEADER_SIZE + clean.records[i]!.length;
    mem.corrupt(path, header + 4, 0x01); // record #7's length + 256: fits the block, runs past EOF
    const reopened = await openDamaged(mem.clone(), {});
    let lostRows: number;
    let droppedBytes: number;
    try {
      const rows = await (await reopened.openTable(TABLE.name)).get(Array.from({ length: 10 }, (_, i) => utf8(rowKey(i))));
      lostRows = rows.filter((x) => x === undefined).length;
      droppedBytes = reopened.engine.counters.recoveryDroppedBytes;
    } finally {
      await reopened.close();
    }
    expect(lostRows).toBe(3); // records #7..#9, all acknowledged with durability 'sync'
    expect(droppedBytes, 'the loss must be counted').toBeGreaterThan(0);
  });
});
