/**
 * The source tree the architecture rules read (test/architecture.test.ts): every source
 * file parsed with the TypeScript parser (no type checking), and what a rule is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Top-level directories scanned. */
export const SCANNED_DIRS = ['core', 'tsdb', 'ui', 'test', 'bench', 'backends'];
export const SKIPPED_DIRS = new Set(['node_modules', 'dist', '__golden__', 'fixtures', 'testdata']);
export const SOURCE_EXT = /\.(ts|mts|cts|mjs)$/;

export interface Src {
  /** Repository-relative, '/'-separated. */
  readonly path: string;
  readonly ast: ts.SourceFile;
}

export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export type Rule = (files: readonly Src[]) => Violation[];

export function parse(path: string, text: string): Src {
  return { path, ast: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS) };
}

export function walkDir(rel: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(posix.join(ROOT, rel), { withFileTypes: true });
  } catch {
    return; // e.g. tsdb/ before it exists
  }
  for (const e of entries) {
    const p = posix.join(rel, e.name);
    if (e.isDirectory()) {
      if (!SKIPPED_DIRS.has(e.name)) walkDir(p, out);
    } else if (SOURCE_EXT.test(e.name) && !e.name.endsWith('.d.ts')) {
      out.push(p);
    }
  }
}

export function loadTree(): Src[] {
  const paths: string[] = [];
  for (const d of SCANNED_DIRS) walkDir(d, paths);
  for (const f of readdirSync(ROOT)) if (/\.(ts|mts)$/.test(f)) paths.push(f);
  return paths.sort().map((p) => parse(p, readFileSync(posix.join(ROOT, p), 'utf8')));
}

export function lineOf(src: Src, node: ts.Node): number {
  return src.ast.getLineAndCharacterOfPosition(node.getStart(src.ast)).line + 1;
}

export function visit(node: ts.Node, fn: (n: ts.Node) => void): void {
  fn(node);
  node.forEachChild((c) => visit(c, fn));
}

export function under(path: string, ...dirs: string[]): boolean {
  return dirs.some((d) => path.startsWith(`${d}/`));
}

/** The command-line tools read user files (import, config) and check paths themselves. */
export const CLI_DIR = 'tsdb/cli';

export function report(vs: readonly Violation[]): string[] {
  return vs.map((v) => `${v.file}:${v.line}: ${v.message}`);
}
