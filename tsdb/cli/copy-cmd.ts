/**
 * `horae copy --to DIR|URL [--data-dir D | --store URL]`: copies every table of the
 * source store (the usual --data-dir / --store / HORAE_STORE settings) into the
 * destination (a data directory, or a store URL such as bigtable://PROJECT/INSTANCE),
 * with copyStore (copy.ts), leaving out the data rows expired under the configured
 * retention (copy-retention.ts). Stop every server writing to the source first; the
 * destination may be served by nothing either while it fills (an embedded one is locked).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { openEmbeddedStore } from '../../core/index.js';
import type { Store } from '../../core/api/store.js';
import { ArgsError, CONFIG_OPTION, DATA_DIR_OPTION, HELP_OPTION, STORE_OPTION, parseOptions, resolveSettings } from './args.js';
import type { Env } from './args.js';
import { resolveTsdbConfig } from '../config.js';
import { copyStore } from './copy.js';
import { expiredRowsOf } from './copy-retention.js';
import { openRemoteStore } from './open-store.js';
import type { CliWriter } from './progress.js';

export const COPY_USAGE = `Usage: horae copy --to DIR|URL [options]

Copies every table of the store (--data-dir, or --store) into another store: a data
directory (created if missing) or a store URL (bigtable://PROJECT/INSTANCE[?prefix=P]).
Cells keep their timestamps and versions; table specs (families, TTLs, split points)
are re-created. Data rows whose hour is past the retention configured (horae.retention,
horae.retention.metrics) are left out. The way to move between the embedded store and
Bigtable, either way (docs/SCALING.md). Stop the servers using either store first.

Options:
  --to DIR|URL      the destination store
  --data-dir D      the source's directory (env HORAE_DATA_DIR; default ./data)
  --store URL       a remote source instead (env HORAE_STORE)
  --config F        config file (env HORAE_CONFIG)
  -h, --help        show this help
`;

const TO_OPTION = { names: ['--to'], value: true };

/** Runs `horae copy ARGV`; returns the exit status. */
export async function runCopyCommand(argv: readonly string[], env: Env, io: { stdout: CliWriter; stderr: CliWriter }): Promise<number> {
  const specs = [DATA_DIR_OPTION, STORE_OPTION, CONFIG_OPTION, HELP_OPTION, TO_OPTION];
  const p = parseOptions(argv, specs);
  if (p.options.has('--help')) {
    io.stdout.write(COPY_USAGE);
    return 0;
  }
  if (p.positionals.length > 0) throw new ArgsError(`unexpected argument '${p.positionals[0]}'`);
  const to = p.options.get('--to');
  if (to === undefined) throw new ArgsError('copy needs --to DIR|URL');
  const settings = resolveSettings(p.options, env, specs);
  for (const w of settings.warnings) io.stderr.write(`warning: ${w}\n`);
  const fromDir = resolve(settings.dataDir);
  if (settings.storeUrl === undefined && !existsSync(fromDir)) throw new Error(`no store at ${fromDir} (set --data-dir or HORAE_DATA_DIR)`);
  const isUrl = (s: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);
  if (!isUrl(to) && settings.storeUrl === undefined && resolve(to) === fromDir) throw new ArgsError('--to names the source store');
  const from: Store = settings.storeUrl !== undefined ? await openRemoteStore(settings.storeUrl) : await openEmbeddedStore({ dir: fromDir });
  try {
    const dest: Store = isUrl(to) ? await openRemoteStore(to) : await openEmbeddedStore({ dir: resolve(to) });
    try {
      const expired = await expiredRowsOf(from, resolveTsdbConfig(settings.tsdb), Date.now());
      const r = await copyStore(from, dest, {
        table: (name, rows, cells, gone) => io.stdout.write(`copied ${name}: ${rows} rows, ${cells} cells${gone > 0 ? ` (${gone} rows of expired data left out)` : ''}\n`),
        ...(expired === undefined ? {} : { expired }),
      });
      io.stdout.write(`copied ${r.tables} tables, ${r.rows} rows, ${r.cells} cells to ${to}${r.expiredRows > 0 ? `; ${r.expiredRows} rows of expired data left out` : ''}\n`);
      return 0;
    } finally {
      await dest.close();
    }
  } finally {
    await from.close();
  }
}
