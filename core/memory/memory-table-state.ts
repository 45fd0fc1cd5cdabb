/**
 * One table of the in-memory reference store (memory-store.ts explains the layout and the
 * read rule): its sorted rows, writes applied eagerly, and what a read sees of a row.
 */
import { compareBytes, equalBytes, latin1 } from '../api/bytes.js';
import type { CompiledFilter } from '../api/filters.js';
import type { Cell, CellRef, FamilySpec, Mutation, RegionCounters, Row, TableSpec } from '../api/store.js';
import { effectiveTtlMs } from '../api/validate.js';

export interface Version {
  readonly timestamp: number;
  readonly value: Uint8Array;
}

export interface Column {
  readonly qualifier: Uint8Array;
  /** Timestamp descending, distinct timestamps, at most the family's maxVersions. */
  versions: Version[];
}

export interface MemRow {
  readonly key: Uint8Array;
  /** family → latin1(qualifier) → column. Never holds empty maps or columns. */
  readonly families: Map<string, Map<string, Column>>;
}



/** One table's data; shared by every handle opened on it. */
export class TableState {
  readonly spec: TableSpec;
  readonly familySpecs: ReadonlyMap<string, FamilySpec>;
  /** Sorted by key; no duplicates; no empty rows. */
  readonly rows: MemRow[] = [];
  /** Region i covers [splits[i-1], splits[i]) with empty ends. */
  readonly splits: readonly Uint8Array[];
  readonly counters: RegionCounters[];
  dropped = false;

  constructor(spec: TableSpec) {
    this.spec = spec;
    this.familySpecs = new Map(spec.families.map((f) => [f.name, f]));
    this.splits = spec.splitPoints ?? [];
    this.counters = Array.from({ length: this.splits.length + 1 }, () => ({
      cellsWritten: 0, rowsRead: 0, readRequests: 0, writeRequests: 0,
    }));
  }

