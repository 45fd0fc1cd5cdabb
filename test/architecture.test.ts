/**
 * Architecture rules as tests (as Pebble's internal/lint does them): the
 * dependency direction between core/, tsdb/ and ui/, the layers inside tsdb/, no import
 * cycles, the file-system seam, banned
 * TypeScript constructs and calls, skipped tests, error codes, and import suffixes.
 *
 * Every source file is parsed with the TypeScript parser (already a dev dependency; no
 * type checking, so the whole tree parses in well under a second). Each rule is a pure
 * function from parsed files to violations, reported as `file:line: what`; the second
 * describe block feeds each rule a known-bad snippet, so a rule that stops finding
 * anything fails there rather than passing silently on a clean tree.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { STORE_ERROR_CODES } from '../core/api/errors.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Top-level directories scanned. */
const SCANNED_DIRS = ['core', 'tsdb', 'ui', 'test', 'bench'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '__golden__', 'fixtures', 'testdata']);
const SOURCE_EXT = /\.(ts|mts|cts|mjs)$/;

interface Src {
  /** Repository-relative, '/'-separated. */
  readonly path: string;
  readonly ast: ts.SourceFile;
}

interface Violation {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

type Rule = (files: readonly Src[]) => Violation[];

function parse(path: string, text: string): Src {
  return { path, ast: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS) };
}

