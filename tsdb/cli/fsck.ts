/**
 * `horae fsck`: checks a store (opened by the caller, so WAL recovery has just run) and
 * prints a report. Exit status 0 when no error was found, 1 otherwise (warnings alone,
 * like a UID leaked by an interrupted assignment, keep 0).
 *
 *   store  bytes dropped by WAL recovery, failed background work, a write failure
 *   uid    each forward mapping (name → id) has the matching reverse one (id → name) and
 *          back, ids have the kind's width, no id has two names, each kind's counter is
 *          at least its largest id
 *   data   each row key decodes with the configured widths, its salt is right, its UIDs
 *          have names, every data cell decodes (mergeRowCells), an hour cell's summary
 *          agrees with its points; rows of closed hours not yet compressed are counted
 *          (not a problem: the server compresses them)
 *
 * --fix: compresses closed hours (a forced sweep), recreates missing reverse mappings
 * (when the id has no other name) and raises lagging counters; then checks again and
 * reports what is left.
 */
import { toHex, utf8 } from '../../core/api/bytes.js';
import { checkHourSummary } from '../codec/hour-codec.js';
import { needsCompaction } from '../compact/hour-compactor.js';
import { mergeRowCells } from '../query/row-merge.js';
import { isHourCellQualifier } from '../schema/qualifier.js';
import { decodeRowKey } from '../schema/row-key.js';
import { saltOfKey } from '../schema/salt.js';
import { DATA_FAMILY } from '../tables.js';
import type { Tsdb } from '../tsdb.js';
import { UID_COUNTER_ROW, UID_FAMILY_ID, UID_FAMILY_NAME, UID_KINDS, UID_QUALIFIER } from '../uid/uid-kind.js';
import type { UidKind } from '../uid/uid-kind.js';
import type { CliWriter } from './progress.js';

export interface FsckOptions {
  readonly fix?: boolean;
  /** Problems listed per kind before only counting (default 20). */
  readonly maxListed?: number;
}

interface Problem {
  readonly kind: string;
  readonly error: boolean;
  readonly message: string;
}

interface UidState {
  readonly forward: Map<string, string>;
  readonly reverse: Map<string, string>;
  counter: bigint;
  maxId: bigint;
}

export interface FsckResult {
  readonly problems: readonly Problem[];
  readonly rows: number;
  readonly points: number;
  readonly series: number;
  readonly uncompacted: number;
  readonly uids: Readonly<Record<UidKind, number>>;
  /** Fixable UID damage: [kind, name, id hex] without a reverse row; kinds whose counter lags. */
  readonly missingReverse: ReadonlyArray<readonly [UidKind, string, string]>;
  readonly laggingCounters: ReadonlyArray<readonly [UidKind, bigint]>;
}

const KIND_OF_QUALIFIER = new Map<string, UidKind>(UID_KINDS.map((k) => [UID_QUALIFIER[k], k]));

function idNumber(hex: string): bigint {
  return BigInt(`0x${hex}`);
}

