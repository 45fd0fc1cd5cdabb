/** Docs-sync: tsdb/ERRORS.md has one section per TsdbError code, with its status. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TSDB_ERROR_CODES } from '../../tsdb/errors.js';

const doc = readFileSync(new URL('../../tsdb/ERRORS.md', import.meta.url), 'utf8');

describe('tsdb/ERRORS.md', () => {
  const sections = new Map(doc.split(/^## /m).slice(1).map((p) => [p.slice(0, p.indexOf('\n')).trim(), p]));

  it('has one section per code, in registry order', () => {
    expect([...sections.keys()]).toEqual(Object.keys(TSDB_ERROR_CODES));
  });

  it('states the HTTP status each code maps to', () => {
    for (const [code, status] of Object.entries(TSDB_ERROR_CODES)) {
      expect(sections.get(code), code).toContain(`**Status:** ${status}`);
    }
  });
});
