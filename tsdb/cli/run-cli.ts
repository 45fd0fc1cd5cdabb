/**
 * The `horae` command line: dispatch to serve (the default), import, uid, fsck, version
 * and help. In-process and testable: argv, the environment and the output writers are
 * parameters, and the result is an exit status instead of process.exit.
 *
 * `serve` itself is started by tsdb/main.ts: runCli validates a serve command line
 * (printing usage or errors) and returns undefined for it; main.ts then calls
 * parseServeCommand(argv, env) for the settings and prints their warnings.
 *
 * Tool commands open the embedded store on the data directory themselves; the store
 * takes a lock, so they fail with a clear message while a server uses the directory.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { formatStoreFileProblem, isStoreError, openEmbeddedStore, verifyStoreFiles } from '../../core/index.js';
import { Tsdb } from '../tsdb.js';
import { VERSION } from '../version.js';
import {
  ArgsError, CONFIG_OPTION, DATA_DIR_OPTION, DELETE_USAGE, STORE_OPTION, FSCK_USAGE, HELP_OPTION, IMPORT_USAGE, MAIN_USAGE, SERVE_USAGE, UID_USAGE,
  parseOptions, parseServeCommand, resolveSettings,
} from './args.js';
import type { Env, OptionSpec, ServeSettings } from './args.js';
import { configHelp } from './config-doc.js';
import { ConfigError } from './config-file.js';
import { runFsck } from './fsck.js';
import { COPY_USAGE, runCopyCommand } from './copy-cmd.js';
import { openRemoteStore, StoreUrlError } from './open-store.js';
import { checkImportFiles, compactAfterImport, importFiles } from './import.js';
import type { ImportOptions } from './import.js';
import type { CliWriter } from './progress.js';
import { parseUidCommand, runUidCommand } from './uid-cmd.js';
import { checkMatch, deleteSeries } from '../write/delete-series.js';
import { parseMetricWithFilters } from '../query/query-string.js';

export { parseServeCommand, SERVE_USAGE };
export type { Env, ServeSettings };

export interface CliIo {
  readonly stdout: CliWriter;
  readonly stderr: CliWriter;
  /** Options for `horae import` that tests set (batch size, progress clock). */
  readonly importOptions?: Omit<ImportOptions, 'skipErrors'>;
}

/** The process's own streams. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr };
}

const USAGES: Readonly<Record<string, string>> = {
  serve: SERVE_USAGE, import: IMPORT_USAGE, uid: UID_USAGE, fsck: FSCK_USAGE, mkmetric: UID_USAGE, copy: COPY_USAGE, delete: DELETE_USAGE,
};

/** A failure with a message for the user (exit status 1). */
class CliFailure extends Error {}

/**
 * Runs `horae ARGV`. Returns the exit status, or undefined for a valid serve command
 * line (the caller starts the server).
 */