/** Runs every check once. */
export async function checkStore(tsdb: Tsdb): Promise<FsckResult> {
  const problems: Problem[] = [];
  const problem = (kind: string, error: boolean, message: string): void => void problems.push({ kind, error, message });

  const st = await tsdb.store.stats();
  if ((st.recoveryDroppedBytes ?? 0) > 0) problem('store.recovery_dropped', true, `WAL recovery dropped ${st.recoveryDroppedBytes} bytes of damaged records (acknowledged writes lost)`);
  if ((st.backgroundErrors ?? 0) > 0) problem('store.background_errors', false, `${st.backgroundErrors} background operations failed; last: ${st.lastBackgroundError ?? '?'}`);
  if (st.writeFailure !== undefined) problem('store.write_failure', true, `the store stopped accepting writes: ${st.writeFailure}`);

  // ---- UID table ----
  const uid = new Map<UidKind, UidState>(UID_KINDS.map((k) => [k, { forward: new Map(), reverse: new Map(), counter: 0n, maxId: 0n }]));
  const width = (k: UidKind): number => tsdb.uidTable(k).width;
  for await (const rows of tsdb.uid.scan({ batchRows: 1000 })) {
    for (const row of rows) {
      const isCounter = row.key.length === 1 && row.key[0] === UID_COUNTER_ROW[0];
      for (const c of row.cells) {
        const q = Buffer.from(c.qualifier).toString('utf8');
        const kind = KIND_OF_QUALIFIER.get(q);
        if (isCounter) {
          if (c.family === UID_FAMILY_ID && kind !== undefined && c.value.length === 8) {
            uid.get(kind)!.counter = Buffer.from(c.value).readBigInt64BE(0);
          } else if (!(c.family === UID_FAMILY_NAME && q === 'schema')) {
            problem('uid.unknown_cell', false, `counter row has an unexpected cell ${c.family}:${q}`);
          }
          continue;
        }
        if (kind === undefined || (c.family !== UID_FAMILY_ID && c.family !== UID_FAMILY_NAME)) {
          problem('uid.unknown_cell', false, `row ${toHex(row.key)} has an unexpected cell ${c.family}:${q}`);
          continue;
        }
        const s = uid.get(kind)!;
        if (c.family === UID_FAMILY_ID) {
          const name = Buffer.from(row.key).toString('utf8');
          if (c.value.length !== width(kind)) {
            problem('uid.bad_width', true, `${q} '${name}' -> ${toHex(c.value)}: ${c.value.length} bytes, expected ${width(kind)}`);
          } else {
            s.forward.set(name, toHex(c.value).toUpperCase());
          }
        } else if (row.key.length !== width(kind)) {
          problem('uid.bad_width', true, `${q} UID ${toHex(row.key)}: ${row.key.length} bytes, expected ${width(kind)}`);
        } else {
          s.reverse.set(toHex(row.key).toUpperCase(), Buffer.from(c.value).toString('utf8'));
        }
      }
    }
  }
  const missingReverse: Array<readonly [UidKind, string, string]> = [];
  const laggingCounters: Array<readonly [UidKind, bigint]> = [];
  for (const [kind, s] of uid) {
    const q = UID_QUALIFIER[kind];
    const namesOfId = new Map<string, string[]>();
    for (const [name, id] of s.forward) {
      namesOfId.set(id, [...(namesOfId.get(id) ?? []), name]);
      if (idNumber(id) > s.maxId) s.maxId = idNumber(id);
      const back = s.reverse.get(id);
      if (back === undefined) {
        problem('uid.missing_reverse', true, `${q} '${name}' -> ${id} has no reverse mapping`);
        missingReverse.push([kind, name, id]);
      } else if (back !== name) {
        problem('uid.reverse_mismatch', true, `${q} '${name}' -> ${id}, but ${id} -> '${back}'`);
      }
    }
    for (const [id, names] of namesOfId) {
      if (names.length > 1) problem('uid.duplicate_id', true, `${q} ${id} is the UID of ${names.map((n) => `'${n}'`).join(', ')}`);
    }
    for (const [id, name] of s.reverse) {
      if (idNumber(id) > s.maxId) s.maxId = idNumber(id);
      const fwd = s.forward.get(name);
      if (fwd === undefined) problem('uid.orphan_reverse', false, `${q} ${id} -> '${name}' has no forward mapping (an interrupted assignment leaked the id)`);
      else if (fwd !== id) problem('uid.orphan_reverse', false, `${q} ${id} -> '${name}', but '${name}' -> ${fwd} (stale reverse mapping)`);
    }
    if (s.counter < s.maxId) {
      problem('uid.counter_behind', true, `${q} counter is ${s.counter}, but UID ${s.maxId} is assigned`);
      laggingCounters.push([kind, s.maxId - s.counter]);
    }
  }

  // ---- data table ----
  const w = tsdb.widths;
  const now = tsdb.now();
  const series = new Set<string>();
  const unknown = new Set<string>();
  let rows = 0;
  let points = 0;
  let uncompacted = 0;
  const named = (kind: UidKind, id: Uint8Array, rowHex: string): void => {
    const hex = toHex(id).toUpperCase();
    if (uid.get(kind)!.reverse.has(hex) || unknown.has(`${kind}:${hex}`)) return;
    unknown.add(`${kind}:${hex}`);
    problem('data.unknown_uid', true, `${UID_QUALIFIER[kind]} UID ${hex} (first seen in row ${rowHex}) has no name`);
  };
  for await (const batch of tsdb.data.scan({ families: [DATA_FAMILY], batchRows: 1000 })) {
    for (const row of batch) {
      rows++;
      const rowHex = toHex(row.key);
      let key;
      try {
        key = decodeRowKey(w, row.key);
      } catch (err) {
        problem('data.bad_key', true, (err as Error).message);
        continue;
      }
      if (key.baseTimeSec % 3600 !== 0) problem('data.bad_key', true, `row ${rowHex}: base time ${key.baseTimeSec} is not hour-aligned`);
      if (w.saltWidth > 0 && saltOfKey(row.key, w) !== key.salt) {
        problem('data.bad_salt', true, `row ${rowHex}: salt ${key.salt}, expected ${saltOfKey(row.key, w)}`);
      }
      series.add(Buffer.from(row.key.subarray(w.saltWidth, w.saltWidth + w.metric)).toString('latin1') +
        Buffer.from(row.key.subarray(w.saltWidth + w.metric + 4)).toString('latin1'));
      if (key.metric.some((b) => b !== 0)) {
        named('metric', key.metric, rowHex);
        for (const [k, v] of key.tags) {
          named('tagk', k, rowHex);
          named('tagv', v, rowHex);
        }
      }
      try {
        points += mergeRowCells(row.cells).count;
        for (const c of row.cells) {
          if (!isHourCellQualifier(c.qualifier)) continue;
          const wrong = checkHourSummary(c.value);
          if (wrong !== undefined) problem('data.bad_summary', true, `row ${rowHex}: ${wrong}`);
        }
      } catch (err) {
        problem('data.bad_cell', true, `row ${rowHex}: ${(err as Error).message}`);
      }
      if ((key.baseTimeSec + 3600) * 1000 <= now && needsCompaction(row.cells)) uncompacted++;
    }
  }
  const uids = { metric: uid.get('metric')!.forward.size, tagk: uid.get('tagk')!.forward.size, tagv: uid.get('tagv')!.forward.size };
  return { problems, rows, points, series: series.size, uncompacted, uids, missingReverse, laggingCounters };
}

