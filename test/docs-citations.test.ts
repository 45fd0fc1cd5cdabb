/**
 * Every document a file of the repository cites is in the repository, so a newcomer can
 * follow each pointer from a checkout:
 * - a `*.md` path (in a comment, a string or a doc) names a file of this checkout, read
 *   from the citing file's directory or from the root (`SCHEMA.md` in a tsdb/ file does
 *   not find tsdb/SCHEMA.md: write the path from the root);
 * - a section quoted right after it (`tsdb/SCHEMA.md "Row key"`, `core/FORMAT.md, "WAL"`)
 *   begins a heading of that document, or the bold label that opens one of its paragraphs
 *   or list items (`- **Row transforms** (…)`); a quote cut by the line's end is matched
 *   as a prefix;
 * - nothing points into `/work/shared`, the notes outside the repository, and no `§`
 *   section number stands on a line without the in-repo document it numbers.
 * The second block plants bad citations, so a checker that stops finding them fails.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SCANNED_DIRS = ['core', 'tsdb', 'ui', 'test', 'bench', 'backends', 'scripts', 'bin', 'docs', '.ci'];
/** Generated output, dependencies, recorded data (golden bytes, fixtures), and this file's planted citations. */
const SKIPPED = new Set(['node_modules', 'dist', '__golden__', 'fixtures', 'testdata', 'test/docs-citations.test.ts']);
/** Directories of recorded data whose documents (INDEX.md, TRIED.md) are checked, not their records. */
const RECORDS = new Set(['bench/results']);
const CHECKED_EXT = /\.(ts|mts|cts|mjs|cjs|js|sh|go|html|css|md)$/;

