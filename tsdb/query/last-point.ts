/**
 * The newest point of one series (/api/query/last). With a back-scan of N hours it reads
 * the rows of the current hour and the N before it, as OpenTSDB does. Without one
 * (OpenTSDB then needs its meta table), Horae scans the series' salt bucket in reverse
 * with a fuzzy-key filter that fixes every byte but the base time, so the newest row of
 * the series is found however old it is.
 *
 * Many series at once (lastPoints): one reverse scan per salt bucket and metric, with one
 * fuzzy rule per series of that bucket, takes the newest row of each series as it passes
 * and stops when every one is found — for series written in the same recent hours that is
 * one short scan per bucket instead of one scan per series. A bucket scan that reads more
 * than a few rows per series without finding them all (some series stopped long ago)
 * leaves the rest to the per-series scan, so a stale series never drags a whole bucket in.
 *
 * Before any scan, series with a trusted newest-hour hint (meta/newest-hours.ts) are read
 * with one batched get of the row at their hint. A store without reverse scans (the
 * Bigtable emulator) reads each other series forward, to its newest row: that row's hour
 * becomes the series' trusted hint, so the next read of it is the batched get.
 *
 * Every read borrows its values (ReadOptionsBase.borrowValues): a row's newest point is
 * decoded before the next call into the store, and only numbers are kept. The bucket
 * scans then start past every row of their metric (future hours included), so the first
 * row of a series they pass is its newest: that hour becomes the series' trusted hint.
 *
 * In front of all that, the last-value cache (meta/last-values.ts) answers the series it
 * holds without a read, and keeps what the reads find.
 */
import { latin1, prefixEnd } from '../../core/api/bytes.js';
import type { RowFilter } from '../../core/api/store.js';
import type { PointBlock } from '../codec/point-block.js';
import { mergeRowCells } from './row-merge.js';
import { saltBucket, writeSalt } from '../schema/salt.js';
import { MAX_BASE_TIME_S, baseTimeOfKey, patchBaseTime } from '../schema/row-key.js';
import { DATA_FAMILY } from '../tables.js';
import type { LastPoint } from '../meta/last-values.js';
import type { Tsdb } from '../tsdb.js';

export type { LastPoint } from '../meta/last-values.js';

/** The row-key template of a TSUID: salt filled in, base time 0. */
export function seriesKeyOfTsuid(tsdb: Tsdb, tsuid: Uint8Array): Uint8Array {
  const w = tsdb.widths;
  const key = new Uint8Array(w.saltWidth + tsuid.length + 4);
  key.set(tsuid.subarray(0, w.metric), w.saltWidth);
  key.set(tsuid.subarray(w.metric), w.saltWidth + w.metric + 4);
  if (w.saltWidth > 0) writeSalt(key, saltBucket(tsuid.subarray(0, w.metric), tsuid.subarray(w.metric), w.saltBuckets), w.saltWidth);
  return key;
}

