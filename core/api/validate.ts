/**
 * Input checks every Store backend runs before it does anything ("public validates,
 * private implements"), so that all backends reject bad input the same way and receive
 * normalized input.
 *
 * Error classes (core/api/errors.ts, core/ERRORS.md):
 * - wrong argument types (a string where a Uint8Array belongs, a non-array) → TypeError;
 * - programmer errors in read arguments (start > end, limit/batchRows/maxVersions that
 *   are not positive integers, bad time ranges) → RangeError;
 * - malformed data (empty or oversized keys, oversized values, bad timestamps, unknown
 *   mutation types, bad table specs, invalid regexes or fuzzy rules)
 *   → StoreError STORE_INVALID_ARGUMENT;
 * - a family the table does not declare → StoreError STORE_FAMILY_NOT_FOUND;
 * - a filter kind or reverse scan the backend does not offer → STORE_NOT_SUPPORTED.
 *
 * Every function here is synchronous, pure and throws on the first problem; callers run
 * the whole check before applying anything, which is how a bad batch stores nothing.
 */
import { compareBytes, toHex } from './bytes.js';
import { StoreError } from './errors.js';
import { normalizeRanges } from './scan-ranges.js';
import {
  FAMILY_NAME_PATTERN,
  MAX_TIMESTAMP,
  TABLE_NAME_PATTERN,
} from './store.js';
import type {
  Capabilities,
  CellRef,
  KeyRange,
  GetOptions,
  Row,
  RowFilter,
  RowMutation,
  ScanSpec,
  TableSpec,
  TimeRange,
  WriteOptions,
} from './store.js';

/** The empty bound of a normalized scan (shared: zero-length arrays are dear to make in V8 11). */
const EMPTY_KEY = new Uint8Array(0);

/** Default `Capabilities.maxKeyBytes`: row keys are 1..4096 bytes. */
export const DEFAULT_MAX_KEY_BYTES = 4096;
/** Default `Capabilities.maxValueBytes`: 16 MiB per cell value. */
export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;
/** Default `ScanSpec.batchRows`. */
export const DEFAULT_BATCH_ROWS = 1000;
/** The exclusive upper bound a time range may name: one past MAX_TIMESTAMP. */
export const TIME_RANGE_END_MAX = MAX_TIMESTAMP + 1;

/** Size limits that key and value checks enforce (usually the backend's capabilities). */
export interface KeyLimits {
  readonly maxKeyBytes: number;
}

export interface WriteLimits extends KeyLimits {
  readonly maxValueBytes: number;
}

/** Read options after validation, with defaults applied. */
export interface NormalizedReadOptions {
  /** Distinct declared family names, or undefined for all families (also when every one is named). */
  readonly families: readonly string[] | undefined;
  readonly timeRange: TimeRange | undefined;
  /** Versions per cell to return; a positive integer (default 1). */
  readonly maxVersions: number;
  readonly filter: RowFilter | undefined;
  readonly signal: AbortSignal | undefined;
  /** Values may be views of the store's buffers (ReadOptionsBase.borrowValues). */
  readonly borrowValues: boolean;
}

/** A ScanSpec after validation, with defaults applied and bounds copied. */
export interface NormalizedScanSpec extends NormalizedReadOptions {
  /** Inclusive; empty = start of table. A copy: the caller may reuse its buffer. */
  readonly start: Uint8Array;
  /** Exclusive; empty = end of table. A copy. */
  readonly end: Uint8Array;
  /** ScanSpec.ranges checked and copied (scan-ranges.ts), start/end then empty; or undefined. */
  readonly ranges: readonly KeyRange[] | undefined;
  readonly reverse: boolean;
  /** Rows in all; Infinity when the spec sets no limit. */
  readonly limit: number;
  /** Rows per batch (a positive integer, default DEFAULT_BATCH_ROWS). */
  readonly batchRows: number;
}

const MUTATION_TYPES: ReadonlySet<string> = new Set([
  'put', 'deleteCell', 'deleteVersion', 'deleteFamily', 'deleteRow',
]);

// ---------------------------------------------------------------------------------------
// Tables

