/**
 * Reads the annotated hex examples out of core/FORMAT.md, so golden tests check that the
 * document shows exactly the bytes the code writes.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fromHex } from '../../core/api/bytes.js';

export const FORMAT_DOC = 'core/FORMAT.md';
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function readFormatDoc(path = FORMAT_DOC): string {
  return readFileSync(`${REPO_ROOT}${path}`, 'utf8');
}

/**
 * The bytes of the first ```hex block in the section whose `## ` heading starts with
 * `heading`, with `#` annotations stripped. Throws when the section or block is missing.
 */
export function hexExample(doc: string, heading: string, path = FORMAT_DOC): Uint8Array {
  const lines = doc.split('\n');
  const h = lines.findIndex((l) => l.startsWith(`## ${heading}`));
  if (h < 0) throw new Error(`${path}: no "## ${heading}" section`);
  const nextSection = lines.findIndex((l, i) => i > h && l.startsWith('## '));
  const stop = nextSection < 0 ? lines.length : nextSection;
  const start = lines.findIndex((l, i) => i > h && i < stop && l.trim() === '```hex');
  if (start < 0) throw new Error(`${path}: no \`\`\`hex block in "## ${heading}"`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === '```');
  return fromHex(lines.slice(start + 1, end).map((l) => l.replace(/#.*$/, '')).join(''));
}