export async function lastPoint(tsdb: Tsdb, tsuid: Uint8Array, backScanHours: number, nowMs: number): Promise<LastPoint | undefined> {
  const w = tsdb.widths;
  const template = seriesKeyOfTsuid(tsdb, tsuid);
  const baseOffset = w.saltWidth + w.metric;
  const nowHour = Math.min(Math.floor(nowMs / 3_600_000) * 3600, MAX_BASE_TIME_S);
  if (backScanHours > 0) {
    const keys: Uint8Array[] = [];
    for (let h = 0; h <= backScanHours && nowHour - h * 3600 >= 0; h++) keys.push(patchBaseTime(template, baseOffset, nowHour - h * 3600));
    const rows = await tsdb.data.get(keys, { families: [DATA_FAMILY], borrowValues: true });
    for (let i = 0; i < rows.length; i++) {
      const p = newest(rows[i]?.cells, baseTimeOfKey(w, keys[i]!));
      if (p !== undefined) return p;
    }
    return undefined;
  }
  const mask = new Uint8Array(template.length).fill(1);
  mask.fill(0, baseOffset, baseOffset + 4);
  const filter: RowFilter = {
    kind: 'and',
    filters: [{ kind: 'fuzzyKey', rules: [{ template, mask }] }, { kind: 'keyRegex', pattern: `.{${template.length}}` }],
  };
  const start = template.subarray(0, baseOffset);
  // One past the current hour's prefix: [salt][metric][nowHour + 1 h) (or the end of the metric).
  const stop = nowHour + 3600 > MAX_BASE_TIME_S ? undefined : patchBaseTime(template, baseOffset, nowHour + 3600).subarray(0, baseOffset + 4);
  if (!tsdb.store.capabilities.reverseScan) {
    // A backend without reverse scans (the Bigtable emulator): read the series' rows
    // forward and keep the newest point seen. With hints, on past the current hour to the
    // metric's end: the newest row seen becomes the series' trusted hint.
    const hints = tsdb.newestHours;
    const token = hints === undefined ? -1 : hints.beginRead();
    const end = token >= 0 ? endOf(start) : stop;
    let last: LastPoint | undefined;
    let newestBase = -1;
    for await (const rows of tsdb.data.scan({ start: start.slice(), ...(end === undefined ? {} : { end: end.slice() }), filter, families: [DATA_FAMILY], batchRows: 256, borrowValues: true })) {
      for (const row of rows) {
        const base = baseTimeOfKey(w, row.key);
        const p = newest(row.cells, base);
        if (p === undefined) continue;
        newestBase = base;
        if (base <= nowHour) last = p;
      }
    }
    if (token >= 0 && newestBase >= 0) hints!.establish(tsuid, newestBase, token);
    return last;
  }
  for await (const rows of tsdb.data.scan({ start: start.slice(), ...(stop === undefined ? {} : { end: stop.slice() }), reverse: true, filter, families: [DATA_FAMILY], batchRows: 16, borrowValues: true })) {
    for (const row of rows) {
      const p = newest(row.cells, baseTimeOfKey(w, row.key));
      if (p !== undefined) return p;
    }
  }
  return undefined;
}

/** Rows a bucket scan may read per series it looks for before leaving the rest to lastPoint. */
const ROWS_PER_SERIES_BUDGET = 4;

/**
 * The newest point of each series (undefined for a series with no point, or whose newest
 * point is past its metric's retention), in `tsuids` order: from the last-value cache
 * (meta/last-values.ts) where it holds the series, else read.
 */
export async function lastPoints(tsdb: Tsdb, tsuids: readonly Uint8Array[], backScanHours: number, nowMs: number): Promise<Array<LastPoint | undefined>> {
  const out = await newestPoints(tsdb, tsuids, backScanHours, nowMs);
  if (!tsdb.hasRetention) return out;
  const from = new Map<string, number>();
  for (let i = 0; i < out.length; i++) {
    const p = out[i];
    if (p === undefined) continue;
    const metric = tsuids[i]!.subarray(0, tsdb.widths.metric);
    const id = latin1(metric);
    let cut = from.get(id);
    if (cut === undefined) from.set(id, (cut = await tsdb.retainedFromUid(metric)));
    if (p.ts < cut) out[i] = undefined;
  }
  return out;
}

async function newestPoints(tsdb: Tsdb, tsuids: readonly Uint8Array[], backScanHours: number, nowMs: number): Promise<Array<LastPoint | undefined>> {
  const cache = tsdb.lastValues;
  if (cache === undefined) return readLastPoints(tsdb, tsuids, backScanHours, nowMs);
  const nowHour = Math.min(Math.floor(nowMs / 3_600_000) * 3600, MAX_BASE_TIME_S);
  const out: Array<LastPoint | undefined> = new Array<LastPoint | undefined>(tsuids.length).fill(undefined);
  const missed: number[] = [];
  const keys: string[] = [];
  for (let i = 0; i < tsuids.length; i++) {
    const key = cacheKeyOf(tsuids[i]!);
    const p = cache.get(key, nowHour);
    if (p === undefined) {
      missed.push(i);
      keys.push(key);
    } else if (p !== null && (backScanHours === 0 || p.ts >= (nowHour - backScanHours * 3600) * 1000)) {
      out[i] = p; // (with a back-scan, only the hours it reads count)
    }
  }
  if (missed.length === 0) return out;
  // A back-scan finds the newest point of its hours, not the series': nothing to keep.
  const token = backScanHours === 0 ? cache.begin(keys) : -1;
  const found = await readLastPoints(tsdb, missed.map((i) => tsuids[i]!), backScanHours, nowMs);
  for (let k = 0; k < missed.length; k++) {
    out[missed[k]!] = found[k];
    if (token >= 0) cache.finish(keys[k]!, found[k], nowHour, token);
  }
  return out;
}

