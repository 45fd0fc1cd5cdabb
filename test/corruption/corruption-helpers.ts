/**
 * Helpers of the corruption tests (store-corruption.test.ts explains them): the model of
 * what was written, reading a damaged store and judging what it returns, the stores the
 * sweeps damage, and the sweep over one file's offsets.
 */
import { it } from 'vitest';
import { isStoreError } from '../../core/api/errors.js';
import { latin1, utf8 } from '../../core/api/bytes.js';
import type { Row, RowMutation, Store, Table } from '../../core/api/store.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import type { EmbeddedOptions, EmbeddedStoreExtras } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { Random } from '../../core/util/random.js';

export const SEED = process.env.TEST_SEED !== undefined && process.env.TEST_SEED !== '' ? Number(process.env.TEST_SEED) : 20240611;
export const NOW = 1_700_000_000_000;
export const DIR = '/db';
export const TABLE = { name: 't', families: [{ name: 'f' }, { name: 'g', maxVersions: 2 }], splitPoints: [utf8('r060')] };
export const BASE_OPTS = { dir: DIR, clock: () => NOW, maintenanceIntervalMs: 0, autoSplit: false } as const;
/** Rows per get() call. */
export const GET_BATCH = 40;
/** Failures listed in one assertion message. */
export const MAX_LISTED = 15;

/** `row/family/qualifier` -> every value written to the cell, oldest first. */
export type History = Map<string, string[]>;
/** `row/family/qualifier` -> the value a read must return (newest version only). */
export type Expected = Map<string, string>;

export interface Model {
  readonly rows: string[];
  readonly history: History;
  readonly expected: Expected;
}

export function cellId(row: string, family: string, qualifier: string): string {
  return `${row}/${family}/${qualifier}`;
}

/** Applies mutations to the table and to the model (puts and cell/row deletes). */
export async function apply(t: Table, m: Model, muts: RowMutation[]): Promise<void> {
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

export function put(r: Random, row: number, family: string, q: string, tag: string): RowMutation['mutations'][number] {
  // Distinct, partly random values: a misplaced or altered byte can never look right.
  const pad = Array.from(r.bytes(r.range(4, 40)), (b) => (b % 36).toString(36)).join('');
  return { type: 'put', family, qualifier: utf8(q), value: utf8(`${rowKey(row)}:${family}:${q}:${tag}:${pad}`) };
}

export function rowKey(i: number): string {
  return `r${String(i).padStart(3, '0')}`;
}

export function newModel(): Model {
  return { rows: [], history: new Map(), expected: new Map() };
}

/** Writes a few rounds of puts, overwrites and deletes into a region-split table. */
export async function writeRounds(t: Table, m: Model, r: Random, rounds: number, between: (round: number) => Promise<void>): Promise<void> {
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
export function cellsOf(row: Row): [string, string][] {
  return row.cells.map((c) => [cellId(latin1(row.key), c.family, latin1(c.qualifier)), latin1(c.value)]);
}

/** The expected rows, in key order. */
export function expectedRows(m: Model): [string, [string, string][]][] {
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

export interface ReadOutcome {
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
export type Tolerate = (err: unknown) => boolean;
export const NOTHING_TOLERATED: Tolerate = () => false;

/** Checks an error: STORE_CORRUPTION naming `file` and an offset. Returns a problem or undefined. */
export function errorProblem(err: unknown, file: string, what: string, tolerate: Tolerate = NOTHING_TOLERATED): string | undefined {
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
export type Strictness = 'exact' | 'written';

/** JSON for a failure message, cut to a readable length. */
export function short(x: unknown): string {
  const s = JSON.stringify(x) ?? 'undefined';
  return s.length > 90 ? `${s.slice(0, 90)}…(${s.length} chars)` : s;
}

export function compareRows(got: readonly Row[], want: [string, [string, string][]][], m: Model, strict: Strictness, what: string): { problem?: string; exact: boolean } {
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
export async function collect(t: Table, reverse: boolean, onError: (err: unknown) => void, maxRows = Infinity): Promise<Row[]> {
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
export async function readEverything(store: Store, m: Model, file: string, strict: Strictness, tolerate: Tolerate = NOTHING_TOLERATED): Promise<ReadOutcome> {
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

export interface Trial {
  readonly file: string;
  readonly offset: number;
  readonly mask: number;
}

export function describeTrial(t: Trial, extra = ''): string {
  return `seed=${SEED} file=${t.file} offset=${t.offset} mask=0x${t.mask.toString(16).padStart(2, '0')}${extra}`;
}

/** Offsets to damage in a file of `size` bytes: ~`samples` by stride, both ends, extras, random. */
export function pickOffsets(r: Random, size: number, samples: number, extra: readonly number[] = []): number[] {
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
export function pickMask(r: Random): number {
  return r.chance(0.6) ? 1 << r.int(8) : r.range(1, 255);
}

export async function openDamaged(fs: MemFileSystem, opts: Partial<EmbeddedOptions>): Promise<Store & EmbeddedStoreExtras> {
  return openEmbeddedStore({ ...BASE_OPTS, ...opts, fs, flushOnClose: false });
}

export function failureReport(failures: readonly string[], trials: number): string {
  const listed = failures.slice(0, MAX_LISTED).join('\n  ');
  return `${failures.length} of ${trials} trials failed (replay with TEST_SEED=${SEED}):\n  ${listed}${failures.length > MAX_LISTED ? `\n  ... and ${failures.length - MAX_LISTED} more` : ''}`;
}


// -------------------------------------------------------------------------------------
// SSTs and the MANIFEST

export interface SweepResult {
  readonly failures: string[];
  detected: number;
  harmless: number;
  /** Trials that hit a known bug (tolerated by signature). */
  known: number;
}

/** A store with several SSTs per region (one compacted, two flushed), written through `m`. */
export async function buildSstStore(fs: MemFileSystem, m: Model): Promise<void> {
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
export async function sweep(
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


// -------------------------------------------------------------------------------------
// WAL files

/** A store whose every cell lives only in its WAL files (two logs, fragmented records). */
export async function buildWalStore(fs: MemFileSystem, m: Model): Promise<void> {
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
