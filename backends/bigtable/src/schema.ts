/**
 * How Store tables live in a Bigtable instance:
 * - table ids: PREFIX + name when that is a valid Bigtable id (1-50 chars of
 *   [-_.a-zA-Z0-9], first not - or .) and the name does not start with `_`; otherwise
 *   PREFIX + `_h` + 32 hex digits of the name's SHA-256 (Store names reach 128 chars);
 * - the meta table PREFIX + `_meta` holds one row per Store table (key = the name, UTF-8)
 *   with the spec as created (JSON: families in order, maxVersions, ttlMs, the table TTL,
 *   split points in hex) and the table id. It is what listTables reads, and what keeps
 *   specs exact across processes: Bigtable's GC rules do not record a table-level TTL or
 *   family order;
 * - each family's GC rule: maxNumVersions = maxVersions (default 1), united with
 *   maxAge = the effective TTL. GC is lazy, so reads enforce both too (filters.ts).
 */
import { createHash } from 'node:crypto';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { StoreError } from '../../../core/api/errors.js';
import type { FamilySpec, TableSpec } from '../../../core/api/store.js';
import { effectiveTtlMs } from '../../../core/api/validate.js';
import type { IGcRule, ITable } from './client.js';

export const META_FAMILY = 'm';
export const META_SPEC_QUALIFIER = 'spec';
const ID_PATTERN = /^[_a-zA-Z0-9][-_.a-zA-Z0-9]*$/;
const MAX_ID = 50;
/** The longest prefix: a hashed id (`_h` + 32 hex) must still fit in 50 characters. */
export const MAX_PREFIX_LENGTH = MAX_ID - 34;

export function validatePrefix(prefix: string): void {
  if (prefix !== '' && !ID_PATTERN.test(prefix)) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `bigtable: table prefix ${JSON.stringify(prefix)}: expected [_a-zA-Z0-9][-_.a-zA-Z0-9]*`);
  }
  if (prefix.length > MAX_PREFIX_LENGTH) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `bigtable: table prefix ${JSON.stringify(prefix)} is over ${MAX_PREFIX_LENGTH} characters`);
  }
}

export function metaTableId(prefix: string): string {
  return `${prefix}_meta`;
}

/** The Bigtable table id of a Store table name (see the file header). */
export function tableIdOf(prefix: string, name: string): string {
  const direct = prefix + name;
  if (!name.startsWith('_') && direct.length <= MAX_ID && ID_PATTERN.test(direct)) return direct;
  return `${prefix}_h${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}

/** A copy of the spec holding only what it sets (what createTable returns). */
export function copySpec(spec: TableSpec): TableSpec {
  return {
    name: spec.name,
    families: spec.families.map(copyFamily),
    ...(spec.splitPoints === undefined ? {} : { splitPoints: spec.splitPoints.map((p) => p.slice()) }),
    ...(spec.ttlMs === undefined ? {} : { ttlMs: spec.ttlMs }),
  };
}

function copyFamily(f: FamilySpec): FamilySpec {
  return {
    name: f.name,
    ...(f.maxVersions === undefined ? {} : { maxVersions: f.maxVersions }),
    ...(f.ttlMs === undefined ? {} : { ttlMs: f.ttlMs }),
    // Kept and ignored (no row transforms here): the spec stays exact, and a copy back to a
    // store that has them compresses again.
    ...(f.transform === undefined ? {} : { transform: f.transform }),
  };
}

interface SpecJson {
  readonly name: string;
  readonly families: readonly FamilySpec[];
  readonly splitPoints?: readonly string[];
  readonly ttlMs?: number;
}

export function specToJson(spec: TableSpec): string {
  const j: SpecJson = {
    name: spec.name,
    families: spec.families.map(copyFamily),
    ...(spec.splitPoints === undefined ? {} : { splitPoints: spec.splitPoints.map(toHex) }),
    ...(spec.ttlMs === undefined ? {} : { ttlMs: spec.ttlMs }),
  };
  return JSON.stringify(j);
}

export function specFromJson(text: string): TableSpec {
  const j = JSON.parse(text) as SpecJson;
  return {
    name: j.name,
    families: j.families.map(copyFamily),
    ...(j.splitPoints === undefined ? {} : { splitPoints: j.splitPoints.map(fromHex) }),
    ...(j.ttlMs === undefined ? {} : { ttlMs: j.ttlMs }),
  };
}

/** The Bigtable table: one column family per Store family, with its GC rule. */
export function bigtableTableOf(spec: TableSpec, ttlGc: boolean): ITable {
  const columnFamilies: Record<string, { gcRule: IGcRule }> = {};
  for (const f of spec.families) columnFamilies[f.name] = { gcRule: gcRuleOf(spec, f, ttlGc) };
  return { columnFamilies };
}

export function gcRuleOf(spec: TableSpec, f: FamilySpec, ttlGc: boolean): IGcRule {
  const versions: IGcRule = { maxNumVersions: f.maxVersions ?? 1 };
  const ttl = ttlGc ? effectiveTtlMs(spec, f) : undefined;
  if (ttl === undefined) return versions;
  const maxAge: IGcRule = { maxAge: { seconds: Math.floor(ttl / 1000), nanos: (ttl % 1000) * 1_000_000 } };
  return { union: { rules: [versions, maxAge] } };
}
