/**
 * core/api/validate.ts: defaults and copies of normalized read specs, and the paths the
 * memory store cannot reach through the contract suite (capabilities without reverse scans
 * or some filter kinds, split points over the key limit, the RE2 subset check).
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import type { StoreErrorCode } from '../../core/api/errors.js';
import type { Capabilities, RowFilter, RowFilterKind, TableSpec } from '../../core/api/store.js';
import {
  DEFAULT_MAX_KEY_BYTES, DEFAULT_MAX_VALUE_BYTES, normalizeGetOptions, normalizeScanSpec,
  validateKeyRegex, validateRowMutations, validateTableSpec,
} from '../../core/api/validate.js';

const TABLE: TableSpec = { name: 'tbl', families: [{ name: 'a' }, { name: 'b' }] };

function caps(filters: RowFilterKind[], reverseScan = true): Capabilities {
  return {
    backend: 'test', filters: new Set(filters), reverseScan, singleWriter: true, durableSync: true, bufferedWindowMs: 0,
    autoSplit: false, maxKeyBytes: 16, maxValueBytes: 32,
  };
}
const ALL = caps(['keyRegex', 'fuzzyKey', 'prefix', 'qualifierRange', 'timeRange', 'and']);

function code(fn: () => unknown): StoreErrorCode | string {
  try {
    fn();
  } catch (err) {
    return isStoreError(err) ? err.code : (err as Error).constructor.name;
  }
  return 'ok';
}

describe('normalizeScanSpec', () => {
  it('applies defaults', () => {
    const s = normalizeScanSpec(TABLE, undefined, ALL);
    expect([s.start.length, s.end.length, s.reverse, s.limit, s.batchRows, s.maxVersions, s.families, s.filter])
      .toEqual([0, 0, false, Infinity, 1000, 1, undefined, undefined]);
  });

  it('copies the bounds and dedupes families', () => {
    const start = utf8('a');
    const s = normalizeScanSpec(TABLE, { start, end: utf8('b'), families: ['a', 'a', 'b'] }, ALL);
    start[0] = 0x7a;
    expect(s.start).toEqual(utf8('a'));
    // Every family named: normalized to no family filter at all.
    expect(s.families).toBeUndefined();
    expect(normalizeScanSpec(TABLE, { families: ['b', 'b'] }, ALL).families).toEqual(['b']);
  });

  it('rejects what the capabilities lack with STORE_NOT_SUPPORTED, naming the filter kind', () => {
    expect(code(() => normalizeScanSpec(TABLE, { reverse: true }, caps([], false)))).toBe('STORE_NOT_SUPPORTED');
    const nested: RowFilter = { kind: 'and', filters: [{ kind: 'prefix', prefix: utf8('x') }, { kind: 'keyRegex', pattern: 'x' }] };
    expect(code(() => normalizeScanSpec(TABLE, { filter: nested }, caps(['and', 'prefix'])))).toBe('STORE_NOT_SUPPORTED');
    try {
      normalizeScanSpec(TABLE, { filter: nested }, caps(['and', 'prefix']));
    } catch (err) {
      expect((err as Error).message).toContain('keyRegex');
    }
    expect(code(() => normalizeScanSpec(TABLE, { filter: nested }, caps(['prefix', 'keyRegex'])))).toBe('STORE_NOT_SUPPORTED');
    expect(code(() => normalizeScanSpec(TABLE, { filter: nested }, caps(['and', 'prefix', 'keyRegex'])))).toBe('ok');
  });

  it('classifies argument errors', () => {
    expect(code(() => normalizeScanSpec(TABLE, { start: utf8('b'), end: utf8('a') }, ALL))).toBe('RangeError');
    expect(code(() => normalizeScanSpec(TABLE, { start: utf8('b'), end: new Uint8Array(0) }, ALL))).toBe('ok');
    expect(code(() => normalizeScanSpec(TABLE, { limit: 0 }, ALL))).toBe('RangeError');
    expect(code(() => normalizeScanSpec(TABLE, { families: ['zz'] }, ALL))).toBe('STORE_FAMILY_NOT_FOUND');
    expect(code(() => normalizeScanSpec(TABLE, { families: [] }, ALL))).toBe('STORE_INVALID_ARGUMENT');
    expect(code(() => normalizeScanSpec(TABLE, { timeRange: { start: -1 } }, ALL))).toBe('RangeError');
    expect(code(() => normalizeScanSpec(TABLE, { timeRange: { end: 2 ** 53 } }, ALL))).toBe('ok');
    expect(code(() => normalizeGetOptions(TABLE, { maxVersions: 1.5 }, ALL))).toBe('RangeError');
  });
});

describe('validateKeyRegex', () => {
  it('accepts RE2-compatible syntax, including look-alikes inside classes and escapes', () => {
    for (const p of ['abc', '[(?=]x', '\\(?=x\\)', '(?<name>a)b', '(?:a|b)+', '\\x00[\\x80-\\xff]*', '\\d{2,3}']) {
      expect(code(() => validateKeyRegex(p)), p).toBe('ok');
    }
  });

  it('rejects invalid syntax, lookaround and backreferences with STORE_INVALID_ARGUMENT', () => {
    for (const p of ['(', 'a)|(b', '(?=a)', '(?!a)', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>']) {
      expect(code(() => validateKeyRegex(p)), p).toBe('STORE_INVALID_ARGUMENT');
    }
  });
});

describe('validateRowMutations and validateTableSpec', () => {
  const limits = { maxKeyBytes: 4, maxValueBytes: 3 };
  const put = { type: 'put', family: 'a', qualifier: utf8('q'), value: utf8('v') } as const;

  it('checks keys, values and families against the limits and the table', () => {
    expect(code(() => validateRowMutations(TABLE, [{ key: utf8('abcd'), mutations: [put] }], limits))).toBe('ok');
    expect(code(() => validateRowMutations(TABLE, [{ key: utf8('abcde'), mutations: [put] }], limits))).toBe('STORE_INVALID_ARGUMENT');
    expect(code(() => validateRowMutations(TABLE, [{ key: utf8('k'), mutations: [{ ...put, value: utf8('long') }] }], limits))).toBe('STORE_INVALID_ARGUMENT');
    expect(code(() => validateRowMutations(TABLE, [{ key: utf8('k'), mutations: [{ ...put, family: 'zz' }] }], limits))).toBe('STORE_FAMILY_NOT_FOUND');
    expect(code(() => validateRowMutations(TABLE, [{ key: utf8('k'), mutations: [{ type: 'deleteRow', upTo: 2 ** 53 }] }], limits))).toBe('STORE_INVALID_ARGUMENT');
    expect(code(() => validateRowMutations(TABLE, [{ key: utf8('k'), mutations: [{ type: 'deleteVersion', family: 'a', qualifier: utf8('q') } as never] }], limits))).toBe('TypeError');
    expect(code(() => validateRowMutations(TABLE, 'rows' as never, limits))).toBe('TypeError');
  });

  it('checks split points against the key limit when given one', () => {
    const spec: TableSpec = { name: 't', families: [{ name: 'a' }], splitPoints: [utf8('abcde')] };
    expect(code(() => validateTableSpec(spec))).toBe('ok');
    expect(code(() => validateTableSpec(spec, { maxKeyBytes: 4 }))).toBe('STORE_INVALID_ARGUMENT');
    expect(code(() => validateTableSpec({ name: 't', families: [{ name: 'a' }], splitPoints: ['x' as never] }))).toBe('TypeError');
  });

  it('exports the shared default limits', () => {
    expect(DEFAULT_MAX_KEY_BYTES).toBe(4096);
    expect(DEFAULT_MAX_VALUE_BYTES).toBe(16 * 1024 * 1024);
  });
});
