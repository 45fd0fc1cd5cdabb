/**
 * Docs-sync: core/ERRORS.md documents exactly the codes in STORE_ERROR_CODES — one `##`
 * section per code, each with meaning, retryability, cause and advice — and names no code
 * that does not exist.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STORE_ERROR_CODES } from '../core/api/errors.js';

const doc = readFileSync(new URL('../core/ERRORS.md', import.meta.url), 'utf8');
const codes: readonly string[] = STORE_ERROR_CODES;

/** Sections: heading code → body text up to the next `## `. */
function sections(): Map<string, string> {
  const out = new Map<string, string>();
  const parts = doc.split(/^## /m).slice(1);
  for (const part of parts) {
    const nl = part.indexOf('\n');
    out.set(part.slice(0, nl).trim(), part.slice(nl + 1));
  }
  return out;
}

describe('core/ERRORS.md', () => {
  it('has one section per StoreErrorCode, in registry order', () => {
    expect([...sections().keys()]).toEqual([...codes]);
  });

  it('names no code that does not exist', () => {
    const mentioned = new Set(doc.match(/\bSTORE_[A-Z_]+\b/g) ?? []);
    mentioned.delete('STORE_ERROR_CODES'); // the registry itself
    const unknown = [...mentioned].filter((c) => !codes.includes(c));
    expect(unknown).toEqual([]);
  });

  it('states meaning, retryability, cause and advice for every code', () => {
    for (const [code, body] of sections()) {
      for (const field of ['**Meaning:**', '**Retryable:**', '**Typical cause:**', '**What to do:**']) {
        expect(body, `${code} lacks ${field}`).toContain(field);
      }
    }
  });

  it('lists every code in the summary table', () => {
    for (const code of codes) expect(doc, code).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});