interface Violation {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** The repository as the checker sees it: which paths are files, and a document's headings. */
interface Repo {
  isFile(path: string): boolean;
  headings(path: string): readonly string[];
}

function walk(rel: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(posix.join(ROOT, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = posix.join(rel, e.name);
    if (SKIPPED.has(e.name) || SKIPPED.has(p)) continue;
    if (e.isDirectory()) walk(p, out);
    else if (RECORDS.has(rel) ? e.name.endsWith('.md') : CHECKED_EXT.test(e.name) || rel === '.ci') out.push(p);
  }
}

function checkedFiles(): string[] {
  const out: string[] = [];
  for (const d of SCANNED_DIRS) walk(d, out);
  for (const f of readdirSync(ROOT)) if (CHECKED_EXT.test(f)) out.push(f);
  return out.sort();
}

/**
 * The sections of a Markdown document (outside code fences): its headings, without `#`s,
 * a leading number (`4. Disk full`) or backticks, and the bold labels that open a line or
 * a list item; in lower case.
 */
export function headingsOf(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (m !== null) out.push(normalize(m[1]!.replace(/^\d+(\.\d+)*\.?\s+/, '')));
    const label = /^\s*(?:[-*]\s+|\d+\.\s+)?\*\*(.+?)\*\*/.exec(line);
    if (label !== null) out.push(normalize(label[1]!));
  }
  return out;
}

function normalize(s: string): string {
  return s.replace(/`/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

const fsRepo: Repo = {
  isFile: (p) => existsSync(posix.join(ROOT, p)) && statSync(posix.join(ROOT, p)).isFile(),
  headings: (p) => headingsOf(readFileSync(posix.join(ROOT, p), 'utf8')),
};

/** A `*.md` path: word characters, dots, slashes and dashes ending in `.md`. */
const DOC = /(?<![\w./~-])[\w./~-]*[\w-]\.md\b/g;
/** Quoted section names right after a document: `"A"`, `, "A"`, `("A", "B"`, `section "A"`. */
const FIRST_SECTION = /^\)?,?\s*(?:\(|section\s+)?"([^"]*)("?)/;
const NEXT_SECTION = /^,\s*"([^"]*)("?)/;

/** Where `doc`, cited from `file`, is in the repository; undefined when it is not. */
export function resolveDoc(file: string, doc: string, repo: Repo): string | undefined {
  if (doc.startsWith('/') || doc.startsWith('~')) return undefined;
  for (const c of [posix.join(posix.dirname(file), doc), posix.normalize(doc)]) {
    if (!c.startsWith('../') && repo.isFile(c)) return c;
  }
  return undefined;
}

/** The violations of one file's text. */
export function checkCitations(file: string, text: string, repo: Repo): Violation[] {
  const out: Violation[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const at = (message: string): void => {
      out.push({ file, line: i + 1, message });
    };
    if (line.includes('/work/shared')) at('points into /work/shared, outside the repository');
    // A URL names its own place (another project's document): not a path of this checkout.
    const local = line.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, '');
    let resolvedOnLine = false;
    for (const m of local.matchAll(DOC)) {
      const doc = m[0];
      const found = resolveDoc(file, doc, repo);
      if (found === undefined) {
        at(`cites ${doc}, which is not in the repository`);
        continue;
      }
      resolvedOnLine = true;
      let rest = local.slice(m.index! + doc.length);
      let s = FIRST_SECTION.exec(rest);
      while (s !== null) {
        const quoted = normalize(s[1]!);
        const closed = s[2] === '"';
        if (quoted !== '' && !repo.headings(found).some((h) => h.startsWith(quoted))) {
          at(`cites section "${s[1]!.trim()}" of ${found}, which has no such heading`);
        }
        rest = rest.slice(s[0].length);
        s = closed ? NEXT_SECTION.exec(rest) : null;
      }
    }
    if (line.includes('§') && !resolvedOnLine) at('a § section number without the in-repo document it numbers');
  });
  return out;
}

function format(v: readonly Violation[]): string {
  return v.map((x) => `${x.file}:${x.line}: ${x.message}`).join('\n');
}

describe('document citations', () => {
  it('every cited document is in the repository, with the cited sections', () => {
    const files = checkedFiles();
    expect(files.length).toBeGreaterThan(300);
    const violations = files.flatMap((f) => checkCitations(f, readFileSync(posix.join(ROOT, f), 'utf8'), fsRepo));
    expect(format(violations)).toBe('');
  });
});

describe('the checker finds planted bad citations', () => {
  const repo: Repo = {
    isFile: (p) => ['tsdb/SCHEMA.md', 'tsdb/query/README.md', 'core/FORMAT.md'].includes(p),
    headings: (p) => (p === 'tsdb/SCHEMA.md' ? ['row key', 'hour summary', 'values: decimal'] : ['wal', 'write batch']),
  };
  const check = (file: string, text: string): string[] => checkCitations(file, text, repo).map((v) => v.message);

  it('accepts paths from the root or the citing directory, and real sections', () => {
    expect(check('tsdb/schema/row-key.ts', ' * (tsdb/SCHEMA.md "Row key"): and tsdb/SCHEMA.md, "Hour')).toEqual([]);
    expect(check('tsdb/query/execute.ts', ' * see README.md and ../SCHEMA.md "Values: decimal"')).toEqual([]);
    expect(check('core/dump.ts', ' * core/FORMAT.md ("WAL", "Write batch")')).toEqual([]);
  });

  it('flags a document that is not in the repository', () => {
    expect(check('tsdb/query/time.ts', ' * opentsdb-schema-query.md §3.1')).toEqual([
      'cites opentsdb-schema-query.md, which is not in the repository',
      'a § section number without the in-repo document it numbers',
    ]);
    expect(check('tsdb/query/x.ts', ' * (SCHEMA.md "Row key")')).toEqual(['cites SCHEMA.md, which is not in the repository']);
    expect(check('test/x.test.ts', ' * ../shared/reference/ecosystem.md')).toEqual(['cites ../shared/reference/ecosystem.md, which is not in the repository']);
  });

  it('flags /work/shared and a bare § number', () => {
    expect(check('tsdb/a.ts', ' * reference /work/shared/reference/peers.md')).toEqual([
      'points into /work/shared, outside the repository',
      'cites /work/shared/reference/peers.md, which is not in the repository',
    ]);
    expect(check('tsdb/a.ts', ' * aggregation (reference §3.8)')).toEqual(['a § section number without the in-repo document it numbers']);
  });

  it('flags a section the document does not have, also after another section', () => {
    expect(check('tsdb/a.ts', ' * tsdb/SCHEMA.md "Row keys and salts"')).toEqual([
      'cites section "Row keys and salts" of tsdb/SCHEMA.md, which has no such heading',
    ]);
    expect(check('core/a.ts', ' * core/FORMAT.md ("WAL", "Manifest")')).toEqual([
      'cites section "Manifest" of core/FORMAT.md, which has no such heading',
    ]);
  });

  it('reads headings and opening bold labels outside code fences only', () => {
    expect(headingsOf('# A `b`\ntext\n```\n# not a heading\n```\n## 4. C  d')).toEqual(['a b', 'c d']);
    expect(headingsOf('- **Row transforms** (x): y\n**Bold** start\nnot **mid-line** bold')).toEqual(['row transforms', 'bold']);
  });

  it('leaves URLs alone: a document of another project is cited by its address', () => {
    expect(check('core/FORMAT.md', "leveldb's https://github.com/google/leveldb/blob/main/doc/log_format.md")).toEqual([]);
    expect(check('core/FORMAT.md', "leveldb's `doc/log_format.md`")).toEqual(['cites doc/log_format.md, which is not in the repository']);
  });
});