/** Prints the report of one check; returns the number of errors. */
export function printReport(r: FsckResult, out: CliWriter, maxListed = 20): number {
  out.write(`uid: ${r.uids.metric} metrics, ${r.uids.tagk} tagk, ${r.uids.tagv} tagv\n`);
  out.write(`data: ${r.rows} rows, ${r.points} points, ${r.series} series; ${r.uncompacted} rows of closed hours not yet compressed\n`);
  const byKind = new Map<string, Problem[]>();
  for (const p of r.problems) byKind.set(p.kind, [...(byKind.get(p.kind) ?? []), p]);
  for (const [kind, ps] of byKind) {
    for (const p of ps.slice(0, maxListed)) out.write(`${p.error ? 'ERROR' : 'warning'} ${kind}: ${p.message}\n`);
    if (ps.length > maxListed) out.write(`... ${ps.length - maxListed} more ${kind}\n`);
  }
  const errors = r.problems.filter((p) => p.error).length;
  const counts = [...byKind].map(([k, ps]) => `${k} ${ps.length}`).join(', ');
  out.write(r.problems.length === 0 ? 'summary: no problems found\n'
    : `summary: ${errors} errors, ${r.problems.length - errors} warnings (${counts})\n`);
  return errors;
}

/** `horae fsck [--fix]`: returns the exit status. */
export async function runFsck(tsdb: Tsdb, opts: FsckOptions, io: { stdout: CliWriter }): Promise<number> {
  const first = await checkStore(tsdb);
  const errors = printReport(first, io.stdout, opts.maxListed);
  const fixable = first.uncompacted + first.missingReverse.length + first.laggingCounters.length;
  if (opts.fix !== true || fixable === 0) return errors > 0 ? 1 : 0;

  const sync = { durability: 'sync' } as const;
  for (const [kind, name, id] of first.missingReverse) {
    if (first.missingReverse.some(([k, n, i]) => k === kind && i === id && n !== name)) continue; // two names: no safe choice
    const ref = { family: UID_FAMILY_NAME, qualifier: utf8(UID_QUALIFIER[kind]) };
    const ok = await tsdb.uid.checkAndPut(Buffer.from(id, 'hex'), ref, undefined, [{ type: 'put', ...ref, value: utf8(name) }], sync);
    if (ok) io.stdout.write(`fixed: ${UID_QUALIFIER[kind]} ${id} -> '${name}' recreated\n`);
  }
  for (const [kind, delta] of first.laggingCounters) {
    const n = await tsdb.uid.increment(UID_COUNTER_ROW, { family: UID_FAMILY_ID, qualifier: utf8(UID_QUALIFIER[kind]) }, delta, sync);
    io.stdout.write(`fixed: ${UID_QUALIFIER[kind]} counter raised to ${n}\n`);
  }
  if (first.uncompacted > 0) {
    const before = tsdb.compactor.stats();
    await tsdb.compactor.runOnce({ force: true, sweep: true });
    const after = tsdb.compactor.stats();
    io.stdout.write(`fixed: compressed ${first.uncompacted} closed series-hours\n`);
    if (after.errors > before.errors) io.stdout.write(`could not compress every hour: ${after.lastError ?? '?'}\n`);
  }
  tsdb.dropCaches();
  io.stdout.write('after --fix:\n');
  const left = printReport(await checkStore(tsdb), io.stdout, opts.maxListed);
  if (left > 0) io.stdout.write(`${left} errors could not be fixed\n`);
  return left > 0 ? 1 : 0;
}