/** TSUIDs as the last-value cache keys them (latin1), kept per TSUID object (the series index hands out the same ones). */
const cacheKeys = new WeakMap<Uint8Array, string>();

function cacheKeyOf(tsuid: Uint8Array): string {
  let k = cacheKeys.get(tsuid);
  if (k === undefined) cacheKeys.set(tsuid, (k = latin1(tsuid)));
  return k;
}

/** lastPoints without the cache: every series read from the store. */
async function readLastPoints(tsdb: Tsdb, tsuids: readonly Uint8Array[], backScanHours: number, nowMs: number): Promise<Array<LastPoint | undefined>> {
  const out: Array<LastPoint | undefined> = new Array<LastPoint | undefined>(tsuids.length).fill(undefined);
  if (backScanHours > 0 || (tsuids.length < 2 && tsdb.newestHours === undefined)) {
    await Promise.all(tsuids.map(async (t, i) => { out[i] = await lastPoint(tsdb, t, backScanHours, nowMs); }));
    return out;
  }
  const w = tsdb.widths;
  const baseOffset = w.saltWidth + w.metric;
  const nowHour = Math.min(Math.floor(nowMs / 3_600_000) * 3600, MAX_BASE_TIME_S);
  const hints = tsdb.newestHours;
  const unhinted = hints === undefined ? tsuids.map((_, i) => i) : await readHinted(tsdb, tsuids, nowHour, out);
  if (unhinted.length === 0) return out;
  if (!tsdb.store.capabilities.reverseScan) {
    // No reverse scans (the Bigtable emulator): one forward scan per series (lastPoint).
    await Promise.all(unhinted.map(async (i) => { out[i] = await lastPoint(tsdb, tsuids[i]!, 0, nowMs); }));
    return out;
  }
  const token = hints === undefined ? -1 : hints.beginRead();
  // Series by (salt, metric): the key prefix every one of their rows starts with.
  const groups = new Map<string, { prefix: Uint8Array; members: Array<{ i: number; template: Uint8Array }> }>();
  unhinted.forEach((i) => {
    const tsuid = tsuids[i]!;
    const template = seriesKeyOfTsuid(tsdb, tsuid);
    const prefix = template.subarray(0, baseOffset);
    const id = String.fromCharCode(...prefix);
    let g = groups.get(id);
    if (g === undefined) groups.set(id, (g = { prefix, members: [] }));
    g.members.push({ i, template });
  });
  const leftOver: number[] = [];
  await Promise.all([...groups.values()].map(async (g) => {
    const byId = new Map<string, number>();
    const rules = g.members.map(({ i, template }) => {
      byId.set(seriesIdOfKey(template, baseOffset), i);
      const mask = new Uint8Array(template.length).fill(1);
      mask.fill(0, baseOffset, baseOffset + 4);
      return { template, mask };
    });
    const lengths = [...new Set(g.members.map((m) => m.template.length))];
    const filter: RowFilter = {
      kind: 'and',
      filters: [{ kind: 'fuzzyKey', rules }, { kind: 'keyRegex', pattern: lengths.map((n) => `.{${n}}`).join('|') }],
    };
    // With hints the scan starts past the metric's last row (future hours too), so the
    // first row of a series it passes is the series' newest; else past the current hour.
    const stop = token >= 0 || nowHour + 3600 > MAX_BASE_TIME_S ? endOf(g.prefix) : patchBaseTime(g.members[0]!.template, baseOffset, nowHour + 3600).subarray(0, baseOffset + 4);
    const pending = new Set(byId.values());
    /** Series whose newest row (with a point) the scan has passed, hour not yet trusted. */
    const seen = new Set<number>();
    let budget = ROWS_PER_SERIES_BUDGET * g.members.length;
    scan: for await (const rows of tsdb.data.scan({ start: g.prefix.slice(), ...(stop === undefined ? {} : { end: stop.slice() }), reverse: true, filter, families: [DATA_FAMILY], batchRows: g.members.length, borrowValues: true })) {
      for (const row of rows) {
        const i = byId.get(seriesIdOfKey(row.key, baseOffset));
        if (i !== undefined && pending.has(i)) {
          const base = baseTimeOfKey(w, row.key);
          const p = newest(row.cells, base);
          if (p !== undefined) {
            if (token >= 0 && !seen.has(i)) {
              seen.add(i);
              hints!.establish(tsuids[i]!, base, token);
            }
            if (base <= nowHour) {
              out[i] = p;
              pending.delete(i);
            }
          }
        }
        if (pending.size === 0 || --budget <= 0) break scan;
      }
    }
    leftOver.push(...pending);
  }));
  // Series not found within the budget (or with no point at all): one scan each.
  await Promise.all(leftOver.map(async (i) => { out[i] = await lastPoint(tsdb, tsuids[i]!, 0, nowMs); }));
  return out;
}