/**
 * Checks a table name: a string (else TypeError) matching TABLE_NAME_PATTERN (else
 * STORE_INVALID_ARGUMENT).
 */
export function validateTableName(name: unknown): asserts name is string {
  if (typeof name !== 'string') throw new TypeError(`table name must be a string, got ${typeof name}`);
  if (!TABLE_NAME_PATTERN.test(name)) {
    throw invalid(`invalid table name ${JSON.stringify(name.slice(0, 140))}: expected 1-128 chars of [A-Za-z0-9_.-]`);
  }
}

/**
 * Checks the arguments of Store.setFamilyTransform before a backend looks the table up:
 * valid table, family and transform names (STORE_INVALID_ARGUMENT), and a store that
 * applies row transforms (else STORE_NOT_SUPPORTED).
 */
export function validateSetFamilyTransform(table: string, family: string, transform: string | undefined, caps: Capabilities): void {
  validateTableName(table);
  if (typeof family !== 'string' || !FAMILY_NAME_PATTERN.test(family)) {
    throw invalid(`table ${table}: invalid family name ${JSON.stringify(String(family).slice(0, 80))}: expected 1-64 chars of [A-Za-z0-9_.-]`);
  }
  if (transform !== undefined && !(typeof transform === 'string' && FAMILY_NAME_PATTERN.test(transform))) {
    throw invalid(`table ${table}: family ${family}: transform must be a name of 1-64 chars of [A-Za-z0-9_.-], got ${JSON.stringify(String(transform).slice(0, 80))}`);
  }
  if (caps.rowTransforms !== true) {
    throw new StoreError('STORE_NOT_SUPPORTED', `${caps.backend}: no row transforms: family ${family} of table ${table} cannot name one`);
  }
}

/**
 * Checks a TableSpec: a valid name, at least one family, distinct valid family names,
 * `maxVersions` a positive integer, `ttlMs` a positive safe integer, split points
 * non-empty, strictly increasing and (when `limits` is given) at most maxKeyBytes long.
 * Malformed specs → STORE_INVALID_ARGUMENT; wrong types → TypeError.
 */