  /** Index of the first row with key >= `key`. */
  lowerBound(key: Uint8Array): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(this.rows[mid]!.key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  find(key: Uint8Array): MemRow | undefined {
    const i = this.lowerBound(key);
    const row = this.rows[i];
    return row !== undefined && compareBytes(row.key, key) === 0 ? row : undefined;
  }

  /** Counters of the region holding `key`. */
  regionOf(key: Uint8Array): RegionCounters {
    let i = 0;
    while (i < this.splits.length && compareBytes(key, this.splits[i]!) >= 0) i++;
    return this.counters[i]!;
  }

  maxVersionsOf(family: string): number {
    return this.familySpecs.get(family)?.maxVersions ?? 1;
  }

  /** True when a version is past its family's TTL at `now`. */
  expired(family: string, timestamp: number, now: number): boolean {
    const f = this.familySpecs.get(family);
    const ttl = f === undefined ? undefined : effectiveTtlMs(this.spec, f);
    return ttl !== undefined && now - timestamp > ttl;
  }

  /** The newest live version of a cell, or undefined. */
  newest(key: Uint8Array, cell: CellRef, now: number): Version | undefined {
    const col = this.find(key)?.families.get(cell.family)?.get(latin1(cell.qualifier));
    const v = col?.versions[0];
    return v === undefined || this.expired(cell.family, v.timestamp, now) ? undefined : v;
  }

  /** Applies one row's mutations in order. REQUIRES: validated. */
  applyRow(key: Uint8Array, mutations: readonly Mutation[], now: number): void {
    const i = this.lowerBound(key);
    const existing = this.rows[i];
    const isNew = existing === undefined || compareBytes(existing.key, key) !== 0;
    const row: MemRow = isNew ? { key: key.slice(), families: new Map() } : existing;
    const counters = this.regionOf(key);
    counters.writeRequests++;
    for (const m of mutations) {
      if (m.type === 'put') {
        this.put(row, m.family, m.qualifier, m.timestamp ?? now, m.value);
        counters.cellsWritten++;
      } else {
        deleteFrom(row, m);
      }
    }
    if (isNew && row.families.size > 0) this.rows.splice(i, 0, row);
    if (!isNew && row.families.size === 0) this.rows.splice(i, 1);
  }

  private put(row: MemRow, family: string, qualifier: Uint8Array, timestamp: number, value: Uint8Array): void {
    let fam = row.families.get(family);
    if (fam === undefined) row.families.set(family, (fam = new Map()));
    const q = latin1(qualifier);
    let col = fam.get(q);
    if (col === undefined) fam.set(q, (col = { qualifier: qualifier.slice(), versions: [] }));
    const vs = col.versions;
    let j = 0;
    while (j < vs.length && vs[j]!.timestamp > timestamp) j++;
    const v: Version = { timestamp, value: value.slice() };
    if (j < vs.length && vs[j]!.timestamp === timestamp) vs[j] = v;
    else vs.splice(j, 0, v);
    const max = this.maxVersionsOf(family);
    if (vs.length > max) vs.length = max;
  }

  /**
   * The row as a read returns it (see the read rule in the file header), as a deep copy,
   * or undefined when no cell is left.
   */
  materialize(row: MemRow, filter: CompiledFilter, maxVersions: number, now: number): Row | undefined {
    const cells: Cell[] = [];
    for (const family of [...row.families.keys()].sort()) {
      const columns = [...row.families.get(family)!.values()].sort((a, b) => compareBytes(a.qualifier, b.qualifier));
      const familyMax = this.maxVersionsOf(family);
      for (const col of columns) {
        const live = col.versions.filter((v) => !this.expired(family, v.timestamp, now)).slice(0, familyMax);
        let taken = 0;
        for (const v of live) {
          if (taken === maxVersions) break;
          if (!filter.cellMatches(family, col.qualifier, v.timestamp)) continue;
          cells.push({ family, qualifier: col.qualifier.slice(), timestamp: v.timestamp, value: v.value.slice() });
          taken++;
        }
      }
    }
    return cells.length === 0 ? undefined : { key: row.key.slice(), cells };
  }
}

/** Applies one delete mutation to a row, removing emptied columns and families. */
export function deleteFrom(row: MemRow, m: Exclude<Mutation, { type: 'put' }>): void {
  const families = m.type === 'deleteRow' ? [...row.families.keys()] : [m.family];
  for (const family of families) {
    const fam = row.families.get(family);
    if (fam === undefined) continue;
    for (const [q, col] of [...fam]) {
      if ((m.type === 'deleteCell' || m.type === 'deleteVersion') && !equalBytes(col.qualifier, m.qualifier)) continue;
      col.versions = col.versions.filter((v) =>
        m.type === 'deleteVersion' ? v.timestamp !== m.timestamp : v.timestamp > (m.upTo ?? Infinity));
      if (col.versions.length === 0) fam.delete(q);
    }
    if (fam.size === 0) row.families.delete(family);
  }
}

/** Approximate bytes a row holds: key, and per version family + qualifier + value + 8. */
export function rowBytes(row: MemRow): number {
  let n = row.key.length;
  for (const [family, fam] of row.families) {
    for (const col of fam.values()) {
      for (const v of col.versions) n += family.length + col.qualifier.length + v.value.length + 8;
    }
  }
  return n;
}

export function copySpec(spec: TableSpec): TableSpec {
  return {
    name: spec.name,
    families: spec.families.map((f) => ({
      name: f.name,
      ...(f.maxVersions === undefined ? {} : { maxVersions: f.maxVersions }),
      ...(f.ttlMs === undefined ? {} : { ttlMs: f.ttlMs }),
    })),
    ...(spec.splitPoints === undefined ? {} : { splitPoints: spec.splitPoints.map((p) => p.slice()) }),
    ...(spec.ttlMs === undefined ? {} : { ttlMs: spec.ttlMs }),
  };
}