function walkDir(rel: string, out: string[]): void {
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

function loadTree(): Src[] {
  const paths: string[] = [];
  for (const d of SCANNED_DIRS) walkDir(d, paths);
  for (const f of readdirSync(ROOT)) if (/\.(ts|mts)$/.test(f)) paths.push(f);
  return paths.sort().map((p) => parse(p, readFileSync(posix.join(ROOT, p), 'utf8')));
}

function lineOf(src: Src, node: ts.Node): number {
  return src.ast.getLineAndCharacterOfPosition(node.getStart(src.ast)).line + 1;
}

function visit(node: ts.Node, fn: (n: ts.Node) => void): void {
  fn(node);
  node.forEachChild((c) => visit(c, fn));
}

function under(path: string, ...dirs: string[]): boolean {
  return dirs.some((d) => path.startsWith(`${d}/`));
}

// -------------------------------------------------------------------------------------
// Imports

interface ImportRef {
  readonly spec: string;
  readonly line: number;
  /** Named imports (`import { a, b }`); undefined for default, namespace, side-effect,
   * dynamic, require and re-export forms. */
  readonly named: readonly string[] | undefined;
}

/** Every module reference: import/export ... from, import(), require(), import('x').T. */
function importsOf(src: Src): ImportRef[] {
  const out: ImportRef[] = [];
  const add = (lit: ts.Node, named?: string[]): void => {
    if (ts.isStringLiteralLike(lit)) out.push({ spec: lit.text, line: lineOf(src, lit), named });
  };
  visit(src.ast, (n) => {
    if (ts.isImportDeclaration(n)) {
      const c = n.importClause;
      const b = c?.namedBindings;
      const named = c !== undefined && c.name === undefined && b !== undefined && ts.isNamedImports(b)
        ? b.elements.map((e) => (e.propertyName ?? e.name).text)
        : undefined;
      add(n.moduleSpecifier, named);
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier !== undefined) {
      add(n.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      add(n.moduleReference.expression);
    } else if (ts.isCallExpression(n) && n.arguments.length > 0) {
      const isDynamicImport = n.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(n.expression) && n.expression.text === 'require';
      if (isDynamicImport || isRequire) add(n.arguments[0]!);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) {
      add(n.argument.literal);
    }
  });
  return out;
}

function isRelative(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../');
}

/** The repository path a relative import points at, without its extension. */
function target(src: Src, spec: string): string {
  return posix.normalize(posix.join(posix.dirname(src.path), spec)).replace(/\.(js|mjs|cjs|ts|mts|cts)$/, '');
}

function importRule(scope: (path: string) => boolean, check: (src: Src, ref: ImportRef) => string | undefined): Rule {
  return (files) => {
    const out: Violation[] = [];
    for (const src of files) {
      if (!scope(src.path)) continue;
      for (const ref of importsOf(src)) {
        const message = check(src, ref);
        if (message !== undefined) out.push({ file: src.path, line: ref.line, message });
      }
    }
    return out;
  };
}

const coreImportsNoUpperLayer: Rule = importRule(
  (p) => under(p, 'core'),
  (src, ref) => {
    if (!isRelative(ref.spec)) return undefined;
    const t = target(src, ref.spec);
    return under(t, 'tsdb', 'ui') ? `core/ imports ${t} ('${ref.spec}'): core must not depend on tsdb/ or ui/` : undefined;
  },
);

const CORE_LAYERS_BELOW_SEAM = ['core/lsm', 'core/sst', 'core/wal'];

const tsdbImportsOnlyTheSeam: Rule = importRule(
  (p) => under(p, 'tsdb'),
  (src, ref) => {
    if (!isRelative(ref.spec)) return undefined;
    const t = target(src, ref.spec);
    if (!under(t, 'core')) return undefined;
    if (src.path === 'tsdb/main.ts') {
      // The composition root wires the engine, but through core/index.ts, not its internals.
      return under(t, ...CORE_LAYERS_BELOW_SEAM) ? `tsdb/main.ts imports ${t}: use core/index.ts` : undefined;
    }
    return t === 'core/index' || under(t, 'core/api') ? undefined : `tsdb/ imports ${t} ('${ref.spec}'): only core/api/* and core/index.ts`;
  },
);

const coreApiImportsNothingElseFromCore: Rule = importRule(
  (p) => under(p, 'core/api'),
  (src, ref) => {
    if (!isRelative(ref.spec)) return undefined;
    const t = target(src, ref.spec);
    return under(t, 'core') && !under(t, 'core/api') ? `core/api imports ${t}: the seam must not depend on the engine` : undefined;
  },
);

/**
 * The layers inside tsdb/ (issue 33), lowest first: a file imports files of its own layer
 * or lower ones only. Matched by path prefix, the longest wins; a file under no prefix
 * breaks the rule, so a new part must be placed. Type-only imports of the composition
 * root (tsdb/tsdb.ts: the handle every part is given) are allowed from anywhere.
 */
const TSDB_LAYERS: ReadonlyArray<readonly [layer: string, prefixes: readonly string[]]> = [
  ['base', ['tsdb/errors', 'tsdb/version', 'tsdb/config', 'tsdb/config-keys', 'tsdb/compact/retention', 'tsdb/memory/']],
  ['schema/codec', ['tsdb/schema/', 'tsdb/codec/']],
  ['catalog', ['tsdb/catalog/', 'tsdb/uid/', 'tsdb/meta/', 'tsdb/tables', 'tsdb/limits/']],
  ['write/query', ['tsdb/write/', 'tsdb/query/', 'tsdb/compact/']],
  ['root', ['tsdb/tsdb']],
  ['protocols', ['tsdb/server/', 'tsdb/cli/', 'tsdb/main']],
];
const ROOT_MODULE = 'tsdb/tsdb';

function tsdbLayer(path: string): number {
  const p = path.replace(/\.(ts|mts|js|mjs)$/, '');
  let best = -1;
  let bestLength = 0;
  TSDB_LAYERS.forEach(([, prefixes], layer) => {
    for (const x of prefixes) {
      if ((x.endsWith('/') ? p.startsWith(x) : p === x) && x.length > bestLength) {
        best = layer;
        bestLength = x.length;
      }
    }
  });
  return best;
}

/** Type-only: `import type`, `export type`, or every named binding marked `type`. */
function isTypeOnly(n: ts.Node): boolean {
  if (ts.isImportDeclaration(n)) {
    const c = n.importClause;
    if (c === undefined) return false;
    if (c.isTypeOnly) return true;
    const b = c.namedBindings;
    return c.name === undefined && b !== undefined && ts.isNamedImports(b) && b.elements.length > 0 && b.elements.every((e) => e.isTypeOnly);
  }
  if (ts.isExportDeclaration(n)) return n.isTypeOnly;
  return ts.isImportTypeNode(n);
}

interface Edge {
  readonly to: string;
  readonly line: number;
  readonly typeOnly: boolean;
}

/** Relative imports of a file: target path (no extension) and whether they are erased at runtime. */
function edgesOf(src: Src): Edge[] {
  const out: Edge[] = [];
  visit(src.ast, (n) => {
    let lit: ts.Node | undefined;
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier !== undefined) lit = n.moduleSpecifier;
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments.length > 0) lit = n.arguments[0];
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) lit = n.argument.literal;
    if (lit === undefined || !ts.isStringLiteralLike(lit) || !isRelative(lit.text)) return;
    out.push({ to: target(src, lit.text), line: lineOf(src, lit), typeOnly: isTypeOnly(n) });
  });
  return out;
}