export function validateTableSpec(spec: TableSpec, limits?: KeyLimits): void {
  if (spec === null || typeof spec !== 'object') throw new TypeError('table spec must be an object');
  validateTableName(spec.name);
  const where = `table ${spec.name}`;
  if (!Array.isArray(spec.families)) throw new TypeError(`${where}: families must be an array`);
  if (spec.families.length === 0) throw invalid(`${where}: a table needs at least one family`);
  const seen = new Set<string>();
  for (const fam of spec.families) {
    if (fam === null || typeof fam !== 'object') throw new TypeError(`${where}: family spec must be an object`);
    if (typeof fam.name !== 'string') throw new TypeError(`${where}: family name must be a string`);
    if (!FAMILY_NAME_PATTERN.test(fam.name)) {
      throw invalid(`${where}: invalid family name ${JSON.stringify(fam.name.slice(0, 80))}: expected 1-64 chars of [A-Za-z0-9_.-]`);
    }
    if (seen.has(fam.name)) throw invalid(`${where}: duplicate family ${fam.name}`);
    seen.add(fam.name);
    if (fam.maxVersions !== undefined && !(Number.isSafeInteger(fam.maxVersions) && fam.maxVersions >= 1)) {
      throw invalid(`${where}: family ${fam.name}: maxVersions must be a positive integer, got ${String(fam.maxVersions)}`);
    }
    if (fam.ttlMs !== undefined && !(Number.isSafeInteger(fam.ttlMs) && fam.ttlMs >= 1)) {
      throw invalid(`${where}: family ${fam.name}: ttlMs must be a positive integer, got ${String(fam.ttlMs)}`);
    }
    if (fam.transform !== undefined && !(typeof fam.transform === 'string' && FAMILY_NAME_PATTERN.test(fam.transform))) {
      throw invalid(`${where}: family ${fam.name}: transform must be a name of 1-64 chars of [A-Za-z0-9_.-], got ${JSON.stringify(String(fam.transform).slice(0, 80))}`);
    }
  }
  if (spec.ttlMs !== undefined && !(Number.isSafeInteger(spec.ttlMs) && spec.ttlMs >= 1)) {
    throw invalid(`${where}: ttlMs must be a positive integer, got ${String(spec.ttlMs)}`);
  }
  if (spec.splitPoints !== undefined) {
    if (!Array.isArray(spec.splitPoints)) throw new TypeError(`${where}: splitPoints must be an array`);
    let prev: Uint8Array | undefined;
    for (const p of spec.splitPoints) {
      requireBytes(p, `${where}: split point`);
      if (p.length === 0) throw invalid(`${where}: split points must be non-empty keys`);
      if (limits !== undefined && p.length > limits.maxKeyBytes) {
        throw invalid(`${where}: split point ${hexPreview(p)} is ${p.length} bytes, over the ${limits.maxKeyBytes}-byte key limit`);
      }
      if (prev !== undefined && compareBytes(prev, p) >= 0) {
        throw invalid(`${where}: split points must be sorted and distinct (${hexPreview(prev)} then ${hexPreview(p)})`);
      }
      prev = p;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Writes

/**
 * Checks a row key: a Uint8Array (else TypeError) of 1..maxKeyBytes bytes (else
 * STORE_INVALID_ARGUMENT).
 */
export function validateKey(key: unknown, limits: KeyLimits, what = 'row key'): asserts key is Uint8Array {
  requireBytes(key, what);
  if (key.length === 0) throw invalid(`${what} must not be empty`);
  if (key.length > limits.maxKeyBytes) {
    throw invalid(`${what} ${hexPreview(key)} is ${key.length} bytes, over the ${limits.maxKeyBytes}-byte limit`);
  }
}

/**
 * Checks the rows of a deleteRange: start and end Uint8Arrays (else TypeError), each at
 * most maxKeyBytes, and start < end unless end is empty (unbounded); else
 * STORE_INVALID_ARGUMENT.
 */
export function validateKeyRange(range: KeyRange, limits: KeyLimits): void {
  if (range === null || typeof range !== 'object') throw new TypeError('range must be an object { start, end }');
  requireBytes(range.start, 'range start');
  requireBytes(range.end, 'range end');
  for (const [k, what] of [[range.start, 'range start'], [range.end, 'range end']] as const) {
    if (k.length > limits.maxKeyBytes) throw invalid(`${what} ${hexPreview(k)} is ${k.length} bytes, over the ${limits.maxKeyBytes}-byte limit`);
  }
  if (range.end.length > 0 && compareBytes(range.start, range.end) >= 0) {
    throw invalid(`range start ${hexPreview(range.start)} is not before its end ${hexPreview(range.end)}`);
  }
}

/** Checks the keys of a get: an array (else TypeError) of valid row keys. */
export function validateKeys(keys: readonly Uint8Array[], limits: KeyLimits): void {
  if (!Array.isArray(keys)) throw new TypeError('keys must be an array of Uint8Array');
  for (const k of keys) validateKey(k, limits);
}

/**
 * Checks a cell reference against the table: family declared (else
 * STORE_FAMILY_NOT_FOUND), qualifier a Uint8Array (else TypeError).
 */
export function validateCellRef(table: TableSpec, cell: CellRef): void {
  if (cell === null || typeof cell !== 'object') throw new TypeError('cell must be an object');
  requireFamily(table, cell.family);
  requireBytes(cell.qualifier, 'qualifier');
}

/** Checks write options: `durability` is 'sync', 'buffered' or absent (else TypeError). */
export function validateWriteOptions(opts: WriteOptions | undefined): void {
  if (opts === undefined) return;
  if (opts === null || typeof opts !== 'object') throw new TypeError('write options must be an object');
  if (opts.durability !== undefined && opts.durability !== 'sync' && opts.durability !== 'buffered') {
    throw new TypeError(`durability must be 'sync' or 'buffered', got ${String(opts.durability)}`);
  }
}

/**
 * Checks a whole mutate() batch against the table before anything is applied:
 * - keys: Uint8Array, 1..maxKeyBytes bytes;
 * - every mutation of a known type (else STORE_INVALID_ARGUMENT), naming a declared
 *   family (else STORE_FAMILY_NOT_FOUND, naming table and family);
 * - qualifiers and values are Uint8Array (else TypeError); values at most maxValueBytes;
 * - timestamps and `upTo` integers in [0, MAX_TIMESTAMP] (else STORE_INVALID_ARGUMENT).
 * An empty `mutations` list is valid (a no-op for that row).
 */
export function validateRowMutations(
  table: TableSpec,
  rows: readonly RowMutation[],
  limits: WriteLimits,
): void {
  if (!Array.isArray(rows)) throw new TypeError('rows must be an array of RowMutation');
  for (const row of rows) {
    if (row === null || typeof row !== 'object') throw new TypeError('row mutation must be an object');
    validateKey(row.key, limits);
    if (!Array.isArray(row.mutations)) throw new TypeError(`row ${hexPreview(row.key)}: mutations must be an array`);
    for (const m of row.mutations) validateMutation(table, row.key, m, limits);
  }
}

function validateMutation(table: TableSpec, key: Uint8Array, m: unknown, limits: WriteLimits): void {
  if (m === null || typeof m !== 'object') throw new TypeError(`row ${hexPreview(key)}: mutation must be an object`);
  const mut = m as { readonly type?: unknown; readonly [k: string]: unknown };
  // NB: per cell on the write path, so nothing is allocated unless a check fails: the
  // message prefix (mutationWhere) is built only then, and no closure is made for it.
  if (typeof mut.type !== 'string' || !MUTATION_TYPES.has(mut.type)) {
    throw invalid(`${mutationWhere(table, key)}: unknown mutation type ${JSON.stringify(String(mut.type))}`);
  }
  if (mut.type !== 'deleteRow') requireFamily(table, mut.family);
  if ((mut.type === 'put' || mut.type === 'deleteCell' || mut.type === 'deleteVersion') && !(mut.qualifier instanceof Uint8Array)) {
    requireBytes(mut.qualifier, `${mutationWhere(table, key)}: qualifier`);
  }
  switch (mut.type) {
    case 'put': {
      const value = mut.value;
      if (!(value instanceof Uint8Array)) requireBytes(value, `${mutationWhere(table, key)}: value`);
      if (value.length > limits.maxValueBytes) {
        throw invalid(`${mutationWhere(table, key)}: value is ${value.length} bytes, over the ${limits.maxValueBytes}-byte limit`);
      }
      if (mut.timestamp !== undefined && !isTimestamp(mut.timestamp)) requireTimestamp(mut.timestamp, `${mutationWhere(table, key)}: put timestamp`);
      break;
    }
    case 'deleteVersion':
      if (!isTimestamp(mut.timestamp)) requireTimestamp(mut.timestamp, `${mutationWhere(table, key)}: deleteVersion timestamp`);
      break;
    default:
      if (mut.upTo !== undefined && !isTimestamp(mut.upTo)) requireTimestamp(mut.upTo, `${mutationWhere(table, key)}: ${mut.type} upTo`);
  }
}

/** The start of a mutation's error message. */
function mutationWhere(table: TableSpec, key: Uint8Array): string {
  return `table ${table.name}, row ${hexPreview(key)}`;
}

/** What requireTimestamp accepts. */
function isTimestamp(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_TIMESTAMP;
}

// ---------------------------------------------------------------------------------------
// Reads

/**
 * Validates and normalizes get() options against the table and the backend's
 * capabilities (same rules as the read part of normalizeScanSpec).
 */
export function normalizeGetOptions(
  table: TableSpec,
  opts: GetOptions | undefined,
  caps: Capabilities,
): NormalizedReadOptions {
  if (opts === undefined) {
    return { families: undefined, timeRange: undefined, maxVersions: 1, filter: undefined, signal: undefined, borrowValues: false };
  }
  if (opts === null || typeof opts !== 'object') throw new TypeError('read options must be an object');
  let families: string[] | undefined;
  if (opts.families !== undefined) {
    if (!Array.isArray(opts.families)) throw new TypeError('families must be an array of strings');
    if (opts.families.length === 0) {
      throw invalid(`table ${table.name}: families must name at least one family (omit it to read all)`);
    }
    for (const f of opts.families) requireFamily(table, f);
    families = opts.families.length === 1 ? [opts.families[0]!] : [...new Set(opts.families)];
    // Naming every family of the table selects what naming none does: no family filter to run.
    if (families.length === table.families.length) families = undefined;
  }
  if (opts.timeRange !== undefined) validateTimeRange(opts.timeRange, 'timeRange');
  const maxVersions = opts.maxVersions ?? 1;
  requirePositiveInteger(maxVersions, 'maxVersions');
  if (opts.filter !== undefined) validateFilter(table, opts.filter, caps);
  if (opts.borrowValues !== undefined && typeof opts.borrowValues !== 'boolean') throw new TypeError('borrowValues must be a boolean');
  return {
    families,
    timeRange: opts.timeRange === undefined ? undefined : { start: opts.timeRange.start, end: opts.timeRange.end },
    maxVersions,
    filter: opts.filter,
    signal: opts.signal,
    borrowValues: opts.borrowValues === true,
  };
}

/**
 * Validates and normalizes a ScanSpec: defaults (empty start/end, batchRows 1000,
 * maxVersions 1, no limit); start > end when both are non-empty → RangeError; limit,
 * batchRows and maxVersions must be positive integers (RangeError); reverse without
 * `caps.reverseScan` → STORE_NOT_SUPPORTED; unknown families → STORE_FAMILY_NOT_FOUND;
 * filters are checked by validateFilter.
 */
export function normalizeScanSpec(
  table: TableSpec,
  spec: ScanSpec | undefined,
  caps: Capabilities,
): NormalizedScanSpec {
  const s: ScanSpec = spec ?? {};
  if (s === null || typeof s !== 'object') throw new TypeError('scan spec must be an object');
  const read = normalizeGetOptions(table, s, caps);
  const start = s.start === undefined ? EMPTY_KEY : copyBytes(s.start, 'scan start');
  const end = s.end === undefined ? EMPTY_KEY : copyBytes(s.end, 'scan end');
  if (start.length > 0 && end.length > 0 && compareBytes(start, end) > 0) {
    throw new RangeError(`scan start ${hexPreview(start)} is after end ${hexPreview(end)}`);
  }
  let ranges: KeyRange[] | undefined;
  if (s.ranges !== undefined) {
    if (s.start !== undefined || s.end !== undefined) throw new TypeError('a scan takes ranges or start/end, not both');
    ranges = normalizeRanges(s.ranges);
  }
  if (s.reverse !== undefined && typeof s.reverse !== 'boolean') throw new TypeError('reverse must be a boolean');
  const reverse = s.reverse === true;
  if (reverse && !caps.reverseScan) {
    throw new StoreError('STORE_NOT_SUPPORTED', `backend ${caps.backend} does not support reverse scans`);
  }
  if (s.limit !== undefined) requirePositiveInteger(s.limit, 'limit');
  const batchRows = s.batchRows ?? DEFAULT_BATCH_ROWS;
  requirePositiveInteger(batchRows, 'batchRows');
  return {
    families: read.families, timeRange: read.timeRange, maxVersions: read.maxVersions, filter: read.filter,
    signal: read.signal, borrowValues: read.borrowValues, start, end, ranges, reverse, limit: s.limit ?? Infinity, batchRows,
  };
}

/**
 * Checks a filter tree against the table and capabilities:
 * - every kind (including `and` itself and nested ones) must be in `caps.filters`, else
 *   STORE_NOT_SUPPORTED naming the kind;
 * - keyRegex: must compile on its own and stay inside the RE2 subset (no lookaround, no
 *   backreferences), else STORE_INVALID_ARGUMENT with the reason;
 * - fuzzyKey: at least one rule; template and mask of equal length; mask bytes 0 or 1
 *   (else STORE_INVALID_ARGUMENT);
 * - qualifierRange: family declared (STORE_FAMILY_NOT_FOUND); start <= end when end is
 *   non-empty (RangeError);
 * - timeRange: as for read options.
 */
export function validateFilter(table: TableSpec, filter: RowFilter, caps: Capabilities): void {
  if (filter === null || typeof filter !== 'object') throw new TypeError('filter must be an object');
  const kind = (filter as { kind?: unknown }).kind;
  if (typeof kind !== 'string' || !caps.filters.has(filter.kind)) {
    throw new StoreError('STORE_NOT_SUPPORTED', `backend ${caps.backend} does not evaluate filter kind ${JSON.stringify(String(kind))}`);
  }
  switch (filter.kind) {
    case 'keyRegex':
      validateKeyRegex(filter.pattern);
      return;
    case 'fuzzyKey':
      if (!Array.isArray(filter.rules)) throw new TypeError('fuzzyKey rules must be an array');
      if (filter.rules.length === 0) throw invalid('fuzzyKey filter needs at least one rule');
      filter.rules.forEach((rule, i) => {
        if (rule === null || typeof rule !== 'object') throw new TypeError(`fuzzyKey rule ${i} must be an object`);
        requireBytes(rule.template, `fuzzyKey rule ${i} template`);
        requireBytes(rule.mask, `fuzzyKey rule ${i} mask`);
        if (rule.template.length !== rule.mask.length) {
          throw invalid(`fuzzyKey rule ${i}: template is ${rule.template.length} bytes but mask is ${rule.mask.length}`);
        }
        for (let j = 0; j < rule.mask.length; j++) {
          if (rule.mask[j]! > 1) throw invalid(`fuzzyKey rule ${i}: mask byte ${j} is ${rule.mask[j]!}, expected 0 or 1`);
        }
      });
      return;
    case 'prefix':
      requireBytes(filter.prefix, 'prefix filter');
      return;
    case 'qualifierRange':
      if (filter.family !== undefined) requireFamily(table, filter.family);
      if (filter.start !== undefined) requireBytes(filter.start, 'qualifierRange start');
      if (filter.end !== undefined) requireBytes(filter.end, 'qualifierRange end');
      if (filter.start !== undefined && filter.end !== undefined && filter.end.length > 0 &&
          compareBytes(filter.start, filter.end) > 0) {
        throw new RangeError(`qualifierRange start ${hexPreview(filter.start)} is after end ${hexPreview(filter.end)}`);
      }
      return;
    case 'timeRange':
      if (filter.range === null || typeof filter.range !== 'object') throw new TypeError('timeRange filter needs a range');
      validateTimeRange(filter.range, 'timeRange filter');
      return;
    case 'and':
      if (!Array.isArray(filter.filters)) throw new TypeError('and filter needs a filters array');
      for (const f of filter.filters) validateFilter(table, f, caps);
      return;
    default:
      throw invalid(`unknown filter kind ${JSON.stringify(String(kind))}`);
  }
}

/**
 * Checks a key regex: it must compile by itself — which also guarantees that wrapping it
 * in `^(?:…)$` cannot change its meaning (`a)|(b` is rejected here) — and use no
 * lookaround or backreferences, which RE2 (the remote backends' engine) lacks. Throws
 * STORE_INVALID_ARGUMENT carrying the reason.
 */
export function validateKeyRegex(pattern: unknown): asserts pattern is string {
  if (typeof pattern !== 'string') throw new TypeError('keyRegex pattern must be a string');
  try {
    new RegExp(pattern, 's');
  } catch (err) {
    throw new StoreError('STORE_INVALID_ARGUMENT',
      `invalid keyRegex ${JSON.stringify(pattern.slice(0, 200))}: ${(err as Error).message}`, { cause: err });
  }
  const problem = re2Problem(pattern);
  if (problem !== undefined) {
    throw invalid(`invalid keyRegex ${JSON.stringify(pattern.slice(0, 200))}: ${problem} is not supported (RE2 subset)`);
  }
}

/** Finds JavaScript-only constructs (lookaround, backreferences) outside and inside classes. */
function re2Problem(p: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      const n = p[i + 1] ?? '';
      if (n >= '1' && n <= '9') return `backreference \\${n}`;
      if (n === 'k' && p[i + 2] === '<') return 'named backreference \\k<…>';
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(' && p[i + 1] === '?') {
      const rest = p.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!')) return 'lookahead';
      if (rest === '<=' || rest === '<!') return 'lookbehind';
    }
  }
  return undefined;
}

/**
 * Checks a time range: bounds are integers in [0, MAX_TIMESTAMP + 1] (TypeError for
 * non-numbers, RangeError otherwise) and start <= end when both are set (RangeError).
 */
export function validateTimeRange(range: TimeRange, what: string): void {
  if (range === null || typeof range !== 'object') throw new TypeError(`${what} must be an object`);
  for (const [name, v] of [['start', range.start], ['end', range.end]] as const) {
    if (v === undefined) continue;
    if (typeof v !== 'number') throw new TypeError(`${what}.${name} must be a number`);
    if (!Number.isInteger(v) || v < 0 || v > TIME_RANGE_END_MAX) {
      throw new RangeError(`${what}.${name} must be an integer in [0, 2^53], got ${v}`);
    }
  }
  if (range.start !== undefined && range.end !== undefined && range.start > range.end) {
    throw new RangeError(`${what}: start ${range.start} is after end ${range.end}`);
  }
}

// ---------------------------------------------------------------------------------------
// Helpers

/** Short hex rendering of a key for error messages. */
export function hexPreview(b: Uint8Array): string {
  return b.length <= 32 ? `0x${toHex(b)}` : `0x${toHex(b.subarray(0, 32))}… (${b.length} bytes)`;
}

function invalid(message: string): StoreError {
  return new StoreError('STORE_INVALID_ARGUMENT', message);
}

/**
 * `what` names the value in the error message. Hot paths (validateMutation) test first and
 * call these only to throw, so that the message is built only then.
 */
function requireBytes(v: unknown, what: string): asserts v is Uint8Array {
  if (!(v instanceof Uint8Array)) {
    throw new TypeError(`${what} must be a Uint8Array, got ${v === null ? 'null' : typeof v}`);
  }
}

function copyBytes(v: unknown, what: string): Uint8Array {
  requireBytes(v, what);
  return v.slice();
}

function requireFamily(table: TableSpec, family: unknown): void {
  if (typeof family !== 'string') throw new TypeError(`table ${table.name}: family must be a string`);
  // NB: a loop, not `some` with a closure: this runs per cell on the write path.
  for (const f of table.families) if (f.name === family) return;
  throw new StoreError('STORE_FAMILY_NOT_FOUND', `table ${table.name} has no family ${JSON.stringify(family)}`);
}

function requireTimestamp(v: unknown, what: string): void {
  if (typeof v !== 'number') throw new TypeError(`${what} must be a number`);
  if (!isTimestamp(v)) throw invalid(`${what} must be an integer in [0, ${MAX_TIMESTAMP}], got ${v}`);
}

function requirePositiveInteger(v: unknown, what: string): void {
  if (typeof v !== 'number') throw new TypeError(`${what} must be a number`);
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${what} must be a positive integer, got ${v}`);
}

/**
 * A scan whose spec is validated now (bounds copied at call time) and whose errors, the
 * validation's included, come out of the iteration: `scan()` never throws synchronously.
 */
export function validatedScan(
  prepare: () => NormalizedScanSpec,
  run: (spec: NormalizedScanSpec) => AsyncIterable<readonly Row[]>,
): AsyncIterable<readonly Row[]> {
  let prepared: NormalizedScanSpec | undefined;
  let error: unknown;
  try {
    prepared = prepare();
  } catch (err) {
    error = err;
  }
  return (async function* () {
    if (prepared === undefined) throw error;
    yield* run(prepared);
  })();
}

/** The TTL in force for a family: its own, else the table's default, else none. */
export function effectiveTtlMs(table: TableSpec, family: { readonly ttlMs?: number }): number | undefined {
  return family.ttlMs ?? table.ttlMs;
}
