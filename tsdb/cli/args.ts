/**
 * Command-line parsing for every `horae` command, the usage texts, and the settings
 * resolution shared by them: command line > environment > config file (config-file.ts)
 * > defaults, for every key of the config table (tsdb/config-keys.ts) that has options
 * or an environment variable; HORAE_CONFIG names the config file.
 * Pure apart from reading the config file, so it is unit-tested directly.
 */
import { CONFIG_KEYS, DEFAULT_SERVER_SETTINGS } from '../config.js';
import type { ConfigField, KeyDef } from '../config.js';
import { loadConfigFile, ConfigError, assignSetting, parseValue } from './config-file.js';
import type { MutableTsdbConfig, ParsedConfigFile, StoreSettings } from './config-file.js';

export const DEFAULT_PORT = DEFAULT_SERVER_SETTINGS.port;
export const DEFAULT_BIND = DEFAULT_SERVER_SETTINGS.bind;
export const DEFAULT_DATA_DIR = DEFAULT_SERVER_SETTINGS.dataDir;

/** A malformed command line (exit status 2, usage shown). */
export class ArgsError extends Error {
  override readonly name = 'ArgsError';
}

/** How an option is spelled: its names (first is canonical) and whether it takes a value. */
export interface OptionSpec {
  readonly names: readonly string[];
  readonly value: boolean;
}

export interface ParsedOptions {
  /** Canonical name → value (flags: 'true'). */
  readonly options: ReadonlyMap<string, string>;
  readonly positionals: readonly string[];
}

/** The command-line option of a config key (the table's `flags`). */
function optionOf(field: ConfigField): OptionSpec {
  const def: KeyDef = CONFIG_KEYS[field];
  if (def.flags === undefined) throw new Error(`config key ${def.key} has no command-line option`);
  return { names: def.flags, value: true };
}

export const HELP_OPTION: OptionSpec = { names: ['--help', '-h'], value: false };
export const DATA_DIR_OPTION: OptionSpec = optionOf('dataDir');
export const CONFIG_OPTION: OptionSpec = { names: ['--config'], value: true };
export const STORE_OPTION: OptionSpec = { names: ['--store'], value: true };

/** `--name value`, `--name=value`, flags, and `--` ending the options. */
export function parseOptions(argv: readonly string[], specs: readonly OptionSpec[]): ParsedOptions {
  const options = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const name = eq > 0 ? a.slice(0, eq) : a;
    const spec = specs.find((s) => s.names.includes(name));
    if (spec === undefined) throw new ArgsError(`unknown option ${name}`);
    let value = 'true';
    if (spec.value) {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new ArgsError(`${name} needs a value`);
      value = v;
    } else if (eq > 0) {
      throw new ArgsError(`${name} takes no value`);
    }
    options.set(spec.names[0]!, value);
  }
  return { options, positionals };
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Settings every command shares; `port`/`bind` only matter to `serve`. */
export interface ServeSettings {
  readonly port: number;
  readonly bind: string;
  /** As given (relative to the working directory) or from the config file (absolute). */
  readonly dataDir: string;
  /** The config file read, if any. */
  readonly configFile?: string;
  readonly tsdb: MutableTsdbConfig;
  /** Storage engine settings from the config file (horae.storage.*). */
  readonly store: StoreSettings;
  /** A remote store's URL (--store, env HORAE_STORE; cli/open-store.ts); absent = the
   * embedded store in dataDir. */
  readonly storeUrl?: string;
  /** Ignored config keys etc.; the caller prints them. */
  readonly warnings: readonly string[];
  /** `--help` was given: print SERVE_USAGE and exit 0. */
  readonly help: boolean;
}

/**
 * Resolves the settings from parsed options, the environment and the config file
 * (`--config`, else HORAE_CONFIG). `accepted` are the options of the command: a key whose
 * options the command does not take (--port for the tools) is not read from the
 * environment either. An empty environment variable counts as unset.
 */
export function resolveSettings(opts: ReadonlyMap<string, string>, env: Env, accepted: readonly OptionSpec[]): ServeSettings {
  const configFile = opts.get('--config') ?? nonEmpty(env.HORAE_CONFIG);
  const file: ParsedConfigFile = configFile === undefined ? { server: {}, tsdb: {}, store: {}, warnings: [] } : loadConfigFile(configFile);
  const taken = new Set(accepted.map((o) => o.names[0]));
  const out: ParsedConfigFile = { server: { ...file.server }, tsdb: { ...file.tsdb }, store: { ...file.store }, warnings: file.warnings };
  for (const [field, def] of Object.entries(CONFIG_KEYS) as Array<[ConfigField, KeyDef]>) {
    if (def.flags !== undefined && !taken.has(def.flags[0])) continue;
    const fromCli = def.flags === undefined ? undefined : opts.get(def.flags[0]);
    const fromEnv = def.env === undefined ? undefined : nonEmpty(env[def.env]);
    const [where, raw] = fromCli !== undefined ? [def.flags![0], fromCli] : fromEnv !== undefined ? [def.env!, fromEnv] : [undefined, undefined];
    if (raw === undefined) continue;
    try {
      assignSetting(out, field, parseValue(def, raw));
    } catch (err) {
      throw new ConfigError([`${where!}: ${(err as Error).message}`]);
    }
  }
  const server = { ...DEFAULT_SERVER_SETTINGS, ...out.server };
  return {
    ...server,
    ...(configFile === undefined ? {} : { configFile }),
    tsdb: out.tsdb,
    store: out.store,
    ...storeUrlOf(opts, env),
    warnings: out.warnings,
    help: opts.has('--help'),
  };
}