const tsdbLayering: Rule = (files) => {
  const out: Violation[] = [];
  for (const src of files) {
    if (!under(src.path, 'tsdb')) continue;
    const from = tsdbLayer(src.path);
    if (from < 0) {
      out.push({ file: src.path, line: 1, message: 'in no layer of TSDB_LAYERS: place it (test/architecture.test.ts)' });
      continue;
    }
    for (const e of edgesOf(src)) {
      if (!under(e.to, 'tsdb') || (e.to === ROOT_MODULE && e.typeOnly)) continue;
      const to = tsdbLayer(e.to);
      if (to > from) out.push({ file: src.path, line: e.line, message: `${TSDB_LAYERS[from]![0]} imports ${e.to} (${TSDB_LAYERS[to]![0]}): tsdb/ imports point down, protocols → write/query → catalog → schema/codec → base` });
    }
  }
  return out;
};

/**
 * No cycles of runtime imports anywhere (type-only imports are erased: they order no
 * module loading). Each cycle is reported once, at the import that closes it.
 */
const noImportCycles: Rule = (files) => {
  const byPath = new Map<string, Src>();
  for (const f of files) byPath.set(f.path.replace(/\.(ts|mts|cts|mjs)$/, ''), f);
  const graph = new Map<string, Edge[]>();
  for (const [p, src] of byPath) graph.set(p, edgesOf(src).filter((e) => !e.typeOnly && byPath.has(e.to)));
  const out: Violation[] = [];
  const state = new Map<string, 1 | 2>(); // 1: on the path, 2: done
  const path: string[] = [];
  const dfs = (v: string): void => {
    state.set(v, 1);
    path.push(v);
    for (const e of graph.get(v) ?? []) {
      const s = state.get(e.to);
      if (s === 1) {
        const cycle = [...path.slice(path.indexOf(e.to)), e.to];
        out.push({ file: byPath.get(v)!.path, line: e.line, message: `import cycle: ${cycle.join(' → ')}` });
      } else if (s === undefined) {
        dfs(e.to);
      }
    }
    path.pop();
    state.set(v, 2);
  };
  for (const v of [...graph.keys()].sort()) if (!state.has(v)) dfs(v);
  return out;
};

const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises']);

/** The command-line tools read user files (import, config) and check paths themselves. */
const CLI_DIR = 'tsdb/cli';

const onlyNodeFsImportsFs: Rule = importRule(
  (p) => under(p, 'core', 'tsdb', 'ui') && !under(p, CLI_DIR),
  (src, ref) => {
    if (!FS_MODULES.has(ref.spec) || src.path === 'core/fs/node-fs.ts') return undefined;
    // The web UI: the bundler writes ui/dist, and the UI route serves it (checking paths itself).
    if (src.path === 'ui/build.mjs' || src.path === 'tsdb/server/routes/ui.ts') return undefined;
    if (src.path === 'core/lsm/job-runner.ts' && ref.spec === 'node:fs' && ref.named !== undefined && ref.named.length === 1 && ref.named[0] === 'existsSync') {
      return undefined;
    }
    return `imports '${ref.spec}'${ref.named !== undefined ? ` { ${ref.named.join(', ')} }` : ''}: only core/fs/node-fs.ts (and tsdb/cli/) touch the file system (job-runner.ts: existsSync only)`;
  },
);

const relativeImportsEndInJs: Rule = importRule(
  (p) => /\.(ts|mts|cts)$/.test(p),
  (src, ref) => {
    // NB: ui/ pages import their stylesheet ('./style.css'), which esbuild bundles.
    if (!isRelative(ref.spec) || /\.(js|mjs|cjs|json)$/.test(ref.spec) || (ref.spec.endsWith('.css') && under(src.path, 'ui'))) return undefined;
    return `relative import '${ref.spec}' must carry a .js suffix (Node runs the emitted JavaScript)`;
  },
);

