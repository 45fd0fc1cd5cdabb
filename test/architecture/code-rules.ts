/**
 * Architecture rules about code: banned TypeScript constructs and calls, skipped tests,
 * error codes, file length.
 */
import ts from 'typescript';
import { STORE_ERROR_CODES } from '../../core/api/errors.js';
import type { Rule, Src, Violation } from './tree.js';
import { CLI_DIR, lineOf, under, visit } from './tree.js';


export function nodeRule(scope: (path: string) => boolean, check: (n: ts.Node, src: Src) => string | undefined): Rule {
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

export const inCoreOrTsdb = (p: string): boolean => under(p, 'core', 'tsdb');

export const noEnumNamespaceOrParameterProperties: Rule = nodeRule(inCoreOrTsdb, (n) => {
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
export function consoleMethod(n: ts.Node): string | undefined {
  if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'console') return n.name.text;
  if (ts.isElementAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'console' && ts.isStringLiteralLike(n.argumentExpression)) {
    return n.argumentExpression.text;
  }
  return undefined;
}

export const noConsoleLog: Rule = nodeRule(
  (p) => inCoreOrTsdb(p) && !under(p, 'core/tools', CLI_DIR) && p !== 'tsdb/main.ts',
  (n) => (consoleMethod(n) === 'log' ? 'console.log outside core/tools/, tsdb/cli/ and tsdb/main.ts: report through errors, stats or the logger' : undefined),
);

/** Calls known to return a Node Buffer. */
export const BUFFER_FUNCTIONS = new Set([
  'compressSync', 'uncompressSync', 'deflateRawSync', 'inflateRawSync', 'deflateSync', 'inflateSync',
  'gzipSync', 'gunzipSync', 'randomBytes',
]);

export function stripWrappers(e: ts.Expression): ts.Expression {
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAwaitExpression(e)) e = e.expression;
    else return e;
  }
}

export function isBufferType(t: ts.TypeNode | undefined): boolean {
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
export function bufferNames(src: Src): { values: Set<string>; functions: Set<string> } {
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

export function isBufferExpression(e: ts.Expression, values: Set<string>, functions: Set<string>): boolean {
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

export const noBufferSlice: Rule = (files) => {
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

export const TEST_FNS = new Set(['it', 'test', 'describe', 'suite', 'bench']);
export const BANNED_MODIFIERS = new Set(['skip', 'todo', 'only']);

export const noSkippedTests: Rule = nodeRule(
  (p) => under(p, 'test'),
  (n) => {
    if (!ts.isPropertyAccessExpression(n) || !BANNED_MODIFIERS.has(n.name.text)) return undefined;
    const base = n.expression;
    return ts.isIdentifier(base) && TEST_FNS.has(base.text)
      ? `${base.text}.${n.name.text}: a test that does not run cannot fail (gate on capabilities with runIf/skipIf instead)`
      : undefined;
  },
);

export const KNOWN_CODES: ReadonlySet<string> = new Set(STORE_ERROR_CODES);

export const storeErrorCodesAreRegistered: Rule = nodeRule(inCoreOrTsdb, (n) => {
  if (!ts.isStringLiteralLike(n) || !/^STORE_[A-Z_]+$/.test(n.text) || KNOWN_CODES.has(n.text)) return undefined;
  return `'${n.text}' is not in STORE_ERROR_CODES (core/api/errors.ts)`;
});

/** Lines a source or test file may have (house style: small files). */
export const MAX_FILE_LINES = 600;

export const noLongFiles: Rule = (files) => {
  const out: Violation[] = [];
  for (const src of files) {
    const text = src.ast.text;
    let lines = 0;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
    if (text.length > 0 && !text.endsWith('\n')) lines++;
    if (lines > MAX_FILE_LINES) out.push({ file: src.path, line: MAX_FILE_LINES + 1, message: `${lines} lines: split it (at most ${MAX_FILE_LINES})` });
  }
  return out;
};
