/**
 * Architecture rules as tests (as Pebble's internal/lint does them): the
 * dependency direction between core/, tsdb/ and ui/, the layers inside tsdb/, no import
 * cycles (type-only ones too), the file-system seam, banned
 * TypeScript constructs and calls, skipped tests, error codes, import suffixes, and no
 * file over 600 lines.
 *
 * The rules live in test/architecture/ (tree.ts: the parsed tree; import-rules.ts,
 * code-rules.ts). Every source file is parsed with the TypeScript parser (already a dev dependency; no
 * type checking, so the whole tree parses in well under a second). Each rule is a pure
 * function from parsed files to violations, reported as `file:line: what`; the second
 * describe block feeds each rule a known-bad snippet, so a rule that stops finding
 * anything fails there rather than passing silently on a clean tree.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_FILE_LINES, noBufferSlice, noConsoleLog, noEnumNamespaceOrParameterProperties, noLongFiles, noSkippedTests, storeErrorCodesAreRegistered,
} from './architecture/code-rules.js';
import {
  coreApiImportsNothingElseFromCore, coreImportsNoUpperLayer, noImportCycles, onlyNodeFsImportsFs, relativeImportsEndInJs,
  tsdbImportsOnlyTheSeam, tsdbLayering,
} from './architecture/import-rules.js';
import type { Rule } from './architecture/tree.js';
import { loadTree, parse, report } from './architecture/tree.js';

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
    name: 'no import cycles, type-only ones included',
    rule: noImportCycles,
    bad: ['tsdb/write/x.ts', "import { x } from './x.js';\nimport type { X } from './x.js';"],
    badLines: [1, 2],
    good: ['tsdb/write/x.ts', "import { y } from './y.js';\nimport type { Y } from './y.js';"],
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
    name: `no file over ${MAX_FILE_LINES} lines`,
    rule: noLongFiles,
    bad: ['test/x.test.ts', 'const a = 1;\n'.repeat(MAX_FILE_LINES + 1)],
    badLines: [MAX_FILE_LINES + 1],
    good: ['test/x.test.ts', 'const a = 1;\n'.repeat(MAX_FILE_LINES)],
    alsoGood: [['core/x.ts', 'const a = 1;\n'.repeat(MAX_FILE_LINES - 1) + 'const b = 2;']],
    alsoBad: [['core/x.ts', 'const a = 1;\n'.repeat(MAX_FILE_LINES) + 'const b = 2;']],
  },
  {
    name: 'relative imports in .ts files end in .js',
    rule: relativeImportsEndInJs,
    bad: ['test/x.test.ts', "import { a } from './a';\nimport type { B } from '../b.ts';\nexport * from './c';\nconst d = await import('./d');"],
    badLines: [1, 2, 3, 4],
    good: ['test/x.test.ts', "import { a } from './a.js';\nimport ts from 'typescript';\nimport { x } from 'node:fs';"],
  },
];

describe('architecture', () => {
  const tree = loadTree();

  it('finds the source tree', () => {
    const paths = tree.map((s) => s.path);
    expect(paths).toContain('core/api/store.ts');
    expect(paths).toContain('core/fs/node-fs.ts');
    expect(paths).toContain('test/architecture.test.ts');
    expect(paths).toContain('backends/bigtable/src/bigtable-store.ts');
    expect(paths.filter((p) => p.startsWith('core/')).length).toBeGreaterThan(30);
  });

  for (const c of RULES) {
    it(c.name, () => {
      expect(report(c.rule(tree))).toEqual([]);
    });
  }
});

describe('the cycle rule across files', () => {
  it('finds a cycle of three files once, also when a type-only import closes it, and none without it', () => {
    const a = parse('tsdb/write/a.ts', "import { b } from './b.js';");
    const b = parse('tsdb/write/b.ts', "import { c } from '../query/c.js';");
    const c = parse('tsdb/query/c.ts', "import { a } from '../write/a.js';");
    const cTyped = parse('tsdb/query/c.ts', "import type { A } from '../write/a.js';");
    const cFree = parse('tsdb/query/c.ts', "import type { Z } from '../write/z.js';");
    const cycle = 'tsdb/write/b.ts:1: import cycle: tsdb/query/c → tsdb/write/a → tsdb/write/b → tsdb/query/c';
    expect(report(noImportCycles([a, b, c]))).toEqual([cycle]);
    expect(report(noImportCycles([a, b, cTyped]))).toEqual([cycle]);
    expect(report(noImportCycles([a, b, cFree]))).toEqual([]);
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