// -------------------------------------------------------------------------------------
// Constructs and calls

function nodeRule(scope: (path: string) => boolean, check: (n: ts.Node, src: Src) => string | undefined): Rule {
  return (files) => {
    const out: Violation[] = [];
    for (const src of files) {
      if (!scope(src.path)) continue;
      visit(src.ast, (n) => {
        const message = check(n, src);
        if (message !== undefined) out.push({ file: src.path, line: lineOf(src, n), message });
      });
    }
    return out;
  };
}

const inCoreOrTsdb = (p: string): boolean => under(p, 'core', 'tsdb');

const noEnumNamespaceOrParameterProperties: Rule = nodeRule(inCoreOrTsdb, (n) => {
  if (ts.isEnumDeclaration(n)) return `enum ${n.name.text}: use an 'as const' object and a union type`;
  // `namespace X {}` / `module X {}`; ambient `declare module 'x'` and `declare global` are fine.
  if (ts.isModuleDeclaration(n) && ts.isIdentifier(n.name) && (n.flags & ts.NodeFlags.GlobalAugmentation) === 0) {
    return `namespace ${n.name.text}: use a module`;
  }
  if (ts.isParameter(n) && ts.isConstructorDeclaration(n.parent) && ts.isParameterPropertyDeclaration(n, n.parent)) {
    return `constructor parameter property '${n.name.getText()}': declare the field and assign it`;
  }
  return undefined;
});

/** `console.<method>` (dotted or bracketed), with the method name. */
function consoleMethod(n: ts.Node): string | undefined {
  if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'console') return n.name.text;
  if (ts.isElementAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'console' && ts.isStringLiteralLike(n.argumentExpression)) {
    return n.argumentExpression.text;
  }
  return undefined;
}

const noConsoleLog: Rule = nodeRule(
  (p) => inCoreOrTsdb(p) && !under(p, 'core/tools', CLI_DIR) && p !== 'tsdb/main.ts',
  (n) => (consoleMethod(n) === 'log' ? 'console.log outside core/tools/, tsdb/cli/ and tsdb/main.ts: report through errors, stats or the logger' : undefined),
);

/** Calls known to return a Node Buffer. */
const BUFFER_FUNCTIONS = new Set([
  'compressSync', 'uncompressSync', 'deflateRawSync', 'inflateRawSync', 'deflateSync', 'inflateSync',
  'gzipSync', 'gunzipSync', 'randomBytes',
]);

function stripWrappers(e: ts.Expression): ts.Expression {
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAwaitExpression(e)) e = e.expression;
    else return e;
  }
}

function isBufferType(t: ts.TypeNode | undefined): boolean {
  if (t === undefined) return false;
  if (ts.isTypeReferenceNode(t)) return ts.isIdentifier(t.typeName) && t.typeName.text === 'Buffer';
  if (ts.isUnionTypeNode(t)) return t.types.some(isBufferType);
  return false;
}

/**
 * Names in the file that hold Buffers, by declaration: variables, parameters and class
 * fields typed Buffer or initialized from a Buffer-producing expression, and functions
 * declared to return Buffer. File-scoped (not scope-aware): a heuristic, not a checker.
 */
function bufferNames(src: Src): { values: Set<string>; functions: Set<string> } {
  const values = new Set<string>();
  const functions = new Set<string>();
  visit(src.ast, (n) => {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name !== undefined && isBufferType(n.type)) functions.add(n.name.getText());
  });
  const producesBuffer = (e: ts.Expression | undefined): boolean => e !== undefined && isBufferExpression(stripWrappers(e), values, functions);
  visit(src.ast, (n) => {
    if ((ts.isVariableDeclaration(n) || ts.isParameter(n) || ts.isPropertyDeclaration(n)) && ts.isIdentifier(n.name)) {
      if (isBufferType(n.type) || producesBuffer(n.initializer)) values.add(n.name.text);
    }
  });
  return { values, functions };
}