export async function runCli(argv: readonly string[], env: Env, io: CliIo): Promise<number | undefined> {
  const cmd = argv[0];
  const rest = argv.slice(1);
  try {
    switch (cmd) {
      case 'version':
      case '--version':
      case '-V':
        io.stdout.write(`horae ${VERSION} (node ${process.version})\n`);
        return 0;
      case 'help':
        return help(rest[0], io);
      case '-h':
      case '--help':
        io.stdout.write(MAIN_USAGE);
        return 0;
      case 'import':
        return await importCommand(rest, env, io);
      case 'uid':
        return await uidCommand(rest, env, io);
      case 'mkmetric':
        return await uidCommand(['assign', 'metrics', ...rest], env, io);
      case 'copy':
        return await runCopyCommand(rest, env, io);
      case 'fsck':
        return await fsckCommand(rest, env, io);
      case 'delete':
        return await deleteCommand(rest, env, io);
      default: {
        if (cmd !== undefined && cmd !== 'serve' && !cmd.startsWith('-')) throw new ArgsError(`unknown command '${cmd}'`);
        const s = parseServeCommand(argv, env);
        if (!s.help) return undefined;
        io.stdout.write(SERVE_USAGE);
        return 0;
      }
    }
  } catch (err) {
    const where = cmd !== undefined && cmd in USAGES ? `horae ${cmd}` : 'horae';
    if (err instanceof ArgsError) {
      io.stderr.write(`${where}: ${err.message}\nRun 'horae help${cmd !== undefined && cmd in USAGES ? ` ${cmd}` : ''}' for usage.\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.stderr.write(`${where}: ${err.message}\n`);
      return 2;
    }
    if (err instanceof Error) {
      io.stderr.write(`${where}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

function help(topic: string | undefined, io: CliIo): number {
  if (topic === undefined) io.stdout.write(MAIN_USAGE);
  else if (topic === 'config') io.stdout.write(configHelp());
  else if (topic in USAGES) io.stdout.write(USAGES[topic]!);
  else throw new ArgsError(`no help for '${topic}'`);
  return 0;
}

/** Parses a tool command line; prints help or config warnings. Undefined: help was shown. */
function toolArgs(argv: readonly string[], extra: readonly OptionSpec[], env: Env, io: CliIo, usage: string) {
  const specs = [DATA_DIR_OPTION, STORE_OPTION, CONFIG_OPTION, HELP_OPTION, ...extra];
  const p = parseOptions(argv, specs);
  if (p.options.has('--help')) {
    io.stdout.write(usage);
    return undefined;
  }
  const settings = resolveSettings(p.options, env, specs);
  for (const w of settings.warnings) io.stderr.write(`warning: ${w}\n`);
  return { settings, options: p.options, positionals: p.positionals };
}

/** Opens the store and the Tsdb (no background work), runs `fn`, closes both. */
async function withTsdb(settings: ServeSettings, mustExist: boolean, fn: (tsdb: Tsdb) => Promise<number>): Promise<number> {
  const dir = resolve(settings.dataDir);
  if (settings.storeUrl === undefined && mustExist && !existsSync(dir)) throw new CliFailure(`no store at ${dir} (set --data-dir or HORAE_DATA_DIR)`);
  let store;
  try {
    store = settings.storeUrl !== undefined ? await openRemoteStore(settings.storeUrl) : await openEmbeddedStore({ dir });
  } catch (err) {
    if (err instanceof StoreUrlError) throw new CliFailure(err.message);
    if (isStoreError(err, 'STORE_UNAVAILABLE')) {
      throw new CliFailure(`cannot open ${dir}: it is in use (stop the horae server using it first): ${err.message}`);
    }
    throw err;
  }
  try {
    const tsdb = await Tsdb.open(store, { config: settings.tsdb, background: false });
    try {
      return await fn(tsdb);
    } finally {
      await tsdb.close();
    }
  } finally {
    await store.close();
  }
}

async function importCommand(argv: readonly string[], env: Env, io: CliIo): Promise<number> {
  const a = toolArgs(argv, [{ names: ['--skip-errors'], value: false }], env, io, IMPORT_USAGE);
  if (a === undefined) return 0;
  if (a.positionals.length === 0) throw new ArgsError('import needs at least one FILE');
  const files = await checkImportFiles(a.positionals);
  return withTsdb(a.settings, false, async (tsdb) => {
    const opts = { ...io.importOptions, skipErrors: a.options.has('--skip-errors') };
    const r = await importFiles(tsdb, files, opts, io);
    await compactAfterImport(tsdb, io);
    return r.stoppedAt === undefined ? 0 : 1;
  });
}

async function uidCommand(argv: readonly string[], env: Env, io: CliIo): Promise<number> {
  const a = toolArgs(argv, [{ names: ['--ignore-case', '-i'], value: false }], env, io, UID_USAGE);
  if (a === undefined) return 0;
  const c = parseUidCommand(a.positionals, a.options.has('--ignore-case'));
  // assign (mkmetric) may start a new store, as OpenTSDB users pre-create metrics.
  return withTsdb(a.settings, c.cmd !== 'assign', (tsdb) => runUidCommand(tsdb, c, io));
}

async function deleteCommand(argv: readonly string[], env: Env, io: CliIo): Promise<number> {
  const a = toolArgs(argv, [], env, io, DELETE_USAGE);
  if (a === undefined) return 0;
  if (a.positionals.length === 0) throw new ArgsError('delete needs at least one MATCH (metric or metric{tag=filter,...})');
  for (const m of a.positionals) checkMatch(m);
  return withTsdb(a.settings, true, async (tsdb) => {
    // Every metric must exist before anything goes: a typo deletes nothing.
    for (const m of a.positionals) await tsdb.metrics.requireId(parseMetricWithFilters(m.trim()).metric);
    for (const m of a.positionals) {
      const d = await deleteSeries(tsdb, m);
      io.stdout.write(d.metricDeleted
        ? `deleted metric ${d.metric}: ${d.series} series, its name and UID\n`
        : `deleted ${d.match}: ${d.series} series, ${d.rows} rows\n`);
    }
    return 0;
  });
}

async function fsckCommand(argv: readonly string[], env: Env, io: CliIo): Promise<number> {
  const a = toolArgs(argv, [{ names: ['--fix'], value: false }], env, io, FSCK_USAGE);
  if (a === undefined) return 0;
  if (a.positionals.length > 0) throw new ArgsError(`unexpected argument '${a.positionals[0]}'`);
  // Files first (core/tools/verify.ts): the same lines the server logs for damaged files.
  const dir = resolve(a.settings.dataDir);
  let damaged = 0;
  // A remote store (--store) has no files here to verify.
  if (a.settings.storeUrl === undefined && existsSync(dir)) {
    const files = await verifyStoreFiles(dir);
    io.stdout.write(`files: ${files.checked.length} checked (MANIFEST, WAL, SST)\n`);
    for (const p of files.problems) io.stdout.write(`ERROR store.damaged_file: ${formatStoreFileProblem(p)}\n`);
    damaged = files.problems.length;
    if (files.problems.some((p) => p.kind === 'manifest')) {
      io.stdout.write(`summary: ${damaged} errors; the MANIFEST is damaged, so the store cannot be opened: restore the data directory from a backup\n`);
      return 1;
    }
  }
  try {
    const code = await withTsdb(a.settings, true, (tsdb) => runFsck(tsdb, { fix: a.options.has('--fix') }, io));
    return damaged > 0 ? 1 : code;
  } catch (err) {
    if (!isStoreError(err, 'STORE_CORRUPTION')) throw err;
    io.stdout.write(`ERROR store.read_failed: the logical check stopped at damaged data: ${err.message}\n`);
    return 1;
  }
}
