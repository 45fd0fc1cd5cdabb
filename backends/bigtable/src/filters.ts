/**
 * One read's filter data (the RowFilter tree, families, time range, versions) plus the
 * table's own rules (family maxVersions and TTL, enforced at read time because Bigtable's
 * garbage collection is lazy) → one Bigtable RowFilter, evaluated server-side:
 *
 *     chain(rowKeyRegex per keyRegex / fuzzyKey / prefix filter,
 *           interleave(per selected family:
 *             chain(family ^name$, timestamps >= now - ttl, cellsPerColumn(family max),
 *                   columnRange per qualifierRange, timestamp range, cellsPerColumn(read max))))
 *
 * The order inside a family branch is the Store's read rule (core/memory/memory-store.ts):
 * live versions, truncated to the family's maxVersions, then the read's time range and cell
 * filters, then the first `maxVersions` of what is left. Expired versions are the oldest,
 * so TTL and truncation commute.
 */
import type { RowFilter, TableSpec, TimeRange } from '../../../core/api/store.js';
import { effectiveTtlMs, TIME_RANGE_END_MAX } from '../../../core/api/validate.js';
import type { IRowFilter } from './client.js';
import { patternBytes, re2OfFuzzyRules, re2OfKeyRegex, re2OfPrefix } from './regex.js';
import { BIGTABLE_MAX_TIMESTAMP, microsOf } from './timestamps.js';

export interface ReadFilterInput {
  readonly filter?: RowFilter | undefined;
  readonly families?: readonly string[] | undefined;
  readonly timeRange?: TimeRange | undefined;
  readonly maxVersions: number;
}

interface QualifierRange {
  readonly family: string | undefined;
  readonly start: Uint8Array | undefined;
  readonly end: Uint8Array | undefined;
}

interface Parts {
  rowRegexes: string[];
  qualifierRanges: QualifierRange[];
  timeStart: number;
  timeEnd: number;
}

/** A filter that passes nothing. */
export const BLOCK_ALL: IRowFilter = { blockAllFilter: true };

/** The family name as an exact RE2 pattern (names are [A-Za-z0-9_.-]). */
export function familyPattern(name: string): string {
  return `^${name.replace(/[.-]/g, '\\$&')}$`;
}

/** The Bigtable filter of one read at server time `now` (see the file header). */
export function readFilter(spec: TableSpec, input: ReadFilterInput, now: number): IRowFilter {
  const parts: Parts = { rowRegexes: [], qualifierRanges: [], timeStart: 0, timeEnd: TIME_RANGE_END_MAX };
  if (input.timeRange !== undefined) addTime(parts, input.timeRange);
  if (input.filter !== undefined) collect(parts, input.filter);
  // Bigtable holds no cell after BIGTABLE_MAX_TIMESTAMP: a later end is no bound at all.
  if (parts.timeEnd > BIGTABLE_MAX_TIMESTAMP) parts.timeEnd = TIME_RANGE_END_MAX;
  if (parts.timeStart > BIGTABLE_MAX_TIMESTAMP) return BLOCK_ALL;
  const chain: IRowFilter[] = parts.rowRegexes.map((p) => ({ rowKeyRegexFilter: patternBytes(p) }));
  const selected = new Set(input.families ?? spec.families.map((f) => f.name));
  const branches: IRowFilter[] = [];
  if (parts.timeStart < parts.timeEnd) {
    for (const fam of spec.families) {
      if (!selected.has(fam.name)) continue;
      const ranges = parts.qualifierRanges.filter((r) => r.family === undefined || r.family === fam.name);
      if (parts.qualifierRanges.some((r) => r.family !== undefined && r.family !== fam.name)) continue;
      branches.push(familyBranch(fam.name, fam.maxVersions ?? 1, effectiveTtlMs(spec, fam), ranges, parts, input.maxVersions, now));
    }
  }
  if (branches.length === 0) return BLOCK_ALL;
  chain.push(branches.length === 1 ? branches[0]! : { interleave: { filters: branches } });
  return chain.length === 1 ? chain[0]! : { chain: { filters: chain } };
}

function familyBranch(
  name: string, familyMax: number, ttl: number | undefined, ranges: readonly QualifierRange[],
  parts: Parts, maxVersions: number, now: number,
): IRowFilter {
  const f: IRowFilter[] = [{ familyNameRegexFilter: familyPattern(name) }];
  const ttlFloor = ttlFloorMs(ttl, now);
  if (ttlFloor > 0) f.push({ timestampRangeFilter: { startTimestampMicros: microsOf(ttlFloor) } });
  f.push({ cellsPerColumnLimitFilter: familyMax });
  for (const r of ranges) {
    f.push({ columnRangeFilter: {
      familyName: name,
      ...(r.start === undefined ? {} : { startQualifierClosed: Buffer.from(r.start) }),
      ...(r.end === undefined ? {} : { endQualifierOpen: Buffer.from(r.end) }),
    } });
  }
  if (parts.timeStart > 0 || parts.timeEnd < TIME_RANGE_END_MAX) {
    f.push({ timestampRangeFilter: {
      ...(parts.timeStart > 0 ? { startTimestampMicros: microsOf(parts.timeStart) } : {}),
      ...(parts.timeEnd < TIME_RANGE_END_MAX ? { endTimestampMicros: microsOf(parts.timeEnd) } : {}),
    } });
  }
  if (maxVersions < familyMax) f.push({ cellsPerColumnLimitFilter: maxVersions });
  return { chain: { filters: f } };
}

/** The oldest visible timestamp under a TTL at `now` (visible while now - ts <= ttl); 0 = all. */
export function ttlFloorMs(ttl: number | undefined, now: number): number {
  return ttl === undefined ? 0 : Math.max(0, now - ttl);
}

function collect(parts: Parts, f: RowFilter): void {
  switch (f.kind) {
    case 'keyRegex':
      parts.rowRegexes.push(re2OfKeyRegex(f.pattern));
      return;
    case 'fuzzyKey':
      parts.rowRegexes.push(re2OfFuzzyRules(f.rules));
      return;
    case 'prefix':
      if (f.prefix.length > 0) parts.rowRegexes.push(re2OfPrefix(f.prefix));
      return;
    case 'qualifierRange':
      parts.qualifierRanges.push({
        family: f.family,
        start: f.start === undefined || f.start.length === 0 ? undefined : f.start,
        end: f.end === undefined || f.end.length === 0 ? undefined : f.end,
      });
      return;
    case 'timeRange':
      addTime(parts, f.range);
      return;
    case 'and':
      for (const c of f.filters) collect(parts, c);
      return;
  }
}

function addTime(parts: Parts, r: TimeRange): void {
  if (r.start !== undefined && r.start > parts.timeStart) parts.timeStart = r.start;
  if (r.end !== undefined && r.end < parts.timeEnd) parts.timeEnd = r.end;
}

/**
 * The newest live version of one cell (for checkAndPut and the TTL-aware increment):
 * family, exact qualifier, not expired, newest first, one version.
 */
export function newestVersionFilter(family: string, qualifierPattern: string, ttlFloor: number): IRowFilter[] {
  const f: IRowFilter[] = [
    { familyNameRegexFilter: familyPattern(family) },
    { columnQualifierRegexFilter: patternBytes(qualifierPattern) },
  ];
  if (ttlFloor > 0) f.push({ timestampRangeFilter: { startTimestampMicros: microsOf(ttlFloor) } });
  f.push({ cellsPerColumnLimitFilter: 1 });
  return f;
}