function isBufferExpression(e: ts.Expression, values: Set<string>, functions: Set<string>): boolean {
  if (ts.isAsExpression(e) || ts.isTypeAssertionExpression(e)) return isBufferType(e.type);
  if (ts.isNewExpression(e)) return ts.isIdentifier(e.expression) && e.expression.text === 'Buffer';
  if (ts.isCallExpression(e)) {
    const c = e.expression;
    if (ts.isPropertyAccessExpression(c) && ts.isIdentifier(c.expression) && c.expression.text === 'Buffer') return true;
    const name = ts.isIdentifier(c) ? c.text : ts.isPropertyAccessExpression(c) ? c.name.text : undefined;
    if (name === undefined) return false;
    if (BUFFER_FUNCTIONS.has(name) || functions.has(name)) return true;
    // readFile(path) / readFileSync(path) without an encoding give a Buffer.
    return (name === 'readFile' || name === 'readFileSync') && e.arguments.length === 1;
  }
  if (ts.isIdentifier(e)) return values.has(e.text);
  if (ts.isPropertyAccessExpression(e) && e.expression.kind === ts.SyntaxKind.ThisKeyword) return values.has(e.name.text);
  return false;
}

const noBufferSlice: Rule = (files) => {
  const out: Violation[] = [];
  for (const src of files) {
    if (!under(src.path, 'core', 'tsdb', 'ui', 'bench')) continue;
    const { values, functions } = bufferNames(src);
    visit(src.ast, (n) => {
      if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression) || n.expression.name.text !== 'slice') return;
      const recv = stripWrappers(n.expression.expression);
      if (isBufferExpression(recv, values, functions)) {
        out.push({ file: src.path, line: lineOf(src, n), message: `Buffer#slice on '${recv.getText(src.ast)}' aliases memory: use subarray() for a view or copy explicitly` });
      }
    });
  }
  return out;
};

const TEST_FNS = new Set(['it', 'test', 'describe', 'suite', 'bench']);
const BANNED_MODIFIERS = new Set(['skip', 'todo', 'only']);

const noSkippedTests: Rule = nodeRule(
  (p) => under(p, 'test'),
  (n) => {
    if (!ts.isPropertyAccessExpression(n) || !BANNED_MODIFIERS.has(n.name.text)) return undefined;
    const base = n.expression;
    return ts.isIdentifier(base) && TEST_FNS.has(base.text)
      ? `${base.text}.${n.name.text}: a test that does not run cannot fail (gate on capabilities with runIf/skipIf instead)`
      : undefined;
  },
);

const KNOWN_CODES: ReadonlySet<string> = new Set(STORE_ERROR_CODES);

const storeErrorCodesAreRegistered: Rule = nodeRule(inCoreOrTsdb, (n) => {
  if (!ts.isStringLiteralLike(n) || !/^STORE_[A-Z_]+$/.test(n.text) || KNOWN_CODES.has(n.text)) return undefined;
  return `'${n.text}' is not in STORE_ERROR_CODES (core/api/errors.ts)`;
});

// -------------------------------------------------------------------------------------

interface RuleCase {
  readonly name: string;
  readonly rule: Rule;
  /** A file the rule must flag, on exactly these lines (one entry per violation). */
  readonly bad: readonly [path: string, text: string];
  readonly badLines: readonly number[];
  /** A similar file the rule must accept. */
  readonly good: readonly [path: string, text: string];
  /** More files the rule must accept (its exceptions). */
  readonly alsoGood?: ReadonlyArray<readonly [path: string, text: string]>;
  /** More files the rule must flag at least once (next to an exception, to keep it narrow). */
  readonly alsoBad?: ReadonlyArray<readonly [path: string, text: string]>;
}