function storeUrlOf(opts: ReadonlyMap<string, string>, env: Env): { storeUrl?: string } {
  const url = opts.get('--store') ?? nonEmpty(env.HORAE_STORE);
  return url === undefined ? {} : { storeUrl: url };
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s;
}

const SERVE_OPTIONS: readonly OptionSpec[] = [
  optionOf('port'),
  optionOf('bind'),
  DATA_DIR_OPTION,
  STORE_OPTION,
  CONFIG_OPTION,
  HELP_OPTION,
];

/**
 * `horae [serve] [options]` (argv without node and the script). Throws ArgsError for a bad
 * command line and ConfigError for a bad config file or environment variable.
 */
export function parseServeCommand(argv: readonly string[], env: Env): ServeSettings {
  const args = argv[0] === 'serve' ? argv.slice(1) : argv;
  const p = parseOptions(args, SERVE_OPTIONS);
  if (p.positionals.length > 0) throw new ArgsError(`unexpected argument ${JSON.stringify(p.positionals[0])}`);
  return resolveSettings(p.options, env, SERVE_OPTIONS);
}

/** Usage lines of a config key's option: its help, then where else it is set and its default. */
function optionUsage(field: ConfigField, metavar: string): string {
  const def: KeyDef = CONFIG_KEYS[field];
  const names = def.flags!.map((f, i) => (i === 0 ? `${f} ${metavar}` : f)).join(', ');
  const where = [def.env === undefined ? [] : [`env ${def.env}`], `config ${[def.key, ...(def.aliases ?? [])].join(', ')}`, `default ${String(def.default)}`];
  return `  ${names.padEnd(17)} ${def.help}\n${' '.repeat(20)}(${where.flat().join('; ')})\n`;
}

const COMMON = `${optionUsage('dataDir', 'D')}  --store URL       a remote store instead (env HORAE_STORE):
                    bigtable://PROJECT/INSTANCE[?prefix=P&appProfile=A]; needs
                    \`npm run install:bigtable\`; emulator via BIGTABLE_EMULATOR_HOST
  --config F        config file, OpenTSDB properties style (env HORAE_CONFIG)
  -h, --help        show this help
`;

export const SERVE_USAGE = `Usage: horae [serve] [options]

Runs the server: HTTP API and telnet-style put lines on one port.

Options:
${optionUsage('port', 'P')}${optionUsage('bind', 'A')}${COMMON}
Environment: HORAE_AUTH_TOKENS='token role, ...' turns authentication on (role read or
write; also horae.auth.tokens_file). See docs/SECURITY.md.

Precedence: command line > environment > config file > defaults.
\`horae help config\` lists the config keys.
`;

export const IMPORT_USAGE = `Usage: horae import [options] FILE...

Imports OpenTSDB import files: one point per line, \`<metric> <timestamp> <value> <k=v>...\`
(a put line without \`put\`); blank lines and # comments are skipped; .gz files are
decompressed. Stops at the first bad line (earlier lines stay written) unless
--skip-errors is given. Writes to the store directly: the server must not be running
on the same data directory.

Options:
  --skip-errors     report bad lines and continue
${COMMON}`;

export const UID_USAGE = `Usage: horae uid [options] COMMAND

Commands (KIND: metrics, tagk or tagv):
  grep [KIND] REGEX        names matching REGEX (all kinds when KIND is omitted)
  assign KIND NAME...      assigns UIDs to new names
  rename KIND OLD NEW      renames, keeping the UID
  [KIND] NAME|UID          looks a name up, or a UID (hex, or decimal as OpenTSDB)

Output as OpenTSDB prints it: \`metrics sys.cpu.user: [0, 0, 1]\`.
Works on the store directly: the server must not be running on the same data directory.

Options:
  -i, --ignore-case        grep ignores case
${COMMON}`;

export const DELETE_USAGE = `Usage: horae delete [options] MATCH...

Deletes series for good: every point at any time, their series-index rows and, for a
bare metric, the metric's name and UID (written again it gets a new UID, as after
OpenTSDB's \`uid delete\`). MATCH is \`metric\` (the whole metric) or
\`metric{tag=filter,...}\` (its series whose tags match, OpenTSDB's filter syntax). Every
match is checked before anything is deleted. The same as the server's
/api/admin/tsdb/delete_series; works on the store directly: the server must not be
running on the same data directory.

Options:
${COMMON}`;

export const FSCK_USAGE = `Usage: horae fsck [options]

Checks the store's files first (MANIFEST, every WAL record and SST block checksum; each
damaged file is named with the offset of the damage, as the server logs it), then:
recovery losses and background errors, the UID table (forward and
reverse mappings agree, widths, counters) and the data table (row keys, salt, UIDs,
every cell decodes). Counts rows of closed hours not yet compressed. Exit status 0
when clean, 1 when problems were found. The server must not be running on the same
data directory.

Options:
  --fix             compresses closed hours, recreates missing reverse UID mappings
                    and raises UID counters that lag; reports what remains
${COMMON}`;

export const MAIN_USAGE = `Usage: horae [COMMAND] [options]

Commands:
  serve             run the server (the default command)
  import FILE...    import OpenTSDB import files (.gz too)
  uid ...           look up, grep, assign and rename UIDs
  fsck              check (and with --fix, repair) the store
  delete MATCH...   delete series or whole metrics for good (metric{tag=filter,...})
  copy --to DIR|URL copy every table into another store (embedded <-> Bigtable)
  version           print the version
  help [COMMAND]    show help for a command; \`horae help config\` lists config keys

${SERVE_USAGE}`;