/**
 * Reads the series with a trusted hint at or before the current hour: one batched get of
 * their hint rows. Fills `out` for those whose row holds a point, and returns the indexes
 * left for the scans (no trusted hint, a hint in the future, or an empty row: forgotten).
 */
async function readHinted(tsdb: Tsdb, tsuids: readonly Uint8Array[], nowHour: number, out: Array<LastPoint | undefined>): Promise<number[]> {
  const hints = tsdb.newestHours!;
  const w = tsdb.widths;
  const baseOffset = w.saltWidth + w.metric;
  const rest: number[] = [];
  const asked: number[] = [];
  const keys: Uint8Array[] = [];
  for (let i = 0; i < tsuids.length; i++) {
    const hour = hints.trusted(tsuids[i]!);
    if (hour === undefined || hour > nowHour) {
      rest.push(i);
      continue;
    }
    asked.push(i);
    keys.push(patchBaseTime(tsdb.catalog.templateOf(tsuids[i]!), baseOffset, hour));
  }
  if (keys.length === 0) return rest;
  const rows = await tsdb.data.get(keys, { families: [DATA_FAMILY], borrowValues: true });
  for (let k = 0; k < asked.length; k++) {
    const i = asked[k]!;
    const p = newest(rows[k]?.cells, baseTimeOfKey(w, keys[k]!));
    if (p !== undefined) out[i] = p;
    else {
      hints.forget(tsuids[i]!);
      rest.push(i);
    }
  }
  return rest.sort((a, b) => a - b);
}

/** The end of a prefix's keys, or undefined (the table's end) when none is shorter. */
function endOf(prefix: Uint8Array): Uint8Array | undefined {
  const end = prefixEnd(prefix);
  return end.length === 0 ? undefined : end;
}

/** A row key without its base time: the series' identity within one (salt, metric) prefix. */
function seriesIdOfKey(key: Uint8Array, baseOffset: number): string {
  let s = '';
  for (let j = baseOffset + 4; j < key.length; j++) s += String.fromCharCode(key[j]!);
  return s;
}

/** Decode space reused by every newest() call (each reads its point out before returning). */
let scratch: PointBlock | undefined;

function newest(cells: Parameters<typeof mergeRowCells>[0] | undefined, baseSec: number): LastPoint | undefined {
  if (cells === undefined) return undefined;
  const b = (scratch = mergeRowCells(cells, scratch));
  if (b.count === 0) return undefined;
  const i = b.count - 1;
  const ts = baseSec * 1000 + b.offsetsMs[i]!;
  const isInt = b.isInt[i] === 1;
  const v = b.values[i]!;
  // An integer beyond ±2^53: its exact value is in bigInts (query/series.ts "exact").
  if (isInt && !Number.isSafeInteger(v) && b.bigInts !== undefined) return { ts, value: v, isInt, big: b.bigInts[i]! };
  return { ts, value: v, isInt };
}