const RULES: readonly RuleCase[] = [
  {
    name: 'nothing in core/ imports tsdb/ or ui/',
    rule: coreImportsNoUpperLayer,
    bad: ['core/lsm/x.ts', "import type { Tsdb } from '../../tsdb/index.js';"],
    badLines: [1],
    good: ['core/lsm/x.ts', "import { compareBytes } from '../api/bytes.js';"],
  },
  {
    name: 'tsdb/ imports only core/api/* and core/index.ts (tsdb/main.ts: no core/lsm, sst, wal)',
    rule: tsdbImportsOnlyTheSeam,
    bad: ['tsdb/query/scanner.ts', "import { Engine } from '../../core/lsm/engine.js';\nconst m = await import('../../core/sst/dump.js');"],
    badLines: [1, 2],
    good: ['tsdb/query/scanner.ts', "import type { Store } from '../../core/api/store.js';\nimport { openMemoryStore } from '../../core/index.js';"],
  },
  {
    name: 'core/api imports nothing else from core/',
    rule: coreApiImportsNothingElseFromCore,
    bad: ['core/api/store.ts', "export { Engine } from '../lsm/engine.js';"],
    badLines: [1],
    good: ['core/api/store.ts', "import { StoreError } from './errors.js';"],
  },
  {
    name: 'inside tsdb/: protocols → write/query → catalog → schema/codec → base, every file in a layer',
    rule: tsdbLayering,
    bad: ['tsdb/catalog/x.ts', "import { Ingestor } from '../write/ingest.js';\nimport type { Plan } from '../query/series-plan.js';\nimport { a } from '../server/routes/put.js';"],
    badLines: [1, 2, 3],
    good: ['tsdb/catalog/x.ts', "import { encodeSeriesKey } from '../schema/row-key.js';\nimport type { Tsdb } from '../tsdb.js';\nimport { UidTable } from '../uid/uid-table.js';"],
    alsoGood: [['tsdb/server/x.ts', "import { Tsdb } from '../tsdb.js';\nimport { Ingestor } from '../write/ingest.js';"]],
    alsoBad: [
      ['tsdb/query/x.ts', "import { Tsdb } from '../tsdb.js';"],
      ['tsdb/newpart/x.ts', "export const a = 1;"],
    ],
  },
  {
    name: 'no cycles of runtime imports',
    rule: noImportCycles,
    bad: ['tsdb/write/x.ts', "import { x } from './x.js';"],
    badLines: [1],
    good: ['tsdb/write/x.ts', "import type { X } from './x.js';"],
  },
  {
    name: 'only core/fs/node-fs.ts and tsdb/cli/ import node:fs (job-runner.ts: existsSync only)',
    rule: onlyNodeFsImportsFs,
    bad: ['core/lsm/job-runner.ts', "import { existsSync, readFileSync } from 'node:fs';\nconst f = require('fs');"],
    badLines: [1, 2],
    good: ['core/lsm/job-runner.ts', "import { existsSync } from 'node:fs';"],
    alsoGood: [['tsdb/cli/import.ts', "import { createReadStream } from 'node:fs';\nimport { stat } from 'node:fs/promises';\nimport { createGunzip } from 'node:zlib';"]],
    alsoBad: [
      ['tsdb/server/x.ts', "import { readFile } from 'node:fs/promises';"],
      ['tsdb/cli-helpers.ts', "import { readFileSync } from 'node:fs';"],
    ],
  },
  {
    name: 'no enum, namespace or constructor parameter properties in core/ and tsdb/',
    rule: noEnumNamespaceOrParameterProperties,
    bad: ['tsdb/x.ts', 'export enum Kind { A }\nnamespace N { export const a = 1; }\nclass C { constructor(private readonly a: number, public b: string) {} }'],
    badLines: [1, 2, 3, 3],
    good: ['tsdb/x.ts', "export const Kind = { A: 0 } as const;\ndeclare global { interface X { a: 1 } }\nclass C { readonly a: number; constructor(a: number) { this.a = a; } }"],
  },
  {
    name: 'no console.log in core/ or tsdb/ outside core/tools/, tsdb/cli/ and tsdb/main.ts',
    rule: noConsoleLog,
    bad: ['core/lsm/engine.ts', "console.log('debug');\nconsole['log']('x');"],
    badLines: [1, 2],
    good: ['core/tools/dump-cli.ts', "console.log('fine here');"],
    alsoGood: [['tsdb/cli/run-cli.ts', "console.log('fine here too');"]],
    alsoBad: [['tsdb/server/x.ts', "console.log('debug');"]],
  },
  {
    name: 'no Buffer#slice',
    rule: noBufferSlice,
    bad: ['core/sst/x.ts', [
      'const a = Buffer.from(x).slice(1);',
      'const b: Buffer = get();',
      'b.slice(0, 2);',
      'const c = readFileSync(p);',
      'c.slice(3);',
      '(y as Buffer).slice(0);',
      'function mk(): Buffer { return Buffer.alloc(1); }',
      'mk().slice(0);',
      'class K { private buf: Buffer = Buffer.alloc(2); f() { return this.buf.slice(1); } }',
    ].join('\n')],
    badLines: [1, 3, 5, 6, 8, 9],
    good: ['core/sst/x.ts', 'const a = Buffer.from(x).subarray(1);\nconst u = new Uint8Array(4);\nu.slice(1);\nconst s = readFileSync(p, "utf8").slice(1);'],
  },
  {
    name: 'no it.skip / describe.skip / it.todo (or .only) in test/',
    rule: noSkippedTests,
    bad: ['test/x.test.ts', "it.skip('a', () => {});\ndescribe.skip('b', () => {});\nit.todo('c');\ntest.only('d', () => {});"],
    badLines: [1, 2, 3, 4],
    good: ['test/x.test.ts', "it.runIf(true)('a', () => {});\ndescribe.skipIf(false)('b', () => {});\nconst o = { skip: 1 }; o.skip;"],
  },
  {
    name: "every 'STORE_*' code used in core/ is in STORE_ERROR_CODES",
    rule: storeErrorCodesAreRegistered,
    bad: ['core/lsm/x.ts', "throw new StoreError('STORE_BOGUS_CODE', 'm');"],
    badLines: [1],
    good: ['core/lsm/x.ts', "throw new StoreError('STORE_CORRUPTION', 'm');"],
  },
  {
    name: 'relative imports in .ts files end in .js',
    rule: relativeImportsEndInJs,
    bad: ['test/x.test.ts', "import { a } from './a';\nimport type { B } from '../b.ts';\nexport * from './c';\nconst d = await import('./d');"],
    badLines: [1, 2, 3, 4],
    good: ['test/x.test.ts', "import { a } from './a.js';\nimport ts from 'typescript';\nimport { x } from 'node:fs';"],
  },
];

