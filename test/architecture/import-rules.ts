/**
 * Architecture rules about imports: the direction between core/, tsdb/ and ui/, the layers
 * inside tsdb/, no import cycles, the file-system seam, import suffixes.
 */
import { posix } from 'node:path';
import ts from 'typescript';
import type { Rule, Src, Violation } from './tree.js';
import { CLI_DIR, lineOf, under, visit } from './tree.js';


export interface ImportRef {
  readonly spec: string;
  readonly line: number;
  /** Named imports (`import { a, b }`); undefined for default, namespace, side-effect,
   * dynamic, require and re-export forms. */
  readonly named: readonly string[] | undefined;
}

/** Every module reference: import/export ... from, import(), require(), import('x').T. */
export function importsOf(src: Src): ImportRef[] {
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

export function isRelative(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../');
}

/** The repository path a relative import points at, without its extension. */
export function target(src: Src, spec: string): string {
  return posix.normalize(posix.join(posix.dirname(src.path), spec)).replace(/\.(js|mjs|cjs|ts|mts|cts)$/, '');
}

export function importRule(scope: (path: string) => boolean, check: (src: Src, ref: ImportRef) => string | undefined): Rule {
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

export const coreImportsNoUpperLayer: Rule = importRule(
  (p) => under(p, 'core'),
  (src, ref) => {
    if (!isRelative(ref.spec)) return undefined;
    const t = target(src, ref.spec);
    return under(t, 'tsdb', 'ui') ? `core/ imports ${t} ('${ref.spec}'): core must not depend on tsdb/ or ui/` : undefined;
  },
);

export const CORE_LAYERS_BELOW_SEAM = ['core/lsm', 'core/sst', 'core/wal'];

export const tsdbImportsOnlyTheSeam: Rule = importRule(
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

export const coreApiImportsNothingElseFromCore: Rule = importRule(
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
export const TSDB_LAYERS: ReadonlyArray<readonly [layer: string, prefixes: readonly string[]]> = [
  ['base', ['tsdb/errors', 'tsdb/version', 'tsdb/periodic-pass', 'tsdb/config', 'tsdb/config-keys', 'tsdb/compact/retention', 'tsdb/memory/']],
  ['schema/codec', ['tsdb/schema/', 'tsdb/codec/']],
  ['catalog', ['tsdb/catalog/', 'tsdb/uid/', 'tsdb/meta/', 'tsdb/tables', 'tsdb/limits/']],
  ['write/query', ['tsdb/write/', 'tsdb/query/', 'tsdb/compact/']],
  ['root', ['tsdb/tsdb']],
  ['protocols', ['tsdb/server/', 'tsdb/cli/', 'tsdb/main']],
];
export const ROOT_MODULE = 'tsdb/tsdb';

export function tsdbLayer(path: string): number {
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
export function isTypeOnly(n: ts.Node): boolean {
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

export interface Edge {
  readonly to: string;
  readonly line: number;
  readonly typeOnly: boolean;
}

/** Relative imports of a file: target path (no extension) and whether they are erased at runtime. */
export function edgesOf(src: Src): Edge[] {
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

export const tsdbLayering: Rule = (files) => {
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
 * No import cycles anywhere, type-only imports included: those are erased at runtime,
 * but a cycle of types still ties the files together (neither can be read or moved
 * without the other); a type both need goes to a file of its own. Each cycle is reported
 * once, at the import that closes it.
 */
export const noImportCycles: Rule = (files) => {
  const byPath = new Map<string, Src>();
  for (const f of files) byPath.set(f.path.replace(/\.(ts|mts|cts|mjs)$/, ''), f);
  const graph = new Map<string, Edge[]>();
  for (const [p, src] of byPath) graph.set(p, edgesOf(src).filter((e) => byPath.has(e.to)));
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

export const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises']);


export const onlyNodeFsImportsFs: Rule = importRule(
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

export const relativeImportsEndInJs: Rule = importRule(
  (p) => /\.(ts|mts|cts)$/.test(p),
  (src, ref) => {
    // NB: ui/ pages import their stylesheet ('./style.css'), which esbuild bundles.
    if (!isRelative(ref.spec) || /\.(js|mjs|cjs|json)$/.test(ref.spec) || (ref.spec.endsWith('.css') && under(src.path, 'ui'))) return undefined;
    return `relative import '${ref.spec}' must carry a .js suffix (Node runs the emitted JavaScript)`;
  },
);
