/**
 * `npx tsx core/tools/dump-cli.ts [--max-entries N] [--value-bytes N] <path>...`
 * (or `npm run dump -- <path>`, or `node dist/core/tools/dump-cli.js <path>`).
 *
 * Prints each store file readably (dump.ts does the work): a WAL (NNNNNN.log), an SST
 * (NNNNNN.sst), a MANIFEST, or a whole store directory (its files, then its MANIFEST).
 * Problems found (corruption, with file and offset) go to stderr and make the exit code 1;
 * bad usage exits with 2. Read-only: it never writes to the store.
 */
import { NodeFileSystem } from '../fs/node-fs.js';
import { dumpPath } from './dump.js';
import type { DumpFileOptions } from './dump.js';

const USAGE = `usage: dump-cli [--max-entries N] [--value-bytes N] <file-or-store-dir>...
  --max-entries N   list at most N entries per file (WAL batch entries, SST data entries)
  --value-bytes N   show at most N bytes of each value (default 32)
`;

interface Args {
  readonly paths: string[];
  readonly opts: DumpFileOptions;
}

function parseArgs(argv: readonly string[]): Args | string {
  const paths: string[] = [];
  let maxEntries: number | undefined;
  let maxValueBytes: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--max-entries' || a === '--value-bytes') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) return `${a} needs a non-negative integer`;
      if (a === '--max-entries') maxEntries = v;
      else maxValueBytes = v;
    } else if (a === '-h' || a === '--help') {
      return '';
    } else if (a.startsWith('-') && a !== '-') {
      return `unknown option ${a}`;
    } else {
      paths.push(a);
    }
  }
  if (paths.length === 0) return 'no file or directory given';
  return {
    paths,
    opts: {
      ...(maxEntries !== undefined ? { maxEntries } : {}),
      ...(maxValueBytes !== undefined ? { maxValueBytes } : {}),
    },
  };
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    if (args !== '') process.stderr.write(`dump-cli: ${args}\n`);
    process.stderr.write(USAGE);
    return args === '' ? 0 : 2;
  }
  const fs = new NodeFileSystem();
  let failed = false;
  for (const [i, path] of args.paths.entries()) {
    if (args.paths.length > 1) process.stdout.write(`${i > 0 ? '\n' : ''}==> ${path} <==\n`);
    const res = await dumpPath(fs, path, args.opts);
    process.stdout.write(res.text);
    for (const e of res.errors) process.stderr.write(`error: ${e}\n`);
    if (res.errors.length > 0) failed = true;
  }
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`dump-cli: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