function report(vs: readonly Violation[]): string[] {
  return vs.map((v) => `${v.file}:${v.line}: ${v.message}`);
}

describe('architecture', () => {
  const tree = loadTree();

  it('finds the source tree', () => {
    const paths = tree.map((s) => s.path);
    expect(paths).toContain('core/api/store.ts');
    expect(paths).toContain('core/fs/node-fs.ts');
    expect(paths).toContain('test/architecture.test.ts');
    expect(paths.filter((p) => p.startsWith('core/')).length).toBeGreaterThan(30);
  });

  for (const c of RULES) {
    it(c.name, () => {
      expect(report(c.rule(tree))).toEqual([]);
    });
  }
});

describe('the cycle rule across files', () => {
  it('finds a cycle of three files, once, and not one closed by a type-only import', () => {
    const a = parse('tsdb/write/a.ts', "import { b } from './b.js';");
    const b = parse('tsdb/write/b.ts', "import { c } from '../query/c.js';");
    const c = parse('tsdb/query/c.ts', "import { a } from '../write/a.js';");
    const cTyped = parse('tsdb/query/c.ts', "import type { A } from '../write/a.js';");
    expect(report(noImportCycles([a, b, c]))).toEqual(['tsdb/write/b.ts:1: import cycle: tsdb/query/c → tsdb/write/a → tsdb/write/b → tsdb/query/c']);
    expect(report(noImportCycles([a, b, cTyped]))).toEqual([]);
  });
});

describe('architecture rules flag known-bad code', () => {
  for (const c of RULES) {
    it(c.name, () => {
      const bad = report(c.rule([parse(...c.bad)]));
      const good = report(c.rule([parse(...c.good)]));
      expect(good).toEqual([]);
      expect(bad.map((v) => Number(v.split(':')[1])), bad.join('\n')).toEqual(c.badLines);
      for (const g of c.alsoGood ?? []) expect(report(c.rule([parse(...g)])), g[0]).toEqual([]);
      for (const b of c.alsoBad ?? []) expect(report(c.rule([parse(...b)])).length, b[0]).toBeGreaterThan(0);
    });
  }
});
